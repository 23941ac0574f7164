"""compatfix.shims.argparse and compatfix.shims.torch.distributed (free_master_port): the --local_rank argument under torch.distributed.launch and
torchrun, and a taken --master_port.

Real launchers (torch 2.x ``python -m torch.distributed.launch`` and
``torch.distributed.run``, i.e. torchrun), real worker processes, gloo on loopback. Each
case first shows the genuine failure with compatfix off (COMPATFIX=0).
"""

from __future__ import annotations

import json
import os
import socket

import pytest

from support import FIXTURES, clean_env, free_port, printed_results, run_python

FIXTURES = os.path.join(FIXTURES, "launch")
LEGACY = os.path.join(FIXTURES, "legacy_local_rank.py")
TIMEOUT = 180

REQUIRED_ERROR = "error: the following arguments are required: --local_rank"
UNRECOGNIZED_ERROR = "error: unrecognized arguments: --local-rank=0"
EADDRINUSE = "EADDRINUSE"


def env_for(compatfix: bool, **extra: str) -> dict[str, str]:
    return clean_env(compatfix, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", **extra)



def launch(mode: str, compatfix: bool, *, launcher: str = "torch.distributed.launch", nproc: int = 2,
           runner: tuple[str, ...] = (), script_args: tuple[str, ...] = ("--epochs", "3")):
    return run_python(
        *runner, "-m", launcher, "--nproc_per_node", str(nproc), "--master_port", str(free_port()),
        LEGACY, *script_args,
        env=env_for(compatfix, FIXTURE_MODE=mode),
        timeout=TIMEOUT,
    )


def assert_fails_with(completed, message: str) -> None:
    assert completed.returncode != 0, completed.stdout
    assert message in completed.stderr, completed.stderr[-3000:]


# --- torch.distributed.launch passes --local-rank=N -----------------------------------------------


@pytest.mark.parametrize("mode, error", [("required", REQUIRED_ERROR), ("default", UNRECOGNIZED_ERROR)])
def test_launch_hyphen_reaches_a_script_that_declares_local_rank(mode, error):
    assert_fails_with(launch(mode, compatfix=False, nproc=1), error)
    ranks = printed_results(launch(mode, compatfix=True))
    assert [(r["local_rank"], r["env_local_rank"], r["epochs"]) for r in ranks] == [(0, "0", 3), (1, "1", 3)]


def test_parse_known_args_gets_the_rank_instead_of_the_default():
    # Without compatfix nothing fails: every rank silently keeps local_rank=-1.
    (plain,) = printed_results(launch("known", compatfix=False, nproc=1))
    assert plain["local_rank"] == -1 and plain["unknown"] == ["--local-rank=0"]
    (fixed,) = printed_results(launch("known", compatfix=True, nproc=1))
    assert fixed["local_rank"] == 0 and fixed["unknown"] == []


def test_launcher_run_under_python_m_compatfix_reaches_its_workers():
    # COMPATFIX=0 in the environment: only `python -m compatfix` turns compatfix on, for
    # the launcher and (through the environment it sets) for the workers.
    ranks = printed_results(launch("required", compatfix=False, runner=("-m", "compatfix")))
    assert [r["local_rank"] for r in ranks] == [0, 1]


# --- torchrun passes LOCAL_RANK only ----------------------------------------------------------------


def test_torchrun_local_rank_comes_from_the_environment():
    assert_fails_with(launch("required", compatfix=False, launcher="torch.distributed.run", nproc=1),
                      REQUIRED_ERROR)
    ranks = printed_results(launch("required", compatfix=True, launcher="torch.distributed.run"))
    assert [(r["local_rank"], r["env_local_rank"]) for r in ranks] == [(0, "0"), (1, "1")]


def test_torchrun_with_a_script_that_declares_the_hyphen_spelling():
    (plain,) = printed_results(launch("hyphen", compatfix=False, launcher="torch.distributed.run", nproc=1))
    assert plain["local_rank"] == -1  # torch's own advice followed, still the default
    (fixed,) = printed_results(launch("hyphen", compatfix=True, launcher="torch.distributed.run", nproc=1))
    assert fixed["local_rank"] == 0


# --- when the patch is in place -----------------------------------------------------------------


def test_a_parser_built_before_importing_torch_is_covered():
    # The patch is on ArgumentParser itself, so a parser built before compatfix's engine
    # loaded (on `import torch`) parses with it afterwards.
    (result,) = printed_results(launch("built-before-torch", compatfix=True, nproc=1))
    assert result["local_rank"] == 0


def test_a_parse_before_importing_torch_is_covered_under_python_m_compatfix():
    # `python -m compatfix` loads the engine at start, so argparse is patched before the
    # script's first line.
    env = env_for(False, FIXTURE_MODE="before-torch", LOCAL_RANK="0")
    assert_fails_with(run_python(LEGACY, "--local-rank=0", env=env, timeout=TIMEOUT),
                      "error: the following arguments are required: --local_rank")
    completed = run_python("-m", "compatfix", LEGACY, "--local-rank=0", env=env, timeout=TIMEOUT)
    assert printed_results(completed)[0]["local_rank"] == 0


def test_a_parse_before_importing_torch_in_a_launched_worker():
    printed_results(launch("before-torch", compatfix=True, nproc=1))


@pytest.mark.stack("modern", "paper")
def test_only_parsers_that_declare_a_local_rank_option_change():
    completed = run_python(
        code="""
        import argparse, json, sys
        import torch  # loads compatfix's engine; argparse is patched from here on
        import compatfix

        def parse(parser, argv):
            try:
                return vars(parser.parse_args(argv))
            except SystemExit as exit:
                return "exit %s" % exit.code

        plain = argparse.ArgumentParser()
        plain.add_argument("--epochs", type=int, default=1)
        both = argparse.ArgumentParser()
        both.add_argument("--local-rank", "--local_rank", dest="local_rank", type=int, default=-1)
        legacy = argparse.ArgumentParser()
        legacy.add_argument("--local_rank", type=int, default=-1)
        legacy.add_argument("rest", nargs="*")
        flag = argparse.ArgumentParser()
        flag.add_argument("--local_rank", action="store_true")
        out = {
            "plain_hyphen": parse(plain, ["--local-rank=1"]),
            "plain_env": parse(plain, []),
            "both_hyphen": parse(both, ["--local-rank=2"]),
            "both_underscore": parse(both, ["--local_rank", "3"]),
            "legacy_separate_value": parse(legacy, ["--local-rank", "4"]),
            "legacy_after_double_dash": parse(legacy, ["--local_rank=5", "--", "--local-rank=6"]),
            "legacy_env": parse(legacy, []),
            "flag_env": parse(flag, []),
        }
        # Applying the shims again changes nothing; the original stays reachable.
        from compatfix.shims import argparse as launch
        patched = argparse.ArgumentParser.parse_known_args
        launch.apply_local_rank_spelling(argparse)
        launch.apply_local_rank_from_env(argparse)
        out["same_after_reapply"] = argparse.ArgumentParser.parse_known_args is patched
        original = compatfix.get_original(argparse.ArgumentParser, "parse_known_args")
        inner = patched  # one wrapper per shim: the original is at the end of the chain
        while hasattr(inner, "__wrapped__"):
            inner = inner.__wrapped__
        out["original_kept"] = inner is original and not hasattr(original, "__compatfix_shim__")
        out["argv_untouched"] = sys.argv[1:] == []
        print(json.dumps(out))
        """,
        env=clean_env(True, LOCAL_RANK="7"),
        timeout=TIMEOUT,
    )
    assert completed.returncode == 0, completed.stderr
    out = json.loads(completed.stdout.strip().splitlines()[-1])
    assert out == {
        "plain_hyphen": "exit 2",  # no local-rank option: untouched, argparse's own error
        "plain_env": {"epochs": 1},
        "both_hyphen": {"local_rank": 2},
        "both_underscore": {"local_rank": 3},
        "legacy_separate_value": {"local_rank": 4, "rest": []},
        "legacy_after_double_dash": {"local_rank": 5, "rest": ["--local-rank=6"]},
        "legacy_env": {"local_rank": 7, "rest": []},
        "flag_env": {"local_rank": False},  # takes no value: LOCAL_RANK is not injected
        "same_after_reapply": True,
        "original_kept": True,
        "argv_untouched": True,
    }


# --- a taken --master_port -------------------------------------------------------------------------


def test_a_taken_master_port_is_replaced_on_a_single_node_launch():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        def run(compatfix, **extra):
            env = env_for(compatfix)
            env.update(extra)
            return run_python(
                "-m", "torch.distributed.launch", "--nproc_per_node", "2", "--master_port", str(port),
                os.path.join(FIXTURES, "dist_job.py"), "gloo",
                env=env, timeout=TIMEOUT,
            )

        assert_fails_with(run(False), EADDRINUSE)
        assert_fails_with(run(True, COMPATFIX_DISABLE="torch.distributed.run.free_master_port"), EADDRINUSE)
        completed = run(True)
        ranks = printed_results(completed)
        assert [(r["rank"], r["world_size"], r["all_reduce"]) for r in ranks] == [
            (0, 2, [3.0, 3.0, 3.0]), (1, 2, [3.0, 3.0, 3.0])]
        assert completed.stderr.count("--master_port %d is already in use" % port) == 1


@pytest.mark.stack("modern", "paper")
def test_the_master_port_changes_only_for_a_single_node_static_rendezvous():
    completed = run_python(
        code="""
        import json, socket
        import torch.distributed.run as run

        taken = socket.socket(); taken.bind(("127.0.0.1", 0)); taken.listen()
        port = taken.getsockname()[1]
        free = socket.socket(); free.bind(("127.0.0.1", 0)); free_port = free.getsockname()[1]; free.close()

        def endpoint_port(*options, master_port=port):
            args = run.parse_args([*options, "--master_port", str(master_port), "train.py"])
            config, _, _ = run.config_from_args(args)
            return int(config.rdzv_endpoint.rpartition(":")[2])

        print(json.dumps({
            "single_node": endpoint_port("--nnodes", "1") != port,
            "two_nodes": endpoint_port("--nnodes", "2", "--node_rank", "0") == port,
            "elastic_range": endpoint_port("--nnodes", "1:2") == port,
            "other_host": endpoint_port("--nnodes", "1", "--master_addr", "192.0.2.1") == port,
            "free_port_kept": endpoint_port("--nnodes", "1", master_port=free_port) == free_port,
        }))
        """,
        env=env_for(True),
        timeout=TIMEOUT,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == {
        "single_node": True, "two_nodes": True, "elastic_range": True, "other_host": True,
        "free_port_kept": True,
    }

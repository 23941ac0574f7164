"""compatfix.shims.torch.distributed and compatfix.shims.torch.cuda: nccl where NCCL cannot work, env:// without a
launcher (opt-in), torch.cuda.set_device with more processes than GPUs, and the
single-tensor collectives under all their names.

Real torch 2.x and gloo on loopback. Two things cannot be real on this machine and are
simulated, as each test says: a GPU (torch.cuda.device_count and the call that selects a
device are replaced in the child process) and a torch that lacks some collective names
(they are deleted from torch.distributed in the child before compatfix is activated by
hand). The nccl tests assume a machine without a CUDA GPU and skip on one.
"""

from __future__ import annotations

import json
import os

import pytest

from support import FIXTURES, clean_env, free_port, has_cuda_gpu, printed_results, run_python

FIXTURES = os.path.join(FIXTURES, "launch")
DIST_JOB = os.path.join(FIXTURES, "dist_job.py")
TIMEOUT = 180

NCCL_ERROR = "ProcessGroupNCCL is only supported with GPUs, no GPUs found!"
RANK_ERROR = "environment variable RANK expected, but not set"
NCCL_WARNING = "NCCL cannot work here"
ORDINAL_ERROR = "CUDA error: invalid device ordinal"


def env_for(compatfix: bool, launched: bool = True, **extra: str) -> dict[str, str]:
    """clean_env on loopback; ``launched``: the variables torchrun sets for a world of one."""
    env = clean_env(compatfix, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", **extra)
    for variable in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"):
        env.pop(variable, None)
    if launched:
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    return env



def assert_fails_with(completed, message: str) -> None:
    assert completed.returncode != 0, completed.stdout
    assert message in completed.stderr, completed.stderr[-4000:]


def torchrun(*args: str, env: dict[str, str], runner: tuple[str, ...] = ()):
    return run_python(*runner, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                      "--master_port", str(free_port()), *args, env=env, timeout=TIMEOUT)


def needs_no_gpu():
    if has_cuda_gpu():
        pytest.skip("a CUDA GPU is present: nccl works here")


# --- nccl where NCCL cannot work --------------------------------------------------------------------


def test_nccl_without_a_gpu_uses_gloo_with_one_warning():
    needs_no_gpu()
    assert_fails_with(run_python(DIST_JOB, "nccl", env=env_for(False), timeout=TIMEOUT), NCCL_ERROR)
    completed = run_python(DIST_JOB, "nccl", "new-group", env=env_for(True), timeout=TIMEOUT)
    (result,) = printed_results(completed)
    assert (result["backend"], result["group_backend"], result["all_reduce"]) == ("gloo", "gloo", [1.0, 1.0, 1.0])
    assert completed.stderr.count(NCCL_WARNING) == 1, completed.stderr


def test_nccl_device_map_and_two_ranks_under_torchrun():
    needs_no_gpu()
    ranks = printed_results(torchrun(DIST_JOB, "cpu:gloo,cuda:nccl", env=env_for(True, launched=False)))
    assert [(r["rank"], r["world_size"], r["all_reduce"]) for r in ranks] == [
        (0, 2, [3.0, 3.0, 3.0]), (1, 2, [3.0, 3.0, 3.0])]
    assert {r["backend"] for r in ranks} == {"cpu:gloo,cuda:gloo"}


def test_disabling_the_nccl_fallback_brings_torchs_error_back():
    needs_no_gpu()
    env = env_for(True, COMPATFIX_DISABLE="torch.distributed.nccl_fallback")
    assert_fails_with(run_python(DIST_JOB, "nccl", env=env, timeout=TIMEOUT), NCCL_ERROR)


def test_cpu_mode_and_these_shims_compose(tmp_path):
    # Under --device cpu, CPU mode's own nccl->gloo shim does the redirect and this one
    # steps aside (one replacement, one record); the opt-in single-process rendezvous
    # still works inside CPU mode.
    report = str(tmp_path / "report.json")
    completed = run_python("-m", "compatfix", "--device", "cpu", "--report", report, DIST_JOB, "nccl", "new-group",
                           env=env_for(True), timeout=TIMEOUT)
    (result,) = printed_results(completed)
    assert (result["backend"], result["group_backend"]) == ("gloo", "gloo")
    with open(report) as handle:
        (process,) = json.load(handle)["processes"]
    assert {item["shim"] for item in process["redirected"]} == {"cpu.torch.distributed.backend"}
    assert NCCL_WARNING not in completed.stderr

    completed = run_python("-m", "compatfix", "--device", "cpu", "--enable", "torch.distributed.env_single_process",
                           DIST_JOB, "nccl", env=env_for(True, launched=False), timeout=TIMEOUT)
    (result,) = printed_results(completed)
    assert (result["world_size"], result["backend"]) == (1, "gloo")


# --- env:// without a launcher (opt-in) ----------------------------------------------------------


def test_env_rendezvous_without_a_launcher_is_a_world_of_one_when_enabled():
    for compatfix in (False, True):  # on by default: the shim is opt-in, torch's error stays
        completed = run_python(DIST_JOB, "gloo", env=env_for(compatfix, launched=False), timeout=TIMEOUT)
        assert_fails_with(completed, RANK_ERROR)
    env = env_for(True, launched=False, COMPATFIX_ENABLE="torch.distributed.env_single_process")
    completed = run_python(DIST_JOB, "gloo", env=env, timeout=TIMEOUT)
    (result,) = printed_results(completed)
    assert (result["rank"], result["world_size"], result["all_reduce"]) == (0, 1, [1.0, 1.0, 1.0])
    assert "no launcher set MASTER_ADDR" in completed.stderr


@pytest.mark.stack("modern", "paper")
def test_env_rendezvous_is_left_alone_when_a_launcher_or_the_caller_set_it_up():
    completed = run_python(
        code="""
        import json, os
        from compatfix.shims.torch import distributed as shims

        def adjusted(environ, **arguments):
            for variable in shims.LAUNCHER_VARIABLES + ("LOCAL_RANK",):
                os.environ.pop(variable, None)
            os.environ.update(environ)
            shims._single_process_rendezvous("init_process_group", arguments)
            return os.environ.get("WORLD_SIZE")

        print(json.dumps({
            "no_launcher": adjusted({}),
            "launcher": adjusted({"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "1234", "RANK": "1", "WORLD_SIZE": "4"}),
            "world_of_four": adjusted({}, world_size=4, rank=2),
            "tcp": adjusted({}, init_method="tcp://10.0.0.1:23456"),
            "store": adjusted({}, store=object()),
        }))
        """,
        env=env_for(True, launched=False),
        timeout=TIMEOUT,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == {
        "no_launcher": "1", "launcher": "4", "world_of_four": None, "tcp": None, "store": None}


# --- torch.cuda.set_device with more processes than GPUs ------------------------------------------


def set_device(index: int, compatfix: bool, **extra: str):
    # The GPU is simulated (no GPU here): see tests/fixtures/launch/set_device.py. The
    # shim's logic is what is checked; a machine with GPUs should confirm it for real.
    env = env_for(False, launched=False, FIXTURE_GPUS="2", FIXTURE_COMPATFIX="1" if compatfix else "0",
                  LOCAL_RANK=str(index), **extra)
    return run_python(os.path.join(FIXTURES, "set_device.py"), str(index), env=env, timeout=TIMEOUT)


def test_set_device_past_the_gpu_count_says_what_happened():
    plain = set_device(3, compatfix=False)
    assert_fails_with(plain, ORDINAL_ERROR)
    assert "compatfix" not in plain.stderr
    explained = set_device(3, compatfix=True)
    assert_fails_with(explained, ORDINAL_ERROR)
    assert "asks for CUDA device 3, but this process sees 2 CUDA device(s)" in explained.stderr
    assert "COMPATFIX_ENABLE=torch.cuda.set_device.oversubscribe" in explained.stderr
    unexplained = set_device(3, compatfix=True, COMPATFIX_DISABLE="torch.cuda.set_device.explain")
    assert_fails_with(unexplained, ORDINAL_ERROR)
    assert "asks for CUDA device 3" not in unexplained.stderr
    assert printed_results(set_device(1, compatfix=True)) == [{"selected": [1]}]  # within range: untouched


def test_set_device_oversubscription_when_enabled():
    completed = set_device(3, compatfix=True, COMPATFIX_ENABLE="torch.cuda.set_device.oversubscribe")
    assert printed_results(completed) == [{"selected": [1]}]
    assert "processes share them" in completed.stderr


# --- the single-tensor collectives ---------------------------------------------------------------

GATHERED = [0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0]  # rank r contributes [0..3] + 10 r
SCATTERED = [[10.0, 12.0], [14.0, 16.0]]  # the sum [10, 12, 14, 16], one half per rank
MISSING = {
    "old-torch": ["all_gather_single", "all_gather_into_tensor", "reduce_scatter_single", "reduce_scatter_tensor"],
    "new-torch": ["all_gather_into_tensor", "_all_gather_base", "reduce_scatter_tensor", "_reduce_scatter_base"],
    "no-collective": ["all_gather_single", "all_gather_into_tensor", "_all_gather_base",
                      "reduce_scatter_single", "reduce_scatter_tensor", "_reduce_scatter_base"],
    "real": [],
}


@pytest.mark.parametrize("scenario", sorted(MISSING))
def test_collectives_answer_to_every_name_in_a_two_process_gloo_job(scenario):
    # A torch that lacks names is simulated: the fixture deletes them in each worker
    # before activating compatfix by hand (COMPATFIX=0 until then). "old-torch" is new
    # apex on torch < 1.13; "new-torch" is old apex on a torch that dropped the old names.
    script = os.path.join(FIXTURES, "collectives.py")
    ranks = printed_results(torchrun(script, scenario, env=env_for(False, launched=False)))
    assert [r["rank"] for r in ranks] == [0, 1] and {r["world"] for r in ranks} == {2}
    for rank, result in enumerate(ranks):
        for name, before in result["before"].items():
            if name in MISSING[scenario]:
                assert before == "AttributeError: module 'torch.distributed' has no attribute %r" % name
            else:
                assert before == (GATHERED if "gather" in name else SCATTERED[rank]), name
        for name, after in result["after"].items():
            assert after == (GATHERED if "gather" in name else SCATTERED[rank]), (scenario, name)


@pytest.mark.parametrize("scenario, shim", [("old-torch", "torch.distributed.collective_names"),
                                             ("no-collective", "torch.distributed.collective_fallbacks")])
def test_each_collective_shim_serves_its_own_scenario(scenario, shim):
    script = os.path.join(FIXTURES, "collectives.py")
    # with only this shim off, the fixture's first call of a missing name fails
    completed = torchrun(script, scenario, env=env_for(False, launched=False, COMPATFIX_DISABLE=shim))
    assert completed.returncode != 0
    assert "AttributeError: module 'torch.distributed' has no attribute" in completed.stderr, completed.stderr[-3000:]


@pytest.mark.stack("modern", "paper")
def test_patches_are_plain_functions_applied_once_with_originals_kept():
    completed = run_python(
        code="""
        import sys, types
        import torch, torch.distributed as dist
        import compatfix
        from compatfix import patching
        from compatfix.shims.torch import cuda as cuda_shims, distributed as shims
        c10d = sys.modules["torch.distributed.distributed_c10d"]
        owners = [(dist, "init_process_group"), (dist, "new_group"), (torch.cuda, "set_device")]
        before = [getattr(owner, name) for owner, name in owners]
        names_before = {name: getattr(dist, name) for family in shims.COLLECTIVE_FAMILIES for name in family}
        shims.apply_nccl_fallback(dist)
        shims.apply_env_single_process(dist)
        cuda_shims.apply_set_device_explain(torch.cuda)
        shims.restore_collective_names(dist)
        shims.provide_collective_fallbacks(dist)
        after = [getattr(owner, name) for owner, name in owners]
        assert [f is b for f, b in zip(after[:2], before[:2])] == [True, True]
        assert after[2] is before[2]
        for (owner, name), patched in zip(owners, after):
            assert type(patched) is types.FunctionType, name
            original = compatfix.get_original(owner, name)
            assert patched.__wrapped__ is original and not hasattr(original, "__compatfix_shim__"), name
        assert dist.init_process_group is c10d.init_process_group
        assert [entry[2] for entry in patching._rewriters_of(dist.init_process_group)] == [
            "torch.distributed.nccl_fallback", "torch.distributed.env_single_process"]
        # torch 2.14 has every collective name: none is touched
        assert {name: getattr(dist, name) for name in names_before} == names_before
        assert not any(compatfix.is_patched(dist, name) for name in names_before)
        print("OK")
        """,
        env=env_for(True, launched=False),
        timeout=TIMEOUT,
    )
    assert completed.stdout.split() == ["OK"], completed.stderr

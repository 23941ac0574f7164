"""``python -m compatfix`` options reach the whole process tree, and every process of it
is ACTIVATED: multiprocessing spawn children, DataLoader workers, torchrun and
torch.distributed.launch workers (one node and two), and plain ``subprocess`` children
of an interpreter that has no compatfix.pth (a PYTHONPATH-only deployment).

Most runs start from an environment with COMPATFIX=0, which switches the .pth activation
off: a process of the tree is active only if the runner's propagation reached it. Each
process reports (tests/fixtures/runner/propagation/cfstate.py) whether np.float_
(numpy.numpy2_aliases) and torch._six work there, whether np.float does (off with
``--disable numpy.builtin_aliases``) and which COMPATFIX_* options it sees. Each test
also runs the same program or launch without compatfix, where nothing is restored.

Real torch, real gloo, loopback only (127.0.0.1, GLOO_SOCKET_IFNAME=lo), bounded timeouts.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys

import pytest

from support import FIXTURES, REPO_ROOT, clean_env, free_port, run_python

SCRIPTS = os.path.join(FIXTURES, "runner", "propagation")
DISABLE = "numpy.builtin_aliases"
TIMEOUT = 150  # a whole launch; the gloo group itself gives up after 60 s


def script(name):
    return os.path.join(SCRIPTS, name)


def env_for(compatfix, **extra):
    """clean_env, with gloo and the launchers kept on loopback and to one thread."""
    return clean_env(compatfix, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", **extra)


def state_of(result):
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("STATE ")]
    assert len(lines) == 1, result.stdout + result.stderr
    return json.loads(lines[0][len("STATE "):])


def assert_active_with_disable(state, disabled=DISABLE, torch=True, by=("pth", "sitecustomize")):
    """Active (restored names work) with ``--disable numpy.builtin_aliases`` in effect.
    A child activates at start-up (``by``); only the runner's own process says "cli"."""
    assert state["activated_by"] in by, state
    assert state["np.float_"] is True, state  # numpy.numpy2_aliases: compatfix is active
    assert state["np.float"] is False, state  # numpy.builtin_aliases: the option is in effect
    if torch:
        assert state["torch._six"] is True, state
    assert state["env"]["COMPATFIX"] == "1"
    assert state["env"]["COMPATFIX_DISABLE"] == disabled


def assert_inactive(state, torch=True):
    assert state["activated_by"] is None, state
    assert state["np.float_"] is False and state["np.float"] is False, state
    if torch:
        assert state["torch._six"] is False, state
    assert state["env"]["COMPATFIX_DISABLE"] is None


def start(args, env, cwd):
    """Start a launcher in its own process group (so a timeout can end its workers too)."""
    return subprocess.Popen(
        [sys.executable, *args], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )


def finish(process):
    try:
        output, _ = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the launcher's group: it and its workers
        output, _ = process.communicate()
        pytest.fail("launch timed out after %ss:\n%s" % (TIMEOUT, output))
    assert process.returncode == 0, output
    return output


def launch(args, env, cwd):
    return finish(start(args, env, cwd))


def worker_states(out_dir, count):
    paths = sorted(glob.glob(os.path.join(out_dir, "rank*.json")))
    assert len(paths) == count, paths
    states = {}
    for path in paths:
        with open(path) as handle:
            state = json.load(handle)
        states[state["rank"]] = state
    assert sorted(states) == list(range(count))
    for state in states.values():
        assert state["world_size"] == count
        assert state["all_reduce"] == count * (count + 1) / 2  # the gloo group worked
    return states


# --- (1) multiprocessing spawn ---------------------------------------------------------


@pytest.mark.parametrize("outer", ["compatfix-off", "pth-on"])
def test_spawn_child_is_activated_with_the_options(outer, tmp_path):
    env = env_for(outer == "pth-on")
    under = state_of(run_python(
        "-m", "compatfix", "--disable", DISABLE, script("spawn_child.py"), env=env, cwd=str(tmp_path), timeout=TIMEOUT
    ))
    assert_active_with_disable(under["parent"], torch=False, by=["pth" if outer == "pth-on" else "cli"])
    assert_active_with_disable(under["child"])
    assert under["child"]["pid"] != under["parent"]["pid"]

    plain = state_of(run_python(script("spawn_child.py"), env=env, cwd=str(tmp_path), timeout=TIMEOUT))
    if outer == "pth-on":
        # Active through the .pth alone, but the option came from the runner only.
        assert plain["child"]["activated_by"] == "pth"
        assert plain["child"]["np.float"] is True and plain["child"]["env"]["COMPATFIX_DISABLE"] is None
    else:
        assert_inactive(plain["parent"], torch=False)
        assert_inactive(plain["child"])


# --- (2) DataLoader workers --------------------------------------------------------------


def test_dataloader_spawn_workers_are_activated_with_the_options(tmp_path):
    env = env_for(False)
    under = state_of(run_python(
        "-m", "compatfix", "--disable", DISABLE, script("dataloader.py"), env=env, cwd=str(tmp_path), timeout=TIMEOUT
    ))
    workers = under["workers"]
    assert sorted(item["index"] for item in workers) == [0, 1, 2, 3]
    assert {item["worker_id"] for item in workers} == {0, 1}
    assert len({item["pid"] for item in workers}) == 2
    assert under["parent"]["pid"] not in {item["pid"] for item in workers}
    assert_active_with_disable(under["parent"], by=["cli"])
    for item in workers:
        assert_active_with_disable(item)

    plain = state_of(run_python(script("dataloader.py"), env=env, cwd=str(tmp_path), timeout=TIMEOUT))
    assert {item["worker_id"] for item in plain["workers"]} == {0, 1}
    for item in plain["workers"]:
        assert_inactive(item)


# --- (3) torchrun, (4) torch.distributed.launch ------------------------------------------


def torchrun_args(port, out_dir, nproc=2, nodes=()):
    """torchrun's arguments; ``nodes`` is (count, this node's rank) for a multi-node job."""
    multi_node = ["--nnodes", str(nodes[0]), "--node_rank", str(nodes[1])] if nodes else []
    return [
        "-m", "torch.distributed.run", *multi_node, "--nproc_per_node", str(nproc),
        "--master_addr", "127.0.0.1", "--master_port", str(port), script("dist_worker.py"), out_dir,
    ]


def launch_args(port, out_dir):
    return [
        "-m", "torch.distributed.launch", "--nproc_per_node", "2",
        "--master_addr", "127.0.0.1", "--master_port", str(port), script("dist_worker.py"), out_dir,
    ]


def test_torchrun_workers_are_activated_with_the_options(tmp_path):
    env = env_for(False)
    under_dir, plain_dir = str(tmp_path / "under"), str(tmp_path / "plain")
    os.mkdir(under_dir)
    os.mkdir(plain_dir)
    launch(["-m", "compatfix", "--disable", DISABLE, *torchrun_args(free_port(), under_dir)], env, str(tmp_path))
    for rank, state in worker_states(under_dir, 2).items():
        assert_active_with_disable(state)
        assert state["local_rank"] == str(rank)
        assert state["argv"] == [under_dir]

    launch(torchrun_args(free_port(), plain_dir), env, str(tmp_path))
    for state in worker_states(plain_dir, 2).values():
        assert_inactive(state)


def test_legacy_distributed_launch_workers_are_activated_with_the_options(tmp_path):
    env = env_for(False)
    under_dir, plain_dir = str(tmp_path / "under"), str(tmp_path / "plain")
    os.mkdir(under_dir)
    os.mkdir(plain_dir)
    launch(["-m", "compatfix", "--disable", DISABLE, *launch_args(free_port(), under_dir)], env, str(tmp_path))
    for rank, state in worker_states(under_dir, 2).items():
        assert_active_with_disable(state)
        assert state["argv"] == ["--local-rank=%d" % rank, under_dir]  # what torch >= 2.0 passes

    launch(launch_args(free_port(), plain_dir), env, str(tmp_path))
    for state in worker_states(plain_dir, 2).values():
        assert_inactive(state)


# --- (5) two torchrun nodes on loopback ------------------------------------------------


def two_nodes(out_dir, node_commands, env, cwd):
    """Start both nodes' launchers at once (they rendezvous with each other), wait for both."""
    port = free_port()
    processes = []
    try:
        for node_rank, prefix in enumerate(node_commands):
            args = [*prefix, *torchrun_args(port, out_dir, nproc=1, nodes=(2, node_rank))]
            processes.append(start(args, env, cwd))
        for process in processes:
            finish(process)
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def test_two_torchrun_nodes_each_activate_their_workers_with_their_options(tmp_path):
    env = env_for(False)
    out_dir = str(tmp_path / "under")
    os.mkdir(out_dir)
    # Each node has its own options: a worker can only see its own launcher's.
    options = ["numpy.builtin_aliases", "numpy.numpy2_aliases"]
    two_nodes(out_dir, [["-m", "compatfix", "--disable", name] for name in options], env, str(tmp_path))
    states = worker_states(out_dir, 2)
    for rank, state in states.items():
        assert state["group_rank"] == str(rank) and state["local_rank"] == "0"
        assert state["activated_by"] in ("pth", "sitecustomize")
        assert state["torch._six"] is True
        assert state["env"]["COMPATFIX_DISABLE"] == options[rank]
    assert states[0]["np.float"] is False and states[0]["np.float_"] is True
    assert states[1]["np.float"] is True and states[1]["np.float_"] is False

    # The same job with node 1 started without compatfix: its worker is not activated.
    mixed_dir = str(tmp_path / "mixed")
    os.mkdir(mixed_dir)
    two_nodes(mixed_dir, [["-m", "compatfix", "--disable", DISABLE], []], env, str(tmp_path))
    states = worker_states(mixed_dir, 2)
    assert_active_with_disable(states[0])
    assert_inactive(states[1])


# --- (6) no .pth: a PYTHONPATH-only deployment ---------------------------------------------


def base_python(cwd):
    """The interpreter this venv was made from: no compatfix.pth, no torch, and (needed
    here) numpy. Skips where it is not like that."""
    base = getattr(sys, "_base_executable", None)
    if not base or sys.prefix == sys.base_prefix:
        pytest.skip("the tests do not run in a venv: no base interpreter without compatfix")
    check = run_python(
        code="""
        import importlib.util, json, site, os
        print(json.dumps({
            "numpy": importlib.util.find_spec("numpy") is not None,
            "compatfix": importlib.util.find_spec("compatfix") is not None,
            "pth": any(os.path.exists(os.path.join(d, "compatfix.pth")) for d in site.getsitepackages()),
        }))
        """,
        env=clean_env(True),
        cwd=cwd,  # not the checkout: python -c puts the cwd on sys.path
        python=base,
        timeout=TIMEOUT,
    )
    assert check.returncode == 0, check.stderr
    found = json.loads(check.stdout)
    if found["compatfix"] or found["pth"]:
        pytest.skip("the base interpreter %s has compatfix installed" % base)
    if not found["numpy"]:
        pytest.skip("the base interpreter %s has no numpy" % base)
    return base


def test_without_the_pth_subprocess_children_are_activated_through_sitecustomize(tmp_path):
    base = base_python(str(tmp_path))
    env = clean_env(True, PYTHONPATH=REPO_ROOT)  # compatfix importable, never activated at start-up
    under = state_of(run_python(
        "-m", "compatfix", "--disable", DISABLE, script("subprocess_child.py"),
        env=env, cwd=str(tmp_path), timeout=TIMEOUT, python=base,
    ))
    assert_active_with_disable(under["parent"], torch=False, by=["cli"])
    child = under["child"]
    assert child["activated_by"] == "sitecustomize"
    assert_active_with_disable(child, torch=False)
    sitecustomize_folder = os.path.join(REPO_ROOT, "compatfix", "sitecustomize")
    assert child["env"]["PYTHONPATH"].split(os.pathsep)[:1] == [sitecustomize_folder]

    plain = state_of(run_python(
        script("subprocess_child.py"), env=env, cwd=str(tmp_path), timeout=TIMEOUT, python=base
    ))
    assert_inactive(plain["parent"], torch=False)
    assert_inactive(plain["child"], torch=False)

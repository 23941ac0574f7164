"""CPU mode under a launcher (compatfix.cpu.torch.cuda, issue 12 item 2): torchrun and
``torch.distributed.launch`` start N ranks on a node, and CPU mode plays N CUDA devices
there (the launcher's LOCAL_WORLD_SIZE), so ``assert torch.cuda.device_count() > local_rank``
holds and every per-index query answers on every rank; without a launcher it is one device.

tests/fixtures/cpu_launch/devices.py makes the calls of 2020-22 scripts on each rank,
mmcv's init_dist/get_dist_info included (real mmcv of each stack), on loopback gloo.
Without CPU mode the same launch fails at the first CUDA call on this GPU-less machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import CUDA_ERROR, FIXTURES, clean_env, free_port, run_python

SCRIPT = os.path.join(FIXTURES, "cpu_launch", "devices.py")
NAME = "CPU (compatfix --device cpu)"


def launch(tmp_path, launcher, *script_args, cpu_mode=True, ranks=2):
    out = tmp_path / "out"
    out.mkdir()
    prefix = ["-m", "compatfix", "--device", "cpu"] if cpu_mode else ["-m", "compatfix"]
    command = [sys.executable, *prefix, "-m", launcher, "--nproc_per_node", str(ranks), "--master_addr",
               "127.0.0.1", "--master_port", str(free_port()), SCRIPT, str(out), *script_args]
    env = clean_env(GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240,
                               stdin=subprocess.DEVNULL)
    results = {int(p.name[4:-5]): json.loads(p.read_text()) for p in out.glob("rank*.json")}
    return results, completed.stdout + completed.stderr


def check_rank(rank, result, ranks=2):
    assert result["errors"] == [], result["errors"]
    assert result["device_count"] == ranks and result["local_rank"] == rank
    assert result["current_after_set"] == rank
    assert result["names"] == [NAME] * ranks and result["total_memory"] == [True] * ranks
    assert result["capability"] == [[0, 0]] * ranks
    assert result["memory"] == [[0, 0, 0, {}, True, None]] * ranks
    assert result["inside_context"] == (rank + 1) % ranks and result["after_context"] == rank
    assert result["tensor_device"] == "cpu" and result["beyond_count"] == "invalid device ordinal"


@pytest.mark.stack("modern", "paper")
def test_torchrun_two_ranks_see_two_devices_and_mmcv_init_dist(tmp_path):
    results, output = launch(tmp_path, "torch.distributed.run", "--mmcv")
    assert sorted(results) == [0, 1], output[-4000:]
    for rank, result in results.items():
        check_rank(rank, result)
        assert result["dist_info"] == [rank, 2] and result["current_after_init_dist"] == rank
        assert result["all_reduce"] == 3.0


def test_torch_distributed_launch_passes_local_rank_and_two_devices(tmp_path):
    results, output = launch(tmp_path, "torch.distributed.launch")
    assert sorted(results) == [0, 1], output[-4000:]
    for rank, result in results.items():
        check_rank(rank, result)


def test_the_same_launch_fails_without_cpu_mode(tmp_path):
    results, output = launch(tmp_path, "torch.distributed.run", cpu_mode=False)
    assert results == {}
    assert CUDA_ERROR.search(output) or "AssertionError" in output, output[-3000:]


def test_without_a_launcher_one_device_and_per_index_checks():
    code = """
        import os, torch
        assert torch.cuda.device_count() == 1 and torch.cuda.current_device() == 0
        torch.cuda.set_device(0); torch.cuda.get_device_properties(0); torch.cuda.memory_allocated(0)
        for call in (lambda: torch.cuda.set_device(1), lambda: torch.cuda.get_device_name(1),
                     lambda: torch.cuda.memory_allocated("cuda:1"), lambda: torch.cuda.device(1)):
            try:
                call()
            except RuntimeError as exc:
                assert "invalid device ordinal" in str(exc), exc
            else:
                raise SystemExit("device 1 answered without a launcher")
        with torch.cuda.device(None), torch.cuda.device(-1), torch.cuda.device_of(torch.ones(1)):
            assert torch.cuda.current_device() == 0
        # a launcher's environment, as torchrun sets it for the third of four local ranks
        os.environ.update(LOCAL_WORLD_SIZE="4", LOCAL_RANK="2")
        assert torch.cuda.device_count() == 4
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        with torch.cuda.device(3):
            assert torch.cuda.current_device() == 3
            assert torch.cuda.get_device_properties(torch.device("cuda", 3)).uuid == "compatfix-cpu-3"
        assert torch.cuda.current_device() == 2 and len(torch.cuda.get_rng_state_all()) == 4
        del os.environ["LOCAL_WORLD_SIZE"]  # launch before torch 1.9: only LOCAL_RANK
        assert torch.cuda.device_count() == 3
        del os.environ["LOCAL_RANK"]  # an srun task: SLURM's tasks on this node
        os.environ.update(SLURM_PROCID="5", SLURM_LOCALID="1", SLURM_TASKS_PER_NODE="4(x2)")
        assert torch.cuda.device_count() == 4
        os.environ["SLURM_NTASKS_PER_NODE"] = "3"
        assert torch.cuda.device_count() == 3
        print("OK")
        """
    result = run_python(code=code, env=clean_env(COMPATFIX_DEVICE="cpu"))
    assert "OK" in result.stdout, result.stdout + result.stderr
    off = run_python(code=code, env=clean_env())
    assert off.returncode != 0 and "OK" not in off.stdout


# --- issue 12, item 5: more than one node, and SLURM without a launcher ----------------------


def test_two_node_loopback_launch_two_ranks_per_node(tmp_path):
    """Two launchers (``--nnodes 2 --node_rank 0/1``) on loopback, two ranks each: node 0 is
    started through ``python -m compatfix --device cpu``, node 1 through the installed .pth
    with ``COMPATFIX_DEVICE=cpu``; every rank is in CPU mode and sees the two devices of its
    node, and mmcv's init_dist joins all four."""
    out = tmp_path / "out"
    out.mkdir()
    port = str(free_port())
    common = ["-m", "torch.distributed.run", "--nnodes", "2", "--nproc_per_node", "2", "--master_addr",
              "127.0.0.1", "--master_port", port]
    env = clean_env(GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    nodes = [
        subprocess.Popen([sys.executable, "-m", "compatfix", "--device", "cpu", *common, "--node_rank", "0",
                          SCRIPT, str(out), "--mmcv"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, stdin=subprocess.DEVNULL),
        subprocess.Popen([sys.executable, *common, "--node_rank", "1", SCRIPT, str(out), "--mmcv"],
                         env=dict(env, COMPATFIX_DEVICE="cpu"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, stdin=subprocess.DEVNULL),
    ]
    outputs = [node.communicate(timeout=300)[0] for node in nodes]
    results = {int(p.name[4:-5]): json.loads(p.read_text()) for p in out.glob("rank*.json")}
    assert sorted(results) == [0, 1, 2, 3], outputs[0][-3000:] + outputs[1][-3000:]
    for rank, result in results.items():
        check_rank(rank % 2, result)
        assert result["cpu_mode"] is True and result["COMPATFIX_DEVICE"] == "cpu"
        assert result["dist_info"] == [rank, 4] and result["current_after_init_dist"] == rank % 2
        assert result["all_reduce"] == 10.0


def test_two_node_loopback_launch_without_cpu_mode_activates_every_rank_alike(tmp_path):
    """The same two-launcher layout without CPU mode (a gloo script): node 0 through
    ``python -m compatfix --disable numpy.asscalar``, node 1 through the .pth with
    ``COMPATFIX_DISABLE=numpy.asscalar``; every rank runs with compatfix active and the
    same options, and sees this machine's real device count (0)."""
    out = tmp_path / "out"
    out.mkdir()
    common = ["-m", "torch.distributed.run", "--nnodes", "2", "--nproc_per_node", "1", "--master_addr",
              "127.0.0.1", "--master_port", str(free_port())]
    script = os.path.join(FIXTURES, "cpu_launch", "activation.py")
    env = clean_env(GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    nodes = [
        subprocess.Popen([sys.executable, "-m", "compatfix", "--disable", "numpy.asscalar", *common, "--node_rank",
                          "0", script, str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, stdin=subprocess.DEVNULL),
        subprocess.Popen([sys.executable, *common, "--node_rank", "1", script, str(out)],
                         env=dict(env, COMPATFIX_DISABLE="numpy.asscalar"), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL),
    ]
    outputs = [node.communicate(timeout=300)[0] for node in nodes]
    results = {int(p.name[4:-5]): json.loads(p.read_text()) for p in out.glob("rank*.json")}
    assert sorted(results) == [0, 1], outputs[0][-3000:] + outputs[1][-3000:]
    for result in results.values():
        assert result["active"] is True and result["disable"] == ["numpy.asscalar"], result
        assert result["device"] in (None, "") and result["cpu_mode"] is False and result["device_count"] == 0
        assert result["world_size"] == 2 and result["all_reduce"] == 3.0


SLURM = os.path.join(FIXTURES, "cpu_launch", "slurm_style.py")


def slurm_tasks(tmp_path, init, cpu_mode=True):
    out = tmp_path / "out"
    out.mkdir(parents=True)
    url = "tcp://127.0.0.1:%d" % free_port() if init == "tcp" else (tmp_path / "rendezvous").as_uri()
    processes = []
    for task in range(2):
        env = clean_env(GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore",
                        SLURM_PROCID=str(task), SLURM_LOCALID=str(task), SLURM_NTASKS="2", SLURM_NODEID="0",
                        SLURM_JOB_NUM_NODES="1", SLURM_STEP_TASKS_PER_NODE="2", SLURM_TASKS_PER_NODE="2")
        if task == 0 and cpu_mode:  # one task through the runner, one through the .pth
            command = [sys.executable, "-m", "compatfix", "--device", "cpu", SLURM, str(out), url]
        else:
            command = [sys.executable, SLURM, str(out), url]
            if cpu_mode:
                env["COMPATFIX_DEVICE"] = "cpu"
        processes.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          text=True, stdin=subprocess.DEVNULL))
    outputs = [process.communicate(timeout=200)[0] for process in processes]
    results = {int(p.name[4:-5]): json.loads(p.read_text()) for p in out.glob("rank*.json")}
    return results, "\n".join(outputs)


@pytest.mark.parametrize("init", ["tcp", "file"])
def test_slurm_style_tasks_without_a_launcher(tmp_path, init):
    results, output = slurm_tasks(tmp_path, init)
    assert sorted(results) == [0, 1], output[-4000:]
    for rank, result in results.items():
        assert result["device_count"] == 2 and result["current_device"] == rank, result
        assert result["world_size"] == 2 and result["all_reduce"] == 3.0 and result["backend"] == "gloo"
        assert result["cpu_mode"] is True
    if init == "tcp":
        results, output = slurm_tasks(tmp_path / "off", init, cpu_mode=False)
        assert results == {}
        assert "AssertionError" in output or CUDA_ERROR.search(output), output[-3000:]

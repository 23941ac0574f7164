"""CPU mode, distributed part (compatfix.cpu.torch.distributed, compatfix.cpu.torch.nn): nccl becomes gloo, DDP
drops device_ids for CPU modules, SyncBatchNorm synchronises its statistics over gloo.

Real torch 2.x, real gloo, loopback only, bounded timeouts. Each behaviour is shown
failing with torch's genuine error without compatfix, and without ``--device cpu``, and
working under ``--device cpu``. The "genuine error" halves assume a machine without a
CUDA GPU (where nccl and CUDA SyncBatchNorm would simply work) and skip on one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import FIXTURES, clean_env, finished_but_aborted_at_teardown, free_port, has_cuda_gpu, run_python

FIXTURES = os.path.join(FIXTURES, "cpu_distributed")
TIMEOUT = 150

NCCL_ERROR = "ProcessGroupNCCL is only supported with GPUs, no GPUs found!"
DDP_DEVICE_IDS_ERROR = "DistributedDataParallel device_ids and output_device arguments only work with"
SYNCBN_INPUT_ERROR = "SyncBatchNorm expected input tensor to be on GPU"
DDP_SYNCBN_ERROR = "SyncBatchNorm layers only work with GPU modules"

# The ways a run is started: off (COMPATFIX=0), on without the mode, on with it.
OFF, ON, CPU = "compatfix-off", "compatfix-on", "cpu-mode"


def fixture(name):
    return os.path.join(FIXTURES, name)


def env_for(how, **extra):
    """clean_env, with gloo kept on loopback and to one thread."""
    return clean_env(how != OFF, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", **extra)


def prefix(how):
    return ["-m", "compatfix", "--device", "cpu"] if how == CPU else []


def needs_no_gpu():
    if has_cuda_gpu():
        pytest.skip("a CUDA GPU is present: torch's GPU-only errors do not happen here")


# --- one process, a world of one ---------------------------------------------------------


def run_single(case, how, tmp_path, report=None):
    env = env_for(how, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="1",
                  LOCAL_RANK="0")
    args = prefix(how)
    if report is not None:
        args = args + ["--report", report] if args else ["-m", "compatfix", "--report", report]
    return run_python(*args, fixture("single_process.py"), case, env=env, cwd=str(tmp_path), timeout=TIMEOUT)


def result_of(completed):
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    if not finished_but_aborted_at_teardown(completed.returncode, completed.stderr, len(lines) == 1):
        assert completed.returncode == 0, completed.stdout + completed.stderr
    assert len(lines) == 1, completed.stdout + completed.stderr
    return json.loads(lines[0][len("RESULT "):])


def assert_fails_with(completed, message):
    assert completed.returncode != 0, completed.stdout
    assert message in completed.stderr, completed.stderr


@pytest.mark.parametrize("case", ["init-positional", "init-keyword", "init-upper", "init-enum"])
def test_init_process_group_nccl_becomes_gloo(case, tmp_path):
    report = str(tmp_path / "report.json")
    result = result_of(run_single(case, CPU, tmp_path, report=report))
    assert result["backend"] == "gloo"
    assert result["all_reduce"] == [1.0, 1.0, 1.0]
    with open(report) as handle:
        (process,) = json.load(handle)["processes"]
    redirected = [item for item in process["redirected"] if item["shim"] == "cpu.torch.distributed.backend"]
    assert len(redirected) == 1 and redirected[0]["count"] == 1, process["redirected"]
    assert "init_process_group" in redirected[0]["call"] and "'gloo'" in redirected[0]["call"]

    # Without compatfix torch refuses nccl here. (With compatfix on but CPU mode off, the
    # default nccl fallback of tests/shims/torch/test_distributed.py answers instead.)
    needs_no_gpu()
    assert_fails_with(run_single(case, OFF, tmp_path), NCCL_ERROR)


def test_new_group_nccl_becomes_gloo(tmp_path):
    result = result_of(run_single("new-group", CPU, tmp_path))
    assert result["group_backend"] == "gloo"
    assert result["group_all_reduce"] == [1.0, 1.0]

    needs_no_gpu()
    assert_fails_with(run_single("new-group", OFF, tmp_path), NCCL_ERROR)


def test_ddp_drops_device_ids_for_a_cpu_module_and_keeps_the_other_options(tmp_path):
    result = result_of(run_single("ddp", CPU, tmp_path))
    assert result["device_ids"] is None and result["output_device"] is None
    assert result["find_unused_parameters"] is True
    assert result["broadcast_buffers"] is False
    assert result["grad"] is True
    for how in (OFF, ON):  # torch raises for CPU modules, GPU or not
        assert_fails_with(run_single("ddp", how, tmp_path), DDP_DEVICE_IDS_ERROR)


def test_ddp_accepts_syncbatchnorm_in_a_cpu_module(tmp_path):
    # A world of one: SyncBatchNorm is BatchNorm there, but torch still raises (first
    # DDP's check, then the layer's own input check).
    result = result_of(run_single("ddp-syncbn", CPU, tmp_path))
    assert result["syncbn"] == "SyncBatchNorm" and result["num_batches_tracked"] == 1
    for how in (OFF, ON):
        assert_fails_with(run_single("ddp-syncbn", how, tmp_path), DDP_SYNCBN_ERROR)


def test_disabling_the_syncbatchnorm_shim_brings_torchs_error_back(tmp_path):
    env = env_for(CPU, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="1",
                  LOCAL_RANK="0")
    completed = run_python(
        "-m", "compatfix", "--device", "cpu", "--disable", "cpu.torch.nn.SyncBatchNorm",
        fixture("single_process.py"), "ddp-syncbn", env=env, cwd=str(tmp_path), timeout=TIMEOUT,
    )
    assert_fails_with(completed, DDP_SYNCBN_ERROR)


# --- the patches themselves ----------------------------------------------------------------


def test_patches_are_plain_functions_applied_once_with_originals_kept():
    result = run_python(
        code="""
        import types, sys
        import torch, torch.distributed as dist, torch.nn as nn
        import torch.nn.parallel.distributed as ddp_module
        import compatfix
        from compatfix.cpu.torch import distributed as cpu_distributed, nn as cpu_nn
        DDP = nn.parallel.DistributedDataParallel
        owners = [(dist, "init_process_group"), (dist, "new_group"),
                  (sys.modules["torch.distributed.distributed_c10d"], "init_process_group"),
                  (DDP, "__init__"), (DDP, "_passing_sync_batchnorm_handle"),
                  (nn.SyncBatchNorm, "forward")]
        before = [getattr(owner, name) for owner, name in owners]
        cpu_distributed.redirect_nccl_to_gloo(dist)  # again: harmless
        cpu_nn.patch_ddp(ddp_module)
        cpu_nn.patch_sync_batch_norm(ddp_module)
        cpu_nn.patch_sync_batch_norm(sys.modules["torch.nn.modules.batchnorm"])
        after = [getattr(owner, name) for owner, name in owners]
        assert before == after
        for (owner, name), patched in zip(owners, after):
            assert type(patched) is types.FunctionType, (name, patched)
            assert compatfix.is_patched(owner, name), name
            original = compatfix.get_original(owner, name)
            assert original is not patched and not hasattr(original, "__compatfix_shim__")
            assert patched.__wrapped__ is original
        assert dist.init_process_group is sys.modules["torch.distributed.distributed_c10d"].init_process_group
        assert len({id(f) for f in after}) == len(after) - 1  # one function per torch callable
        print("OK")
        """,
        env=clean_env(True, COMPATFIX_DEVICE="cpu"),
        timeout=TIMEOUT,
    )
    assert result.stdout.split() == ["OK"], result.stderr


def test_without_the_mode_nothing_of_it_loads_or_changes():
    result = run_python(
        code="""
        import sys
        import torch, torch.distributed as dist, torch.nn as nn
        import compatfix
        from compatfix import _engine
        assert _engine.active() is not None  # compatfix is on
        assert "compatfix.cpu.torch.distributed" not in sys.modules and "compatfix.cpu.torch.nn" not in sys.modules
        DDP = nn.parallel.DistributedDataParallel
        for owner, name in [(dist, "init_process_group"), (dist, "new_group"), (DDP, "__init__"),
                            (DDP, "_passing_sync_batchnorm_handle"), (nn.SyncBatchNorm, "forward")]:
            assert not compatfix.is_patched(owner, name), name
            assert not hasattr(getattr(owner, name), "__compatfix_shim__"), name
        print("OK")
        """,
        # The always-on nccl fallback (compatfix.shims.torch_distributed) also replaces
        # init_process_group/new_group; this test is about CPU mode's own patches.
        env=clean_env(True, COMPATFIX_DISABLE="torch.distributed.nccl_fallback"),
        timeout=TIMEOUT,
    )
    assert result.stdout.split() == ["OK"], result.stderr


# --- two ranks under torchrun ------------------------------------------------------------------


def torchrun(how, script, out_dir, cwd, report=None):
    args = prefix(how)
    if report is not None:
        args = [*args, "--report", report]
    command = [
        sys.executable, *args, "-m", "torch.distributed.run", "--nproc_per_node", "2",
        "--master_addr", "127.0.0.1", "--master_port", str(free_port()), script, out_dir,
    ]
    env = env_for(how, PYTHONWARNINGS="ignore")
    return subprocess.run(
        command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT,
    )


def rank_results(completed, out_dir):
    paths = [os.path.join(out_dir, "rank%d.json" % rank) for rank in range(2)]
    written = all(os.path.exists(p) for p in paths)
    if not finished_but_aborted_at_teardown(completed.returncode, completed.stderr, written):
        assert completed.returncode == 0, completed.stdout + completed.stderr
    results = {}
    for rank in range(2):
        with open(os.path.join(out_dir, "rank%d.json" % rank)) as handle:
            results[rank] = json.load(handle)
    return results


def test_syncbatchnorm_on_two_ranks_equals_batchnorm_on_the_whole_batch(tmp_path):
    out_dir = str(tmp_path / "cpu")
    os.mkdir(out_dir)
    results = rank_results(torchrun(CPU, fixture("syncbn_equivalence.py"), out_dir, str(tmp_path)), out_dir)
    for rank, result in results.items():
        assert result["world_size"] == 2
        for case in ("bn2d_momentum_0.1", "bn1d_cumulative"):
            differences = result[case]
            assert set(differences) == {
                "output", "input_grad", "weight_grad", "bias_grad", "running_mean", "running_var", "eval_output",
            }
            for key, value in differences.items():
                assert value < 1e-5, (rank, case, key, value)

    # Without the mode, the same job (gloo, asked for explicitly) fails in the layer.
    for how in (OFF, ON):
        plain_dir = str(tmp_path / how)
        os.mkdir(plain_dir)
        completed = torchrun(how, fixture("syncbn_equivalence.py"), plain_dir, str(tmp_path))
        assert completed.returncode != 0
        assert SYNCBN_INPUT_ERROR in completed.stdout + completed.stderr


def training_script(tmp_path, keep_cuda_calls):
    """train_2021.py, or (``keep_cuda_calls`` False) the same without the lines that need
    the device redirection of CPU mode (Tensor.cuda, torch.cuda.set_device)."""
    with open(fixture("train_2021.py")) as handle:
        lines = handle.read().splitlines(keepends=True)
    if keep_cuda_calls:
        return fixture("train_2021.py")
    path = tmp_path / "train_2021_no_cuda_calls.py"
    path.write_text("".join(line for line in lines if not line.rstrip().endswith("# CUDA call")))
    return str(path)


def check_training(tmp_path, script):
    out_dir = str(tmp_path / "cpu")
    os.mkdir(out_dir)
    report = str(tmp_path / "report.json")
    results = rank_results(torchrun(CPU, script, out_dir, str(tmp_path), report=report), out_dir)
    assert results[0]["backend"] == results[1]["backend"] == "gloo"
    assert results[0]["syncbn"] == "SyncBatchNorm"
    assert len(results[0]["losses"]) == 3
    # DDP kept the replicas equal; SyncBN gave both ranks the same running statistics.
    assert results[0]["losses"] == results[1]["losses"]
    assert results[0]["checksum"] == pytest.approx(results[1]["checksum"], abs=1e-9)
    assert results[0]["running_mean"] == pytest.approx(results[1]["running_mean"], abs=1e-6)
    with open(report) as handle:
        processes = json.load(handle)["processes"]
    workers = [p for p in processes if p["redirected"]]
    assert len(workers) == 2, processes
    for process in workers:
        shims = {item["shim"] for item in process["redirected"]}
        assert {"cpu.torch.distributed.backend", "cpu.torch.nn.DistributedDataParallel",
                "cpu.torch.nn.SyncBatchNorm"} <= shims

    # Without compatfix torch refuses nccl here. (Without CPU mode, compatfix's default
    # nccl fallback alone would get past this error; tests/shims/torch/test_distributed.py.)
    needs_no_gpu()
    plain_dir = str(tmp_path / OFF)
    os.mkdir(plain_dir)
    completed = torchrun(OFF, script, plain_dir, str(tmp_path))
    assert completed.returncode != 0
    assert NCCL_ERROR in completed.stdout + completed.stderr


def test_2021_training_script_runs_on_two_cpu_ranks(tmp_path):
    check_training(tmp_path, training_script(tmp_path, keep_cuda_calls=False))


def test_2021_training_script_with_its_cuda_calls_runs_on_two_cpu_ranks(tmp_path):
    found = run_python(
        code="import importlib.util; print(importlib.util.find_spec('compatfix.cpu.torch.cuda') is not None)",
        compatfix=False,
    )
    if found.stdout.strip() != "True":
        pytest.skip("needs compatfix.cpu.torch.cuda (Tensor.cuda, torch.cuda.set_device on the CPU)")
    check_training(tmp_path, training_script(tmp_path, keep_cuda_calls=True))

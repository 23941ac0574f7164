"""CPU mode for OpenMMLab 1.x code (compatfix.cpu.mmcv.parallel and .ops, on top of the torch-level CPU mode):
mmcv's init_dist/get_dist_info, MMDataParallel and MMDistributedDataParallel as GPU-era code
builds them, mmseg's build_dp/build_ddp (0.30 only: 0.11 has none) and multi_gpu_test,
mmcv's SyncBN and MMSyncBN layers, on the real mmcv/mmseg of each stack (paper: mmcv 1.3.0 +
mmseg 0.11.0; modern: mmcv 1.7.2 + mmseg 0.30.0), on one rank and on two (gloo, loopback).

The red halves disable one of this module's shims under CPU mode (COMPATFIX_DISABLE), so
each shows the failure that shim removes; without CPU mode the same code fails at its
first CUDA call on a machine without a GPU (also shown).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import MM_PARALLEL as FIXTURES
from support import clean_env, finished_but_aborted_at_teardown, free_port, run_mm_parallel_case

DDP_STEPS = os.path.join(FIXTURES, "ddp_steps.py")
EQUIVALENCE = os.path.join(FIXTURES, "mmsyncbn_equivalence.py")
CPU = {"COMPATFIX_DEVICE": "cpu"}
NO_DRIVER = "Found no NVIDIA driver on your system"
STACK = os.environ.get("COMPATFIX_TEST_STACK", "modern")
TIMEOUT = 240


def launch(script, args, out_dir, ranks, cpu_mode=True, disable=None, launcher="torch.distributed.launch"):
    """``python [-m compatfix --device cpu] -m <launcher> --nproc_per_node N script args``;
    returns each rank's json and the output."""
    out_dir.mkdir()
    prefix = ["-m", "compatfix", "--device", "cpu"] if cpu_mode else []
    if disable:
        prefix += ["--disable", disable]
    command = [sys.executable, *prefix, "-m", launcher, "--nproc_per_node", str(ranks),
               "--master_addr", "127.0.0.1", "--master_port", str(free_port()), script, *args, str(out_dir)]
    env = clean_env(True, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    completed = subprocess.run(command, env=env, cwd=FIXTURES, stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=TIMEOUT)
    output = completed.stdout + completed.stderr
    results = {}
    for rank in range(ranks):
        path = out_dir / ("rank%d.json" % rank)
        if path.exists():
            results[rank] = json.loads(path.read_text())
    return results, output


# --- MMDistributedDataParallel as train_segmentor builds it --------------------------------


@pytest.mark.stack("modern", "paper")
@pytest.mark.parametrize("norm", ["SyncBN", "MMSyncBN"])
def test_legacy_distributed_training_and_testing_on_two_cpu_ranks(tmp_path, norm):
    # init_dist('pytorch', backend='nccl'); MMDDP(model.cuda(), device_ids=[current_device()],
    # broadcast_buffers=False); train_step x2, val_step, forward; mmseg's multi_gpu_test with
    # gpu_collect True (collect_results_gpu: 'cuda' tensors all-gathered) and False.
    results, output = launch(DDP_STEPS, ["legacy", norm], tmp_path / "cpu", ranks=2)
    assert set(results) == {0, 1}, output[-4000:]
    for result in results.values():
        assert result["error"] is None, output[-4000:]
        assert result["world_size"] == 2 and result["backend"] == "gloo"
        assert result["norm_class"] == "SyncBatchNorm"
        assert result["test_output"] == 1
        assert "DataContainer" not in str(result["seen"])
        assert len(result["seen"]) == 4 + 3 * 2  # 4 steps, 3 test samples per rank per collection
    assert results[0]["multi_gpu_test_True"] == results[0]["multi_gpu_test_False"] == 5  # rank 0 collects
    assert results[1]["multi_gpu_test_True"] is None and results[1]["multi_gpu_test_False"] is None
    # DDP averaged the gradients; the SyncBN layers agree on their statistics (buffers are
    # not broadcast: broadcast_buffers=False), though each rank had its own batches.
    assert results[0]["losses"] != results[1]["losses"]
    assert results[0]["checksum"] == pytest.approx(results[1]["checksum"], abs=1e-9)
    assert results[0]["running_mean"] == pytest.approx(results[1]["running_mean"], abs=1e-7)


@pytest.mark.stack("modern", "paper")
def test_legacy_distributed_training_needs_the_datacontainer_scatter(tmp_path):
    results, output = launch(DDP_STEPS, ["legacy", "BN"], tmp_path / "cpu", ranks=1,
                             disable="cpu.mmcv.parallel.mmddp_scatter")
    (result,) = results.values()
    assert result["error"] is not None and result["error"].startswith("train_step: ")
    assert result["seen"][0] == {"img": "DataContainer", "img_metas": "DataContainer"}


@pytest.mark.stack("modern", "paper")
def test_legacy_distributed_training_without_cpu_mode_fails_at_its_first_cuda_call(tmp_path):
    results, output = launch(DDP_STEPS, ["legacy", "BN"], tmp_path / "plain", ranks=1, cpu_mode=False)
    assert results == {}
    # init_dist: torch.cuda.set_device(rank % torch.cuda.device_count()) with no GPU
    assert "ZeroDivisionError: integer modulo by zero" in output or NO_DRIVER in output, output[-3000:]


# --- MMSyncBN ----------------------------------------------------------------------------------------


@pytest.mark.stack("modern", "paper")
def test_mmsyncbn_on_two_ranks_equals_batchnorm_on_the_whole_batch(tmp_path):
    results, output = launch(EQUIVALENCE, [], tmp_path / "cpu", ranks=2, launcher="torch.distributed.run")
    assert set(results) == {0, 1}, output[-4000:]
    for rank, result in results.items():
        assert result["group_size"] == 2 and result["num_batches_tracked"] == 3
        for key, value in result["differences"].items():
            assert value < 1e-5, (rank, key, value)
    # Without CPU mode the layer runs mmcv's compiled kernels, which this mmcv lacks.
    _, output = launch(EQUIVALENCE, [], tmp_path / "plain", ranks=2, cpu_mode=False,
                       launcher="torch.distributed.run")
    assert "mmcv op 'sync_bn_forward_mean' needs mmcv-full's compiled ops" in output, output[-3000:]


@pytest.mark.stack("modern", "paper")
def test_mmsyncbn_without_a_process_group_is_batchnorm():
    result = run_mm_parallel_case("mmsyncbn-no-group", **CPU)
    assert result["error"] is None
    assert result["group_size"] == 1
    assert result["train_difference"] == 0.0 and result["running_mean_difference"] == 0.0
    assert result["eval_difference"] == 0.0
    without = run_mm_parallel_case("mmsyncbn-no-group", COMPATFIX_DISABLE="cpu.mmcv.ops.sync_bn", **CPU)
    assert without["error"].startswith("ValueError: Default process group has not been initialized")


# --- MMDataParallel and mmcv's scatter -------------------------------------------------------------


@pytest.mark.stack("modern", "paper")
def test_mmdataparallel_steps_on_the_cpu():
    result = run_mm_parallel_case("dp-steps", **CPU)
    assert result["error"] is None
    assert result["seen_datacontainer"] is False and result["test_output"] == 1
    assert result["seen"][0] == {"img": "Tensor", "img_metas": ["list", "dict"]}
    assert NO_DRIVER in run_mm_parallel_case("dp-steps")["error"]  # model.cuda() without CPU mode


@pytest.mark.stack("paper")
def test_mmcv_1_3_cpu_path_of_mmdataparallel_needs_the_fixes():
    step = run_mm_parallel_case("dp-steps", COMPATFIX_DISABLE="cpu.mmcv.parallel.mmdp_cpu_step", **CPU)
    assert step["error"].endswith("argument after ** must be a mapping, not tuple")
    scatter = run_mm_parallel_case("dp-steps", COMPATFIX_DISABLE="cpu.mmcv.parallel.scatter_to_cpu", **CPU)
    assert scatter["error"] == ("RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, "
                                "but got input of size: [1, 2, 3, 8, 8]")


@pytest.mark.stack("modern", "paper")
def test_scatter_to_gpu_0_lands_on_the_cpu():
    result = run_mm_parallel_case("scatter-gpu0", **CPU)
    assert result["error"] is None
    assert result["devices"] == ["cpu"]
    assert result["scattered"] == {"img": "Tensor", "img_metas": ["list", "dict"], "gt_semantic_seg": "Tensor"}


# --- mmseg's build_dp / build_ddp ---------------------------------------------------------------------


def test_mmseg_build_dp_and_build_ddp_take_the_cpu():
    result = run_mm_parallel_case("mmseg-builders", **CPU)
    assert result["error"] is None
    assert result["device"] == "cuda"  # get_device(): CPU mode plays the one CUDA device
    assert result["wrappers"] == ["MMDataParallel", "MMDistributedDataParallel"]
    assert result["ddp_device_ids"] is None and result["seen_datacontainer"] is False
    # Without CPU mode there is no GPU: get_device() says 'cpu', which build_ddp refuses
    # (unless nccl already failed: 'ProcessGroupNCCL is only supported with GPUs').
    error = run_mm_parallel_case("mmseg-builders")["error"]
    assert "Only available for cuda or mlu devices." in error or "ProcessGroupNCCL" in error, error


def test_nothing_of_it_loads_without_cpu_mode():
    from support import run_python

    result = run_python(
        code="""
        import sys
        import mmcv.ops
        from mmcv.parallel import data_parallel, distributed, _functions
        import compatfix
        assert "compatfix.cpu.mmcv.parallel" not in sys.modules and "compatfix.cpu.mmcv.ops" not in sys.modules
        for owner, name in [(distributed.MMDistributedDataParallel, "train_step"),
                            (data_parallel.MMDataParallel, "train_step"),
                            (mmcv.ops.sync_bn.SyncBatchNorm, "forward"), (_functions.Scatter, "forward")]:
            assert not compatfix.is_patched(owner, name), name
        print("OK")
        """,
        timeout=TIMEOUT,
    )
    assert result.stdout.split() == ["OK"], result.stderr[-3000:]


# --- end to end: a 2021-style mmseg training script under torch.distributed.launch --------------

E2E = os.path.join(os.path.dirname(FIXTURES), "mm_e2e")
LR_AFTER = {2: 0.00774, 4: 0.00294}  # the config's poly lr, logged with the evaluation after iteration N


def write_dataset(root) -> None:
    """Four 32x32 images of three classes (left half, a box on the right, background)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    for sub in ("img", "ann"):
        (root / sub).mkdir(parents=True)
    for index in range(4):
        ann = np.zeros((32, 32), np.uint8)
        ann[:, :16] = 1
        ann[8:24, 20:28] = 2
        img = rng.integers(0, 60, (32, 32, 3)).astype(np.uint8)
        img[ann == 1] += np.array([180, 0, 0], np.uint8)
        img[ann == 2] += np.array([0, 0, 180], np.uint8)
        Image.fromarray(img).save(root / "img" / ("%d.png" % index))
        Image.fromarray(ann).save(root / "ann" / ("%d.png" % index))


def run_tool(tmp_path, args, compatfix=True, cpu_mode=True, ranks=2):
    prefix = ["-m", "compatfix", "--device", "cpu"] if compatfix and cpu_mode else []
    if ranks:
        prefix += ["-m", "torch.distributed.launch", "--nproc_per_node", str(ranks), "--master_addr",
                   "127.0.0.1", "--master_port", str(free_port())]
    env = clean_env(compatfix, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    completed = subprocess.run([sys.executable, *prefix, *args], env=env, cwd=str(tmp_path),
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=2 * TIMEOUT)
    return completed.returncode, completed.stdout + completed.stderr


def validations(work_dir):
    """(lr, mIoU) of each validation in the json logs of ``work_dir``, in order."""
    found = []
    for name in sorted(os.listdir(work_dir)):
        if name.endswith(".log.json"):
            with open(os.path.join(work_dir, name)) as handle:
                for line in handle:
                    entry = json.loads(line)
                    if entry.get("mode") == "val":
                        found.append((entry["lr"], entry["mIoU"]))
    return found


@pytest.mark.stack("modern", "paper")
def test_legacy_mmseg_training_script_trains_validates_resumes_and_tests_on_two_cpu_ranks(tmp_path):
    write_dataset(tmp_path / "data")
    train, test, config = (os.path.join(E2E, name) for name in ("train.py", "test.py", "config.py"))
    work_dir = tmp_path / "work"

    # 1. Train 4 iterations: SyncBN, IterBasedRunnerAmp, our optimizer hook, nccl, stock
    #    train_segmentor (DistEvalHook, by_epoch from the runner's name), checkpoints at 2, 4.
    code, output = run_tool(tmp_path, [train, config, "--work-dir", str(work_dir), "--launcher", "pytorch"])
    assert code == 0 or finished_but_aborted_at_teardown(code, output, (work_dir / "iter_4.pth").exists()), \
        output[-5000:]
    assert {"iter_2.pth", "iter_4.pth", "latest.pth"} <= set(os.listdir(work_dir))
    assert [lr for lr, _ in validations(work_dir)] == [LR_AFTER[2], LR_AFTER[4]]
    for rank in (0, 1):
        steps = json.loads((work_dir / ("optimizer_steps_rank%d.json" % rank)).read_text())
        assert steps == [1, 2, 3, 4]

    # 2. Resume from iteration 2 and train to 4 again. (mmcv >= 1.3.9 stores iter = N - 1 in
    #    iter_N.pth, so it repeats iteration 2 there; mmcv 1.3.0 resumes after it.)
    for name in os.listdir(work_dir):
        if name.endswith(".log.json"):
            os.remove(work_dir / name)
    code, output = run_tool(tmp_path, [train, config, "--work-dir", str(work_dir), "--resume-from",
                                       str(work_dir / "iter_2.pth"), "--launcher", "pytorch"])
    logged = any(name.endswith(".log.json") for name in os.listdir(work_dir))
    assert code == 0 or finished_but_aborted_at_teardown(code, output, logged), output[-5000:]
    assert "resumed from epoch" in output
    assert validations(work_dir)[-1][0] == LR_AFTER[4]
    steps = json.loads((work_dir / "optimizer_steps_rank0.json").read_text())
    assert steps[:4] == [1, 2, 3, 4] and steps[-2:] == [3, 4] and len(steps) in (6, 7)

    # 3. Test the last checkpoint with --eval mIoU: multi_gpu_test on two ranks (results
    #    collected through the tmpdir and with --gpu-collect), single_gpu_test on one.
    metrics = {}
    for name, ranks, extra in (("cpu_collect", 2, ["--launcher", "pytorch", "--tmpdir", str(tmp_path / "t")]),
                               ("gpu_collect", 2, ["--launcher", "pytorch", "--gpu-collect"]),
                               ("single", 0, [])):
        result_file = tmp_path / ("%s.json" % name)
        code, output = run_tool(tmp_path, [test, config, str(work_dir / "latest.pth"), "--eval", "mIoU",
                                           "--result-file", str(result_file), *extra], ranks=ranks)
        assert code == 0 or finished_but_aborted_at_teardown(code, output, result_file.exists()), output[-5000:]
        metrics[name] = json.loads(result_file.read_text())
        assert metrics[name]["results"] == 4
    assert metrics["cpu_collect"] == metrics["gpu_collect"] == metrics["single"]
    assert metrics["single"]["metrics"]["mIoU"] == pytest.approx(validations(work_dir)[-1][1], abs=1e-4)


@pytest.mark.stack("modern", "paper")
def test_legacy_mmseg_training_script_fails_without_compatfix(tmp_path):
    write_dataset(tmp_path / "data")
    args = [os.path.join(E2E, "train.py"), os.path.join(E2E, "config.py"), "--work-dir", str(tmp_path / "work"),
            "--launcher", "pytorch"]
    code, output = run_tool(tmp_path, args, compatfix=False)
    assert code != 0
    assert "No module named 'mmcv._ext'" in output, output[-3000:]  # mmseg.models needs mmcv's ops
    code, output = run_tool(tmp_path, args, cpu_mode=False)  # compatfix, but no GPU and no CPU mode
    assert code != 0
    assert "ZeroDivisionError: integer modulo by zero" in output or NO_DRIVER in output, output[-3000:]

"""mmcv's parallel wrappers and SyncBN on torch 2.x (compatfix.shims.mmcv.parallel), against
the real mmcv of each stack: paper has mmcv 1.3.0, modern mmcv 1.7.2, both with torch 2.14.

Each breakage is shown with compatfix off (torch's or mmcv's genuine error) and fixed with
it on. The fixtures (tests/fixtures/mm_parallel) use a small segmentor of ours with mmseg's
model interface and DataContainer batches collated by mmcv's collate; one- and two-rank
runs use gloo on loopback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import FIXTURES, clean_env, free_port, one_rank_env, run_mm_parallel_case, run_python

FIXTURES = os.path.join(FIXTURES, "mm_parallel")
DDP_STEPS = os.path.join(FIXTURES, "ddp_steps.py")
STACK = os.environ.get("COMPATFIX_TEST_STACK", "modern")
# paper (mmcv 1.3.0) and mmold (mmcv 1.2.7) are both before mmcv 1.3.9, 1.4.8 and 1.6.0.
OLD_MMCV = STACK in ("paper", "mmold")
TIMEOUT = 240

GET_STREAM_ERROR = "AttributeError: 'int' object has no attribute 'type'"
REPLICATED_ERROR = "AttributeError: 'MMDistributedDataParallel' object has no attribute '_use_replicated_tensor_module'"
SYNC_PARAMS_ERROR = "AttributeError: 'MMDistributedDataParallel' object has no attribute '_sync_params'"
SPECIFY_ERROR = "AttributeError: 'super' object has no attribute '_specify_ddp_gpu_num'"


def run_ddp_steps(tmp_path, compatfix: bool, ranks: int = 1, **extra: str) -> dict[int, dict]:
    out_dir = tmp_path / ("on" if compatfix else "off")
    out_dir.mkdir(parents=True)
    if ranks == 1:
        command = [sys.executable, DDP_STEPS, "plain", "BN", str(out_dir)]
        env = one_rank_env(compatfix, **extra)
    else:
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(ranks),
                   "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
                   DDP_STEPS, "plain", "BN", str(out_dir)]
        env = clean_env(compatfix, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    completed = subprocess.run(command, env=env, cwd=FIXTURES, stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=TIMEOUT)
    results = {}
    for rank in range(ranks):
        path = out_dir / ("rank%d.json" % rank)
        assert path.exists(), completed.stdout[-3000:] + completed.stderr[-3000:]
        results[rank] = json.loads(path.read_text())
    return results


# --- _get_stream(int) ----------------------------------------------------------------------


@pytest.mark.stack("modern", "paper")
def test_get_stream_takes_a_gpu_index_again():
    assert run_mm_parallel_case("get-stream", compatfix=False)["error"] == GET_STREAM_ERROR
    # this shim and no other makes the difference
    assert run_mm_parallel_case("get-stream", COMPATFIX_DISABLE="mmcv.parallel.get_stream_device_index")["error"] == GET_STREAM_ERROR
    on = run_mm_parallel_case("get-stream")
    assert on["error"] is None
    assert on["stream"] in (None, "Stream")  # None: no accelerator here (torch's own answer)


@pytest.mark.stack("modern", "paper")
def test_scatter_to_a_gpu_index_fails_in_get_stream_without_compatfix():
    # mmcv.parallel.scatter(batch, [0]) is what MMDataParallel/MMDDP do with device_ids;
    # it reaches the GPU copy only with the shim (and runs whole in CPU mode: test_cpu_mm).
    assert run_mm_parallel_case("scatter-gpu0", compatfix=False)["error"] == GET_STREAM_ERROR
    assert GET_STREAM_ERROR not in str(run_mm_parallel_case("scatter-gpu0")["error"])


def test_torchs_own_get_stream_is_untouched():
    result = run_python(
        code="""
        import torch.nn.parallel._functions as torch_functions
        from mmcv.parallel import _functions
        import compatfix
        assert compatfix.is_patched(_functions, "_get_stream")
        assert not compatfix.is_patched(torch_functions, "_get_stream")
        assert compatfix.get_original(_functions, "_get_stream") is torch_functions._get_stream
        print("OK")
        """,
        timeout=TIMEOUT,
    )
    assert result.stdout.split() == ["OK"], result.stderr[-3000:]


# --- MMDistributedDataParallel: train_step, val_step, forward ---------------------------------


@pytest.mark.stack("modern", "paper", "mmold")
def test_mmddp_steps_fail_without_compatfix(tmp_path):
    (off,) = run_ddp_steps(tmp_path, compatfix=False).values()
    if OLD_MMCV:  # mmcv 1.3.0 train_step calls DDP._sync_params (gone in torch 1.11)
        assert off["error"] == "train_step: " + SYNC_PARAMS_ERROR
        # torch's own _sync_params shim (shims/torch/nn/parallel.py) restores the method too
        (alone,) = run_ddp_steps(tmp_path / "alone", compatfix=True, COMPATFIX_DISABLE=(
            "mmcv.parallel.ddp_sync_params,torch.nn.parallel.DistributedDataParallel._sync_params")).values()
        assert alone["error"] == "train_step: " + SYNC_PARAMS_ERROR
    else:  # mmcv 1.7.2 _run_ddp_forward reads _use_replicated_tensor_module (gone in torch 2.1)
        assert off["error"] == "forward: " + REPLICATED_ERROR
        assert len(off["losses"]) == 2  # its train_step/val_step already work on torch 2


@pytest.mark.stack("modern", "paper", "mmold")
def test_mmddp_steps_run_with_compatfix(tmp_path):
    (on,) = run_ddp_steps(tmp_path, compatfix=True).values()
    assert on["error"] is None
    assert len(on["losses"]) == 2 and on["test_output"] == 1
    assert len(on["seen"]) == 4  # two train_steps, one val_step, one forward


@pytest.mark.stack("modern", "paper")
def test_mmddp_on_two_ranks_keeps_replicas_in_sync(tmp_path):
    results = run_ddp_steps(tmp_path, compatfix=True, ranks=2)
    for result in results.values():
        assert result["error"] is None and result["world_size"] == 2
    # Gradients were averaged: the same parameters on both ranks after two steps.
    assert results[0]["checksum"] == pytest.approx(results[1]["checksum"], abs=1e-9)
    assert results[0]["losses"] != results[1]["losses"]  # each rank had its own batches
    # broadcast_buffers=True (DDP's default): before val_step (a forward that leaves the
    # BN statistics alone) rank 0's buffers were broadcast: _sync_params/_sync_buffers ran.
    assert results[0]["running_mean"] != results[1]["running_mean"]
    assert results[0]["running_mean_after_val_step"] == results[1]["running_mean_after_val_step"]
    assert results[1]["running_mean_after_val_step"] == results[0]["running_mean"]


@pytest.mark.stack("modern", "paper")
def test_mmddp_forward_with_device_ids_unwraps_datacontainers():
    # MMDDP on GPU 0 has device_ids=[0]; a CPU module cannot be given them, so the fixture
    # sets them after construction (see cases.py). torch >= 1.12's DDP.forward does not call
    # self.to_kwargs: with mmcv 1.3.0 the model gets the DataContainers (mmseg#1742).
    off = run_mm_parallel_case("forward-device-ids", compatfix=False)
    if OLD_MMCV:
        assert off["error"].startswith("TypeError: conv2d() received an invalid combination of arguments")
        assert off["seen"] == [{"img": ["list", "DataContainer"], "img_metas": ["list", "DataContainer"]}]
    else:
        assert off["error"] == REPLICATED_ERROR
    # Moving the inputs to "GPU 0" needs a GPU, or CPU mode, where it is the CPU.
    cpu_mode = {"COMPATFIX_DEVICE": "cpu"}
    on = run_mm_parallel_case("forward-device-ids", **cpu_mode)
    assert on["error"] is None
    assert on["seen"] == [{"img": ["list", "Tensor"], "img_metas": ["list", ["list", "dict"]]}]
    # ... and it is this module's shims that make the difference there.
    shim = "mmcv.parallel.ddp_forward_scatters_datacontainers" if OLD_MMCV else \
        "mmcv.parallel.ddp_replicated_tensor_flag"
    without = run_mm_parallel_case("forward-device-ids", COMPATFIX_DISABLE=shim, **cpu_mode)
    assert without["error"] is not None
    if OLD_MMCV:
        assert "DataContainer" in str(without["seen"])
    else:
        assert without["error"] == REPLICATED_ERROR


# --- SyncBN: _specify_ddp_gpu_num ---------------------------------------------------------------


@pytest.mark.stack("modern", "paper", "mmold")
def test_syncbn_config_builds():
    off = run_mm_parallel_case("syncbn-build", compatfix=False)
    if OLD_MMCV:  # mmcv 1.3.0 calls torch's _specify_ddp_gpu_num (gone in torch 1.9)
        assert off["error"] == SPECIFY_ERROR
        alone = run_mm_parallel_case("syncbn-build", COMPATFIX_DISABLE="mmcv.utils.syncbn_specify_ddp_gpu_num")
        assert alone["error"] == SPECIFY_ERROR
    else:  # mmcv >= 1.3.9 checks for it first
        assert off["error"] is None
    on = run_mm_parallel_case("syncbn-build")
    assert on["error"] is None and on["layer"] == ["bn", "SyncBatchNorm"]


# --- the shims themselves -----------------------------------------------------------------------


@pytest.mark.stack("modern", "paper")
def test_only_the_needed_shims_apply_and_applying_again_changes_nothing():
    result = run_python(
        code="""
        import json, sys
        import compatfix
        import torch.nn.parallel.distributed as torch_ddp
        import mmcv.utils.parrots_wrapper as parrots_wrapper
        from mmcv.parallel import _functions, distributed
        from compatfix.shims.mmcv import parallel as shims
        from compatfix.shims.mmcv.utils import parrots_wrapper as syncbn_shims
        DDP = distributed.MMDistributedDataParallel
        owners = {
            "get_stream": (_functions, "_get_stream"),
            "replicated": (DDP, "_use_replicated_tensor_module"),
            "sync_params": (DDP, "_sync_params"),
            "forward": (DDP, "_run_ddp_forward"),
            "specify": (parrots_wrapper.SyncBatchNorm, "_specify_ddp_gpu_num"),
        }
        again = {
            "get_stream": lambda: shims.patch_get_stream(_functions),
            "replicated": lambda: shims.restore_replicated_tensor_flag(distributed),
            "sync_params": lambda: shims.restore_sync_params(distributed),
            "forward": lambda: shims.scatter_in_ddp_forward(distributed),
            "specify": lambda: syncbn_shims.patch_specify_ddp_gpu_num(parrots_wrapper),
        }
        patched = sorted(key for key, (owner, name) in owners.items() if compatfix.is_patched(owner, name))
        before = {key: getattr(*owners[key]) for key in patched}
        for key in patched:
            again[key]()
        print(json.dumps({
            "patched": patched,
            "unchanged_when_applied_again": all(getattr(*owners[key]) is before[key] for key in patched),
            "torch_ddp_untouched": not any(compatfix.is_patched(torch_ddp.DistributedDataParallel, name)
                                           for name in ("_run_ddp_forward", "_sync_params")),
        }))
        """,
        # only mmcv's shims: torch's own _sync_params shim would restore the method on torch's DDP
        env=clean_env(COMPATFIX_DISABLE="torch.nn.parallel.DistributedDataParallel._sync_params"),
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    expected = ["forward", "get_stream", "specify", "sync_params"] if OLD_MMCV else \
        ["get_stream", "replicated"]
    assert out["patched"] == expected
    assert out["unchanged_when_applied_again"] is True
    assert out["torch_ddp_untouched"] is True

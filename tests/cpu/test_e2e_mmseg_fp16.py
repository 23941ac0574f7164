"""End to end (issue 12, item 4): a BEiT/Swin-era mmseg fp16 training script runs under
``python -m compatfix --device cpu -m torch.distributed.launch --nproc_per_node 2`` on the
real mmcv/mmseg of each stack (paper: mmcv 1.3.0 + mmseg 0.11; modern: mmcv 1.7.2 + mmseg
0.30).

tests/fixtures/cpu_mmseg_fp16/train.py asserts ``torch.cuda.device_count() > local_rank``,
calls ``init_dist('pytorch', backend='nccl')`` and the stock ``train_segmentor`` with
``optimizer_config`` ``use_fp16=True`` (apex, compatfix's stand-in; compatfix's amp-ordering
shim initialises it and sets ``fp16_enabled``, so mmseg's ``@auto_fp16``/``@force_fp32``
casts are live), an ``IterBasedRunnerAmp`` that keeps apex's state in its checkpoints,
SyncBN, validation and checkpoints every 3 iterations; then resumes from iteration 3;
then tests the last checkpoint with ``multi_gpu_test``. Every image is the same, so every
iteration sees the same batch and the loss must fall.

It fails without compatfix (mmseg.models needs mmcv's compiled ops), and in CPU mode
without its precision policy (the half casts meet float32 weights).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import FIXTURES, clean_env, free_port

FIXTURE = os.path.join(FIXTURES, "cpu_mmseg_fp16")
IMAGES = 12  # six per rank: no epoch ends (mmcv's IterLoader sleeps 2 s at each) in 6 iterations


def write_dataset(root) -> None:
    import numpy as np
    from PIL import Image

    for sub in ("img", "ann"):
        (root / sub).mkdir(parents=True)
    ann = np.zeros((32, 32), np.uint8)
    ann[:, :16] = 1
    ann[8:24, 20:28] = 2
    img = np.random.default_rng(0).integers(0, 60, (32, 32, 3)).astype(np.uint8)
    img[ann == 1] += np.array([180, 0, 0], np.uint8)
    img[ann == 2] += np.array([0, 0, 180], np.uint8)
    for index in range(IMAGES):
        Image.fromarray(img).save(root / "img" / ("%d.png" % index))
        Image.fromarray(ann).save(root / "ann" / ("%d.png" % index))


def train(tmp_path, compatfix=True, disable=None):
    write_dataset(tmp_path / "data")
    prefix = ["-m", "compatfix", "--device", "cpu"] if compatfix else []
    if disable:
        prefix += ["--disable", disable]
    command = [sys.executable, *prefix, "-m", "torch.distributed.launch", "--nproc_per_node", "2",
               "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
               os.path.join(FIXTURE, "train.py"), os.path.join(FIXTURE, "config.py"),
               "--work-dir", str(tmp_path / "work"), "--launcher", "pytorch"]
    env = clean_env(compatfix, PYTHONPATH=FIXTURE, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1",
                    PYTHONWARNINGS="ignore")
    completed = subprocess.run(command, env=env, cwd=str(tmp_path), stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=400)
    result_file = tmp_path / "work" / "result.json"
    result = json.loads(result_file.read_text()) if result_file.exists() else None
    return completed.returncode, result, completed.stdout + completed.stderr


@pytest.mark.stack("modern", "paper")
def test_mmseg_fp16_training_validation_resume_and_test_on_two_cpu_ranks(tmp_path):
    code, result, output = train(tmp_path)
    assert code == 0 and result is not None, output[-5000:]
    assert result["world_size"] == 2 and result["device_count"] == 2
    assert result["fp16_enabled"] is True and result["head_dtypes"] == ["torch.float32"]
    phase1, phase2 = result["phase1"], result["phase2"]
    # mmcv 1.3.0's json log keeps the validation entry, not the training one, at iterations 3, 6
    assert len(phase1) in (4, 6) and phase2 and all(0 < loss < 10 for loss in phase1 + phase2), result
    assert all(later < earlier for earlier, later in zip(phase1, phase1[1:])), phase1  # a fixed batch
    # resumed from iteration 3: the first resumed loss is one phase 1 saw after its first
    # iteration, to the digit (mmcv >= 1.3.9 stores iter = N - 1 in iter_N.pth, so the two
    # releases resume one iteration apart)
    assert any(abs(phase2[0] - loss) < 1e-4 for loss in phase1[1:]), (phase1, phase2)
    assert phase2[-1] < phase1[0]
    assert result["checkpoints"] == ["iter_3.pth", "iter_6.pth"]
    assert set(result["amp_in_checkpoint"]) == {"loss_scaler0"}  # the runner's apex state
    assert result["amp_in_checkpoint"]["loss_scaler0"]["loss_scale"] == 65536.0
    assert result["results"] == IMAGES and 0 < result["mIoU"] <= 1
    assert output.count("Iter(val)") >= 2, output[-3000:]  # validation at 3 and 6


@pytest.mark.stack("modern", "paper")
def test_mmseg_fp16_training_fails_without_compatfix_and_without_the_precision_policy(tmp_path):
    code, result, output = train(tmp_path / "plain", compatfix=False)
    assert code != 0 and result is None
    assert "No module named 'mmcv._ext'" in output, output[-3000:]
    code, result, output = train(tmp_path / "nopolicy", disable="cpu.torch.half_as_float32")
    assert code != 0 and result is None
    # mmseg's auto_fp16 half image meets the float32 stem conv (bias-free: torch words it so)
    assert ("RuntimeError: expected scalar type Half but found Float" in output
            or "Input type (c10::Half) and bias type (float) should be the same" in output), output[-3000:]

"""CPU mode end to end: a stock-style 2021 training script with timm 0.3.2 Mixup, SyncBN,
DDP(device_ids), nccl, torch.cuda.amp and a checkpoint holding ``args`` trains,
checkpoints, resumes and evaluates unmodified under ``--device cpu`` with torchrun, on
one rank and on two, and fails without compatfix (and without the mode).

Real torch, real gloo on loopback, real timm 0.3.2; the fixture is our own
(tests/fixtures/cpu_e2e/train_2021_mixup.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import FIXTURES, clean_env, free_port, has_cuda_gpu

SCRIPT = os.path.join(FIXTURES, "cpu_e2e", "train_2021_mixup.py")
TIMEOUT = 240

# What a GPU script meets first on a machine without one.
NO_GPU_ERROR = re.compile(r"Found no NVIDIA driver|Torch not compiled with CUDA|CUDA driver version is insufficient"
                          r"|no CUDA GPUs|AcceleratorError|ProcessGroupNCCL is only supported with GPUs")


def torchrun(nproc: int, out_dir: str, *args: str, cpu_mode: bool = True, compatfix: bool = True):
    mode = ["-m", "compatfix", "--device", "cpu"] if cpu_mode else []
    command = [
        sys.executable, *mode, "-m", "torch.distributed.run", "--nproc_per_node", str(nproc),
        "--master_addr", "127.0.0.1", "--master_port", str(free_port()), SCRIPT, "--output_dir", out_dir, *args,
    ]
    env = clean_env(compatfix, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return subprocess.run(command, env=env, cwd=os.path.dirname(out_dir),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)


def results(completed, out_dir: str, nproc: int) -> list[dict]:
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-5000:]
    found = []
    for rank in range(nproc):
        with open(os.path.join(out_dir, "result_rank%d.json" % rank)) as handle:
            found.append(json.load(handle))
    return found


def check_ranks_agree(ranks: list[dict]) -> None:
    for result in ranks[1:]:
        assert result["checksum"] == pytest.approx(ranks[0]["checksum"], abs=1e-9)
        assert result["epochs"] == ranks[0]["epochs"]


def test_mixup_script_trains_checkpoints_and_evaluates_on_one_rank(tmp_path):
    out_dir, off_dir = str(tmp_path / "cpu"), str(tmp_path / "off")
    no_mode_dir = str(tmp_path / "no-mode")
    with ThreadPoolExecutor(3) as pool:
        on_future = pool.submit(torchrun, 1, out_dir, "--epochs", "2")
        off_future = pool.submit(torchrun, 1, off_dir, "--epochs", "2", cpu_mode=False, compatfix=False)
        no_mode_future = pool.submit(torchrun, 1, no_mode_dir, "--epochs", "2", cpu_mode=False)
        on, off, no_mode = on_future.result(), off_future.result(), no_mode_future.result()
    (trained,) = results(on, out_dir, 1)
    assert [epoch["epoch"] for epoch in trained["epochs"]] == [0, 1]
    assert trained["epochs"][-1]["train_loss"] < trained["epochs"][0]["train_loss"] + 0.5
    assert "max mem 0MB" in on.stdout
    with open(os.path.join(out_dir, "log.txt")) as handle:
        assert len(handle.readlines()) == 2

    # Without compatfix timm 0.3.2 does not even import on torch 2 (torch._six); with
    # compatfix but without the mode, the first CUDA call fails.
    assert off.returncode != 0
    assert "torch._six" in off.stderr, off.stderr[-3000:]
    if not has_cuda_gpu():  # on a GPU machine the script simply runs there
        assert no_mode.returncode != 0
        assert NO_GPU_ERROR.search(no_mode.stdout + no_mode.stderr), no_mode.stderr[-3000:]

    # --eval from the checkpoint: the saved model gives the last epoch's test accuracy.
    evaluated = results(torchrun(1, out_dir, "--eval", "--resume", os.path.join(out_dir, "checkpoint.pth")),
                        out_dir, 1)[0]
    assert evaluated["eval"]["acc1"] == trained["epochs"][-1]["test_acc1"]
    assert evaluated["eval"]["count"] == 32
    assert evaluated["checksum"] == pytest.approx(trained["checksum"], abs=1e-9)


def test_mixup_script_trains_and_resumes_on_two_ranks(tmp_path):
    out_dir = str(tmp_path / "cpu")
    first = results(torchrun(2, out_dir, "--epochs", "1"), out_dir, 2)
    check_ranks_agree(first)
    assert first[0]["world_size"] == 2 and [e["epoch"] for e in first[0]["epochs"]] == [0]

    resumed_run = torchrun(2, out_dir, "--epochs", "2", "--resume", os.path.join(out_dir, "checkpoint.pth"))
    resumed = results(resumed_run, out_dir, 2)
    check_ranks_agree(resumed)
    assert resumed[0]["start_epoch"] == 1 and [e["epoch"] for e in resumed[0]["epochs"]] == [1]
    assert "resumed from" in resumed_run.stdout and "(epoch 0, saved with batch size 8)" in resumed_run.stdout
    assert resumed[0]["checksum"] != first[0]["checksum"]
    with open(os.path.join(out_dir, "log.txt")) as handle:
        assert [json.loads(line)["epoch"] for line in handle] == [0, 1]

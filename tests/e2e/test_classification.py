"""Acceptance (issue 6): a 2021 classification script of ours runs unmodified, end to end,
on today's stack on a machine without a GPU:

    python -m compatfix --device cpu -m torch.distributed.launch --nproc_per_node 2 \\
        main_2021.py --cfg … --data-path … --output …

train (2 epochs, a checkpoint per epoch) -> --eval of the last checkpoint -> --resume from
the first one. Without compatfix the same command fails.

The script (tests/fixtures/classification/main_2021.py) needs, besides CPU mode: the apex
stand-in (``from apex import amp``, O1), the ``--local_rank`` spelling of the launcher, a
torch.load that accepts the yacs config inside the checkpoint, Pillow's
``Image.ANTIALIAS`` and timm 0.3.2 on torch 2. While one of those shim modules does not
exist yet the test skips, naming it; it runs as soon as they all exist.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import FIXTURES, clean_env, finished_but_aborted_at_teardown, free_port, has_cuda_gpu

MAIN = os.path.join(FIXTURES, "classification", "main_2021.py")
TIMEOUT = 300

# Also on Python 3.12 (issue 10): the legacy script on the newest interpreter the matrix has torch for.
pytestmark = pytest.mark.stack("modern", "py312")
NUM_CLASSES = 5

# The shim modules the script needs beyond CPU mode (module presence, not a flag).
REQUIRED_SHIM_MODULES = (
    "compatfix.shims.apex",  # from apex import amp; amp.initialize/scale_loss/state_dict
    "compatfix.shims.argparse",  # --local_rank required=True vs the launcher's --local-rank
    "compatfix.shims.torch.serialization",  # the yacs CfgNode in the checkpoint (weights_only default)
    "compatfix.shims.PIL",  # Image.ANTIALIAS
    "compatfix.shims.timm",  # timm 0.3.2 on torch 2 (with compatfix.shims.torch._six)
)

CONFIG_YAML = """\
DATA:
  IMG_SIZE: 32
  LOAD_SIZE: 40
  NUM_WORKERS: 1
TRAIN:
  EPOCHS: 2
PRINT_FREQ: 1
"""


def missing_shim_modules() -> list[str]:
    return [name for name in REQUIRED_SHIM_MODULES if importlib.util.find_spec(name) is None]


@pytest.fixture
def required_shims():
    missing = missing_shim_modules()
    if missing:
        pytest.skip("waiting for %s" % ", ".join(missing))


def write_image_folder(root: str) -> None:
    """A tiny ImageFolder: NUM_CLASSES classes of 48x48 RGB images, one colour per class."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    for split, per_class in (("train", 4), ("val", 2)):
        for label in range(NUM_CLASSES):
            folder = os.path.join(root, split, "class_%d" % label)
            os.makedirs(folder)
            colour = np.array([(label * 50) % 256, (label * 90 + 40) % 256, 255 - label * 40])
            for index in range(per_class):
                pixels = np.clip(colour + rng.normal(0, 25, (48, 48, 3)), 0, 255).astype(np.uint8)
                Image.fromarray(pixels).save(os.path.join(folder, "img_%d.png" % index))


def launch(tmp_path, out_dir: str, *args: str, compatfix: bool = True, cpu_mode: bool = True):
    """``[python -m compatfix --device cpu] -m torch.distributed.launch --nproc_per_node 2 main_2021.py``."""
    mode = ["-m", "compatfix", "--device", "cpu"] if compatfix and cpu_mode else []
    command = [
        sys.executable, *mode, "-m", "torch.distributed.launch", "--nproc_per_node", "2",
        "--master_addr", "127.0.0.1", "--master_port", str(free_port()), MAIN,
        "--cfg", str(tmp_path / "config.yaml"), "--data-path", str(tmp_path / "data"), "--output", out_dir,
        "--batch-size", "4", *args,
    ]
    env = clean_env(compatfix, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return subprocess.run(command, env=env, cwd=str(tmp_path), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=TIMEOUT)


def result_of(step: str, completed, out_dir: str) -> dict:
    # result.json holds both ranks' checksums, so it exists only once both did the work.
    result_file = os.path.join(out_dir, "result.json")
    assert completed.returncode == 0 or finished_but_aborted_at_teardown(
        completed.returncode, completed.stderr, os.path.exists(result_file)), \
        "step %r failed:\n%s\n%s" % (step, completed.stdout[-3000:], completed.stderr[-6000:])
    with open(result_file) as handle:
        result = json.load(handle)
    assert result["world_size"] == 2
    assert result["checksums"][0] == pytest.approx(result["checksums"][1], abs=1e-9), step  # DDP replicas agree
    return result


def test_2021_classification_script_trains_evaluates_and_resumes_on_two_cpu_ranks(tmp_path, required_shims):
    write_image_folder(str(tmp_path / "data"))
    (tmp_path / "config.yaml").write_text(CONFIG_YAML)
    train_dir, eval_dir, resume_dir = (str(tmp_path / name) for name in ("train", "eval", "resume"))

    with ThreadPoolExecutor(3) as pool:
        train_future = pool.submit(launch, tmp_path, train_dir)
        off_future = pool.submit(launch, tmp_path, str(tmp_path / "off"), compatfix=False)
        no_mode_future = pool.submit(launch, tmp_path, str(tmp_path / "no-mode"), cpu_mode=False)
        train, off, no_mode = train_future.result(), off_future.result(), no_mode_future.result()

    trained = result_of("train", train, train_dir)
    assert [epoch["epoch"] for epoch in trained["epochs"]] == [0, 1]
    assert os.path.exists(os.path.join(train_dir, "ckpt_epoch_0.pth"))
    assert os.path.exists(os.path.join(train_dir, "ckpt_epoch_1.pth"))
    assert "mem 0MB" in train.stdout  # torch.cuda.max_memory_allocated in CPU mode

    # Without compatfix, timm 0.3.2 does not import on torch 2; with compatfix but not the
    # mode, the script gets as far as its first CUDA call.
    assert off.returncode != 0, "the script ran without compatfix, so the test proves nothing"
    assert "No module named 'torch._six'" in off.stderr, off.stderr[-3000:]
    if not has_cuda_gpu():  # on a GPU machine the script simply runs there
        assert no_mode.returncode != 0
        assert "Found no NVIDIA driver" in no_mode.stderr or "no CUDA GPUs" in no_mode.stderr, no_mode.stderr[-3000:]

    evaluated = result_of("eval", launch(tmp_path, eval_dir, "--eval", "--resume",
                                         os.path.join(train_dir, "ckpt_epoch_1.pth")), eval_dir)
    assert evaluated["epochs"] == []
    assert evaluated["resumed_acc1"] == pytest.approx(trained["epochs"][-1]["acc1"])
    assert evaluated["checksum"] == pytest.approx(trained["checksum"], abs=1e-9)

    resume = launch(tmp_path, resume_dir, "--resume", os.path.join(train_dir, "ckpt_epoch_0.pth"))
    resumed = result_of("resume", resume, resume_dir)
    assert "=> loaded successfully" in resume.stdout and "(epoch 0)" in resume.stdout
    assert resumed["start_epoch"] == 1 and [epoch["epoch"] for epoch in resumed["epochs"]] == [1]
    assert resumed["max_accuracy"] >= trained["epochs"][0]["acc1"]
    assert os.path.exists(os.path.join(resume_dir, "ckpt_epoch_1.pth"))

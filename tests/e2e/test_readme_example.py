"""The README's main job: examples/legacy_classifier.py, a 2021-style DeiT/timm 0.3.2
training script, fails on today's stack with its genuine legacy errors and runs
unmodified under ``python -m compatfix``."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest

from support import REPO_ROOT, run_python

ROOT = REPO_ROOT
EXAMPLE = os.path.join(ROOT, "examples", "legacy_classifier.py")
# Small and quick, still a real run: training, checkpoint, reload, evaluation.
QUICK = ("--epochs", "1", "--train-samples", "512", "--val-samples", "256")
DONE = re.compile(r"^DONE train_loss=(\d+\.\d+) acc=(\d+\.\d+)$", re.MULTILINE)

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("timm") is None, reason="the example needs timm 0.3.2"
)


def _explain(result) -> str:
    return "exit %s\n--- stdout (tail)\n%s\n--- stderr (tail)\n%s" % (
        result.returncode, result.stdout[-3000:], result.stderr[-3000:])


def test_fails_without_compatfix(tmp_path):
    result = run_python(EXAMPLE, *QUICK, "--output_dir", str(tmp_path / "out"),
                        compatfix=False, cwd=str(tmp_path))
    assert result.returncode == 1, _explain(result)
    assert "ModuleNotFoundError: No module named 'torch._six'" in result.stderr, _explain(result)
    assert "DONE" not in result.stdout
    assert not (tmp_path / "out" / "checkpoint.pth").exists()


def test_runs_with_compatfix(tmp_path):
    out = tmp_path / "out"
    # From another folder: the script's own folder must be sys.path[0] (legacy_utils).
    result = run_python("-m", "compatfix", EXAMPLE, *QUICK, "--output_dir", str(out),
                        cwd=str(tmp_path))
    assert result.returncode == 0, _explain(result)
    done = DONE.findall(result.stdout)
    assert len(done) == 1, _explain(result)
    assert result.stdout.rstrip().splitlines()[-1].startswith("DONE "), _explain(result)
    loss, acc = map(float, done[0])
    assert loss > 0
    assert acc > 20.0, "training did not learn (10 classes, chance is 10%%)\n" + _explain(result)
    assert "Not using distributed mode" in result.stdout
    assert "Reloaded weights from" in result.stdout
    assert (out / "checkpoint.pth").is_file()
    assert (out / "model_weights.pth").is_file()
    assert (out / "log.txt").read_text().count("\n") == 1
    assert "compatfix:" not in result.stderr, _explain(result)  # no shim failed or warned


def test_numpy_aliases_are_needed_too(tmp_path):
    # With torch._six provided but the numpy shims off, the data pipeline hits numpy
    # 1.24's removal of np.float: both halves of the example are genuine.
    result = run_python("-m", "compatfix", "--disable", "numpy.*", EXAMPLE, *QUICK,
                        "--output_dir", str(tmp_path / "out"), cwd=str(tmp_path))
    assert result.returncode == 1, _explain(result)
    assert "AttributeError: module 'numpy' has no attribute 'float'" in result.stderr, _explain(result)
    assert "DONE" not in result.stdout

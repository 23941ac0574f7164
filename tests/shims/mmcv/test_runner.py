"""mmcv runner shims against the real mmcv and mmseg of each stack: paper has mmcv 1.3.0
+ mmseg 0.11.0 (whose EvalHook is its own, not mmcv's), modern mmcv 1.7.2 + mmseg 0.30.0
(whose EvalHook subclasses mmcv's). tests/fixtures/mm/train_with_eval.py trains a tiny
model with a real runner and mmseg's EvalHook set up as stock train_segmentor does."""

from __future__ import annotations

import json
import os

import pytest

from support import FIXTURES, clean_env, run_python

TRAIN = os.path.join(FIXTURES, "mm", "train_with_eval.py")
EVERY_2_ITERATIONS = [["iter", 2], ["iter", 4], ["iter", 6]]
SWITCH_MESSAGE = "compatfix: EvalHook has by_epoch=True but runs under IterBasedRunnerAmp"
ORDER_MESSAGE = "compatfix: EvalHook was registered at a higher priority than IterTimerHook"


def train(tmp_path, runner_type, priority, compatfix, disable=None):
    work_dir = tmp_path / ("on" if compatfix else "off") / (disable or "all")
    work_dir.mkdir(parents=True)
    env = clean_env(compatfix, COMPATFIX_DISABLE=disable) if disable else None
    result = run_python(TRAIN, runner_type, priority, str(work_dir), compatfix=compatfix, env=env)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, result.stdout[-3000:] + result.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT "):])
    out["output"] = result.stdout + result.stderr
    return out


# --- A: by_epoch decided from the runner the hook runs under ---------------------------


@pytest.mark.stack("modern", "paper")
def test_iter_runner_subclass_never_evaluates_without_compatfix(tmp_path):
    off = train(tmp_path, "IterBasedRunnerAmp", "stock", compatfix=False)
    assert off["error"] is None, off["output"]
    assert off["evaluated_at"] == [] and off["by_epoch"] is True
    alone = train(tmp_path, "IterBasedRunnerAmp", "stock", compatfix=True, disable="mmcv.eval_hook_iter_runner")
    assert alone["evaluated_at"] == [] and alone["by_epoch"] is True, alone["output"]


@pytest.mark.stack("modern", "paper")
def test_iter_runner_subclass_evaluates_every_interval_with_compatfix(tmp_path):
    on = train(tmp_path, "IterBasedRunnerAmp", "stock", compatfix=True)
    assert on["error"] is None, on["output"]
    assert on["evaluated_at"] == EVERY_2_ITERATIONS
    assert on["by_epoch"] is False
    assert on["output"].count(SWITCH_MESSAGE) == 1, on["output"]
    assert on["hooks"] == ["OptimizerHook", "IterTimerHook", "EvalHook", "TextLoggerHook"]
    assert ORDER_MESSAGE not in on["output"]  # the stock order was already right


@pytest.mark.stack("modern", "paper")
def test_epoch_based_runner_is_unchanged(tmp_path):
    off = train(tmp_path, "EpochBasedRunner", "stock", compatfix=False)
    on = train(tmp_path, "EpochBasedRunner", "stock", compatfix=True)
    for out in (off, on):
        assert out["error"] is None, out["output"]
        assert out["evaluated_at"] == [["epoch", 2]] and out["by_epoch"] is True
    assert on["hooks"] == off["hooks"]
    assert "compatfix: " not in on["output"]


# --- B: the evaluation hook runs after IterTimerHook ------------------------------------
# mmcv 1.7.2 registers IterTimerHook at LOW; mmseg 0.11-0.16 registered the EvalHook at
# NORMAL (0.30 uses LOW). Only modern's mmcv has the LOW timer: on paper, mmcv 1.3.0
# registers the timer at NORMAL before mmseg 0.11's EvalHook (NORMAL), so stock order is
# timer first there (checked by the hook order in the tests above).


@pytest.mark.stack("modern")
def test_eval_hook_at_normal_breaks_the_text_logger_without_compatfix(tmp_path):
    off = train(tmp_path, "IterBasedRunner", "NORMAL", compatfix=False)
    assert off["error"] == "KeyError: 'data_time'"
    alone = train(tmp_path, "IterBasedRunner", "NORMAL", compatfix=True, disable="mmcv.eval_hook_after_timer")
    assert alone["error"] == "KeyError: 'data_time'", alone["output"]
    assert off["evaluated_at"] == [["iter", 2]]
    assert off["hooks"] == ["OptimizerHook", "EvalHook", "IterTimerHook", "TextLoggerHook"]


@pytest.mark.stack("modern")
def test_eval_hook_at_normal_runs_after_the_timer_with_compatfix(tmp_path):
    on = train(tmp_path, "IterBasedRunner", "NORMAL", compatfix=True)
    assert on["error"] is None, on["output"]
    assert on["evaluated_at"] == EVERY_2_ITERATIONS
    assert on["hooks"] == ["OptimizerHook", "IterTimerHook", "EvalHook", "TextLoggerHook"]
    assert on["output"].count(ORDER_MESSAGE) == 1, on["output"]
    # The text logger logged each validation (mmcv prints the number of eval batches).
    assert on["output"].count("Iter(val) [3]\tmIoU: 0.5000") == 3, on["output"]


@pytest.mark.stack("modern")
def test_mmseg_0_11_era_training_code_on_mmcv_1_7(tmp_path):
    # A 2021 repository's train.py (IterBasedRunnerAmp, EvalHook at NORMAL) on mmcv 1.7.2:
    # without compatfix no validation at all; with it, both fixes together.
    off = train(tmp_path, "IterBasedRunnerAmp", "NORMAL", compatfix=False)
    assert off["error"] is None and off["evaluated_at"] == []
    on = train(tmp_path, "IterBasedRunnerAmp", "NORMAL", compatfix=True)
    assert on["error"] is None, on["output"]
    assert on["evaluated_at"] == EVERY_2_ITERATIONS
    assert SWITCH_MESSAGE in on["output"] and ORDER_MESSAGE in on["output"]


# --- in-process checks: every hook class, idempotence, originals -----------------------

IN_PROCESS = """
import json, logging, tempfile
import torch
from torch import nn
import compatfix
import mmcv.runner.base_runner as base_runner
from mmcv.runner import EpochBasedRunner, IterBasedRunner, IterTimerHook, RUNNERS
from mmcv.runner.base_runner import BaseRunner
import mmseg.core.evaluation.eval_hooks as mmseg_hooks
from compatfix.shims.mmcv import runner as shim

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(1, 1)
    def train_step(self, *args, **kwargs):
        return {}

@RUNNERS.register_module()
class IterBasedRunnerAmp(IterBasedRunner):
    pass

def make(cls):
    return cls(Model(), work_dir=tempfile.mkdtemp(), logger=logging.getLogger("t"))

loader = torch.utils.data.DataLoader([0, 1])
classes = [mmseg_hooks.EvalHook, mmseg_hooks.DistEvalHook]
try:
    from mmcv.runner.hooks import evaluation as mmcv_hooks  # mmcv >= 1.3.1
    classes += [mmcv_hooks.EvalHook, mmcv_hooks.DistEvalHook]
except ImportError:
    mmcv_hooks = None
out = {"switched": {}, "kept": {}}
for cls in classes:
    name = cls.__module__.split(".")[0] + "." + cls.__name__
    for runner_cls, key in ((IterBasedRunnerAmp, "switched"), (EpochBasedRunner, "kept")):
        hook = cls(loader, interval=2, by_epoch=True)
        hook.before_run(make(runner_cls))
        out[key][name] = hook.by_epoch

# Applying again changes nothing; the originals stay reachable.
before = (BaseRunner.register_hook, mmseg_hooks.EvalHook.before_run)
shim.patch_register_hook(base_runner)
shim.patch_eval_hooks(mmseg_hooks)
out["idempotent"] = before == (BaseRunner.register_hook, mmseg_hooks.EvalHook.before_run)
original = compatfix.get_original(BaseRunner, "register_hook")
out["original_register_hook"] = original.__qualname__ == "BaseRunner.register_hook" and not hasattr(
    original, "__compatfix_shim__")

# An EvalHook registered before the training hooks still ends up after the timer.
runner = make(IterBasedRunner)
runner.register_hook(mmseg_hooks.EvalHook(loader, interval=2), priority="NORMAL")
runner.register_training_hooks(None, None, None, dict(interval=1, hooks=[dict(type="TextLoggerHook")]))
out["early_registration"] = [type(h).__name__ for h in runner.hooks]
# ... and is then ordered by priority like any hook registered later.
runner.register_hook(IterTimerHook(), priority="VERY_LOW")
out["priorities_sorted"] = [h.priority for h in runner.hooks] == sorted(h.priority for h in runner.hooks)
print("RESULT " + json.dumps(out))
"""


@pytest.mark.stack("modern", "paper")
def test_every_eval_hook_class_idempotence_and_originals():
    result = run_python(code=IN_PROCESS)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, result.stdout + result.stderr
    out = json.loads(lines[-1][len("RESULT "):])
    assert set(out["switched"].values()) == {False}, out
    assert set(out["kept"].values()) == {True}, out
    expected = {"mmseg.EvalHook", "mmseg.DistEvalHook"}
    if os.environ.get("COMPATFIX_TEST_STACK", "modern") == "modern":
        expected |= {"mmcv.EvalHook", "mmcv.DistEvalHook"}
    assert set(out["switched"]) == expected
    assert out["idempotent"] and out["original_register_hook"]
    assert out["early_registration"][:3] == ["IterTimerHook", "EvalHook", "TextLoggerHook"][:3]
    assert out["early_registration"].index("EvalHook") > out["early_registration"].index("IterTimerHook")
    assert out["priorities_sorted"]

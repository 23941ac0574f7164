"""mmseg.apex_amp_before_wrappers: stock train_segmentor with a config asking for apex fp16
(optimizer_config = DistOptimizerHook(use_fp16=True), the Swin/BEiT style).

tests/fixtures/mm_compat/legacy_train.py runs the installed mmseg's stock
train_segmentor and records, in order: apex.amp.initialize calls, the construction of
MMDataParallel/MMDistributedDataParallel, and the optimizer each training iteration
steps.

Two apex flavours:
- "apex": tests/fixtures/mm_compat/fake_apex, a fake of real apex's amp (its initialize
  refuses wrapped models and scale_loss raises when initialize never ran, with apex's own
  texts). Real apex cannot be installed here (not on PyPI, CUDA build; PyPI's `apex` is
  an unrelated package), so the fake plays it.
- "standin": compatfix's own apex stand-in, provided when no apex is installed.

mmseg.apis imports mmcv.ops, which this lite mmcv only has through compatfix, so
"without the fix" means this one shim disabled. The paper stack's mmseg 0.11 calls
model.cuda() unconditionally: there the runs use compatfix's CPU mode (no GPU here).
"""

from __future__ import annotations

import json
import os

import pytest

from conftest import current_stack
from support import FIXTURES, clean_env, run_python

FIXTURES = os.path.join(FIXTURES, "mm_compat")
SCRIPT = os.path.join(FIXTURES, "legacy_train.py")
FAKE_APEX = os.path.join(FIXTURES, "fake_apex")
VENDORED_MMSEG = os.path.join(FIXTURES, "vendored_mmseg")
SHIM = "mmseg.apex_amp_before_wrappers"
SHIM_MMDET = "mmdet.apex_amp_before_wrappers"
APEX_ERROR = (
    "RuntimeError: Invoked 'with amp.scale_loss`, but internal Amp state has not been initialized.  "
    "model, optimizer = amp.initialize(model, optimizer, opt_level=...) must be called before "
    "`with amp.scale_loss`."
)
MESSAGE = "compatfix: the config asks for apex mixed precision"


def train(tmp_path, *options, apex="apex", cpu_mode=None, vendored=False, **env):
    paths = [VENDORED_MMSEG] if vendored else []
    if apex == "apex":
        paths.append(FAKE_APEX)
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    if cpu_mode is None:
        cpu_mode = current_stack() == "paper"
    if cpu_mode:
        env["COMPATFIX_DEVICE"] = "cpu"
    work_dir = tmp_path / "work"
    result = run_python(SCRIPT, str(work_dir), *options, env=clean_env(**env))
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, result.stdout[-3000:] + result.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT "):])
    out["output"] = result.stdout + result.stderr
    return out


@pytest.mark.stack("modern", "paper")
@pytest.mark.parametrize("apex", ["apex", "standin"])
def test_stock_train_segmentor_never_initialises_amp_without_the_fix(tmp_path, apex):
    off = train(tmp_path, "--fp16", apex=apex, COMPATFIX_DISABLE=SHIM)
    assert off["error"] == APEX_ERROR, off["output"]
    assert [event[0] for event in off["events"]] == ["wrap"]
    assert off["fp16_enabled"] is False


@pytest.mark.stack("modern", "paper")
@pytest.mark.parametrize("apex", ["apex", "standin"])
def test_amp_is_initialised_once_on_the_unwrapped_model_before_the_wrapper(tmp_path, apex):
    on = train(tmp_path, "--fp16", apex=apex)
    assert on["error"] is None, on["output"]
    kinds = [event[0] for event in on["events"]]
    assert kinds == ["initialize", "wrap", "iter", "iter"], on["events"]
    initialize, wrap = on["events"][:2]
    assert initialize[1] == "Segmentor"  # the unwrapped model
    assert wrap[1:] == ["MMDataParallel", "Segmentor"]
    assert on["opt_level"] == "O1"
    assert on["runner_optimizer_is_initialized_one"] is True
    assert on["fp16_enabled"] is True
    assert on["output"].count(MESSAGE) == 1, on["output"]


@pytest.mark.stack("modern", "paper")
def test_fake_apex_keeps_real_apex_guard_against_a_second_initialize(tmp_path):
    # The fake must refuse what real apex refuses, or the vendored-copy tests below prove
    # nothing: an optimizer passed through amp.initialize twice.
    code = (
        "import sys, torch; sys.path.insert(0, %r)\n"
        "from apex import amp\n"
        "model = torch.nn.Linear(2, 1); opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "model, opt = amp.initialize(model, opt, opt_level='O1')\n"
        "amp.initialize(model, opt, opt_level='O1')\n" % FAKE_APEX
    )
    result = run_python("-c", code, env=clean_env(compatfix=False))
    assert "RuntimeError: A given optimizer should only be passed through amp.initialize once." in result.stderr


# A vendored fork of train_segmentor (the Swin/BEiT repositories' own copy, named
# mmseg.apis.train like the stock one) builds its optimizer on the unwrapped model and
# calls amp.initialize itself before wrapping. The shim must step aside there: doing its
# own initialize first would hand that copy an optimizer real apex refuses to take twice.


@pytest.mark.stack("modern", "paper")
@pytest.mark.parametrize("apex", ["apex", "standin"])
def test_vendored_train_segmentor_that_initialises_amp_itself_is_left_alone(tmp_path, apex):
    off = train(tmp_path, "--fp16", apex=apex, cpu_mode=True, vendored=True, COMPATFIX_DISABLE=SHIM)
    assert off["error"] is None, off["output"]
    on = train(tmp_path, "--fp16", apex=apex, cpu_mode=True, vendored=True)
    assert on["error"] is None, on["output"]
    for run in (off, on):
        assert [event[0] for event in run["events"]] == ["initialize", "wrap", "iter", "iter"], run["events"]
        assert run["runner_optimizer_is_initialized_one"] is True
        assert run["fp16_enabled"] is True  # set by the vendored copy itself
    said = [line for line in on["output"].splitlines() if "compatfix:" in line]
    assert not [line for line in said if "amp" in line], said


@pytest.mark.stack("modern", "paper")
def test_distributed_wrapper_is_built_after_initialize(tmp_path):
    # One process in a gloo group; CPU mode plays the GPU that MMDistributedDataParallel wants.
    on = train(tmp_path, "--fp16", "--distributed", cpu_mode=True)
    assert on["error"] is None, on["output"]
    assert [event[0] for event in on["events"]] == ["initialize", "wrap", "iter", "iter"], on["events"]
    assert on["events"][1][1:] == ["MMDistributedDataParallel", "Segmentor"]
    assert on["runner_optimizer_is_initialized_one"] is True


def test_opt_level_comes_from_the_config(tmp_path):
    on = train(tmp_path, "--fp16", "--opt-level", "O2")
    assert on["error"] is None, on["output"]
    assert on["opt_level"] == "O2"


def test_already_initialised_amp_is_left_alone(tmp_path):
    on = train(tmp_path, "--fp16", "--init-first")
    assert on["error"] is None, on["output"]
    assert [event[0] for event in on["events"]] == ["initialize", "wrap", "iter", "iter"]
    assert on["fp16_enabled"] is False  # only the shim sets it; the script did not
    assert on["runner_optimizer_is_initialized_one"] is False  # stock: the runner builds its own
    assert MESSAGE not in on["output"]


def test_configs_without_fp16_are_left_alone(tmp_path):
    on = train(tmp_path)
    assert on["error"] is None, on["output"]
    assert [event[0] for event in on["events"]] == ["wrap"]
    assert MESSAGE not in on["output"]
    assert "Iter [2/2]" in on["output"]


# --- mmdet 2.x train_detector -------------------------------------------------------
# Real mmdet 2.28.2 (modern stack). The script sets cfg.device itself, as mmdet >= 2.24's
# tools/train.py does.


def test_stock_train_detector_never_initialises_amp_without_the_fix(tmp_path):
    off = train(tmp_path, "--library", "mmdet", "--device", "cpu", "--fp16", apex="standin",
                COMPATFIX_DISABLE=SHIM_MMDET)
    assert off["error"] == APEX_ERROR, off["output"]


def test_train_detector_initialises_amp_before_the_wrapper(tmp_path):
    on = train(tmp_path, "--library", "mmdet", "--device", "cpu", "--fp16", "--auto-scale-lr", apex="standin")
    assert on["error"] is None, on["output"]
    assert [event[0] for event in on["events"]] == ["initialize", "wrap", "iter", "iter"], on["events"]
    assert on["runner_optimizer_is_initialized_one"] is True and on["fp16_enabled"] is True
    # auto_scale_lr rescaled cfg.optimizer.lr (0.01 * 2 / 16) after amp.initialize: followed.
    assert "Iter [2/2]\tlr: 1.250e-03" in on["output"], on["output"]

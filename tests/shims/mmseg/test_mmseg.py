"""Older mmseg training code with the installed mmseg (compatfix.shims.mmseg.training) and
the opt-in relaxation of the mmcv version assert (compatfix.shims.mmseg.version_assert).

mmseg.apis and mmseg.models import mmcv.ops, which this lite mmcv only has through
compatfix: "without the fix" for the training shims means compatfix on with that one
shim disabled (COMPATFIX_DISABLE), so every other part of the run is the same.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
from importlib import metadata

import pytest

from conftest import current_stack
from support import FIXTURES, clean_env, run_python

FIXTURES = os.path.join(FIXTURES, "mm_compat")
LEGACY_TRAIN = os.path.join(FIXTURES, "legacy_train.py")
UPER_BACKWARD = os.path.join(FIXTURES, "uper_backward.py")


def result_of(completed):
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, completed.stdout[-3000:] + completed.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT "):])
    if isinstance(out, dict):
        out["output"] = completed.stdout + completed.stderr
    return out


def legacy_train(tmp_path, *options, **env):
    return result_of(run_python(LEGACY_TRAIN, str(tmp_path / "work"), *options, env=clean_env(**env)))


# --- cfg.device (mmseg >= 0.25) ------------------------------------------------------


def test_old_train_script_fails_on_cfg_device_without_the_fix(tmp_path):
    off = legacy_train(tmp_path, COMPATFIX_DISABLE="mmseg.train_default_device")
    assert off["error"] == "AttributeError: 'ConfigDict' object has no attribute 'device'", off["output"]


def test_old_train_script_gets_the_device_newer_train_py_sets(tmp_path):
    on = legacy_train(tmp_path)
    assert on["error"] is None, on["output"]
    assert on["device"] == "cpu"  # mmseg's get_device() on this GPU-less machine
    assert "Iter [2/2]" in on["output"]
    assert on["output"].count("compatfix: the config has no `device`") == 1


def test_cpu_mode_gives_cpu_although_cuda_reports_available(tmp_path):
    on = legacy_train(tmp_path, COMPATFIX_DEVICE="cpu")
    assert on["error"] is None, on["output"]
    assert on["device"] == "cpu"


def test_a_configured_device_is_kept(tmp_path):
    # "meta" would fail in build_dp: the run must fail there, with the value left as it is.
    out = legacy_train(tmp_path, "--device", "meta")
    assert out["device"] == "meta"
    assert out["error"] == "KeyError: 'meta'", out["output"]
    assert "compatfix: the config has no `device`" not in out["output"]


# --- persistent_workers with workers_per_gpu=0 (mmseg >= 0.15) -----------------------


def test_zero_workers_fail_on_persistent_workers_without_the_fix(tmp_path):
    off = legacy_train(tmp_path, COMPATFIX_DISABLE="mmseg.no_persistent_workers_without_workers")
    assert off["error"] == "ValueError: persistent_workers option needs num_workers > 0", off["output"]


def test_zero_workers_train_without_persistent_workers(tmp_path):
    on = legacy_train(tmp_path)
    assert on["error"] is None, on["output"]
    assert on["output"].count("compatfix: build_dataloader got persistent_workers=True") == 1


def test_persistent_workers_kept_when_there_are_workers():
    out = run_python(code="""
        import torch
        from mmseg.datasets import build_dataloader
        data = torch.utils.data.TensorDataset(torch.zeros(4, 1))
        loader = build_dataloader(data, samples_per_gpu=2, workers_per_gpu=1, dist=False)
        print("persistent", loader.persistent_workers, loader.num_workers)
        """)
    assert "persistent True 1" in out.stdout, out.stdout + out.stderr
    assert "compatfix: build_dataloader" not in out.stdout + out.stderr


# --- in-place lateral add in UPerHead/FPN (mmseg < 0.20, torch >= 1.10) --------------

INPLACE_ERROR = re.compile(
    r"one of the variables needed for gradient computation has been modified by an inplace operation: "
    r"\[torch\.FloatTensor \[1, 4, 2, 2\]\], which is output 0 of Relu, is at version 1; expected version 0 instead"
)


@pytest.mark.stack("paper")
def test_mmseg_0_11_uper_head_and_fpn_backward_fail_on_torch_2_without_the_fix():
    off = result_of(run_python(UPER_BACKWARD, env=clean_env(COMPATFIX_DISABLE="mmseg.out_of_place_lateral_add")))
    for name in ("UPerHead", "FPN"):
        assert off[name]["error"] and INPLACE_ERROR.match(off[name]["error"]), off


@pytest.mark.stack("paper")
def test_mmseg_0_11_uper_head_and_fpn_backward_with_the_fix_have_correct_gradients():
    off = result_of(run_python(UPER_BACKWARD, env=clean_env(COMPATFIX_DISABLE="mmseg.out_of_place_lateral_add")))
    on = result_of(run_python(UPER_BACKWARD, env=clean_env()))
    for name in ("UPerHead", "FPN"):
        assert on[name]["error"] is None, on
        assert on[name]["sum"] == off[name]["sum"]  # the forward values are unchanged
        assert on[name]["gradcheck"] is True  # analytical == numerical gradients


def test_mmseg_0_30_heads_are_fixed_upstream_and_left_alone(tmp_path):
    report = str(tmp_path / "report.json")
    out = result_of(run_python(UPER_BACKWARD, env=clean_env(COMPATFIX_REPORT=report)))
    for name in ("UPerHead", "FPN"):
        assert out[name]["error"] is None and out[name]["gradcheck"] is True
    with open(report, encoding="utf-8") as handle:
        text = handle.read()
    applied = [item["shim"] for process in json.loads(text)["processes"] for item in process["applied"]]
    assert "mmseg.out_of_place_lateral_add" not in applied and "mmseg.out_of_place_lateral_add" in text


# --- the mmcv version assert (opt-in) ------------------------------------------------

RELAX = "mmcv.relaxed_version_assert"


def mmseg_with_lower_max(tmp_path):
    """A copy of the installed mmseg's __init__/version with MMCV_MAX below the installed
    mmcv: both stacks have an mmcv inside their mmseg's range, so the mismatch is made."""
    source = importlib.util.find_spec("mmseg").submodule_search_locations[0]  # found, not imported
    package = tmp_path / "lowered" / "mmseg"
    package.mkdir(parents=True)
    shutil.copy(os.path.join(source, "version.py"), package / "version.py")
    with open(os.path.join(source, "__init__.py"), encoding="utf-8") as handle:
        text = handle.read()
    # Above the stack's MMCV_MIN (0.30: 1.3.13, 0.11: 1.1.4), below its mmcv (1.7.2, 1.3.0).
    lowered = "1.5.0" if current_stack() == "modern" else "1.2.0"
    text, count = re.subn(r"^MMCV_MAX = '[^']*'", "MMCV_MAX = '%s'" % lowered, text, flags=re.M)
    assert count == 1
    (package / "__init__.py").write_text(text, encoding="utf-8")
    return str(package.parent)


def mmdet_style_package(tmp_path, low, high):
    """An mmdet-2.x-style __init__ (bounds named mmcv_minimum/maximum_version, checked
    with `>=` and `<=`), written for this test: mmdet is not installed here."""
    package = tmp_path / ("mmdet_%s_%s" % (low, high)) / "mmdet"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "import mmcv\n\n"
        "def digit_version(text):\n"
        "    return tuple(int(part) for part in text.split('rc')[0].split('.'))\n\n"
        "mmcv_minimum_version = %r\n"
        "mmcv_maximum_version = %r\n"
        "mmcv_version = digit_version(mmcv.__version__)\n\n"
        "assert (mmcv_version >= digit_version(mmcv_minimum_version)\n"
        "        and mmcv_version <= digit_version(mmcv_maximum_version)), \\\n"
        "    f'MMCV=={mmcv.__version__} is used but incompatible. ' \\\n"
        "    f'Please install mmcv>={mmcv_minimum_version}, <={mmcv_maximum_version}.'\n"
        "__version__ = '2.28.2'\n" % (low, high),
        encoding="utf-8",
    )
    return str(package.parent)


IMPORT = """
import mmcv, {name}
print("IMPORTED", {name}.__version__, "mmcv", mmcv.__version__)
"""


def import_with(path, name="mmseg", **env):
    return run_python(code=IMPORT.format(name=name), env=clean_env(PYTHONPATH=path, **env))


@pytest.mark.stack("modern", "paper")
def test_version_assert_fails_without_compatfix_and_by_default(tmp_path):
    path = mmseg_with_lower_max(tmp_path)
    for env in ({"COMPATFIX": "0"}, {}):
        out = import_with(path, **env)
        assert out.returncode != 0
        assert re.search(r"AssertionError: MMCV==1\.\d+\.\d+ is used but incompatible\. Please install mmcv>=", out.stderr)
        assert "IMPORTED" not in out.stdout


@pytest.mark.stack("modern", "paper")
def test_enabled_relaxation_lets_the_import_continue_loudly(tmp_path):
    installed = metadata.version("mmcv")
    path = mmseg_with_lower_max(tmp_path)
    out = import_with(path, COMPATFIX_ENABLE=RELAX)
    assert out.returncode == 0, out.stderr
    # After the import, everyone sees the installed mmcv again.
    assert "mmcv %s" % installed in out.stdout
    assert out.stderr.count("compatfix: mmseg only accepts mmcv>=") == 1, out.stderr
    assert "mmcv %s is installed" % installed in out.stderr


@pytest.mark.stack("modern", "paper")
def test_enabled_relaxation_covers_mmdet_style_bounds(tmp_path):
    path = mmdet_style_package(tmp_path, "1.0.0", "1.2.0")
    assert import_with(path, name="mmdet", COMPATFIX="0").returncode != 0
    out = import_with(path, name="mmdet", COMPATFIX_ENABLE=RELAX)
    assert out.returncode == 0, out.stderr
    assert "shown mmcv 1.2.0" in out.stderr


@pytest.mark.stack("modern", "paper")
def test_never_passes_mmcv_1_off_as_mmcv_2(tmp_path):
    path = mmdet_style_package(tmp_path, "2.0.0", "2.1.0")
    out = import_with(path, name="mmdet", COMPATFIX_ENABLE=RELAX)
    assert out.returncode != 0
    assert "is used but incompatible. Please install mmcv>=2.0.0, <=2.1.0." in out.stderr
    assert "compatfix: mmdet only accepts" not in out.stderr


def test_enabled_relaxation_lets_real_mmdet_import_continue(tmp_path):
    # Real mmdet 2.28.2 (modern stack): a copy of its __init__ with the maximum below
    # mmcv 1.7.2.
    source = importlib.util.find_spec("mmdet").submodule_search_locations[0]
    package = tmp_path / "lowered" / "mmdet"
    package.mkdir(parents=True)
    shutil.copy(os.path.join(source, "version.py"), package / "version.py")
    with open(os.path.join(source, "__init__.py"), encoding="utf-8") as handle:
        text = handle.read()
    text, count = re.subn(r"^mmcv_maximum_version = '[^']*'", "mmcv_maximum_version = '1.6.0'", text, flags=re.M)
    assert count == 1
    (package / "__init__.py").write_text(text, encoding="utf-8")
    off = import_with(str(package.parent), name="mmdet", COMPATFIX="0")
    assert "AssertionError: MMCV==1.7.2 is used but incompatible. Please install mmcv>=1.3.17, <=1.6.0." in off.stderr
    on = import_with(str(package.parent), name="mmdet", COMPATFIX_ENABLE=RELAX)
    assert on.returncode == 0, on.stderr
    assert "shown mmcv 1.6.0" in on.stderr and "mmcv 1.7.2" in on.stdout


def test_old_train_script_with_mmdet_gets_cfg_device(tmp_path):
    off = legacy_train(tmp_path, "--library", "mmdet", COMPATFIX_DISABLE="mmdet.train_default_device")
    assert off["error"] == "AttributeError: 'ConfigDict' object has no attribute 'device'", off["output"]
    on = legacy_train(tmp_path, "--library", "mmdet")
    assert on["error"] is None, on["output"]
    assert on["device"] == "cpu" and "Iter [2/2]" in on["output"]
    assert on["output"].count("compatfix: the config has no `device`") == 1

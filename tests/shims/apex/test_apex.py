"""The apex shims (compatfix/shims/apex.py): which ``apex`` code gets, with compatfix on
and off, and the engine's ``replaces_found`` extension that lets a provide shim replace
an unusable module of the same name.

A real NVIDIA apex cannot be installed here (it needs a CUDA source build, and ``pip
install apex`` is the unrelated PyPI package). "Real apex" in these tests is a tiny fake
package on a temporary path with apex's layout (subpackages amp/, optimizers/, ...);
the impostor is a fake with the PyPI package's layout (views.py, models.py, lib/).
"""

from __future__ import annotations

import importlib.machinery
import json
import math
import os
import textwrap

import pytest

from support import FIXTURES, TESTS, clean_env, run_python

pytestmark = pytest.mark.stack("modern", "paper")

FIXTURES = os.path.join(FIXTURES, "apex")

IMPORTS = """
from apex import amp
from apex.parallel import DistributedDataParallel, SyncBatchNorm, convert_syncbn_model
from apex.optimizers import FusedAdam, FusedLAMB, FusedSGD, FusedNovoGrad
from apex.normalization import FusedLayerNorm, FusedRMSNorm
from apex.fp16_utils import FP16_Optimizer, network_to_half
import apex
print(amp.initialize.__module__, apex.optimizers.FusedAdam.__module__, type(apex.amp._amp_state).__name__)
"""


def write(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def run(code, site=None, compatfix=True, **extra):
    env = clean_env(compatfix, **extra)
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return run_python(code=code, env=env)


def impostor(site):
    """PyPI's apex 0.9.10.dev0 layout. Its real __init__ imports Pyramid (and then fails on
    modern Pyramid); this fake imports nothing, so it stands for the case where it imports."""
    for name in ("views.py", "models.py", "forms.py", "lib/__init__.py", "lib/libapex.py"):
        write(site / "apex" / name)
    write(site / "apex" / "__init__.py", "IMPOSTOR = True\n")
    write(site / "Apex-0.9.10.dev0.dist-info" / "METADATA",
          "Metadata-Version: 2.1\nName: Apex\nVersion: 0.9.10.dev0\nRequires-Dist: pyramid\n")


def nvidia_apex(site, parts):
    """NVIDIA apex's layout with the named subpackages; each marks itself as real."""
    write(site / "apex" / "__init__.py", "REAL = True\n")
    for part in parts:
        write(site / "apex" / part / "__init__.py", "REAL = True\nclass FusedAdam:\n    pass\n")


def test_without_compatfix_there_is_no_apex():
    result = run(IMPORTS, compatfix=False)
    assert "ModuleNotFoundError: No module named 'apex'" in result.stderr


def test_with_compatfix_every_submodule_is_provided():
    result = run(IMPORTS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["compatfix.apex_standin.amp", "compatfix.apex_standin.optimizers", "AmpState"]


# The modules where apex defined what its packages re-export, and the two optional parts
# 2020-22 code imported (UNITER, ClipBERT, unilm).
DEFINING_MODULES = """
from apex.normalization.fused_layer_norm import FusedLayerNorm, fused_layer_norm_affine, fused_rms_norm_affine
from apex.optimizers.fused_lamb import FusedLAMB
from apex.optimizers.fused_adam import FusedAdam
from apex.multi_tensor_apply import multi_tensor_applier
from apex.contrib.xentropy import SoftmaxCrossEntropyLoss
import apex
print(FusedLayerNorm is apex.normalization.FusedLayerNorm, FusedLAMB is apex.optimizers.FusedLAMB,
      FusedAdam is apex.optimizers.FusedAdam, multi_tensor_applier.available, SoftmaxCrossEntropyLoss.__name__)
"""


def test_the_modules_apex_defined_its_names_in():
    assert "No module named 'apex'" in run(DEFINING_MODULES, compatfix=False).stderr
    result = run(DEFINING_MODULES)
    assert result.stdout.split() == ["True", "True", "True", "False", "SoftmaxCrossEntropyLoss"], result.stderr
    for shim, missing in (("apex.module_paths", "apex.normalization.fused_layer_norm"),
                          ("apex.multi_tensor_apply", "apex.multi_tensor_apply"),
                          ("apex.contrib.xentropy", "apex.contrib")):
        result = run(DEFINING_MODULES.replace("from apex.normalization.fused_layer_norm", "import apex\n"
                                              "from apex.normalization.fused_layer_norm")
                     if shim != "apex.module_paths" else DEFINING_MODULES, COMPATFIX_DISABLE=shim)
        assert "No module named '%s'" % missing in result.stderr, (shim, result.stderr[-2000:])


def test_a_real_apex_keeps_its_own_defining_modules(tmp_path):
    nvidia_apex(tmp_path, ("amp", "parallel", "optimizers", "normalization", "fp16_utils", "contrib"))
    write(tmp_path / "apex" / "normalization" / "fused_layer_norm.py", "REAL = True\n")
    result = run("import apex.normalization.fused_layer_norm as f\nprint(f.REAL)", site=tmp_path)
    assert result.stdout.split() == ["True"], result.stderr


def test_importing_apex_does_not_import_torch_until_a_submodule_is_used():
    result = run("import apex, sys; a = 'torch' in sys.modules; apex.amp; print(a, 'torch' in sys.modules)")
    assert result.stdout.split() == ["False", "True"], result.stderr


def test_the_pypi_impostor_is_replaced(tmp_path):
    impostor(tmp_path)
    off = run("from apex import amp", site=tmp_path, compatfix=False)
    assert "ImportError: cannot import name 'amp' from 'apex'" in off.stderr
    off = run("import apex; apex.amp.initialize", site=tmp_path, compatfix=False)
    assert "AttributeError: module 'apex' has no attribute 'amp'" in off.stderr
    on = run(IMPORTS + "print(hasattr(apex, 'IMPOSTOR'))", site=tmp_path)
    assert on.returncode == 0, on.stderr
    assert on.stdout.split()[-1] == "False"
    assert "is not NVIDIA apex" in on.stderr and "pip uninstall apex" in on.stderr  # said once, loudly
    # Disabling the shim gives the impostor back.
    disabled = run("import apex; print(apex.IMPOSTOR)", site=tmp_path, COMPATFIX_DISABLE="apex")
    assert disabled.stdout.split() == ["True"], disabled.stderr


def test_a_complete_real_apex_wins(tmp_path):
    nvidia_apex(tmp_path, ("amp", "parallel", "optimizers", "normalization", "fp16_utils", "contrib"))
    result = run("import apex, apex.amp, apex.optimizers, apex.parallel\n"
                 "print(apex.REAL, apex.amp.REAL, apex.optimizers.REAL, apex.parallel.REAL)", site=tmp_path)
    assert result.stdout.split() == ["True"] * 4, result.stderr


def test_a_real_apex_without_amp_and_parallel_gets_them_and_keeps_the_rest(tmp_path):
    # apex master after 2025-05-08: amp/ and parallel/ deleted, the fused kernels kept.
    nvidia_apex(tmp_path, ("optimizers", "normalization", "contrib", "mlp"))
    code = "from apex import amp\nfrom apex.parallel import DistributedDataParallel"
    off = run(code, site=tmp_path, compatfix=False)
    assert "ImportError: cannot import name 'amp' from 'apex'" in off.stderr
    on = run(code + "\nimport apex, apex.optimizers\n"
             "print(apex.REAL, apex.optimizers.REAL, amp.__name__, DistributedDataParallel.__module__)", site=tmp_path)
    assert on.stdout.split() == ["True", "True", "apex.amp", "compatfix.apex_standin.parallel"], on.stderr
    assert "has no apex.amp" in on.stderr and "has no apex.parallel" in on.stderr


def test_the_shims_module_does_not_import_torch():
    result = run("import sys, compatfix.shims.apex; print('torch' in sys.modules)", compatfix=False)
    assert result.stdout.split() == ["False"], result.stderr


def test_the_impostor_predicate(tmp_path):
    from compatfix.shims.apex import is_not_nvidia_apex

    impostor(tmp_path / "a")
    nvidia_apex(tmp_path / "b", ("optimizers",))
    for folder, expected in (("a", True), ("b", False)):
        spec = importlib.machinery.PathFinder.find_spec("apex", [str(tmp_path / folder)])
        assert is_not_nvidia_apex(spec) is expected
    write(tmp_path / "c" / "apex.py")  # a single-file module is never NVIDIA's package
    assert is_not_nvidia_apex(importlib.machinery.PathFinder.find_spec("apex", [str(tmp_path / "c")]))


# --- the engine extension: Shim(replaces_found=...) ----------------------------------------


def test_replaces_found_is_only_for_provide_shims():
    from compatfix.registry import AFTER_IMPORT, PROVIDE, Shim

    common = dict(targets=["x"], apply=lambda module: None, broke="b", summary="s")
    Shim("ok", kind=PROVIDE, replaces_found=lambda spec: True, **common)
    with pytest.raises(ValueError, match="replaces_found is for provide shims only"):
        Shim("bad", kind=AFTER_IMPORT, replaces_found=lambda spec: True, **common)


def test_engine_replaces_only_what_the_predicate_rejects_and_survives_a_broken_one():
    from compatfix._settings import Settings
    from compatfix._engine import Engine, ProvidingLoader as _ProvidingLoader
    from compatfix.registry import PROVIDE, Shim

    def make(name, predicate):
        return Shim(name, targets=[name], kind=PROVIDE, apply=lambda module: None, broke="b", summary="s",
                    replaces_found=predicate)

    def broken(spec):
        raise OSError("boom")

    engine = Engine([make("judged", lambda spec: spec.origin == "bad"), make("broken", broken),
                     make("plain", None)], Settings.from_environ({}))
    bad = importlib.machinery.ModuleSpec("judged", None, origin="bad")
    good = importlib.machinery.ModuleSpec("judged", None, origin="good")
    assert isinstance(engine.prepare_spec("judged", bad).loader, _ProvidingLoader)
    assert engine.prepare_spec("judged", good) is good
    assert isinstance(engine.prepare_spec("judged", None).loader, _ProvidingLoader)
    found = importlib.machinery.ModuleSpec("broken", None)
    assert engine.prepare_spec("broken", found) is found  # a failing predicate keeps the found module
    assert any(item.get("shim") == "broken" for item in engine.recorder.process_record().get("failed", []))
    plain = importlib.machinery.ModuleSpec("plain", None)
    assert engine.prepare_spec("plain", plain) is plain  # without a predicate a found module wins


def test_doctor_reports_the_impostor_already():
    # tests/doctor/test_doctor.py (not ours) covers compatfix doctor's impostor finding with a fake
    # PyPI apex on a temporary path: test_apex_impostor_with_pyramid_metadata.
    with open(os.path.join(TESTS, "doctor", "test_doctor.py")) as handle:
        assert "def test_apex_impostor_with_pyramid_metadata(tmp_path)" in handle.read()


# --- a 2021-style script, unmodified -------------------------------------------------------


def script(tmp_path, *args, compatfix=True):
    env = clean_env(compatfix, COMPATFIX_DEVICE="cpu")
    return run_python(os.path.join(FIXTURES, "train_amp_2021.py"), "--checkpoint", str(tmp_path / "ck.pth"), *args,
                      env=env, cwd=str(tmp_path))


def result_of(completed):
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    assert completed.returncode == 0 and len(lines) == 1, completed.stdout + completed.stderr
    return json.loads(lines[0][len("RESULT "):])


def test_2021_script_trains_resumes_and_evaluates(tmp_path):
    assert "No module named 'apex'" in script(tmp_path, compatfix=False).stderr
    first = result_of(script(tmp_path, "--inject-overflow-at", "2"))
    assert first["loss_scale_at_start"] == 2.0 ** 16
    assert first["amp"] == {"loss_scaler0": {"loss_scale": 2.0 ** 15, "unskipped": 3}}
    assert first["grad_norms"][2] == float("inf")  # the overflowed step, skipped
    assert all(0 < norm < 10 for i, norm in enumerate(first["grad_norms"]) if i != 2)  # unscaled
    resumed = result_of(script(tmp_path, "--resume"))
    assert resumed["loss_scale_at_start"] == 2.0 ** 15  # the loss scale continues
    assert resumed["amp"] == {"loss_scaler0": {"loss_scale": 2.0 ** 15, "unskipped": 9}}
    assert resumed["loss"] < first["loss"]
    evaluated = result_of(script(tmp_path, "--eval"))
    assert evaluated["loss_scale_at_start"] == 2.0 ** 15 and evaluated["accuracy"] > 0.5


def larc_script(tmp_path, *args, **env):
    return run_python(os.path.join(FIXTURES, "train_larc_2021.py"), "--checkpoint", str(tmp_path / "ck.pth.tar"),
                      *args, env=clean_env(COMPATFIX_DEVICE="cpu", **env), cwd=str(tmp_path))


def larc_update(weight, grad, lr, decay, trust):
    """One SGD step under apex's LARC without clipping, from the LARC paper's local rate:
    w - lr * local * (g + decay * w), local = trust * |w| / (|g| + decay * |w|)."""
    w_norm, g_norm = math.hypot(*weight), math.hypot(*grad)
    local = trust * w_norm / (g_norm + decay * w_norm)
    return [w - lr * local * (g + decay * w) for w, g in zip(weight, grad)]


def test_swav_style_larc_under_amp_trains_saves_and_resumes(tmp_path):
    off = run_python(os.path.join(FIXTURES, "train_larc_2021.py"), env=clean_env(False), cwd=str(tmp_path))
    assert "No module named 'apex'" in off.stderr
    # Without this shim the provided apex.parallel has no LARC submodule.
    disabled = larc_script(tmp_path, COMPATFIX_DISABLE="apex.parallel.LARC")
    assert "No module named 'apex.parallel.LARC'" in disabled.stderr
    first = result_of(larc_script(tmp_path))
    once = larc_update([3.0, 4.0], [0.6, 0.8], lr=0.5, decay=0.1, trust=0.02)
    assert first["weight"] == pytest.approx(once, abs=1e-6)
    assert first["weight_decay"] == 0.1  # the group's own value is back after the step
    assert first["optimizer_keys"] == ["param_groups", "state"]  # the wrapped SGD's state dict
    resumed = result_of(larc_script(tmp_path, "--resume"))
    twice = larc_update(once, [0.6, 0.8], lr=0.5, decay=0.1, trust=0.02)
    assert resumed["weight"] == pytest.approx(twice, abs=1e-6)

"""mmcv.utils.registry_user_class_wins against the real mmcv/mmseg of each stack.

``mmseg.models`` imports ``mmcv.ops``, which this lite mmcv can only import with
compatfix's ``mmcv._ext`` shim. So "without the fix" means compatfix on with this one shim
disabled (COMPATFIX_DISABLE): the registry is then exactly mmcv's own.
tests/fixtures/mm_compat/register_clash.py registers a class as research code does.
"""

from __future__ import annotations

import json
import os

import pytest

from support import FIXTURES, clean_env, run_python
from conftest import current_stack

SCRIPT = os.path.join(FIXTURES, "mm_compat", "register_clash.py")
SHIM = "mmcv.utils.registry_user_class_wins"
# A name the installed mmseg registers itself: BEiT since mmseg 0.23 (modern: 0.30),
# ResNeSt already in mmseg 0.11 (paper).
NAME = {"modern": "BEiT", "paper": "ResNeSt"}.get(current_stack(), "BEiT")
REGISTRY = {"modern": "models", "paper": "backbone"}.get(current_stack(), "models")


def register(case, name=NAME, **env):
    result = run_python(SCRIPT, name, case, env=clean_env(**env))
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, result.stdout[-3000:] + result.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT "):])
    out["output"] = result.stdout + result.stderr
    return out


@pytest.mark.stack("modern", "paper")
def test_user_registration_of_a_library_name_fails_without_the_fix():
    off = register("user", COMPATFIX_DISABLE=SHIM)
    assert off["error"] == "KeyError: '%s is already registered in %s'" % (NAME, REGISTRY), off["output"]
    assert off["registered"].startswith("mmseg.models.backbones.")


@pytest.mark.stack("modern", "paper")
def test_user_class_replaces_the_library_class_and_is_reported(tmp_path):
    report = str(tmp_path / "report.json")
    on = register("user", COMPATFIX_REPORT=report)
    assert on["error"] is None, on["output"]
    assert on["registered"] == "__main__.UserBackbone"
    assert on["output"].count("compatfix: %s is already registered in %s by mmseg" % (NAME, REGISTRY)) == 1
    with open(report, encoding="utf-8") as handle:
        data = json.load(handle)
    calls = [item["call"] for process in data["processes"] for item in process.get("redirected", [])
             if item["shim"] == SHIM]
    assert len(calls) == 1 and calls[0].startswith("%s in %s: __main__.UserBackbone replaces mmseg." % (NAME, REGISTRY))


@pytest.mark.stack("modern", "paper")
def test_a_library_registering_its_own_name_twice_still_fails():
    on = register("library")
    assert on["error"] == "KeyError: '%s is already registered in %s'" % (NAME, REGISTRY), on["output"]
    assert on["registered"].startswith("mmseg.models.backbones.")
    assert "compatfix: " not in on["output"]


@pytest.mark.stack("modern", "paper")
def test_user_code_registering_its_own_name_twice_still_fails():
    on = register("twice", name="MyOwnNet")
    assert on["error"] == "KeyError: 'MyOwnNet is already registered in %s'" % REGISTRY, on["output"]
    assert on["registered"] == "__main__.UserBackbone"

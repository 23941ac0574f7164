"""mmcv <= 1.7.1's Config.pretty_text/dump against yapf >= 0.40.2, with the real packages:
the paper stack has mmcv 1.3.0 + yapf 0.43 (broken without compatfix), the modern stack
mmcv 1.7.2 + yapf 0.43 (mmcv checks yapf's version itself: the shim stays out)."""

from __future__ import annotations

import json
import os

import pytest

from support import FIXTURES, run_python

CONFIG = os.path.join(FIXTURES, "mm", "config_example.py")

DUMP = """
import json, sys
import mmcv
cfg = mmcv.Config.fromfile(sys.argv[1])
out = {}
try:
    out["pretty_text"] = cfg.pretty_text
    cfg.dump(sys.argv[2])
    out["reloaded"] = mmcv.Config.fromfile(sys.argv[2]).runner.type
except Exception as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
print("RESULT " + json.dumps(out))
"""


def _dump(tmp_path, compatfix):
    result = run_python("-c", DUMP, CONFIG, str(tmp_path / "dumped.py"), compatfix=compatfix)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, result.stdout + result.stderr
    return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.stack("paper")
def test_pretty_text_and_dump_fail_without_compatfix_on_mmcv_1_3(tmp_path):
    out = _dump(tmp_path, compatfix=False)
    assert out.get("error") == "TypeError: FormatCode() got an unexpected keyword argument 'verify'"


@pytest.mark.stack("modern", "paper")
def test_pretty_text_and_dump_work_with_compatfix(tmp_path):
    out = _dump(tmp_path, compatfix=True)
    assert "error" not in out, out
    assert "runner = dict(type='IterBasedRunnerAmp', max_iters=160000)" in out["pretty_text"]
    assert out["reloaded"] == "IterBasedRunnerAmp"


@pytest.mark.stack("modern")
def test_mmcv_1_7_2_works_without_compatfix(tmp_path):
    # mmcv 1.7.2 calls FormatCode without verify on yapf >= 0.40.2 by itself.
    assert "error" not in _dump(tmp_path, compatfix=False)


WHO_PATCHED = """
import inspect, json
import yapf.yapflib.yapf_api as yapf_api
import mmcv.utils.config as config
import compatfix
from compatfix import _engine
from compatfix.shims.mmcv.utils.config import drop_verify
if compatfix.is_patched(config, "FormatCode"):
    drop_verify(config)  # applying again is harmless
record = _engine.active().recorder
print("RESULT " + json.dumps({
    "patched": compatfix.is_patched(config, "FormatCode"),
    "original_is_yapfs": compatfix.get_original(config, "FormatCode") is yapf_api.FormatCode,
    "wrapped_once": getattr(config.FormatCode, "__wrapped__", None) is yapf_api.FormatCode,
    "yapf_untouched": "verify" not in inspect.signature(yapf_api.FormatCode).parameters,
    "applied": [r["shim"] for r in record.applied if r["shim"] == "mmcv.utils.config_yapf_verify"],
    "skipped": [r["reason"] for r in record.skipped if r["shim"] == "mmcv.utils.config_yapf_verify"],
}))
"""


def _who_patched():
    result = run_python(code=WHO_PATCHED)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, result.stdout + result.stderr
    return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.stack("paper")
def test_only_mmcvs_name_is_replaced_and_the_original_is_kept():
    out = _who_patched()
    assert out == {
        "patched": True, "original_is_yapfs": True, "wrapped_once": True,
        "yapf_untouched": True, "applied": ["mmcv.utils.config_yapf_verify"], "skipped": [],
    }


@pytest.mark.stack("modern")
def test_not_applied_on_mmcv_1_7_2():
    out = _who_patched()
    assert out["patched"] is False and out["applied"] == []
    assert out["skipped"] == ["mmcv 1.7.2 is outside >=1.0,<1.7.2"]

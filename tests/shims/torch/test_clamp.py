"""In-place clamps of integer tensors with float bounds (torch >= 1.12 raises: its bounds
take part in type promotion since pytorch#77035). Expected values are torch <= 1.11's: the
bounds cast to the tensor's dtype (truncated toward zero), computed here in plain Python."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

CODE = """
import json, torch
values = [-3, 1, 2, 5, 9]
gain = torch.ones(7) * 4.0  # YOLOv3: gj.clamp_(0, gain[3] - 1), a 0-dim float tensor bound
out = {}
for name, call in {
    "clamp_": lambda t: t.clamp_(0, 2.5),
    "clamp_ tensor bound": lambda t: t.clamp_(0, gain[3] - 1),
    "clamp_min_": lambda t: t.clamp_min_(1.7),
    "clamp_max_": lambda t: t.clamp_max_(-0.5),
    "clip_ keywords": lambda t: t.clip_(min=-1.5, max=4.9),
    "torch.clamp_": lambda t: torch.clamp_(t, max=2.5),
}.items():
    t = torch.tensor(values)
    try:
        result = call(t)
        out[name] = [str(result.dtype), result.tolist(), result is t]
    except RuntimeError as exc:
        out[name] = "RuntimeError: " + str(exc).splitlines()[0]
float_result = torch.tensor(values).clamp(0, 2.5)  # out of place: a float tensor today, unchanged
out["clamp"] = [str(float_result.dtype), float_result.tolist()]
print("RESULT " + json.dumps(out))
"""


def clamp_int(values, low, high):
    return [max(low, v) if high is None else min(high, v) if low is None else min(high, max(low, v)) for v in values]


def results(env) -> dict:
    result = run_python(code=CODE, env=env)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert result.returncode == 0 and lines, result.stderr
    return json.loads(lines[0][len("RESULT "):])


def test_integer_tensors_clamp_in_place_with_float_bounds_as_before():
    values = [-3, 1, 2, 5, 9]
    got = results(clean_env())
    assert got["clamp_"] == ["torch.int64", clamp_int(values, 0, 2), True]  # int(2.5) == 2
    assert got["clamp_ tensor bound"] == ["torch.int64", clamp_int(values, 0, 3), True]
    assert got["clamp_min_"] == ["torch.int64", clamp_int(values, 1, None), True]
    assert got["clamp_max_"] == ["torch.int64", clamp_int(values, None, 0), True]  # int(-0.5) == 0
    assert got["clip_ keywords"] == ["torch.int64", clamp_int(values, -1, 4), True]
    assert got["torch.clamp_"] == ["torch.int64", clamp_int(values, None, 2), True]
    assert got["clamp"] == ["torch.float32", [0.0, 1.0, 2.0, 2.5, 2.5]]  # working code is not touched


@pytest.mark.parametrize("env", [clean_env(False), clean_env(COMPATFIX_DISABLE="torch.clamp_float_bounds")],
                         ids=["compatfix-off", "shim-disabled"])
def test_without_the_shim_they_fail(env):
    got = results(env)
    for name in ("clamp_", "clamp_ tensor bound", "clamp_min_", "clamp_max_", "clip_ keywords", "torch.clamp_"):
        assert got[name].startswith("RuntimeError: result type Float can't be cast"), (name, got[name])
    assert got["clamp"] == ["torch.float32", [0.0, 1.0, 2.0, 2.5, 2.5]]

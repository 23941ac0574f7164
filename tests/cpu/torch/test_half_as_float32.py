"""CPU mode's opt-in precision policy (``--enable cpu.torch.half_as_float32``, docs/cpu-mode.md):
explicit half casts keep float32, so half-precision idioms of 2020-22 GPU code run on the CPU.
Each idiom fails in CPU mode without the shim (as on a GPU-less machine the casts meet float32
weights or inputs) and runs with it."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

IDIOMS = {
    # a half input (mmcv auto_fp16's cast) into a float module
    "half_input_float_module": "torch.nn.Conv2d(3, 4, 3).cuda()(torch.randn(1, 3, 8, 8).cuda().half())",
    # a float input into a half module (apex O2/O3's model.half())
    "float_input_half_module": "torch.nn.Conv2d(3, 4, 3).cuda().half()(torch.randn(1, 3, 8, 8).cuda())",
    # .to(torch.float16) on the input, keyword and positional spellings
    "to_float16": "torch.nn.Linear(4, 2).cuda()(torch.randn(3, 4).to('cuda', torch.float16))",
    "to_dtype_float16": "torch.nn.Linear(4, 2).cuda()(torch.randn(3, 4).to(dtype=torch.float16))",
    # the legacy type
    "cuda_half_tensor": "torch.nn.Linear(4, 2)(torch.randn(3, 4).type(torch.cuda.HalfTensor))",
}

SCRIPT = '''
import torch
for name, idiom in %r.items():
    try:
        out = eval(idiom)
        print(name, "ok" if out.dtype == torch.float32 and bool(torch.isfinite(out).all()) else "wrong:%%s" %% out.dtype)
    except Exception as exc:
        print(name, "failed:", type(exc).__name__, str(exc)[:80])
''' % (IDIOMS,)


def outcomes(**env: str) -> dict[str, str]:
    result = run_python(code=SCRIPT, env=clean_env(COMPATFIX_DEVICE="cpu", **env))
    assert result.returncode == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines() if line.split(" ", 1)[0] in IDIOMS)


@pytest.fixture(scope="module")
def with_policy() -> dict[str, str]:
    return outcomes(COMPATFIX_ENABLE="cpu.torch.half_as_float32")


@pytest.fixture(scope="module")
def without_policy() -> dict[str, str]:
    return outcomes()  # CPU mode's default: the shim is off


@pytest.mark.parametrize("idiom", sorted(IDIOMS))
def test_idiom_fails_without_the_policy_and_runs_with_it(idiom, with_policy, without_policy):
    assert not without_policy[idiom].startswith("ok"), without_policy
    assert with_policy[idiom] == "ok", with_policy


def test_half_calls_keep_float32_and_apply_once():
    result = run_python(
        code="""
        import sys, torch, compatfix
        import compatfix.cpu.torch as cpu_torch
        x = torch.ones(2)
        assert x.half().dtype is torch.float32 and x.to(torch.float16).dtype is torch.float32
        assert torch.nn.Linear(2, 2).half().weight.dtype is torch.float32
        assert x.to(torch.float64).dtype is torch.float64 and x.to(torch.bfloat16).dtype is torch.bfloat16
        before = (torch.Tensor.half, torch.Tensor.to, torch.nn.Module.half, torch.nn.Module.to)
        [shim.apply(torch) for shim in cpu_torch.SHIMS]
        assert (torch.Tensor.half, torch.Tensor.to, torch.nn.Module.half, torch.nn.Module.to) == before
        print("OK")
        """,
        env=clean_env(COMPATFIX_DEVICE="cpu", COMPATFIX_ENABLE="cpu.torch.half_as_float32"),
    )
    assert result.stdout.split() == ["OK"], result.stderr

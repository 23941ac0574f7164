"""The torch-level CPU mode is several shims (compatfix/cpu/torch/__init__.py and
compatfix/cpu/torch/cuda.py), each disableable on its own: with one disabled, what it
covers fails as on a machine without a GPU, and what the others cover still runs."""

from __future__ import annotations

import re

import pytest

from support import clean_env, run_python

CUDA_ERROR = re.compile(r"Found no NVIDIA driver|Torch not compiled with CUDA|no CUDA GPUs|AcceleratorError")

# One probe per shim: each line prints "<shim> ok" or "<shim> failed: <error>".
PROBES = {
    "cpu.torch.tensor_moves": "torch.ones(2).cuda() + torch.nn.Linear(2, 2).cuda().weight[0]",
    "cpu.torch.factories": "torch.zeros(2, device='cuda')",
    "cpu.torch.load_map_location": "torch.load(io.BytesIO(SAVED_ON_GPU), weights_only=True)",
    "cpu.torch.legacy_tensor_types": "torch.cuda.FloatTensor(2)",
    "cpu.torch.generator": "torch.Generator(device='cuda')",
    "cpu.torch.amp.grad_scaler": "torch.amp.GradScaler('cuda').state_dict()['scale'] == 65536.0 or fail",
    "cpu.torch.cuda.device_queries": "torch.cuda.synchronize(); torch.cuda.manual_seed(0)",
    "cpu.torch.cuda.amp": "torch.cuda.amp.GradScaler().state_dict()['scale'] == 65536.0 or fail",
    "cpu.torch.half_as_float32": "torch.nn.Linear(2, 2)(torch.ones(1, 2).half())",
}

# A checkpoint whose storages are tagged cuda:0, as one saved on a GPU is (torch.save
# asks serialization.location_tag; the test of cpu.torch.load_map_location does the same).
SCRIPT = '''
import io, torch, torch.serialization as serialization
buffer, tag = io.BytesIO(), serialization.location_tag
serialization.location_tag = lambda storage: "cuda:0"
torch.save(torch.ones(2), buffer)
serialization.location_tag = tag
SAVED_ON_GPU = buffer.getvalue()
def fail(): raise RuntimeError("a disabled scaler")
for name, probe in %r.items():
    try:
        exec(probe)
        print(name, "ok")
    except Exception as exc:
        print(name, "failed:", type(exc).__name__, exc)
''' % (PROBES,)


def outcomes(disable: str = "") -> dict[str, str]:
    extra = {"COMPATFIX_DISABLE": disable} if disable else {}
    result = run_python(code=SCRIPT, env=clean_env(COMPATFIX_DEVICE="cpu", **extra))
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if line.split(" ", 1)[0] in PROBES)
    assert set(lines) == set(PROBES), result.stdout
    return lines


def test_every_probe_fails_without_compatfix():
    result = run_python(code=SCRIPT, compatfix=False, env=clean_env(compatfix=False))
    assert result.returncode == 0, result.stderr
    assert "ok" not in [line.split(" ")[1] for line in result.stdout.splitlines()], result.stdout


def test_every_probe_runs_in_cpu_mode():
    assert set(outcomes().values()) == {"ok"}


@pytest.mark.parametrize("disabled", sorted(PROBES))
def test_disabling_one_shim_leaves_the_others(disabled):
    lines = outcomes(disabled)
    assert lines[disabled].startswith("failed"), lines
    assert {name: line for name, line in lines.items() if name != disabled} == \
        {name: "ok" for name in PROBES if name != disabled}

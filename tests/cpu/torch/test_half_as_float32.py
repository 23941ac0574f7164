"""CPU mode's precision policy, ``cpu.torch.half_as_float32`` (on by default in CPU mode,
docs/cpu-mode.md "Half precision"): every explicit cast to float16 keeps float32, so the
half-precision idioms of 2020-22 GPU code run on the CPU, in float32.

Each idiom runs in CPU mode with the policy, and with only the policy disabled
(``COMPATFIX_DISABLE=cpu.torch.half_as_float32``). Without it the idiom either stops, as
on a GPU-less machine a float16 tensor meets float32 weights or inputs ("Input type
(c10::Half) and bias type (float) should be the same"), or, where torch's CPU kernels
accept float16 throughout (a whole model cast to half: apex O2/O3, ``network_to_half``),
computes in float16 on the CPU. The latter counts as a failure here: float16 on this
CPU is about 14x slower than float32 (docs/cpu-mode.md), so a "CPU smoke test" of such a
script would take an afternoon, and a hand port to the CPU would delete the casts. The
expected outcome is what that hand port computes: float32 throughout, finite.

mmcv's ``auto_fp16``/``force_fp32`` run on the real mmcv of each stack (paper: 1.3.0,
modern: 1.7.2); apex is compatfix's stand-in (real apex cannot be installed here).
"""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

SHIM = "cpu.torch.half_as_float32"
HALF_ERROR = ("should be the same", "must have the same dtype", "expected m1 and m2 to have the same dtype",
              "expected scalar type")

IDIOMS = {
    # a half input (mmcv auto_fp16's cast) into a float module
    "half_input_float_module": "torch.nn.Conv2d(3, 4, 3).cuda()(torch.randn(1, 3, 8, 8).cuda().half())",
    # a float input into a half module (apex O2/O3's model.half())
    "float_input_half_module": "torch.nn.Conv2d(3, 4, 3).cuda().half()(torch.randn(1, 3, 8, 8).cuda())",
    # Module.to(float16), with and without a device
    "module_to_float16": "torch.nn.Linear(4, 2).to('cuda', torch.float16)(torch.randn(3, 4).cuda())",
    # .to(torch.float16) on the input, keyword and positional spellings
    "to_float16": "torch.nn.Linear(4, 2).cuda()(torch.randn(3, 4).to('cuda', torch.float16))",
    "to_dtype_float16": "torch.nn.Linear(4, 2).cuda()(torch.randn(3, 4).to(dtype=torch.float16))",
    # the legacy type, as a cast and as a constructor
    "cuda_half_tensor": "torch.nn.Linear(4, 2)(torch.randn(3, 4).type(torch.cuda.HalfTensor))",
    "cuda_half_tensor_name": "torch.nn.Linear(4, 2)(torch.randn(3, 4).type('torch.cuda.HalfTensor'))",
    "cuda_half_tensor_new": "torch.nn.Linear(2, 2)(torch.cuda.HalfTensor([[1.0, 2.0]]))",
    "type_float16": "torch.nn.Linear(4, 2)(torch.randn(3, 4).type(torch.float16))",
    # half buffers made by factories (apex/mmcv-era kernels allocate them like this)
    "factory_float16": "torch.nn.Linear(4, 2).cuda()(torch.ones(3, 4, dtype=torch.half, device='cuda'))",
    "new_float16": "torch.nn.Linear(4, 2)(torch.ones(1).new_ones((3, 4), dtype=torch.float16))",
}

SCRIPT = '''
import torch
for name, idiom in %r.items():
    try:
        out = eval(idiom)
        print(name, "ok" if out.dtype == torch.float32 and bool(torch.isfinite(out).all()) else "wrong:%%s" %% out.dtype)
    except Exception as exc:
        print(name, "failed:", type(exc).__name__, str(exc)[:120].replace("\\n", " "))
''' % (IDIOMS,)


def outcomes(**env: str) -> dict[str, str]:
    result = run_python(code=SCRIPT, env=clean_env(COMPATFIX_DEVICE="cpu", **env))
    assert result.returncode == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines() if line.split(" ", 1)[0] in IDIOMS)


@pytest.fixture(scope="module")
def with_policy() -> dict[str, str]:
    return outcomes()  # CPU mode's default


@pytest.fixture(scope="module")
def without_policy() -> dict[str, str]:
    return outcomes(COMPATFIX_DISABLE=SHIM)


@pytest.mark.parametrize("idiom", sorted(IDIOMS))
def test_idiom_fails_without_the_policy_and_runs_with_it(idiom, with_policy, without_policy):
    assert with_policy[idiom] == "ok", with_policy
    # every one of these stops on a dtype mismatch without the policy
    assert without_policy[idiom].startswith("failed"), without_policy
    assert any(text in without_policy[idiom] for text in HALF_ERROR), without_policy[idiom]


def test_half_casts_keep_float32_make_new_tensors_and_apply_once(tmp_path):
    script = tmp_path / "casts.py"
    script.write_text(
        """
import sys, torch, compatfix
import compatfix.cpu.torch as cpu_torch
x = torch.ones(2)
for cast in (x.half(), x.to(torch.float16), x.to("cuda", torch.float16), x.to(dtype=torch.float16, copy=False),
             x.type(torch.float16), x.type("torch.cuda.HalfTensor"), x.type("torch.HalfTensor")):
    assert cast.dtype is torch.float32
    cast.add_(1)  # a real cast makes a new tensor: writing into it leaves x alone
    assert torch.equal(x, torch.ones(2)), x
# torch.cuda.HalfTensor is torch.FloatTensor itself, so this cast is x.type(torch.FloatTensor): x
assert x.type(torch.cuda.HalfTensor) is x
assert torch.nn.Linear(2, 2).half().weight.dtype is torch.float32
assert x.to(torch.float64).dtype is torch.float64 and x.to(torch.bfloat16).dtype is torch.bfloat16
assert x.half().requires_grad is False and torch.ones(2, requires_grad=True).half().requires_grad
assert torch.zeros(2, dtype=torch.float16).dtype is torch.float32 and torch.zeros(2, dtype=torch.int8).dtype is torch.int8
assert torch.cuda.HalfTensor is torch.FloatTensor and isinstance(x.cuda().half(), torch.cuda.HalfTensor)
@torch.jit.script
def scripted(n: int):
    return torch.zeros(n) + 1  # factories stay TorchScript builtins
assert torch.equal(scripted(2), torch.ones(2))
before = (torch.Tensor.half, torch.Tensor.to, torch.Tensor.type, torch.nn.Module.half, torch.nn.Module.to, torch.zeros)
[shim.apply(torch) for shim in cpu_torch.SHIMS]
assert (torch.Tensor.half, torch.Tensor.to, torch.Tensor.type, torch.nn.Module.half, torch.nn.Module.to, torch.zeros) == before
print("OK")
"""
    )
    result = run_python(str(script), env=clean_env(COMPATFIX_DEVICE="cpu"))
    assert result.stdout.split() == ["OK"], result.stdout + result.stderr


def test_the_policy_is_on_by_default_only_in_cpu_mode():
    code = "import torch; print(torch.ones(1).half().dtype, torch.ones(1).to(torch.float16).dtype)"
    assert run_python(code=code, env=clean_env(COMPATFIX_DEVICE="cpu")).stdout.split() == ["torch.float32"] * 2
    plain = run_python(code=code, env=clean_env())  # compatfix on, CPU mode off: torch's own casts
    assert plain.stdout.split() == ["torch.float16"] * 2, plain.stderr


# --- mmcv auto_fp16 / force_fp32 after amp.initialize (the BEiT/Swin segmentation pattern) ---

MMCV_SCRIPT = r'''
import json, torch, torch.nn as nn, torch.nn.functional as F
from mmcv.runner import auto_fp16, force_fp32
from apex import amp

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fp16_enabled = False
        self.conv = nn.Conv2d(3, 2, 3, padding=1)
        self.seen = []

    @auto_fp16(apply_to=("img",))
    def forward(self, img):
        self.seen.append(str(img.dtype))
        return self.conv(img)

    @force_fp32(apply_to=("logits",))
    def loss(self, logits, label):
        self.seen.append(str(logits.dtype))
        return F.cross_entropy(logits, label)

torch.manual_seed(0)
model = Head().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
for m in model.modules():  # mmcv_custom's train_segmentor, after amp.initialize
    if hasattr(m, "fp16_enabled"):
        m.fp16_enabled = True
img, label = torch.randn(2, 3, 8, 8).cuda(), (torch.rand(2, 8, 8) > 0.5).long().cuda()
losses = []
try:
    for _ in range(5):
        loss = model.loss(model(img), label)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        losses.append(float(loss))
    error = None
except RuntimeError as exc:
    error = str(exc)
print("RESULT " + json.dumps({"error": error, "losses": losses, "seen": sorted(set(model.seen)),
                              "weight": str(model.conv.weight.dtype)}))
'''


def run_result(code: str, **env: str) -> dict:
    result = run_python(code=code, env=clean_env(COMPATFIX_DEVICE="cpu", PYTHONWARNINGS="ignore", **env))
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, result.stdout[-2000:] + result.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.stack("modern", "paper")
def test_mmcv_auto_fp16_after_amp_initialize():
    off = run_result(MMCV_SCRIPT, COMPATFIX_DISABLE=SHIM)
    assert off["error"] is not None and "Half" in off["error"] and "should be the same" in off["error"], off
    on = run_result(MMCV_SCRIPT)
    assert on["error"] is None, on
    assert on["seen"] == ["torch.float32"] and on["weight"] == "torch.float32", on
    losses = on["losses"]
    assert len(losses) == 5 and all(l == l and abs(l) < 1e6 for l in losses) and losses[-1] < losses[0], losses


# --- apex O2/O3 (compatfix's stand-in), network_to_half and FP16_Optimizer ----------------

APEX_SCRIPT = r'''
import json, sys, torch, torch.nn as nn, torch.nn.functional as F
from apex import amp
from apex.fp16_utils import FP16_Optimizer, network_to_half

def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))

def compute_dtypes(model):
    seen = set()
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            m.register_forward_hook(lambda mod, inp, out: seen.add(str(inp[0].dtype)))
    return seen

img, target = torch.randn(4, 3, 8, 8).cuda(), torch.tensor([0, 1, 2, 0]).cuda()
out = {}
for case in sys.argv[1:]:
    model = net().cuda()
    seen = compute_dtypes(model)
    losses = []
    if case.startswith("apex"):
        level = case[4:6]
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        # cast_model_type=float16 is what apex itself does for O2/O3 on a GPU; the stand-in
        # on a CPU model would otherwise pick float32 on its own (compatfix/apex_standin/amp.py)
        model, optimizer = amp.initialize(model, optimizer, opt_level=level, cast_model_type=torch.float16,
                                          verbosity=0)
        for _ in range(5):
            loss = F.cross_entropy(model(img).float(), target)
            optimizer.zero_grad()
            with amp.scale_loss(loss, optimizer) as scaled:
                scaled.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 10.0)
            optimizer.step()
            losses.append(float(loss))
        masters = [str(p.dtype) for p in amp.master_params(optimizer)]
    else:  # the older fp16_utils API
        model = network_to_half(model)
        optimizer = FP16_Optimizer(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                                   dynamic_loss_scale=True, verbose=False)
        for _ in range(8):
            loss = F.cross_entropy(model(img).float(), target)
            optimizer.zero_grad()
            optimizer.backward(loss)
            optimizer.step()
            losses.append(float(loss))
        masters = sorted({str(p.dtype) for group in optimizer.optimizer.param_groups for p in group["params"]})
    out[case] = {"compute": sorted(seen), "params": sorted({str(p.dtype) for p in model.parameters()}),
                 "masters": sorted(set(masters)), "losses": losses}
print("RESULT " + json.dumps(out))
'''

APEX_CASES = ["apexO2", "apexO3", "fp16_utils"]


@pytest.fixture(scope="module")
def apex_runs():
    on = run_result(APEX_SCRIPT.replace("sys.argv[1:]", repr(APEX_CASES)))
    off = run_result(APEX_SCRIPT.replace("sys.argv[1:]", repr(APEX_CASES)), COMPATFIX_DISABLE=SHIM)
    return on, off


@pytest.mark.parametrize("case", APEX_CASES)
def test_apex_half_models_compute_in_float32(case, apex_runs):
    on, off = apex_runs
    assert off[case]["compute"] == ["torch.float16"], off[case]  # float16 on the CPU without the policy
    result = on[case]
    assert result["compute"] == ["torch.float32"] and result["params"] == ["torch.float32"], result
    assert result["masters"] == ["torch.float32"], result
    losses = result["losses"]
    assert all(l == l and abs(l) < 1e6 for l in losses), losses
    finite = [l for l in losses if l == l]
    assert finite[-1] < finite[0], losses

"""PSAMask kernels of the mmcv._ext stand-in (compatfix.mmcv_standin.ops.psamask).

The reference is mmcv's CPU kernel (mmcv/ops/csrc/pytorch/cpu/psamask.cpp, the same
loops as the CUDA one) written out in Python: for each pixel (h, w) and each mask position
(hidx, widx) whose target lands inside the map. The stand-in's kernels run in this
process; mmcv's own PSAMask runs in a fresh interpreter with compatfix on and off.
"""

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only

from compatfix.mmcv_standin.ops import psamask as kernels
from support import run_mmcv_op_wrapper

pytestmark = pytest.mark.stack("modern", "paper", "mmold")


def pairs(h_feature, w_feature, h_mask, w_mask):
    """(mask channel, p, q) for every pixel p = (h, w) and in-map target q, as the kernel loops."""
    half_h, half_w = (h_mask - 1) // 2, (w_mask - 1) // 2
    for h in range(h_feature):
        for w in range(w_feature):
            for hidx in range(max(0, half_h - h), min(h_mask, h_feature + half_h - h)):
                for widx in range(max(0, half_w - w), min(w_mask, w_feature + half_w - w)):
                    q = (hidx + h - half_h) * w_feature + (widx + w - half_w)
                    yield hidx * w_mask + widx, h * w_feature + w, q


def reference_forward(mask, psa_type, h_mask, w_mask, start=0.0):
    n, _, h, w = mask.shape
    out = torch.full((n, h * w, h * w), start, dtype=mask.dtype)
    flat = mask.reshape(n, h_mask * w_mask, h * w)
    for channel, p, q in pairs(h, w, h_mask, w_mask):
        if psa_type == 0:
            out[:, q, p] = flat[:, channel, p]
        else:
            out[:, p, q] = flat[:, channel, p]
    return out.view(n, h * w, h, w)


def reference_backward(grad, psa_type, h_mask, w_mask, start=0.0):
    n, _, h, w = grad.shape
    grad = grad.reshape(n, h * w, h * w)
    out = torch.full((n, h_mask * w_mask, h * w), start, dtype=grad.dtype)
    for channel, p, q in pairs(h, w, h_mask, w_mask):
        out[:, channel, p] = grad[:, q, p] if psa_type == 0 else grad[:, p, q]
    return out.view(n, h_mask * w_mask, h, w)


def call(function, source, target, psa_type, h, w, h_mask, w_mask):
    function(source, target, psa_type=psa_type, num_=source.size(0), h_feature=h, w_feature=w, h_mask=h_mask,
             w_mask=w_mask, half_h_mask=(h_mask - 1) // 2, half_w_mask=(w_mask - 1) // 2)
    return target


# (h_feature, w_feature, h_mask, w_mask): PSANet's mask is 2H-1 x 2W-1 (every pixel
# reaches every other); smaller and larger masks, even sizes and 1x1 are cases too.
CASES = [(4, 5, 7, 9), (3, 4, 3, 3), (5, 3, 4, 2), (2, 2, 5, 6), (3, 3, 1, 1)]


@pytest.mark.parametrize("psa_type", [0, 1])
@pytest.mark.parametrize("case", CASES)
def test_forward_and_backward_match_the_kernel_loops(case, psa_type):
    h, w, h_mask, w_mask = case
    mask = torch.randn(2, h_mask * w_mask, h, w, dtype=torch.float64)
    # The kernels write only in-map places: what was there before stays (7.0 here).
    output = call(kernels.psamask_forward, mask, torch.full((2, h * w, h, w), 7.0, dtype=torch.float64),
                  psa_type, h, w, h_mask, w_mask)
    assert torch.equal(output, reference_forward(mask, psa_type, h_mask, w_mask, start=7.0))
    grad = torch.randn(2, h * w, h, w, dtype=torch.float64)
    grad_input = call(kernels.psamask_backward, grad, torch.full_like(mask, 7.0), psa_type, h, w, h_mask, w_mask)
    assert torch.equal(grad_input, reference_backward(grad, psa_type, h_mask, w_mask, start=7.0))


@pytest.mark.parametrize("psa_type", [0, 1])
def test_gradcheck_of_the_backward_against_the_forward(psa_type):
    h, w, h_mask, w_mask = 3, 4, 5, 7

    class PSAMask(torch.autograd.Function):
        @staticmethod
        def forward(ctx, mask):
            return call(kernels.psamask_forward, mask, mask.new_zeros(2, h * w, h, w), psa_type, h, w, h_mask,
                        w_mask)

        @staticmethod
        def backward(ctx, grad):
            return call(kernels.psamask_backward, grad, grad.new_zeros(2, h_mask * w_mask, h, w), psa_type, h, w,
                        h_mask, w_mask)

    mask = torch.randn(2, h_mask * w_mask, h, w, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(PSAMask.apply, (mask,))


def test_the_index_is_computed_in_bands(monkeypatch):
    # Bands of one row at a time give the same result as one band.
    mask = torch.randn(1, 25, 3, 4, dtype=torch.float64)
    whole = call(kernels.psamask_forward, mask, torch.zeros(1, 12, 3, 4, dtype=torch.float64), 0, 3, 4, 5, 5)
    monkeypatch.setattr(kernels, "_BAND", 1)
    banded = call(kernels.psamask_forward, mask, torch.zeros(1, 12, 3, 4, dtype=torch.float64), 0, 3, 4, 5, 5)
    assert torch.equal(whole, banded)
    grad = torch.randn(1, 12, 3, 4, dtype=torch.float64)
    assert torch.equal(call(kernels.psamask_backward, grad, torch.zeros_like(mask), 0, 3, 4, 5, 5),
                       reference_backward(grad, 0, 5, 5))


def test_a_hand_computed_case():
    # A 1x2 map with a 1x3 mask [left, centre, right] per pixel.
    mask = torch.tensor([[[[1.0, 4.0]], [[2.0, 5.0]], [[3.0, 6.0]]]])  # channel, then pixel
    collect = call(kernels.psamask_forward, mask, torch.zeros(1, 2, 1, 2), 0, 1, 2, 1, 3)
    # collect: out[q, p]: pixel 0 sees itself (centre, 2) and pixel 1 (right, 3); pixel 1
    # sees pixel 0 (left, 4) and itself (centre, 5).
    assert collect.view(2, 2).tolist() == [[2.0, 4.0], [3.0, 5.0]]
    distribute = call(kernels.psamask_forward, mask, torch.zeros(1, 2, 1, 2), 1, 1, 2, 1, 3)
    assert distribute.view(2, 2).tolist() == [[2.0, 3.0], [4.0, 5.0]]


@pytest.mark.parametrize("kind", ["collect", "distribute"])
def test_mmcv_psamask_runs_on_the_standin_and_matches_the_reference(tmp_path, kind):
    saved = run_mmcv_op_wrapper("psamask_" + kind, tmp_path)
    psa_type = 0 if kind == "collect" else 1
    assert torch.equal(saved["output"], reference_forward(saved["inputs"]["input"], psa_type, 5, 7))
    assert torch.equal(saved["grads"]["input"], reference_backward(saved["upstream"], psa_type, 5, 7))

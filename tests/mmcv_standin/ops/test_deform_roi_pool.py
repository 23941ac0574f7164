"""Deformable RoI pooling kernels of the mmcv._ext stand-in
(compatfix.mmcv_standin.ops.deform_roi_pool).

The reference is mmcv's CUDA kernel (deform_roi_pool_cuda_kernel.cuh, with
bilinear_interpolate(_gradient) from common_cuda_helper.hpp) ported to Python loops over
RoIs, channels, bins and samples, forward and backward as written there. Its input
gradient is also checked against autograd through the loop forward; its offset gradient
only where no sample is clamped at the border, since mmcv's formula differentiates the
unclamped position (see the module docstring).
"""

import math

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only

from compatfix.mmcv_standin.ops import deform_roi_pool as kernels
from support import run_mmcv_op_wrapper

pytestmark = pytest.mark.stack("modern", "paper", "mmold")


def corners(y, x, height, width):
    """bilinear_interpolate_gradient: (weights, y_low, y_high, x_low, x_high) or None."""
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return None
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_high = y_low = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_high = x_low = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    hy, hx = 1.0 - ly, 1.0 - lx
    return (hy * hx, hy * lx, ly * hx, ly * lx), y_low, y_high, x_low, x_high


def samples(roi, off, ph, pw, pooled, scale, ratio, gamma):
    """The kernel's sample points of one bin, and roi_width, roi_height, count."""
    start_w, start_h = roi[1] * scale - 0.5, roi[2] * scale - 0.5
    roi_w, roi_h = roi[3] * scale - 0.5 - start_w, roi[4] * scale - 0.5 - start_h
    bin_h, bin_w = roi_h / pooled[0], roi_w / pooled[1]
    gh = ratio if ratio > 0 else math.ceil(roi_h / pooled[0])
    gw = ratio if ratio > 0 else math.ceil(roi_w / pooled[1])
    if off is not None:
        start_w += gamma * roi_w * off[0][ph][pw]
        start_h += gamma * roi_h * off[1][ph][pw]
    points = [(start_h + ph * bin_h + (iy + 0.5) * bin_h / gh, start_w + pw * bin_w + (ix + 0.5) * bin_w / gw)
              for iy in range(max(gh, 0)) for ix in range(max(gw, 0))]
    return points, roi_w, roi_h, max(gh * gw, 1)


def reference_forward(input, rois, offset, pooled, scale, ratio, gamma):
    """Differentiable in input (autograd through the loops); offset as plain floats."""
    _, channels, height, width = input.shape
    out = input.new_zeros(rois.size(0), channels, *pooled)
    for n, roi in enumerate(rois.tolist()):
        off = offset[n].tolist() if offset is not None else None
        feature = input[int(roi[0])]
        for ph in range(pooled[0]):
            for pw in range(pooled[1]):
                points, _, _, count = samples(roi, off, ph, pw, pooled, scale, ratio, gamma)
                total = input.new_zeros(channels)
                for y, x in points:
                    found = corners(y, x, height, width)
                    if found is None:
                        continue
                    (w1, w2, w3, w4), yl, yh, xl, xh = found
                    total = total + w1 * feature[:, yl, xl] + w2 * feature[:, yl, xh] + w3 * feature[:, yh, xl] \
                        + w4 * feature[:, yh, xh]
                out[n, :, ph, pw] = total / count
    return out


def reference_offset_grad(grad_output, input, rois, offset, pooled, scale, ratio, gamma):
    """The kernel's ogx / ogy accumulation, as written."""
    _, channels, height, width = input.shape
    grad = torch.zeros_like(offset)
    for n, roi in enumerate(rois.tolist()):
        off = offset[n].tolist()
        feature = input[int(roi[0])]
        for ph in range(pooled[0]):
            for pw in range(pooled[1]):
                points, roi_w, roi_h, count = samples(roi, off, ph, pw, pooled, scale, ratio, gamma)
                for c in range(channels):
                    share = float(grad_output[n, c, ph, pw]) / count
                    for y, x in points:
                        found = corners(y, x, height, width)
                        if found is None:
                            continue
                        _, yl, yh, xl, xh = found
                        v00, v10 = float(feature[c, yl, xl]), float(feature[c, yl, xh])
                        v01, v11 = float(feature[c, yh, xl]), float(feature[c, yh, xh])
                        grad[n, 0, ph, pw] += gamma * roi_w * share * (
                            v11 * (y - yl) + v10 * (yh - y) + v01 * (yl - y) + v00 * (y - yh))
                        grad[n, 1, ph, pw] += gamma * roi_h * share * (
                            v11 * (x - xl) + v01 * (xh - x) + v10 * (xl - x) + v00 * (x - xh))
    return grad


def run(input, rois, offset, pooled, scale, ratio, gamma, upstream):
    output = input.new_zeros(rois.size(0), input.size(1), *pooled)
    empty = input.new_zeros(0)
    kernels.deform_roi_pool_forward(input, rois, empty if offset is None else offset, output, pooled_height=pooled[0],
                                    pooled_width=pooled[1], spatial_scale=scale, sampling_ratio=ratio, gamma=gamma)
    grad_input = torch.zeros_like(input)
    grad_offset = empty if offset is None else torch.zeros_like(offset)
    kernels.deform_roi_pool_backward(upstream, input, rois, empty if offset is None else offset, grad_input,
                                     grad_offset, pooled_height=pooled[0], pooled_width=pooled[1],
                                     spatial_scale=scale, sampling_ratio=ratio, gamma=gamma)
    return output, grad_input, grad_offset


ROIS = torch.tensor([[0, 1.0, 2.0, 10.5, 9.0], [1, 0.0, 0.0, 13.0, 11.0], [0, 3.3, 4.1, 5.2, 6.0],
                     [1, -2.0, -1.5, 6.0, 20.0], [0, 6.0, 3.0, 30.0, 11.5]], dtype=torch.float64)


@pytest.mark.parametrize("with_offset", [False, True])
@pytest.mark.parametrize("ratio", [0, 2])
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_forward_and_backward_match_the_kernel_loops(with_offset, ratio, scale):
    generator = torch.Generator().manual_seed(int(with_offset) * 10 + ratio + int(scale * 4))
    input = torch.randn(2, 3, 12, 14, dtype=torch.float64, generator=generator)
    offset = torch.randn(5, 2, 3, 4, dtype=torch.float64, generator=generator) if with_offset else None
    upstream = torch.randn(5, 3, 3, 4, dtype=torch.float64, generator=generator)
    output, grad_input, grad_offset = run(input, ROIS, offset, (3, 4), scale, ratio, 0.1, upstream)
    leaf = input.clone().requires_grad_()
    expected = reference_forward(leaf, ROIS, offset, (3, 4), scale, ratio, 0.1)
    torch.testing.assert_close(output, expected.detach(), rtol=0, atol=1e-12)
    (expected_grad_input,) = torch.autograd.grad(expected, leaf, upstream)
    torch.testing.assert_close(grad_input, expected_grad_input, rtol=0, atol=1e-12)
    if with_offset:
        expected_grad_offset = reference_offset_grad(upstream, input, ROIS, offset, (3, 4), scale, ratio, 0.1)
        torch.testing.assert_close(grad_offset, expected_grad_offset, rtol=0, atol=1e-12)
    else:
        assert grad_offset.numel() == 0


def test_the_offset_gradient_is_the_derivative_away_from_the_border():
    # RoIs well inside the map: no sample is clamped, so mmcv's formula is the exact
    # derivative of the forward, and gradcheck holds for input and offset.
    rois = torch.tensor([[0, 3.0, 3.0, 9.0, 8.0], [0, 4.5, 2.5, 10.0, 10.5]], dtype=torch.float64)
    input = torch.randn(1, 2, 14, 14, dtype=torch.float64)

    class Pool(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, offset):
            ctx.save_for_backward(input, offset)
            output = input.new_zeros(2, 2, 2, 2)
            kernels.deform_roi_pool_forward(input, rois, offset, output, 2, 2, 1.0, 2, 0.1)
            return output

        @staticmethod
        def backward(ctx, grad):
            input, offset = ctx.saved_tensors
            grad_input, grad_offset = torch.zeros_like(input), torch.zeros_like(offset)
            kernels.deform_roi_pool_backward(grad, input, rois, offset, grad_input, grad_offset, 2, 2, 1.0, 2, 0.1)
            return grad_input, grad_offset

    offset = (torch.rand(2, 2, 2, 2, dtype=torch.float64) - 0.5).requires_grad_()
    assert torch.autograd.gradcheck(Pool.apply, (input.requires_grad_(), offset))


def test_a_hand_computed_case():
    # A 4x4 ramp (value = x), one 2x2 RoI from (0.5, 0.5) to (2.5, 2.5), one bin, one
    # sample: the bin's centre, pixel (1.0, 1.0) after the half-pixel shift: value 1.0.
    # An x offset of 0.25 (gamma 1, RoI width 2) moves it by 0.5: 1.5.
    ramp = torch.arange(4.0).repeat(4, 1).view(1, 1, 4, 4)
    rois = torch.tensor([[0, 0.5, 0.5, 2.5, 2.5]])
    output = torch.zeros(1, 1, 1, 1)
    kernels.deform_roi_pool_forward(ramp, rois, torch.zeros(0), output, 1, 1, 1.0, 1, 1.0)
    assert output.item() == 1.0
    kernels.deform_roi_pool_forward(ramp, rois, torch.tensor([[[[0.25]], [[0.0]]]]), output, 1, 1, 1.0, 1, 1.0)
    assert output.item() == 1.5


def test_mmcv_deform_roi_pool_pack_runs_on_the_standin_and_matches_the_reference(tmp_path):
    saved = run_mmcv_op_wrapper("deform_roi_pool", tmp_path)
    inputs = saved["inputs"]
    leaf = inputs["input"].clone().requires_grad_()
    expected = reference_forward(leaf, inputs["rois"], inputs["offset"], (3, 3), 0.5, 2, 0.1)
    torch.testing.assert_close(saved["output"], expected.detach(), rtol=0, atol=1e-12)
    (grad,) = torch.autograd.grad(expected, leaf, saved["upstream"])
    torch.testing.assert_close(saved["grads"]["input"], grad, rtol=0, atol=1e-12)
    expected_offset = reference_offset_grad(saved["upstream"], inputs["input"], inputs["rois"], inputs["offset"],
                                            (3, 3), 0.5, 2, 0.1)
    torch.testing.assert_close(saved["grads"]["offset"], expected_offset, rtol=0, atol=1e-12)

"""Kernels of compatfix.mmcv_standin.ext itself, in this process (the import path, the
stubs and the other kernels' numerics through mmcv's wrappers are in
tests/shims/mmcv/test_ext.py)."""

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only
torchvision = pytest.importorskip("torchvision")

from compatfix.mmcv_standin import ext

pytestmark = pytest.mark.stack("modern", "paper", "mmold")


def modulated(input, weight, bias, offset, mask, stride, pad):
    output = input.new_zeros(input.size(0), weight.size(0), (input.size(2) + 2 * pad - 3) // stride + 1,
                             (input.size(3) + 2 * pad - 3) // stride + 1)
    ext.modulated_deform_conv_forward(input, weight, bias, input.new_empty(0), offset, mask, output,
                                      input.new_empty(0), kernel_h=3, kernel_w=3, stride_h=stride, stride_w=stride,
                                      pad_h=pad, pad_w=pad, dilation_h=1, dilation_w=1, group=1,
                                      deformable_group=1, with_bias=True)
    return output


def test_modulated_deform_conv_reads_a_larger_offset_map_as_mmcvs_kernel_does():
    # DyHead (mmdet's dyhead configs) passes one pyramid level's offsets and mask to the
    # next, smaller level: mmcv's kernel checks no shape and reads each sample's first
    # 18 * Ho * Wo offsets (9 * Ho * Wo mask values) as its Ho x Wo planes.
    generator = torch.Generator().manual_seed(0)
    input = torch.randn(2, 4, 4, 5, dtype=torch.float64, generator=generator)  # output 4x5
    weight = torch.randn(3, 4, 3, 3, dtype=torch.float64, generator=generator)
    bias = torch.randn(3, dtype=torch.float64, generator=generator)
    offset = torch.randn(2, 18, 8, 10, dtype=torch.float64, generator=generator)  # the larger level's
    mask = torch.rand(2, 9, 8, 10, dtype=torch.float64, generator=generator)
    # What the kernel reads, element by element in memory order.
    read_offset = torch.stack([torch.tensor(offset[b].reshape(-1).tolist()[:18 * 20], dtype=torch.float64) for b in range(2)])
    read_mask = torch.stack([torch.tensor(mask[b].reshape(-1).tolist()[:9 * 20], dtype=torch.float64) for b in range(2)])
    read_offset = read_offset.view(2, 18, 4, 5).requires_grad_()
    read_mask = read_mask.view(2, 9, 4, 5).requires_grad_()
    expected = torchvision.ops.deform_conv2d(input, read_offset, weight, bias, padding=1, mask=read_mask)
    output = modulated(input, weight, bias, offset, mask, 1, 1)
    torch.testing.assert_close(output, expected.detach(), rtol=0, atol=1e-12)

    # The gradients land on the elements read; the rest of the larger map gets none.
    upstream = torch.randn_like(output)
    grad_offset_read, grad_mask_read = torch.autograd.grad(expected, (read_offset, read_mask), upstream)
    grads = [torch.zeros_like(t) for t in (input, weight, bias, offset, mask)]
    ext.modulated_deform_conv_backward(input, weight, bias, input.new_empty(0), offset, mask, input.new_empty(0),
                                       *grads, upstream, kernel_h=3, kernel_w=3, stride_h=1, stride_w=1, pad_h=1,
                                       pad_w=1, dilation_h=1, dilation_w=1, group=1, deformable_group=1,
                                       with_bias=True)
    grad_offset, grad_mask = grads[3], grads[4]
    for b in range(2):
        torch.testing.assert_close(grad_offset[b].reshape(-1)[:360], grad_offset_read[b].reshape(-1), rtol=0, atol=1e-12)
        torch.testing.assert_close(grad_mask[b].reshape(-1)[:180], grad_mask_read[b].reshape(-1), rtol=0, atol=1e-12)
        assert not grad_offset[b].reshape(-1)[360:].any() and not grad_mask[b].reshape(-1)[180:].any()


def test_modulated_deform_conv_still_refuses_a_smaller_offset_map():
    # mmcv's kernel would read past the end of it: an error here, not a made-up result.
    input = torch.randn(1, 2, 6, 6)
    with pytest.raises(RuntimeError, match="offset output dims"):
        modulated(input, torch.randn(2, 2, 3, 3), torch.zeros(2), torch.randn(1, 18, 3, 3), torch.rand(1, 9, 3, 3), 1, 1)

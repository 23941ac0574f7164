"""Masked-convolution kernels of the mmcv._ext stand-in
(compatfix.mmcv_standin.ops.masked_conv).

The references: mmcv's CUDA kernels (masked_conv2d_cuda_kernel.cuh) as Python loops, and,
through mmcv's own MaskedConv2d, the plain convolution (F.conv2d) kept at the masked
pixels and zero elsewhere, which is what the layer computes.
"""

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only

from compatfix.mmcv_standin.ops import masked_conv as kernels
from support import run_mmcv_op_wrapper

pytestmark = pytest.mark.stack("modern", "paper", "mmold")


def reference_im2col(im, hs, ws, kernel_h, kernel_w, pad_h, pad_w):
    _, channels, height, width = im.shape
    col = torch.zeros(channels * kernel_h * kernel_w, len(hs), dtype=im.dtype)
    for m, (h, w) in enumerate(zip(hs, ws)):
        for c in range(channels):
            for i in range(kernel_h):
                for j in range(kernel_w):
                    y, x = h - pad_h + i, w - pad_w + j
                    if 0 <= y < height and 0 <= x < width:
                        col[(c * kernel_h + i) * kernel_w + j, m] = im[0, c, y, x]
    return col


@pytest.mark.parametrize("kernel, pad", [((3, 3), (1, 1)), ((1, 1), (0, 0)), ((3, 5), (0, 2)), ((5, 3), (3, 1))])
def test_im2col_and_col2im_match_the_kernel_loops(kernel, pad):
    im = torch.randn(1, 3, 6, 7, dtype=torch.float64)
    hs, ws = [0, 2, 5, 5, 3], [0, 6, 1, 6, 3]
    h_idx, w_idx = torch.tensor(hs), torch.tensor(ws)
    col = torch.full((3 * kernel[0] * kernel[1], 5), 9.0, dtype=torch.float64)
    kernels.masked_im2col_forward(im, h_idx, w_idx, col, kernel_h=kernel[0], kernel_w=kernel[1], pad_h=pad[0],
                                  pad_w=pad[1])
    assert torch.equal(col, reference_im2col(im, hs, ws, *kernel, *pad))
    # col2im writes the masked pixels only; the rest stays as it was.
    values = torch.randn(4, 5, dtype=torch.float64)
    out = torch.full((1, 4, 6, 7), 7.0, dtype=torch.float64)
    kernels.masked_col2im_forward(values, h_idx, w_idx, out, height=6, width=7, channels=4)
    expected = torch.full((1, 4, 6, 7), 7.0, dtype=torch.float64)
    for m, (h, w) in enumerate(zip(hs, ws)):
        expected[0, :, h, w] = values[:, m]
    assert torch.equal(out, expected)


def test_mmcv_masked_conv2d_runs_on_the_standin_and_matches_the_reference(tmp_path):
    import torch.nn.functional as F

    saved = run_mmcv_op_wrapper("masked_conv", tmp_path)
    inputs = saved["inputs"]
    full = F.conv2d(inputs["input"], inputs["weight"], inputs["bias"], padding=1)
    expected = full * (inputs["mask"] > 0)
    torch.testing.assert_close(saved["output"], expected, rtol=0, atol=1e-12)

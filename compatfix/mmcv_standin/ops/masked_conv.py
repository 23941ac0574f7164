"""Masked convolution (the guided-anchoring heads' ``MaskedConv2d``, which convolves only
where the predicted anchor location is likely, at test time): ``masked_im2col_forward`` /
``masked_col2im_forward``.

mmcv's Python wrapper (the same in mmcv 1.2.7, 1.3.0 and 1.7.2; batch size 1, stride 1)
gathers the masked pixels' receptive fields with ``masked_im2col_forward`` into ``col``
(``C * kh * kw`` rows, one column per masked pixel, 0 outside the image), multiplies by the
weights itself, and scatters the result to those pixels of the zeroed output with
``masked_col2im_forward``. The kernels (``masked_conv2d_cuda_kernel.cuh``, CUDA only)
read and write sample 0 of the image only; the op has no backward in mmcv.
"""

from __future__ import annotations


def masked_im2col_forward(im, mask_h_idx, mask_w_idx, col, kernel_h, kernel_w, pad_h, pad_w):
    import torch

    _, channels, height, width = im.shape
    rows = mask_h_idx[None, :] - pad_h + torch.arange(kernel_h, device=im.device)[:, None]  # (kh, M)
    columns = mask_w_idx[None, :] - pad_w + torch.arange(kernel_w, device=im.device)[:, None]  # (kw, M)
    inside = ((rows >= 0) & (rows < height))[:, None, :] & ((columns >= 0) & (columns < width))[None, :, :]
    values = im[0][:, rows.clamp(0, height - 1)[:, None, :], columns.clamp(0, width - 1)[None, :, :]]
    col.copy_((values * inside).reshape(channels * kernel_h * kernel_w, -1))


def masked_col2im_forward(col, mask_h_idx, mask_w_idx, im, height, width, channels):
    im[0][:, mask_h_idx, mask_w_idx] = col.to(im.dtype)

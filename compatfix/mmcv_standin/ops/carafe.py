"""CARAFE (Content-Aware ReAssembly of FEatures, arXiv:1905.02188): ``carafe_forward`` /
``carafe_backward`` and ``carafe_naive_forward`` / ``carafe_naive_backward``.

mmcv's kernels (``carafe_cuda_kernel.cuh``, ``carafe_naive_cuda_kernel.cuh``; CUDA only,
the same at v1.2.7, v1.3.0 and v1.7.2) compute, with ``k = kernel_size``,
``s = scale_factor``, ``r = (k - 1) // 2`` and ``G = group_size``::

    out[n, c, y, x] = sum over i, j < k of
        features[n, c, y // s + i - r, x // s + j - r] * masks[n, g * k * k + i * k + j, y, x]

where ``g = c // (C / G)`` and features outside the map count as 0. Here that is a loop
over the ``k * k`` kernel positions of whole-tensor ops (memory of one output per step,
not ``k * k``), and the backward is its adjoint written out the same way.
"""

from __future__ import annotations


def _shifted_windows(features, kernel_size):
    """(i, j, features[..., i - r : i - r + h, j - r : j - r + w]) zero-padded, per position."""
    import torch.nn.functional as F

    r = (kernel_size - 1) // 2
    _, _, h, w = features.shape
    padded = F.pad(features, (r, r, r, r))
    for i in range(kernel_size):
        for j in range(kernel_size):
            yield i, j, padded[:, :, i:i + h, j:j + w]


def _upsample(x, s):
    """Nearest-neighbour upsampling by an integer factor: x[..., y // s, x // s]."""
    return x.repeat_interleave(s, dim=2).repeat_interleave(s, dim=3)


def _block_sum(x, s):
    """The adjoint of _upsample: the sum over each s x s block."""
    n, c, height, width = x.shape
    return x.reshape(n, c, height // s, s, width // s, s).sum(dim=(3, 5))


def carafe(features, masks, kernel_size, group_size, scale_factor):
    """The CARAFE output (a new tensor); see the module docstring."""
    n, c, h, w = features.shape
    k, s, groups = int(kernel_size), int(scale_factor), int(group_size)
    masks = masks.reshape(n, groups, k * k, h * s, w * s)
    output = features.new_zeros((n, groups, c // groups, h * s, w * s))
    for i, j, window in _shifted_windows(features, k):
        up = _upsample(window, s).reshape(n, groups, c // groups, h * s, w * s)
        output += up * masks[:, :, i * k + j].unsqueeze(2)
    return output.reshape(n, c, h * s, w * s)


def carafe_grads(top_grad, features, masks, kernel_size, group_size, scale_factor):
    """(grad_features, grad_masks) of ``carafe`` for the output gradient ``top_grad``."""
    n, c, h, w = features.shape
    k, s, groups = int(kernel_size), int(scale_factor), int(group_size)
    r = (k - 1) // 2
    grouped_grad = top_grad.reshape(n, groups, c // groups, h * s, w * s)
    masks = masks.reshape(n, groups, k * k, h * s, w * s)
    grad_masks = masks.new_zeros(masks.shape)
    grad_padded = features.new_zeros((n, c, h + 2 * r, w + 2 * r))
    for i, j, window in _shifted_windows(features, k):
        up = _upsample(window, s).reshape(grouped_grad.shape)
        grad_masks[:, :, i * k + j] = (grouped_grad * up).sum(dim=2)
        weighted = (grouped_grad * masks[:, :, i * k + j].unsqueeze(2)).reshape(n, c, h * s, w * s)
        grad_padded[:, :, i:i + h, j:j + w] += _block_sum(weighted, s)
    return grad_padded[:, :, r:r + h, r:r + w], grad_masks.reshape(n, groups * k * k, h * s, w * s)


def carafe_naive_forward(features, masks, output, kernel_size, group_size, scale_factor):
    output.copy_(carafe(features, masks, kernel_size, group_size, scale_factor))


def carafe_naive_backward(top_grad, features, masks, bottom_grad, mask_grad, kernel_size,
                          group_size, scale_factor):
    grad_features, grad_masks = carafe_grads(top_grad, features, masks, kernel_size, group_size,
                                             scale_factor)
    bottom_grad.copy_(grad_features)
    mask_grad.copy_(grad_masks)


def _nhwc(buffer, x):
    """Resize ``buffer`` to x's NHWC shape and fill it, as the kernel's transposes do."""
    buffer.resize_((x.size(0), x.size(2), x.size(3), x.size(1))).copy_(x.permute(0, 2, 3, 1))


def carafe_forward(features, masks, rfeatures, routput, rmasks, output, kernel_size, group_size,
                   scale_factor):
    # The kernel leaves features, masks and output in NHWC copies in the r* buffers, and
    # the Python wrapper passes rfeatures (not features) back to carafe_backward.
    result = carafe(features, masks, kernel_size, group_size, scale_factor)
    _nhwc(rfeatures, features)
    _nhwc(rmasks, masks)
    _nhwc(routput, result)
    output.copy_(result)


def carafe_backward(top_grad, rfeatures, masks, rtop_grad, rbottom_grad_hs, rbottom_grad, rmask_grad,
                    bottom_grad, mask_grad, kernel_size, group_size, scale_factor):
    features = rfeatures.reshape(bottom_grad.size(0), bottom_grad.size(2), bottom_grad.size(3),
                                 bottom_grad.size(1)).permute(0, 3, 1, 2)
    grad_features, grad_masks = carafe_grads(top_grad, features, masks, kernel_size, group_size,
                                             scale_factor)
    # The NHWC scratch buffers as the kernel leaves them (rbottom_grad_hs, its
    # pre-block-sum intermediate, is only resized: nothing reads it).
    _nhwc(rtop_grad, top_grad)
    _nhwc(rbottom_grad, grad_features)
    _nhwc(rmask_grad, grad_masks)
    rbottom_grad_hs.resize_((top_grad.size(0), top_grad.size(2), top_grad.size(3), top_grad.size(1)))
    bottom_grad.copy_(grad_features)
    mask_grad.copy_(grad_masks)

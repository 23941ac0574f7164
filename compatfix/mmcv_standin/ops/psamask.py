"""PSAMask (PSANet's point-wise spatial attention, ECCV 2018): ``psamask_forward`` /
``psamask_backward``.

mmcv's kernels (``psamask_cuda_kernel.cuh``, ``pytorch/cpu/psamask.cpp``; the same at
v1.2.7, v1.3.0 and v1.7.2) turn a per-pixel mask over ``h_mask x w_mask`` relative
positions, ``input[n, hidx * w_mask + widx, h, w]``, into an attention over absolute
positions of the ``H x W`` feature map. With ``p = (h, w)`` and
``q = (h + hidx - half_h_mask, w + widx - half_w_mask)`` as flat indices ``y * W + x``:

- ``psa_type`` 0, "collect": ``output[n, q, p] = input[n, hidx * w_mask + widx, p]``;
- ``psa_type`` 1, "distribute": ``output[n, p, q]`` = the same value;

for every ``q`` inside the map. Other output elements are left as they were (the Python
wrapper passes zeros). The backward reads ``grad_output`` at the same places into
``grad_input`` and leaves the mask entries whose ``q`` falls outside the map as they were.

Both directions are one gather each, with an index computed for a band of rows at a
time, so that the index never takes much more memory than the tensors themselves.
"""

from __future__ import annotations

# Index elements per band: 2**22 int64s are 32 MiB.
_BAND = 1 << 22


def _row_bands(count, size):
    rows = max(1, _BAND // max(size, 1))
    for start in range(0, count, rows):
        yield start, min(start + rows, count)


def _positions(w_feature, start, stop, device):
    import torch

    flat = torch.arange(start, stop, device=device)
    return flat // w_feature, flat % w_feature


def psamask_forward(input, output, psa_type, num_, h_feature, w_feature, h_mask, w_mask,
                    half_h_mask, half_w_mask):
    import torch

    size = h_feature * w_feature
    mask = input.reshape(num_, h_mask * w_mask, size)
    # result[n, q, p] is output[n, q, p] for "collect" and output[n, p, q] for "distribute".
    result = output.view(num_, size, size)
    if psa_type != 0:
        result = result.transpose(1, 2)
    ph, pw = _positions(w_feature, 0, size, input.device)
    for start, stop in _row_bands(size, size):
        qh, qw = _positions(w_feature, start, stop, input.device)
        hidx = qh[:, None] - ph[None, :] + half_h_mask
        widx = qw[:, None] - pw[None, :] + half_w_mask
        valid = (hidx >= 0) & (hidx < h_mask) & (widx >= 0) & (widx < w_mask)
        channel = torch.where(valid, hidx * w_mask + widx, 0)
        values = mask.gather(1, channel.expand(num_, -1, -1))
        rows = result[:, start:stop]
        rows.copy_(torch.where(valid, values, rows))


def psamask_backward(grad_output, grad_input, psa_type, num_, h_feature, w_feature, h_mask, w_mask,
                     half_h_mask, half_w_mask):
    import torch

    size = h_feature * w_feature
    grad = grad_output.reshape(num_, size, size)
    if psa_type != 0:
        grad = grad.transpose(1, 2)  # grad[n, q, p] in both cases
    result = grad_input.view(num_, h_mask * w_mask, size)
    ph, pw = _positions(w_feature, 0, size, grad_output.device)
    for start, stop in _row_bands(h_mask * w_mask, size):
        channel = torch.arange(start, stop, device=grad_output.device)
        qh = ph[None, :] + (channel // w_mask)[:, None] - half_h_mask
        qw = pw[None, :] + (channel % w_mask)[:, None] - half_w_mask
        valid = (qh >= 0) & (qh < h_feature) & (qw >= 0) & (qw < w_feature)
        q = torch.where(valid, qh * w_feature + qw, 0)
        values = grad.gather(1, q.expand(num_, -1, -1))
        rows = result[:, start:stop]
        rows.copy_(torch.where(valid, values.to(rows.dtype), rows))

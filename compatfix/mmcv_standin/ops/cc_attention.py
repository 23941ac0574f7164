"""Criss-cross attention (CCNet, ICCV 2019) before mmcv 1.3.13: ``ca_forward`` /
``ca_backward`` and ``ca_map_forward`` / ``ca_map_backward``.

mmcv 1.3.13 (PR #1201) rewrote ``CrissCrossAttention`` in pure torch; before that, as in
mmcv 1.2.7 and 1.3.0, it calls these four kernels (``cc_attention_cuda_kernel.cuh``, CUDA
only). For a pixel ``(y, x)`` of an ``H x W`` map, its criss-cross neighbours are the
``W`` pixels of its row, then the ``H - 1`` other pixels of its column, in order:

- ``ca_forward(t, f, weight)``: ``weight[n, i, y, x] += sum_c t[n, c, y, x] * f[n, c, y, i]``
  for ``i < W``, and ``weight[n, W + j, y, x] += sum_c t[n, c, y, x] * f[n, c, k, x]`` where
  ``k`` is the ``j``-th row other than ``y`` (``k = j`` below ``y``, ``j + 1`` from it);
- ``ca_map_forward(weight, g, out)``: ``out[n, c, y, x] +=`` the same neighbours of ``g``
  weighted by ``weight``;
- the backwards add the gradients of those sums to ``dt, df`` and ``dw, dg``.

The kernels add into the tensors they are given (the Python wrapper passes zeros); so does
this. The sums are einsums; the backwards are their exact vector-Jacobian products,
taken by autograd on the same einsums.
"""

from __future__ import annotations


def _column_index(height, device):
    """(H - 1, H, 1): the row ``k`` of the ``j``-th column neighbour of row ``y``."""
    import torch

    j = torch.arange(height - 1, device=device)[:, None]
    y = torch.arange(height, device=device)[None, :]
    return (j + (j >= y).to(j.dtype)).unsqueeze(-1)


def _columns(full, height, width):
    """(n, H, H, W) over every row k -> (n, H - 1, H, W) without k == y."""
    index = _column_index(height, full.device).expand(-1, -1, width)
    return full.gather(1, index.unsqueeze(0).expand(full.size(0), -1, -1, -1))


def ca_weight(t, f):
    """The (n, H + W - 1, H, W) affinities of ``t`` (queries) with ``f`` (keys)."""
    import torch

    _, _, height, width = t.shape
    rows = torch.einsum("ncyx,ncyi->niyx", t, f)
    columns = _columns(torch.einsum("ncyx,nckx->nkyx", t, f), height, width)
    return torch.cat([rows, columns], dim=1)


def ca_map(weight, g):
    """Each pixel's criss-cross neighbours of ``g``, weighted by ``weight``."""
    import torch

    _, _, height, width = g.shape
    rows = torch.einsum("niyx,ncyi->ncyx", weight[:, :width], g)
    # Scatter the H - 1 column weights back to all H rows (zero at k == y).
    full = weight.new_zeros((weight.size(0), height, height, width))
    index = _column_index(height, weight.device).expand(-1, -1, width)
    full.scatter_(1, index.unsqueeze(0).expand(weight.size(0), -1, -1, -1), weight[:, width:])
    return rows + torch.einsum("nkyx,nckx->ncyx", full, g)


def _vjp(function, inputs, grad):
    import torch

    with torch.enable_grad():
        leaves = [x.detach().requires_grad_() for x in inputs]
        return torch.autograd.grad(function(*leaves), leaves, grad)


def ca_forward(t, f, weight):
    weight.add_(ca_weight(t, f))


def ca_backward(dw, t, f, dt, df):
    grad_t, grad_f = _vjp(ca_weight, (t, f), dw)
    dt.add_(grad_t)
    df.add_(grad_f)


def ca_map_forward(weight, g, out):
    out.add_(ca_map(weight, g))


def ca_map_backward(dout, weight, g, dw, dg):
    grad_weight, grad_g = _vjp(ca_map, (weight, g), dout)
    dw.add_(grad_weight)
    dg.add_(grad_g)

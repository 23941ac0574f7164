"""Deformable RoI pooling (Deformable ConvNets, ICCV 2017; DCNv2's modulated variant is
the same op times a mask in Python): ``deform_roi_pool_forward`` / ``deform_roi_pool_backward``.

mmcv's kernel (``deform_roi_pool_cuda_kernel.cuh``, CUDA only; the same in mmcv 1.2.7,
1.3.0 and 1.7.2) is RoIAlign's average pooling with ``aligned=True`` geometry (the RoI
scaled, minus half a pixel, not rounded; ``ceil(roi_size / pooled_size)`` samples per bin
when ``sampling_ratio`` is 0), where each bin's start moves by
``gamma * roi_width * offset[n, 0, ph, pw]`` in x and ``gamma * roi_height * offset[n, 1,
ph, pw]`` in y. An empty ``offset`` (the Python wrapper's stand-in for None) moves nothing.
Samples are bilinear with mmcv's rules (0 outside ``[-1, H] x [-1, W]``, clamped to the
border inside it).

The backward is the kernel's, which is not quite the derivative of its forward: for the
offset it differentiates the bilinear weights at the sample's *unclamped* position (a
sample in ``(-1, 0)`` or at the last row or column gets another offset gradient than the
clamped forward implies). It is written out here as the kernel computes it.

The RoIs are processed in groups of equal sampling grid size, each group vectorised over
its RoIs, bins, samples and channels.
"""

from __future__ import annotations

from compatfix.mmcv_standin.ops.bilinear import bilinear_corners


def _geometry(rois, offset, pooled_height, pooled_width, spatial_scale, sampling_ratio, gamma, dtype):
    """Per RoI (in the input's dtype, as the kernel computes): the start of every bin
    (R, PH, PW) in y and x, the bin sizes, the RoI sizes, and the grid sizes (int lists)."""
    import torch

    r = rois.to(dtype)
    scale = torch.tensor(spatial_scale, dtype=dtype, device=rois.device)
    start_w, start_h = r[:, 1] * scale - 0.5, r[:, 2] * scale - 0.5
    width, height = r[:, 3] * scale - 0.5 - start_w, r[:, 4] * scale - 0.5 - start_h
    bin_h, bin_w = height / pooled_height, width / pooled_width
    if sampling_ratio > 0:
        grid_h = grid_w = [sampling_ratio] * rois.size(0)
    else:
        grid_h = torch.ceil(height / pooled_height).to(torch.int64).tolist()
        grid_w = torch.ceil(width / pooled_width).to(torch.int64).tolist()
    shape = (rois.size(0), pooled_height, pooled_width)
    bin_start_h = start_h[:, None, None].expand(shape)
    bin_start_w = start_w[:, None, None].expand(shape)
    if offset is not None and offset.numel():
        bin_start_w = bin_start_w + gamma * width[:, None, None] * offset[:, 0].to(dtype)
        bin_start_h = bin_start_h + gamma * height[:, None, None] * offset[:, 1].to(dtype)
    return bin_start_h, bin_start_w, bin_h, bin_w, width, height, grid_h, grid_w


def _groups(grid_h, grid_w):
    """{(gh, gw): [RoI indices]} for the RoIs that have samples at all."""
    groups: dict[tuple[int, int], list[int]] = {}
    for n, key in enumerate(zip(grid_h, grid_w)):
        if key[0] > 0 and key[1] > 0:
            groups.setdefault(key, []).append(n)
    return groups


def _samples(index, bin_start, bin_size, grid, axis):
    """Sample coordinates along one axis (0: y, 1: x) for the RoIs ``index``: (R, PH, PW,
    grid), summed in the kernel's order: bin start, plus p * bin size, plus the sample's place."""
    import torch

    pooled = bin_start.size(1 + axis)
    p = torch.arange(pooled, dtype=bin_size.dtype, device=bin_size.device)
    i = torch.arange(grid, dtype=bin_size.dtype, device=bin_size.device)
    size = bin_size[index]
    step = p * size[:, None]
    step = step[:, :, None] if axis == 0 else step[:, None, :]
    place = ((i + 0.5) * size[:, None] / grid)[:, None, None, :]
    return bin_start[index][..., None] + step[..., None] + place


def _grid(rois, index, starts, sizes, grids):
    """Batch index and (y, x) sample grids (R, PH, PW, gh, gw) of one group."""
    bin_start_h, bin_start_w = starts
    bin_h, bin_w = sizes
    gh, gw = grids
    ys = _samples(index, bin_start_h, bin_h, gh, 0)[..., :, None]
    xs = _samples(index, bin_start_w, bin_w, gw, 1)[..., None, :]
    ys, xs = ys.expand(*ys.shape[:-1], gw), xs.expand(*xs.shape[:-2], gh, gw)
    return rois[index, 0].long(), ys, xs


def deform_roi_pool_forward(input, rois, offset, output, pooled_height, pooled_width, spatial_scale,
                            sampling_ratio, gamma):
    import torch

    batch, channels, height, width = input.shape
    start_h, start_w, bin_h, bin_w, _, _, grid_h, grid_w = _geometry(
        rois, offset, pooled_height, pooled_width, spatial_scale, sampling_ratio, gamma, input.dtype)
    pixels = input.permute(0, 2, 3, 1).reshape(batch * height * width, channels)
    result = output.new_zeros(output.shape)
    for (gh, gw), members in _groups(grid_h, grid_w).items():
        index = torch.tensor(members, device=rois.device)
        batch_index, ys, xs = _grid(rois, index, (start_h, start_w), (bin_h, bin_w), (gh, gw))
        valid, (y_low, y_high, x_low, x_high), weights = bilinear_corners(ys, xs, height, width)
        base = batch_index.view(-1, 1, 1, 1, 1) * (height * width)
        total = 0
        for yy, xx, weight in ((y_low, x_low, weights[0]), (y_low, x_high, weights[1]),
                               (y_high, x_low, weights[2]), (y_high, x_high, weights[3])):
            total = total + pixels[base + yy * width + xx] * (weight * valid)[..., None]
        pooled = total.sum(dim=(3, 4)) / (gh * gw)  # (R, PH, PW, C)
        result[index] = pooled.permute(0, 3, 1, 2).to(result.dtype)
    output.copy_(result)


def deform_roi_pool_backward(grad_output, input, rois, offset, grad_input, grad_offset, pooled_height,
                             pooled_width, spatial_scale, sampling_ratio, gamma):
    import torch

    batch, channels, height, width = input.shape
    start_h, start_w, bin_h, bin_w, roi_w, roi_h, grid_h, grid_w = _geometry(
        rois, offset, pooled_height, pooled_width, spatial_scale, sampling_ratio, gamma, input.dtype)
    pixels = input.permute(0, 2, 3, 1).reshape(batch * height * width, channels)
    grad_pixels = pixels.new_zeros(pixels.shape)
    with_offset = offset is not None and offset.numel() > 0
    for (gh, gw), members in _groups(grid_h, grid_w).items():
        index = torch.tensor(members, device=rois.device)
        batch_index, ys, xs = _grid(rois, index, (start_h, start_w), (bin_h, bin_w), (gh, gw))
        valid, (y_low, y_high, x_low, x_high), weights = bilinear_corners(ys, xs, height, width)
        # grad_output / count for each sample: (R, PH, PW, 1, 1, C)
        share = (grad_output[index].permute(0, 2, 3, 1) / (gh * gw))[:, :, :, None, None, :].to(pixels.dtype)
        base = batch_index.view(-1, 1, 1, 1, 1) * (height * width)
        corners = ((y_low, x_low), (y_low, x_high), (y_high, x_low), (y_high, x_high))
        values = []
        for (yy, xx), weight in zip(corners, weights):
            flat = base + yy * width + xx
            grad_pixels.index_add_(0, flat[valid], (share * weight[..., None])[valid])
            values.append(pixels[flat])
        if with_offset:
            v00, v10, v01, v11 = values  # [y_low, x_low], [y_low, x_high], [y_high, x_low], [y_high, x_high]
            yl, yh = y_low.to(ys.dtype)[..., None], y_high.to(ys.dtype)[..., None]
            xl, xh = x_low.to(xs.dtype)[..., None], x_high.to(xs.dtype)[..., None]
            y, x = ys[..., None], xs[..., None]
            dx = v11 * (y - yl) + v10 * (yh - y) + v01 * (yl - y) + v00 * (y - yh)
            dy = v11 * (x - xl) + v01 * (xh - x) + v10 * (xl - x) + v00 * (x - xh)
            mask = valid[..., None]
            ogx = (share * dx * mask).sum(dim=(3, 4, 5)) * (gamma * roi_w[index])[:, None, None]
            ogy = (share * dy * mask).sum(dim=(3, 4, 5)) * (gamma * roi_h[index])[:, None, None]
            grad_offset[index, 0] += ogx.to(grad_offset.dtype)
            grad_offset[index, 1] += ogy.to(grad_offset.dtype)
    grad_input += grad_pixels.view(batch, height, width, channels).permute(0, 3, 1, 2).to(grad_input.dtype)

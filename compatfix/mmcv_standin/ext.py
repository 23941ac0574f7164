"""The stand-in for mmcv's compiled ``mmcv._ext``: op kernels on torch and torchvision.

The shim that provides it is ``mmcv._ext`` in ``compatfix/shims/mmcv/_ext.py``.

mmcv 1.x keeps its ops (``mmcv.ops``) in the compiled extension ``mmcv._ext``, which only
an mmcv-full build for the exact torch/CUDA pair has. No mmcv-full wheel exists for
torch 2.x on Python 3.11, and the ``mmcv``/``mmcv-lite`` package has no ``_ext`` at all,
so ``import mmcv.ops`` fails with ``No module named 'mmcv._ext'``; so do ``mmseg.models``,
``mmseg.apis``, ``mmdet.models``, which import ``mmcv.ops`` at import time.

Every ``mmcv/ops/*.py`` binds its functions at import with
``ext_loader.load_ext('_ext', [names])``, which imports ``mmcv._ext`` and asserts that
each name exists. When no real ``mmcv._ext`` can be found (a real compiled one always
wins: this is a ``provide`` shim), compatfix provides one whose attributes are:

Implemented (same names and arguments as the C++ ``pybind`` functions that the Python
wrappers of mmcv 1.3.0 and 1.7.2 call, writing into their pre-allocated outputs in place):

- ``nms(boxes, scores, iou_threshold, offset)``: ``torchvision.ops.nms``; ``offset=1``
  (the legacy ``x2 - x1 + 1`` box size) by shifting ``x2, y2`` by 1. So ``mmcv.ops.nms``
  and ``batched_nms`` work.
- ``roi_align_forward`` / ``roi_align_backward``: ``pool_mode=1`` (avg, the default) is
  torchvision's ``roi_align`` and its backward kernel (same Detectron2 algorithm,
  ``aligned`` included); ``pool_mode=0`` (max) is a pure-torch port of mmcv's kernel,
  recording ``argmax_y/argmax_x`` like it, and its backward scatters from them.
- ``roi_pool_forward`` / ``roi_pool_backward``: a pure-torch port of mmcv's kernel (mmcv
  does not round the RoI like torchvision's ``roi_pool``; it uses ``x2 + 1``), with the
  same ``argmax`` (flat ``h * W + w``, -1 for an empty bin).
- ``deform_conv_forward`` / ``deform_conv_backward_input`` /
  ``deform_conv_backward_parameters`` and ``modulated_deform_conv_forward`` /
  ``modulated_deform_conv_backward``: torchvision's ``deform_conv2d`` and its backward
  kernel. The offset layout is the same (per deformable group and kernel position
  ``k``: channel ``2k`` is the y offset, ``2k + 1`` the x offset; the mask has one channel
  per group and position), so ``DeformConv2d``/``ModulatedDeformConv2d``/``DCN``/
  ``DCNv2`` work, with gradients for input, offset, mask, weight and bias. mmcv's
  modulated kernel checks no offset/mask shape and reads each sample's memory as
  output-sized planes; a larger map (DyHead passes one pyramid level's offsets to the
  next, smaller one) is read the same way here.
- ``sigmoid_focal_loss_forward`` / ``sigmoid_focal_loss_backward``: pure torch, the
  formulas of mmcv's kernel (including its ``FLT_MIN`` clamp inside the logs).
- ``get_compiler_version()`` / ``get_compiling_cuda_version()``: strings saying that
  there are no compiled ops, so that ``mmcv.utils.collect_env()`` works.

and, one module per op family in ``compatfix/mmcv_standin/ops/`` (their docstrings give
the kernel's definition and the mmcv versions that call it):

- ``carafe_forward`` / ``carafe_backward`` and ``carafe_naive_forward`` /
  ``carafe_naive_backward`` (``ops/carafe.py``): CARAFE, CARAFEPack, CARAFENaive;
- ``psamask_forward`` / ``psamask_backward`` (``ops/psamask.py``): PSAMask (PSANet);
- ``ca_forward`` / ``ca_backward`` / ``ca_map_forward`` / ``ca_map_backward``
  (``ops/cc_attention.py``): CrissCrossAttention (CCNet) of mmcv < 1.3.13, which calls
  them; later mmcv computes it in torch itself;
- ``deform_roi_pool_forward`` / ``deform_roi_pool_backward`` (``ops/deform_roi_pool.py``):
  DeformRoIPool(Pack), ModulatedDeformRoIPoolPack (the ``dpool``/``mdpool`` configs);
- ``masked_im2col_forward`` / ``masked_col2im_forward`` (``ops/masked_conv.py``):
  MaskedConv2d with a mask (the guided-anchoring heads at test time);
- ``softnms`` and ``nms_match`` (``ops/nms.py``): ``soft_nms``, and ``batched_nms`` with
  ``type='soft_nms'`` (CornerNet, CentripetalNet); PISA's sample grouping;
- ``ms_deform_attn_forward`` / ``ms_deform_attn_backward`` (``ops/ms_deform_attn.py``):
  MultiScaleDeformableAttention, through mmcv's own pure-torch
  ``multi_scale_deformable_attn_pytorch``, for mmcv 1.3.x, which calls the kernel
  whenever CUDA looks available (mmcv >= 1.4 takes its torch path on CPU tensors itself).

The pybind names and argument names of these functions are the same in mmcv 1.2.7, 1.3.0
and 1.7.2 (``mmcv/ops/csrc/pytorch/pybind.cpp``); where the Python wrappers of those
releases differ (deform_conv's padH/padW order) the note is at the function.

Everything else that ``load_ext`` asks for (corner pools, SyncBN's kernels, softmax focal
loss, the 3-D and rotated ops, ...) is a callable that raises ``MissingCompiledOpError``
when called (not when imported), naming the op and the fallbacks there are. mmcv-full
has CPU and GPU kernels alike for these ops: the fallbacks here run on any device torch
and torchvision support, they are just slower than mmcv's kernels. Which op the model
zoo calls, and which configs run because of a fallback, is in docs/mmcv-ops.md (made by
scripts/mmcv-ops-census.py).

Not done: ``nms_rotated``, ``bbox_overlaps`` and all other
ops are stubs. The ``parrots`` build of mmcv does not use ``mmcv._ext``.
"""

from __future__ import annotations

from compatfix.mmcv_standin.ops import (
    carafe, cc_attention, deform_roi_pool, masked_conv, ms_deform_attn, psamask,
)
from compatfix.mmcv_standin.ops import nms as nms_variants  # this module's nms() is plain NMS
from compatfix.mmcv_standin.ops.bilinear import bilinear_corners

# mmcv's C++ ``FLT_MIN``: the clamp inside the focal loss logs.
_FLT_MIN = 1.1754943508222875e-38

# The op families with a fallback, each with its pybind functions: here, or in the
# module of compatfix/mmcv_standin/ops/ that holds them.
FALLBACKS = {
    "nms": ("nms",),
    "softnms": ("softnms",),
    "nms_match": ("nms_match",),
    "roi_align": ("roi_align_forward", "roi_align_backward"),
    "roi_pool": ("roi_pool_forward", "roi_pool_backward"),
    "deform_conv": ("deform_conv_forward", "deform_conv_backward_input",
                    "deform_conv_backward_parameters"),
    "modulated_deform_conv": ("modulated_deform_conv_forward", "modulated_deform_conv_backward"),
    "sigmoid_focal_loss": ("sigmoid_focal_loss_forward", "sigmoid_focal_loss_backward"),
    "deform_roi_pool": ("deform_roi_pool_forward", "deform_roi_pool_backward"),
    "masked_conv": ("masked_im2col_forward", "masked_col2im_forward"),
    "carafe": ("carafe_forward", "carafe_backward"),
    "carafe_naive": ("carafe_naive_forward", "carafe_naive_backward"),
    "psamask": ("psamask_forward", "psamask_backward"),
    "ca": ("ca_forward", "ca_backward"),
    "ca_map": ("ca_map_forward", "ca_map_backward"),
    "ms_deform_attn": ("ms_deform_attn_forward", "ms_deform_attn_backward"),
}
IMPLEMENTED = tuple(name for names in FALLBACKS.values() for name in names) + (
    "get_compiler_version", "get_compiling_cuda_version",
)
_KERNEL_MODULES = (carafe, cc_attention, deform_roi_pool, masked_conv, ms_deform_attn, nms_variants, psamask)


def _kernel(name: str):
    """The function that provides the pybind function ``name``: in an op module, or here."""
    for module in _KERNEL_MODULES:
        if hasattr(module, name):
            return getattr(module, name)
    return globals()[name]


# The names mmcv 1.3.0 and 1.7.2 ask load_ext for that have no fallback here (any other
# public name a different 1.x version asks for gets the same kind of stub on demand).
STUBBED = (
    "active_rotated_filter_backward", "active_rotated_filter_forward",
    "assign_score_withk_backward", "assign_score_withk_forward", "ball_query_forward",
    "bbox_overlaps", "border_align_backward", "border_align_forward",
    "bottom_pool_backward", "bottom_pool_forward", "box_iou_quadri", "box_iou_rotated",
    "chamfer_distance_backward", "chamfer_distance_forward", "contour_expand",
    "convex_giou", "convex_iou", "correlation_backward", "correlation_forward",
    "diff_iou_rotated_sort_vertices_forward", "dynamic_point_to_voxel_backward",
    "dynamic_point_to_voxel_forward", "dynamic_voxelize_forward",
    "furthest_point_sampling_forward", "furthest_point_sampling_with_dist_forward",
    "fused_bias_leakyrelu", "fused_indice_conv_forward", "gather_points_backward",
    "gather_points_forward", "get_indice_pairs_2d_backward", "get_indice_pairs_2d_forward",
    "get_indice_pairs_3d_backward", "get_indice_pairs_3d_forward",
    "get_indice_pairs_4d_forward", "group_points_backward", "group_points_forward",
    "hard_voxelize_forward", "indice_conv_backward", "indice_conv_forward",
    "indice_maxpool_backward", "indice_maxpool_forward", "iou3d_boxes_overlap_bev_forward",
    "iou3d_nms3d_forward", "iou3d_nms3d_normal_forward", "knn_forward",
    "left_pool_backward", "left_pool_forward", "min_area_polygons", "nms_quadri", "nms_rotated",
    "pixel_group", "points_in_boxes_all_forward", "points_in_boxes_cpu_forward",
    "points_in_boxes_part_forward", "points_in_polygons_forward", "prroi_pool_backward",
    "prroi_pool_coor_backward", "prroi_pool_forward", "right_pool_backward",
    "right_pool_forward", "riroi_align_rotated_backward", "riroi_align_rotated_forward",
    "roi_align_rotated_backward", "roi_align_rotated_forward", "roiaware_pool3d_backward",
    "roiaware_pool3d_forward", "roipoint_pool3d_forward", "rotated_feature_align_backward",
    "rotated_feature_align_forward", "softmax_focal_loss_backward",
    "softmax_focal_loss_forward", "stack_ball_query_forward",
    "stack_group_points_backward", "stack_group_points_forward", "sync_bn_backward_data",
    "sync_bn_backward_param", "sync_bn_forward_mean", "sync_bn_forward_output",
    "sync_bn_forward_var", "three_interpolate_backward", "three_interpolate_forward",
    "three_nn_forward", "tin_shift_backward", "tin_shift_forward", "top_pool_backward",
    "top_pool_forward", "upfirdn2d",
)


class MissingCompiledOpError(NotImplementedError):
    """An mmcv op that needs mmcv-full's compiled ops and has no compatfix fallback;
    ``op`` is the pybind function's name."""

    def __init__(self, message: str, op: str = "") -> None:
        super().__init__(message)
        self.op = op


def fallback_names() -> str:
    """The op families with a fallback, for messages: "nms, roi_align, ... and ms_deform_attn"."""
    names = list(FALLBACKS)
    return "%s and %s" % (", ".join(names[:-1]), names[-1])


class _MissingOp:
    """Stands in for a compiled op: importing works, calling raises a clear error."""

    def __init__(self, name: str) -> None:
        self.__name__ = self.__qualname__ = name
        self.__doc__ = "mmcv._ext.%s: not available without mmcv-full's compiled ops." % name

    def __repr__(self) -> str:
        return "<missing compiled mmcv op %s (compatfix stub)>" % self.__name__

    def __call__(self, *args, **kwargs):
        raise MissingCompiledOpError(
            "mmcv op %r needs mmcv-full's compiled ops (mmcv._ext), which this mmcv does "
            "not have, and compatfix has no torch fallback for it (it has fallbacks for "
            "%s only). To use it, install mmcv-full built with its ops "
            "for this torch (MMCV_WITH_OPS=1 pip install mmcv-full==<version> from source, "
            "with a compiler and CUDA toolkit matching torch), or change the config/model "
            "to a layer that does not need this op (a CPU-capable alternative)."
            % (self.__name__, fallback_names()),
            self.__name__,
        )


# --- nms ------------------------------------------------------------------------------


def nms(boxes, scores, iou_threshold, offset=0):
    import torch
    from torchvision.ops import nms as tv_nms

    if boxes.numel() == 0:
        return boxes.new_empty((0,), dtype=torch.long)
    if offset:
        boxes = boxes.clone()
        boxes[:, 2:] += offset
    return tv_nms(boxes, scores.to(boxes.dtype), float(iou_threshold))


# --- roi_align ------------------------------------------------------------------------


def _roi_geometry(rois, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned):
    """Per RoI: start_h, start_w, bin_h, bin_w (tensors in the rois' dtype) and the
    sampling grid size (ints), as mmcv's kernel computes them."""
    import torch

    offset = 0.5 if aligned else 0.0
    scale = torch.tensor(spatial_scale, dtype=rois.dtype, device=rois.device)
    start_w = rois[:, 1] * scale - offset
    start_h = rois[:, 2] * scale - offset
    width = rois[:, 3] * scale - offset - start_w
    height = rois[:, 4] * scale - offset - start_h
    if not aligned:
        width = width.clamp(min=1.0)
        height = height.clamp(min=1.0)
    bin_h = height / pooled_h
    bin_w = width / pooled_w
    if sampling_ratio > 0:
        grid_h = [sampling_ratio] * rois.size(0)
        grid_w = [sampling_ratio] * rois.size(0)
    else:
        grid_h = torch.ceil(height / pooled_h).to(torch.int64).tolist()
        grid_w = torch.ceil(width / pooled_w).to(torch.int64).tolist()
    return start_h, start_w, bin_h, bin_w, grid_h, grid_w


def _sample_coords(start, bin_size, pooled, grid):
    """The sample coordinates along one axis: pooled * grid of them, bin-major."""
    import torch

    p = torch.arange(pooled, dtype=start.dtype, device=start.device)
    i = torch.arange(grid, dtype=start.dtype, device=start.device)
    return (start + p[:, None] * bin_size + (i[None, :] + 0.5) * bin_size / grid).reshape(-1)


def _axis_interpolation(coords, size):
    """(len(coords), size) bilinear weights along one axis by mmcv's rules; a coordinate
    outside [-1, size] gets an all-zero row."""
    import torch

    valid = (coords >= -1.0) & (coords <= size)
    c = coords.clamp(min=0.0)
    low = c.floor().to(torch.int64)
    at_edge = low >= size - 1
    low = torch.where(at_edge, torch.full_like(low, size - 1), low)
    high = torch.where(at_edge, low, low + 1)
    c = torch.where(at_edge, low.to(c.dtype), c)
    frac = c - low.to(c.dtype)
    valid_f = valid.to(c.dtype)
    weights = torch.zeros((coords.numel(), size), dtype=coords.dtype, device=coords.device)
    rows = torch.arange(coords.numel(), device=coords.device)
    weights.index_put_((rows, low), (1.0 - frac) * valid_f, accumulate=True)
    weights.index_put_((rows, high), frac * valid_f, accumulate=True)
    return weights


def _roi_align_max(input, rois, pooled_h, pooled_w, spatial_scale, sampling_ratio, aligned):
    """mmcv's max-pool RoIAlign: max over each bin's bilinear samples, and where it was."""
    import torch

    num_rois, channels = rois.size(0), input.size(1)
    height, width = input.shape[2:]
    shape = (num_rois, channels, pooled_h, pooled_w)
    output = input.new_full(shape, -10000.0)
    argmax_y = input.new_full(shape, -1.0)
    argmax_x = input.new_full(shape, -1.0)
    start_h, start_w, bin_h, bin_w, grid_h, grid_w = _roi_geometry(
        rois.to(input.dtype), spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned
    )
    for n in range(num_rois):
        gh, gw = grid_h[n], grid_w[n]
        if gh <= 0 or gw <= 0:
            continue
        ys = _sample_coords(start_h[n], bin_h[n], pooled_h, gh)
        xs = _sample_coords(start_w[n], bin_w[n], pooled_w, gw)
        wy = _axis_interpolation(ys, height)  # (PH*gh, H)
        wx = _axis_interpolation(xs, width)  # (PW*gw, W)
        feature = input[int(rois[n, 0])]
        samples = torch.matmul(wy, torch.matmul(feature, wx.t()))  # (C, PH*gh, PW*gw)
        samples = samples.reshape(channels, pooled_h, gh, pooled_w, gw).permute(0, 1, 3, 2, 4)
        best, where = samples.reshape(channels, pooled_h, pooled_w, gh * gw).max(dim=-1)
        found = best > -10000.0
        ph = torch.arange(pooled_h, device=input.device)[None, :, None]
        pw = torch.arange(pooled_w, device=input.device)[None, None, :]
        y = ys[ph * gh + torch.div(where, gw, rounding_mode="floor")]
        x = xs[pw * gw + where % gw]
        output[n] = torch.where(found, best, output[n])
        argmax_y[n] = torch.where(found, y, argmax_y[n])
        argmax_x[n] = torch.where(found, x, argmax_x[n])
    return output, argmax_y, argmax_x


def roi_align_forward(input, rois, output, argmax_y, argmax_x, aligned_height, aligned_width,
                      spatial_scale, sampling_ratio, pool_mode, aligned):
    import torch
    import torchvision  # noqa: F401  (registers torch.ops.torchvision)

    if pool_mode == 1:
        result = torch.ops.torchvision.roi_align(
            input, rois.to(input.dtype), float(spatial_scale), int(aligned_height),
            int(aligned_width), int(sampling_ratio), bool(aligned),
        )
        output.copy_(result)
        return
    result, where_y, where_x = _roi_align_max(
        input, rois, int(aligned_height), int(aligned_width), float(spatial_scale),
        int(sampling_ratio), bool(aligned),
    )
    output.copy_(result)
    argmax_y.copy_(where_y)
    argmax_x.copy_(where_x)


def _scatter_bilinear(grad_input, batch_index, values, y, x):
    """Add ``values`` at the fractional points (y, x) of each (batch, channel) plane of
    ``grad_input`` with mmcv's bilinear_interpolate_gradient rules (points outside
    [-1, H] x [-1, W] and the -1 "no sample" marker add nothing)."""
    import torch

    _, channels, height, width = grad_input.shape
    valid, (y_low, y_high, x_low, x_high), weights = bilinear_corners(y, x, height, width)
    valid = valid & (y != -1.0)
    channel = torch.arange(channels, device=y.device).view(1, -1, *([1] * (y.dim() - 2)))
    plane = (batch_index.view(-1, *([1] * (y.dim() - 1))) * channels + channel) * (height * width)
    flat = grad_input.view(-1)
    for yy, xx, w in zip((y_low, y_low, y_high, y_high), (x_low, x_high, x_low, x_high), weights):
        index = (plane + yy * width + xx)[valid]
        flat.index_add_(0, index, (values * w)[valid].to(flat.dtype))


def roi_align_backward(grad_output, rois, argmax_y, argmax_x, grad_input, aligned_height,
                       aligned_width, spatial_scale, sampling_ratio, pool_mode, aligned):
    import torch
    import torchvision  # noqa: F401

    batch, channels, height, width = grad_input.shape
    if pool_mode == 1:
        result = torch.ops.torchvision._roi_align_backward(
            grad_output, rois.to(grad_output.dtype), float(spatial_scale), int(aligned_height),
            int(aligned_width), batch, channels, height, width, int(sampling_ratio), bool(aligned),
        )
        grad_input.add_(result)
        return
    if not grad_input.is_contiguous():
        raise ValueError("roi_align_backward: grad_input must be contiguous")
    _scatter_bilinear(grad_input, rois[:, 0].to(torch.int64), grad_output, argmax_y, argmax_x)


# --- roi_pool -------------------------------------------------------------------------


def roi_pool_forward(input, rois, output, argmax, pooled_height, pooled_width, spatial_scale):
    import torch

    pooled_h, pooled_w = int(pooled_height), int(pooled_width)
    height, width = input.shape[2:]
    r = rois.to(input.dtype)
    scale = torch.tensor(spatial_scale, dtype=r.dtype, device=r.device)
    x1, y1 = r[:, 1] * scale, r[:, 2] * scale
    x2, y2 = (r[:, 3] + 1) * scale, (r[:, 4] + 1) * scale
    roi_w, roi_h = x2 - x1, y2 - y1
    bin_w, bin_h = roi_w / pooled_w, roi_h / pooled_h
    pw = torch.arange(pooled_w, dtype=r.dtype, device=r.device)
    ph = torch.arange(pooled_h, dtype=r.dtype, device=r.device)
    xs1 = torch.floor(pw[None] * bin_w[:, None] + x1[:, None]).clamp(0, width).to(torch.int64).tolist()
    xs2 = torch.ceil((pw[None] + 1) * bin_w[:, None] + x1[:, None]).clamp(0, width).to(torch.int64).tolist()
    ys1 = torch.floor(ph[None] * bin_h[:, None] + y1[:, None]).clamp(0, height).to(torch.int64).tolist()
    ys2 = torch.ceil((ph[None] + 1) * bin_h[:, None] + y1[:, None]).clamp(0, height).to(torch.int64).tolist()
    malformed = ((roi_w <= 0) | (roi_h <= 0)).tolist()
    for n in range(rois.size(0)):
        if malformed[n]:  # mmcv's kernel leaves these outputs untouched
            continue
        feature = input[int(rois[n, 0])]  # (C, H, W)
        # Bins are rectangles: the max over a bin is the max over its rows of the
        # max over its columns. argmax takes the first maximum, as the kernel does
        # (row-major scan, strict ">").
        column_max = []
        for j in range(pooled_w):
            if xs2[n][j] > xs1[n][j]:
                column_max.append(feature[:, :, xs1[n][j]:xs2[n][j]].max(dim=2))
            else:
                column_max.append(None)
        for i in range(pooled_h):
            for j in range(pooled_w):
                if ys2[n][i] <= ys1[n][i] or column_max[j] is None:
                    output[n, :, i, j] = 0
                    argmax[n, :, i, j] = -1
                    continue
                values, columns = column_max[j]
                best, row = values[:, ys1[n][i]:ys2[n][i]].max(dim=1)
                column = columns[:, ys1[n][i]:ys2[n][i]].gather(1, row[:, None])[:, 0]
                output[n, :, i, j] = best
                argmax[n, :, i, j] = ((row + ys1[n][i]) * width + column + xs1[n][j]).to(argmax.dtype)


def roi_pool_backward(grad_output, rois, argmax, grad_input, pooled_height, pooled_width,
                      spatial_scale):
    import torch

    _, channels, height, width = grad_input.shape
    if not grad_input.is_contiguous():
        raise ValueError("roi_pool_backward: grad_input must be contiguous")
    batch_index = rois[:, 0].to(torch.int64).view(-1, 1, 1, 1)
    channel = torch.arange(channels, device=grad_input.device).view(1, -1, 1, 1)
    where = argmax.to(torch.int64)
    valid = where != -1
    index = (batch_index * channels + channel) * (height * width) + where
    grad_input.view(-1).index_add_(0, index[valid], grad_output[valid].to(grad_input.dtype))


# --- deformable convolution -----------------------------------------------------------


def _deform_conv(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
                 dil_h, dil_w, groups, deform_groups, use_mask):
    import torch
    import torchvision  # noqa: F401

    if mask is None:
        mask = input.new_zeros((input.size(0), 1))
    if bias is None or bias.numel() == 0:
        bias = input.new_zeros(weight.size(0))
    return torch.ops.torchvision.deform_conv2d(
        input, weight, offset, mask, bias, int(stride_h), int(stride_w), int(pad_h),
        int(pad_w), int(dil_h), int(dil_w), int(groups), int(deform_groups), bool(use_mask),
    )


def _deform_conv_grads(grad_output, input, weight, offset, mask, bias, stride_h, stride_w,
                       pad_h, pad_w, dil_h, dil_w, groups, deform_groups, use_mask):
    """(grad_input, grad_weight, grad_offset, grad_mask, grad_bias) from torchvision."""
    import torch
    import torchvision  # noqa: F401

    if mask is None:
        mask = input.new_zeros((input.size(0), 1))
    if bias is None or bias.numel() == 0:
        bias = input.new_zeros(weight.size(0))
    return torch.ops.torchvision._deform_conv2d_backward(
        grad_output.contiguous(), input, weight, offset, mask, bias, int(stride_h),
        int(stride_w), int(pad_h), int(pad_w), int(dil_h), int(dil_w), int(groups),
        int(deform_groups), bool(use_mask),
    )


def deform_conv_forward(input, weight, offset, output, columns, ones, kW, kH, dW, dH, padW,
                        padH, dilationW, dilationH, group, deformable_group, im2col_step):
    # mmcv 1.3's pybind lists padH before padW; its Python wrapper passes keywords.
    output.copy_(_deform_conv(input, weight, offset, None, None, dH, dW, padH, padW,
                              dilationH, dilationW, group, deformable_group, False))


def deform_conv_backward_input(input, offset, gradOutput, gradInput, gradOffset, weight,
                               columns, kW, kH, dW, dH, padW, padH, dilationW, dilationH,
                               group, deformable_group, im2col_step):
    grads = _deform_conv_grads(gradOutput, input, weight, offset, None, None, dH, dW, padH,
                               padW, dilationH, dilationW, group, deformable_group, False)
    gradInput.add_(grads[0])
    gradOffset.copy_(grads[2])


def deform_conv_backward_parameters(input, offset, gradOutput, gradWeight, columns, ones, kW,
                                    kH, dW, dH, padW, padH, dilationW, dilationH, group,
                                    deformable_group, scale, im2col_step):
    grads = _deform_conv_grads(gradOutput, input, _weight_like(gradWeight, input), offset, None,
                               None, dH, dW, padH, padW, dilationH, dilationW, group,
                               deformable_group, False)
    gradWeight.add_(grads[1], alpha=float(scale))


def _weight_like(grad_weight, input):
    """The weight gradient does not depend on the weight's values: any tensor of its shape."""
    return grad_weight.new_zeros(grad_weight.shape).to(input.dtype)


def _output_size(size, kernel, stride, pad, dilation):
    return (size + 2 * pad - (dilation * (kernel - 1) + 1)) // stride + 1


def _as_the_kernel_reads(tensor, height_out, width_out):
    """``offset`` or ``mask`` as mmcv's modulated kernel reads it: through each sample's
    data pointer, as (channels, height_out, width_out) planes, with no shape check. A
    larger map (DyHead reuses one pyramid level's offsets for the next, smaller level) is
    read as the first channels * height_out * width_out elements of each sample; so here.
    Anything else goes to torchvision as it is (a smaller map, which the kernel would read
    past the end of, is torchvision's shape error)."""
    batch, channels = tensor.shape[:2]
    needed = channels * height_out * width_out
    if tensor.shape[2:] == (height_out, width_out) or tensor[0].numel() < needed or not tensor[0].is_contiguous():
        return tensor
    return tensor.flatten(1)[:, :needed].view(batch, channels, height_out, width_out)


def _write_as_the_kernel_writes(target, value):
    """The gradient of an ``offset``/``mask`` read by _as_the_kernel_reads, into the
    zeroed tensor of the original's shape: the kernel writes the elements it read."""
    if target.shape == value.shape:
        target.copy_(value)
    else:
        target.view(target.size(0), -1)[:, :value[0].numel()].copy_(value.flatten(1))


def _modulated_layout(input, offset, mask, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w,
                      dilation_h, dilation_w):
    height_out = _output_size(input.size(2), kernel_h, stride_h, pad_h, dilation_h)
    width_out = _output_size(input.size(3), kernel_w, stride_w, pad_w, dilation_w)
    return (_as_the_kernel_reads(offset, height_out, width_out),
            _as_the_kernel_reads(mask, height_out, width_out))


def modulated_deform_conv_forward(input, weight, bias, ones, offset, mask, output, columns,
                                  kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w,
                                  dilation_h, dilation_w, group, deformable_group, with_bias):
    offset, mask = _modulated_layout(input, offset, mask, kernel_h, kernel_w, stride_h, stride_w,
                                     pad_h, pad_w, dilation_h, dilation_w)
    output.copy_(_deform_conv(input, weight, offset, mask, bias if with_bias else None,
                              stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w,
                              group, deformable_group, True))


def modulated_deform_conv_backward(input, weight, bias, ones, offset, mask, columns,
                                   grad_input, grad_weight, grad_bias, grad_offset, grad_mask,
                                   grad_output, kernel_h, kernel_w, stride_h, stride_w, pad_h,
                                   pad_w, dilation_h, dilation_w, group, deformable_group,
                                   with_bias):
    offset, mask = _modulated_layout(input, offset, mask, kernel_h, kernel_w, stride_h, stride_w,
                                     pad_h, pad_w, dilation_h, dilation_w)
    g_input, g_weight, g_offset, g_mask, g_bias = _deform_conv_grads(
        grad_output, input, weight, offset, mask, bias if with_bias else None, stride_h,
        stride_w, pad_h, pad_w, dilation_h, dilation_w, group, deformable_group, True,
    )
    grad_input.add_(g_input)
    grad_weight.add_(g_weight)
    _write_as_the_kernel_writes(grad_offset, g_offset)
    _write_as_the_kernel_writes(grad_mask, g_mask)
    if with_bias:
        grad_bias.add_(g_bias)


# --- sigmoid focal loss ---------------------------------------------------------------


def _focal_parts(input, target, weight):
    import torch

    classes = input.size(1)
    positive = (target.view(-1, 1) == torch.arange(classes, device=input.device)).to(input.dtype)
    if weight is not None and weight.numel():
        # mmcv's kernel reads weight[target]; a target outside [0, C) (a background
        # label) would read out of bounds there: it gets weight 1 here.
        inside = (target >= 0) & (target < classes)
        factor = torch.where(inside, weight[target.clamp(0, classes - 1)], torch.ones_like(weight[:1]))
        factor = factor.to(input.dtype).view(-1, 1)
    else:
        factor = None
    return torch.sigmoid(input), positive, factor


def sigmoid_focal_loss_forward(input, target, weight, output, gamma, alpha):
    p, positive, factor = _focal_parts(input, target, weight)
    term_p = (1.0 - p).pow(gamma) * p.clamp(min=_FLT_MIN).log()
    term_n = p.pow(gamma) * (1.0 - p).clamp(min=_FLT_MIN).log()
    loss = -positive * alpha * term_p - (1.0 - positive) * (1.0 - alpha) * term_n
    if factor is not None:
        loss = loss * factor
    output.copy_(loss)


def sigmoid_focal_loss_backward(input, target, weight, grad_input, gamma, alpha):
    p, positive, factor = _focal_parts(input, target, weight)
    term_p = (1.0 - p).pow(gamma) * (1.0 - p - gamma * p * p.clamp(min=_FLT_MIN).log())
    term_n = p.pow(gamma) * (gamma * (1.0 - p) * (1.0 - p).clamp(min=_FLT_MIN).log() - p)
    grad = -positive * alpha * term_p - (1.0 - positive) * (1.0 - alpha) * term_n
    if factor is not None:
        grad = grad * factor
    grad_input.copy_(grad)


# --- build information ----------------------------------------------------------------


def get_compiler_version():
    return "none (mmcv._ext provided by compatfix: no compiled ops)"


def get_compiling_cuda_version():
    return "not available"


# --- filling the provided module -----------------------------------------------------


def fill(module) -> None:
    """Fill the provided ``mmcv._ext``: the fallbacks, then stubs for everything else."""
    for name in IMPLEMENTED:
        setattr(module, name, _kernel(name))
    for name in STUBBED:
        if not hasattr(module, name):
            setattr(module, name, _MissingOp(name))
    module.MissingCompiledOpError = MissingCompiledOpError
    module.__doc__ = (
        "mmcv._ext provided by compatfix (no compiled mmcv ops are installed): torch/"
        "torchvision fallbacks for %s; every other op raises MissingCompiledOpError when "
        "called." % ", ".join(IMPLEMENTED)
    )

    def __getattr__(name: str):
        # Other mmcv 1.x versions ask load_ext for names not listed above: give them a
        # stub too. Private names stay missing (mmcv's NPU support probes modules for
        # ``_check_balance`` with hasattr).
        if name.startswith("_"):
            raise AttributeError("module 'mmcv._ext' has no attribute %r" % name)
        stub = _MissingOp(name)
        setattr(module, name, stub)
        return stub

    module.__getattr__ = __getattr__

"""Multi-scale deformable attention (Deformable DETR, ICLR 2021): ``ms_deform_attn_forward``
/ ``ms_deform_attn_backward``.

mmcv 1.3.2 to 1.3.x call these kernels whenever ``torch.cuda.is_available()`` (CPU mode
makes that True), mmcv >= 1.4 only for CUDA tensors. mmcv itself has the same op in pure
torch, ``mmcv.ops.multi_scale_deform_attn.multi_scale_deformable_attn_pytorch``
(``F.grid_sample``, bilinear, zero padding, ``align_corners=False``: the CUDA kernel's
``loc * size - 0.5`` sampling with zeros outside), which it runs on the CPU. This uses
that function of the installed mmcv for the forward, and autograd through it for the
backward (``grid_sample`` has exact gradients for values, locations and weights).
"""

from __future__ import annotations


def _attention(value, value_spatial_shapes, sampling_locations, attention_weights):
    from mmcv.ops.multi_scale_deform_attn import multi_scale_deformable_attn_pytorch

    return multi_scale_deformable_attn_pytorch(value, value_spatial_shapes, sampling_locations,
                                               attention_weights)


def ms_deform_attn_forward(value, value_spatial_shapes, value_level_start_index,
                           sampling_locations, attention_weights, im2col_step):
    return _attention(value, value_spatial_shapes, sampling_locations, attention_weights)


def ms_deform_attn_backward(value, value_spatial_shapes, value_level_start_index,
                            sampling_locations, attention_weights, grad_output, grad_value,
                            grad_sampling_loc, grad_attn_weight, im2col_step):
    import torch

    with torch.enable_grad():
        leaves = [x.detach().requires_grad_() for x in (value, sampling_locations, attention_weights)]
        output = _attention(leaves[0], value_spatial_shapes, leaves[1], leaves[2])
        grads = torch.autograd.grad(output, leaves, grad_output)
    # The kernel adds into the zeroed gradients the Python wrapper passes.
    grad_value.add_(grads[0])
    grad_sampling_loc.add_(grads[1])
    grad_attn_weight.add_(grads[2])

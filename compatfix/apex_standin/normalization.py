"""``apex.normalization`` on torch's own layers: FusedLayerNorm is ``nn.LayerNorm`` and
FusedRMSNorm is ``nn.RMSNorm`` (same formulas, parameters and state-dict keys), with
apex's constructor signatures. ``memory_efficient`` (apex recomputes activations in
backward to save memory) is accepted and stored; torch's kernels keep theirs.

``FUNCTIONS`` are the functional forms that apex defines beside the layers, in
``apex.normalization.fused_layer_norm``; they compute in float32, as apex's kernels do."""

from __future__ import annotations

import torch
from torch.nn import functional as F

__all__ = ["FusedLayerNorm", "FusedRMSNorm", "MixedFusedLayerNorm", "MixedFusedRMSNorm"]
FUNCTIONS = ["fused_layer_norm_affine", "fused_layer_norm", "mixed_dtype_fused_layer_norm_affine",
             "fused_rms_norm_affine", "fused_rms_norm", "mixed_dtype_fused_rms_norm_affine"]


def _autocast_cast(*tensors):
    """apex's ``_cast_if_autocast_enabled``: under autocast, floating tensors in the
    autocast dtype (the function then runs with autocast off)."""
    device = tensors[0].device.type
    if not torch.is_autocast_enabled(device):
        return tensors
    dtype = torch.get_autocast_dtype(device)
    return tuple(t.to(dtype) if t is not None and t.is_floating_point() else t for t in tensors)


def _float(tensor):
    return None if tensor is None else tensor.float()


def _layer_norm(input, weight, bias, normalized_shape, eps, out_dtype_of_weight):
    input, weight, bias = _autocast_cast(input, weight, bias)
    with torch.autocast(input.device.type, enabled=False):
        out = F.layer_norm(input.float(), tuple(normalized_shape), _float(weight), _float(bias), eps)
    return out.to(weight.dtype if out_dtype_of_weight else input.dtype)


def _rms_norm(input, weight, normalized_shape, eps, out_dtype_of_weight):
    input, weight = _autocast_cast(input, weight)
    with torch.autocast(input.device.type, enabled=False):
        out = F.rms_norm(input.float(), tuple(normalized_shape), _float(weight), eps)
    return out.to(weight.dtype if out_dtype_of_weight else input.dtype)


def fused_layer_norm_affine(input, weight, bias, normalized_shape, eps=1e-6, memory_efficient=False):
    return _layer_norm(input, weight, bias, normalized_shape, eps, False)


def fused_layer_norm(input, normalized_shape, eps=1e-6, memory_efficient=False):
    return _layer_norm(input, None, None, normalized_shape, eps, False)


def mixed_dtype_fused_layer_norm_affine(input, weight, bias, normalized_shape, eps=1e-6, memory_efficient=False):
    """The output in the weight's dtype (MixedFusedLayerNorm's function)."""
    return _layer_norm(input, weight, bias, normalized_shape, eps, True)


def fused_rms_norm_affine(input, weight, normalized_shape, eps=1e-6, memory_efficient=False):
    return _rms_norm(input, weight, normalized_shape, eps, False)


def fused_rms_norm(input, normalized_shape, eps=1e-6, memory_efficient=False):
    return _rms_norm(input, None, normalized_shape, eps, False)


def mixed_dtype_fused_rms_norm_affine(input, weight, normalized_shape, eps=1e-6, memory_efficient=False):
    """The output in the weight's dtype (MixedFusedRMSNorm's function)."""
    return _rms_norm(input, weight, normalized_shape, eps, True)


class FusedLayerNorm(torch.nn.LayerNorm):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 memory_efficient: bool = False) -> None:
        super().__init__(normalized_shape, eps=eps, elementwise_affine=elementwise_affine)
        self.memory_efficient = memory_efficient


class FusedRMSNorm(torch.nn.RMSNorm):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 memory_efficient: bool = False) -> None:
        super().__init__(normalized_shape, eps=eps, elementwise_affine=elementwise_affine)
        self.memory_efficient = memory_efficient


class MixedFusedLayerNorm(FusedLayerNorm):
    """apex's variant: computed in float32, output in the weight's dtype."""

    def __init__(self, normalized_shape, eps: float = 1e-5, *, memory_efficient: bool = False, **kwargs) -> None:
        if "elementwise_affine" in kwargs and not kwargs["elementwise_affine"]:
            raise RuntimeError("MixedFusedLayerNorm does not support `elementwise_affine = False`")
        super().__init__(normalized_shape, eps=eps, elementwise_affine=True, memory_efficient=memory_efficient)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.layer_norm(
            input.float(), self.normalized_shape, self.weight.float(), self.bias.float(), self.eps
        ).to(self.weight.dtype)


class MixedFusedRMSNorm(FusedRMSNorm):
    """apex's variant: computed in float32, output in the weight's dtype."""

    def __init__(self, normalized_shape, eps: float = 1e-5, *, memory_efficient: bool = False, **kwargs) -> None:
        if "elementwise_affine" in kwargs and not kwargs["elementwise_affine"]:
            raise RuntimeError("MixedFusedRMSNorm does not support `elementwise_affine = False`")
        super().__init__(normalized_shape, eps=eps, elementwise_affine=True, memory_efficient=memory_efficient)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.rms_norm(
            input.float(), self.normalized_shape, self.weight.float(), self.eps
        ).to(self.weight.dtype)

"""``apex.normalization`` on torch's own layers: FusedLayerNorm is ``nn.LayerNorm`` and
FusedRMSNorm is ``nn.RMSNorm`` (same formulas, parameters and state-dict keys), with
apex's constructor signatures. ``memory_efficient`` (apex recomputes activations in
backward to save memory) is accepted and stored; torch's kernels keep theirs."""

from __future__ import annotations

import torch

__all__ = ["FusedLayerNorm", "FusedRMSNorm", "MixedFusedLayerNorm", "MixedFusedRMSNorm"]


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

"""Shims for ``torch.nn.modules`` submodules: ``linear._LinearWithBias``, the class of
torch 1.6-1.8's ``MultiheadAttention.out_proj``, which copies of that attention import and
which full-model pickles of that era name."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim

SHIM_NAME = "torch.nn.modules.linear.linear_with_bias"


def restore_linear_with_bias(module) -> None:
    # torch 1.9 renamed it NonDynamicallyQuantizableLinear (pytorch/pytorch#58727): the
    # Linear that dynamic quantization leaves alone, as it left _LinearWithBias alone.
    base = getattr(module, "NonDynamicallyQuantizableLinear", module.Linear)

    class _LinearWithBias(base):
        """torch 1.6-1.8: a ``Linear(in_features, out_features)`` that always has a bias."""

        def __init__(self, in_features: int, out_features: int) -> None:
            super().__init__(in_features, out_features, bias=True)

    # Where torch 1.6-1.8 defined it, so that pickles of then find it again.
    _LinearWithBias.__module__ = module.__name__
    _LinearWithBias.__qualname__ = "_LinearWithBias"
    restore_names(module, {"_LinearWithBias": _LinearWithBias}, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["torch.nn.modules.linear"],
        requires={"torch": ">=1.9"},
        apply=restore_linear_with_bias,
        restores=["_LinearWithBias"],
        broke="torch 1.9 (2021-06, pytorch/pytorch#58727) replaced torch.nn.modules.linear._LinearWithBias, the class "
        "of MultiheadAttention's out_proj since 1.6, with NonDynamicallyQuantizableLinear: copies of torch 1.6-1.8's "
        "MultiheadAttention fail to import it, and a pickle of a whole model with attention from then fails to load",
        summary="restore _LinearWithBias(in_features, out_features) as a Linear with bias (on "
        "NonDynamicallyQuantizableLinear, its successor)",
        replacement="torch.nn.Linear(in_features, out_features) (or NonDynamicallyQuantizableLinear)",
        rewrites={"torch.nn.modules.linear._LinearWithBias": "torch.nn.Linear(in_features, out_features, bias=True)"},
    ),
)

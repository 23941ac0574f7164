"""Shims for ``mmseg.models``: the in-place lateral add of mmseg < 0.20's UPerHead/FPN."""

from __future__ import annotations

from compatfix.openmmlab import training
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim


SHIMS = (
    Shim(
        training.SHIM_LATERAL,
        targets=["mmseg.models.decode_heads.uper_head", "mmseg.models.necks.fpn"],
        requires={"mmseg": "<0.20", "torch": ">=1.10"},
        kind=AFTER_IMPORT,
        apply=training.patch_lateral_convs,
        risk=RISK_BEHAVIOUR,
        broke="mmseg < 0.20's UPerHead/FPN do laterals[i - 1] += resize(...) on a ReLU "
        "output; torch >= 1.10 autograd rejects it at backward(): one of the variables "
        "needed for gradient computation has been modified by an inplace operation "
        "(mmseg#1046, fixed by #1103 in 0.20)",
        summary="UPerHead/FPN lateral convolutions hand the head a copy of their output while "
        "gradients are recorded, so the in-place add no longer changes a saved tensor",
        replacement="laterals[i - 1] = laterals[i - 1] + resize(...) (out of place), as mmseg >= 0.20 does",
    ),
)

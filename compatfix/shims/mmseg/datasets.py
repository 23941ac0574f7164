"""Shims for ``mmseg.datasets``: ``build_dataloader`` without worker processes."""

from __future__ import annotations

from compatfix.openmmlab import training
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim


SHIMS = (
    Shim(
        training.SHIM_WORKERS,
        targets=["mmseg.datasets.builder"],
        requires={"mmseg": ">=0.15,<1.0"},
        kind=AFTER_IMPORT,
        apply=training.patch_build_dataloader,
        risk=RISK_BEHAVIOUR,
        broke="mmseg 0.15 (#646) made build_dataloader default to persistent_workers=True; "
        "with workers_per_gpu=0 torch's DataLoader raises ValueError: persistent_workers "
        "option needs num_workers > 0",
        summary="build_dataloader drops persistent_workers when the loader has no worker "
        "processes",
        replacement="persistent_workers=False where workers_per_gpu is 0",
    ),
)

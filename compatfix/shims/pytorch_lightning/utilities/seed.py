"""Shims for ``pytorch_lightning.utilities.seed``: ``seed_everything``, which 1.8 moved to
``lightning_fabric.utilities.seed`` (still ``pytorch_lightning.seed_everything``) and 2.0
removed from here."""

from __future__ import annotations

from compatfix.patching import Lazy, restore_names
from compatfix.registry import AFTER_IMPORT, Shim

SHIM_NAME = "pytorch_lightning.utilities.seed.seed_everything"


def _seed_everything() -> object:
    from lightning_fabric.utilities.seed import seed_everything

    return seed_everything


def restore_seed_everything(module) -> None:
    restore_names(module, {"seed_everything": Lazy(_seed_everything)}, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["pytorch_lightning.utilities.seed"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=2.0", "lightning_fabric": ">=1.9"},
        apply=restore_seed_everything,
        restores=["seed_everything"],
        broke="pytorch-lightning 2.0 (2023-03) removed pytorch_lightning.utilities.seed.seed_everything "
        "(lightning_fabric's since 1.8)",
        summary="restore it as lightning_fabric.utilities.seed.seed_everything, the function it forwarded to",
        replacement="pytorch_lightning.seed_everything",
        renames={"pytorch_lightning.utilities.seed.seed_everything": "pytorch_lightning.seed_everything"},
    ),
)

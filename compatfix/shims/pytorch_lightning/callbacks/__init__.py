"""Shims for ``pytorch_lightning.callbacks``: the ``callbacks.base`` module 1.9 removed
(restored as an attribute here, provided by ``base.py``), and ModelCheckpoint's 1.x keywords
(``model_checkpoint.py``)."""

from __future__ import annotations

from compatfix.registry import AFTER_IMPORT, Shim
from compatfix.shims.pytorch_lightning import restore_submodules


def restore_base(module) -> None:
    restore_submodules(module, {"base": "pytorch_lightning.callbacks.base"}, "pytorch_lightning.callbacks.moved_modules")


SHIMS = (
    Shim(
        "pytorch_lightning.callbacks.moved_modules",
        targets=["pytorch_lightning.callbacks"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=1.9"},
        apply=restore_base,
        restores=["base"],
        broke="pytorch-lightning 1.9 (2023-01) removed pytorch_lightning.callbacks.base (Callback moved to "
        "callbacks.callback in 1.7)",
        summary="restore pl.callbacks.base as the module pytorch_lightning.callbacks.base provides, imported at "
        "its first use",
        replacement="pytorch_lightning.callbacks.Callback",
        renames={"pytorch_lightning.callbacks.base": "pytorch_lightning.callbacks.callback"},
    ),
)

"""Shims for ``pytorch_lightning.plugins``: ``DDPPlugin``, which 1.5 renamed
``strategies.DDPStrategy`` (1.5-1.7 kept a deprecated subclass) and 1.8 removed. 1.x code
passed it as ``Trainer(plugins=DDPPlugin(find_unused_parameters=False))``; the Trainer's side
of that call is ``pytorch_lightning.trainer.strategy_in_plugins``."""

from __future__ import annotations

from compatfix.patching import Lazy, restore_names
from compatfix.registry import AFTER_IMPORT, Shim

SHIM_NAME = "pytorch_lightning.plugins.DDPPlugin"


def _ddp_strategy() -> object:
    from pytorch_lightning.strategies import DDPStrategy

    return DDPStrategy


def restore_ddp_plugin(module) -> None:
    restore_names(module, {"DDPPlugin": Lazy(_ddp_strategy)}, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["pytorch_lightning.plugins"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=1.8"},
        apply=restore_ddp_plugin,
        restores=["DDPPlugin"],
        broke="pytorch-lightning 1.8 (2022-11) removed pytorch_lightning.plugins.DDPPlugin (renamed "
        "strategies.DDPStrategy in 1.5)",
        summary="restore DDPPlugin as DDPStrategy, which takes the same DistributedDataParallel keywords "
        "(find_unused_parameters=...)",
        replacement="Trainer(strategy=DDPStrategy(...)) from pytorch_lightning.strategies",
        renames={"pytorch_lightning.plugins.DDPPlugin": "pytorch_lightning.strategies.DDPStrategy"},
    ),
)

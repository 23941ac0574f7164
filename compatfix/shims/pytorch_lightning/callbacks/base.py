"""Shims for ``pytorch_lightning.callbacks.base``, which 1.9 removed: its ``Callback`` is
``pytorch_lightning.callbacks.callback.Callback`` since 1.7 (1.7-1.8 kept a deprecated
subclass here)."""

from __future__ import annotations

from compatfix.registry import PROVIDE, Shim
from compatfix.shims.pytorch_lightning import fill_module

SHIM_NAME = "pytorch_lightning.callbacks.base"


def _names() -> dict[str, object]:
    from pytorch_lightning.callbacks.callback import Callback

    return {"Callback": Callback}


def provide_base(module) -> None:
    fill_module(module, _names, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["pytorch_lightning.callbacks.base"],
        kind=PROVIDE,
        requires={"pytorch_lightning": ">=1.9"},
        apply=provide_base,
        broke="pytorch-lightning 1.9 (2023-01) removed pytorch_lightning.callbacks.base "
        "(from pytorch_lightning.callbacks.base import Callback fails)",
        summary="provide it with Callback, today's pytorch_lightning.callbacks.Callback",
        replacement="pytorch_lightning.callbacks.Callback",
        renames={"pytorch_lightning.callbacks.base": "pytorch_lightning.callbacks.callback"},
    ),
)

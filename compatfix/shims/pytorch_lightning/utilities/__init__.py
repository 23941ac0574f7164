"""Shims for ``pytorch_lightning.utilities``: 1.x's LightningEnum formatting on today's
Python, and the names and submodules 1.x code imported from here that Lightning moved.

Python 3.11 changed how ``format()`` (and so f-strings and ``str.format``) renders a member
of an enum that mixes in ``str``: it used to be the member's value, it is now the enum's
``str()``, ``Class.MEMBER``. pytorch-lightning 1.1-1.x builds names and paths from its
``LightningEnum(str, Enum)`` members in f-strings: 1.5's ``LightningDataModule`` records
``f"_has_{name}_{stage}"`` and reads it back under the value's spelling, so the first
``trainer.fit`` raises ``AttributeError: ... '_has_setup_TrainerFn.FITTING'``.
"""

from __future__ import annotations

from typing import Any

from compatfix.patching import Lazy, replace_attribute, restore_names
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim
from compatfix.shims.pytorch_lightning import restore_submodules

SHIM_ENUM_FORMAT = "pytorch_lightning.utilities.enum_format"


def _format_as_value(self: Any, format_spec: str) -> str:
    """Python <= 3.10's ``Enum.__format__`` for a ``str`` mixin: the value, formatted."""
    return str.__format__(self._value_, format_spec)


def format_as_value(module) -> str | None:
    lightning_enum = vars(module).get("LightningEnum")
    if lightning_enum is None or lightning_enum.__module__ != module.__name__:
        return "LightningEnum is not defined in %s" % module.__name__
    probe = lightning_enum("Probe", {"MEMBER": "member"})
    if format(probe.MEMBER) == "member":
        return "LightningEnum members already format as their value on this Python"
    replace_attribute(lightning_enum, "__format__", _format_as_value, SHIM_ENUM_FORMAT)
    return None


def restore_moved_modules(module) -> None:
    restore_submodules(module, {"distributed": "pytorch_lightning.utilities.distributed",
                                "cloud_io": "pytorch_lightning.utilities.cloud_io"},
                       "pytorch_lightning.utilities.moved_modules")


def _module_available() -> object:
    from lightning_utilities.core.imports import module_available

    return module_available


def restore_module_available(module) -> None:
    # 1.x's _module_available(module_path) -> bool: whether the (dotted) module can be
    # imported; lightning_utilities' module_available is the same function, moved in 1.8.
    restore_names(module, {"_module_available": Lazy(_module_available)}, "pytorch_lightning.utilities._module_available")


SHIMS = (
    Shim(
        SHIM_ENUM_FORMAT,
        # 1.1-1.4 define LightningEnum in pytorch_lightning.utilities, 1.5+ in its enums module
        targets=["pytorch_lightning.utilities", "pytorch_lightning.utilities.enums"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=1.1,<2"},
        apply=format_as_value,
        risk=RISK_BEHAVIOUR,
        broke="Python 3.11 (2022-10) formats a str-mixin enum member as Class.MEMBER, not its value; "
        "pytorch-lightning 1.x builds attribute names from its LightningEnum members in f-strings "
        "(1.5: AttributeError '_has_setup_TrainerFn.FITTING' at the first trainer.fit)",
        summary="format pytorch-lightning's LightningEnum members as their value again (Python <= 3.10's rule); "
        "other enums are unchanged",
        replacement="pytorch-lightning >= 2, or f\"{member.value}\"",
    ),
    Shim(
        "pytorch_lightning.utilities.moved_modules",
        targets=["pytorch_lightning.utilities"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=2.0"},
        apply=restore_moved_modules,
        restores=["distributed", "cloud_io"],
        broke="pytorch-lightning 2.0 (2023-03) removed pytorch_lightning.utilities.distributed and "
        "utilities.cloud_io (their functions moved to utilities.rank_zero and lightning_fabric in 1.6-1.8)",
        summary="restore pl.utilities.distributed and pl.utilities.cloud_io as the modules their provide shims "
        "make, imported at their first use",
        replacement="pytorch_lightning.utilities.rank_zero; lightning_fabric.utilities.cloud_io",
        rewrites={"pytorch_lightning.utilities.distributed": "pytorch_lightning.utilities.rank_zero (rank_zero_only, "
                  "rank_zero_info, ...)",
                  "pytorch_lightning.utilities.cloud_io": "lightning_fabric.utilities.cloud_io (_load, "
                  "get_filesystem, _atomic_save)"},
    ),
    Shim(
        "pytorch_lightning.utilities._module_available",
        targets=["pytorch_lightning.utilities"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=1.8", "lightning_utilities": ">=0.3"},
        apply=restore_module_available,
        restores=["_module_available"],
        broke="pytorch-lightning 1.8 (2022-11) removed pytorch_lightning.utilities._module_available (moved to "
        "lightning_utilities as module_available)",
        summary="restore it as lightning_utilities.core.imports.module_available, the same function",
        replacement="lightning_utilities.core.imports.module_available",
        renames={"pytorch_lightning.utilities._module_available": "lightning_utilities.core.imports.module_available"},
    ),
)

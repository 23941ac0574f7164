"""Shims for pytorch-lightning 1.x on today's Python.

Python 3.11 changed how ``format()`` (and so f-strings and ``str.format``) renders a member
of an enum that mixes in ``str``: it used to be the member's value, it is now the enum's
``str()``, ``Class.MEMBER``. pytorch-lightning 1.1-1.x builds names and paths from its
``LightningEnum(str, Enum)`` members in f-strings: 1.5's ``LightningDataModule`` records
``f"_has_{name}_{stage}"`` and reads it back under the value's spelling, so the first
``trainer.fit`` raises ``AttributeError: ... '_has_setup_TrainerFn.FITTING'``.
"""

from __future__ import annotations

from typing import Any

from compatfix.patching import replace_attribute
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

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
)

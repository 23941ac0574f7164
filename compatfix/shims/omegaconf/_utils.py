"""Shims for ``omegaconf._utils``: ``is_primitive_type``, the private helper OmegaConf
2.2 renamed ``is_primitive_type_annotation`` (and widened to ``bytes`` and
``pathlib.Path``), which 2021 config code imported to tell leaf values from nodes."""

from __future__ import annotations

from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import Shim


def is_primitive_type(type_: Any) -> bool:
    """OmegaConf < 2.2's ``is_primitive_type``: whether ``type_`` (a class, or the type of
    a value) is an Enum or one of int, float, bool, str and NoneType. bytes and Path,
    which today's ``is_primitive_type_annotation`` also accepts, were not primitive then."""
    from enum import Enum

    if not isinstance(type_, type):
        type_ = type(type_)
    return issubclass(type_, Enum) or type_ in (int, float, bool, str, type(None))


def restore_is_primitive_type(module) -> None:
    restore_names(module, {"is_primitive_type": is_primitive_type}, "omegaconf._utils.is_primitive_type")


SHIMS = (
    Shim(
        "omegaconf._utils.is_primitive_type",
        targets=["omegaconf._utils"],
        requires={"omegaconf": ">=2.2"},
        apply=restore_is_primitive_type,
        restores=["is_primitive_type"],
        broke="OmegaConf 2.2 (2022-05) renamed the private omegaconf._utils.is_primitive_type to "
        "is_primitive_type_annotation, which also counts bytes and pathlib.Path",
        summary="restore is_primitive_type(type_or_value) with its 2.0-2.1 meaning: an Enum, int, float, "
        "bool, str or NoneType",
        replacement="omegaconf._utils.is_primitive_type_annotation (private; also true for bytes and Path)",
        rewrites={"omegaconf._utils.is_primitive_type": "omegaconf._utils.is_primitive_type_annotation "
                  "(private; also true for bytes and pathlib.Path)"},
    ),
)

"""Shims for PyTorch."""

from __future__ import annotations

import collections.abc
import math

from compatfix.patching import restore_names
from compatfix.registry import AFTER_IMPORT, PROVIDE, Shim

# What 2020-22 code imports from torch._six (timm 0.3.2's helpers, pre-2021 apex, the
# grad-norm helpers copied through the DeiT/BEiT/MAE lineage).
SIX_NAMES = {
    "container_abcs": collections.abc,
    "string_classes": (str, bytes),
    "int_classes": int,
    "inf": math.inf,
    "nan": math.nan,
    # Python-version flags: torch 1.7 had PY3 (dropped by 1.10) and PY37, which the last
    # torch._six (1.13) defined as "Python >= 3.7": both true on every Python today's
    # torch runs on.
    "PY3": True,
    "PY37": True,
}


def restore_six(module) -> None:
    restore_names(module, SIX_NAMES, "torch._six")


SHIMS = (
    Shim(
        "torch._six",
        targets=["torch._six"],
        kind=PROVIDE,
        requires={"torch": ">=2.0"},
        apply=restore_six,
        broke="torch 2.0 (2023-03) deleted torch._six",
        summary="provide torch._six (container_abcs, string_classes, int_classes, inf, nan, PY3, PY37)",
        replacement="the standard library: str, int, collections.abc, math.inf, math.nan",
        renames={"torch._six.string_classes": "(str, bytes)", "torch._six.int_classes": "int",
                 "torch._six.container_abcs": "collections.abc", "torch._six.inf": "math.inf",
                 "torch._six.nan": "math.nan", "torch._six.PY3": "True", "torch._six.PY37": "True"},
        rewrites={"torch._six": "the standard library (str, int, collections.abc, math.inf, math.nan)"},
    ),
    Shim(
        "torch._six.names",
        targets=["torch._six"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=1.8,<2.0"},
        apply=restore_six,
        broke="torch 1.8-1.10 (2021) dropped int_classes, container_abcs and PY3 from torch._six",
        summary="restore the names that torch 1.8-1.13's torch._six no longer has",
        replacement="int and collections.abc",
    ),
)

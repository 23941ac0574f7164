"""Shims for ``torch._utils``: the private ``_accumulate`` that 2018-22 dataset-splitting
code imported, copying ``random_split``'s own implementation."""

from __future__ import annotations

import itertools
import operator

from compatfix.patching import restore_names
from compatfix.registry import Shim


def _accumulate(iterable, fn=operator.add):
    """torch < 2.3's ``_accumulate``: the running totals of ``iterable`` under ``fn``
    (``[1, 2, 3] -> 1, 3, 6``), a generator, as ``itertools.accumulate`` (which replaced it)."""
    yield from itertools.accumulate(iterable, fn)


def restore_accumulate(module) -> None:
    restore_names(module, {"_accumulate": _accumulate}, "torch._utils.accumulate")


SHIMS = (
    Shim(
        "torch._utils.accumulate",
        targets=["torch._utils"],
        requires={"torch": ">=2.3"},
        apply=restore_accumulate,
        restores=["_accumulate"],
        broke="torch 2.3 (2024-04) removed the private torch._utils._accumulate (pytorch/pytorch#116192), "
        "which code copied from random_split imports to cut index ranges",
        summary="restore torch._utils._accumulate(iterable, fn=add) as itertools.accumulate",
        replacement="itertools.accumulate",
        renames={"torch._utils._accumulate": "itertools.accumulate"},
    ),
)

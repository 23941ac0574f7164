"""Shims for the Python standard library: names that Python 3.10 and 3.11 removed.

The targets (``collections``, ``inspect``) are standard-library modules, so they are not
start-up triggers: nearly every process imports them, and watching them would load the
shim engine everywhere. These shims apply when the engine loads, that is at the first
import of a third-party target (torch, numpy, PIL, yaml, ...), or at once under
``python -m compatfix``. ``collections`` is then already imported and is patched on the
spot; ``inspect`` is patched on the spot or right after its later import. A program
that imports no third-party target and runs without ``python -m compatfix`` does not
get them.

Each name is set only where it is missing, so on the Python versions that still have
it nothing changes.
"""

from __future__ import annotations

import collections
from typing import Any, Callable

from compatfix.patching import restore_names
from compatfix.registry import Shim

# What ``collections`` served (with a DeprecationWarning) through Python 3.9: the ABCs
# of ``collections.abc``. ByteString is absent from collections.abc on Python >= 3.14.
COLLECTIONS_ABC_NAMES = (
    "Awaitable", "Coroutine", "AsyncIterable", "AsyncIterator", "AsyncGenerator",
    "Hashable", "Iterable", "Iterator", "Generator", "Reversible", "Sized", "Container",
    "Callable", "Collection", "Set", "MutableSet", "Mapping", "MutableMapping",
    "MappingView", "KeysView", "ItemsView", "ValuesView", "Sequence", "MutableSequence",
    "ByteString",
)


def restore_collections_abc_aliases(module) -> None:
    import collections.abc

    names = {
        name: getattr(collections.abc, name)
        for name in COLLECTIONS_ABC_NAMES
        if hasattr(collections.abc, name)
    }
    restore_names(module, names, "python.collections_abc_aliases")


# The 4-field result of the removed ``inspect.getargspec`` (field names as in Python 3.10).
ArgSpec = collections.namedtuple("ArgSpec", "args varargs keywords defaults")


def getargspec(func: Callable[..., Any]) -> ArgSpec:
    """Removed in Python 3.11: the names and defaults of ``func``'s parameters as
    ``ArgSpec(args, varargs, keywords, defaults)``.

    As before its removal, it is built on ``getfullargspec`` and raises ValueError for a
    function with keyword-only parameters or annotations, which this tuple cannot hold.
    """
    import inspect

    full = inspect.getfullargspec(func)
    if full.kwonlyargs or full.annotations:
        raise ValueError(
            "Function has keyword-only parameters or annotations, use inspect.signature() "
            "API which can support them"
        )
    return ArgSpec(full.args, full.varargs, full.varkw, full.defaults)


def restore_getargspec(module) -> None:
    restore_names(module, {"getargspec": getargspec, "ArgSpec": ArgSpec}, "python.inspect_getargspec")


SHIMS = (
    Shim(
        "python.collections_abc_aliases",
        targets=["collections"],
        apply=restore_collections_abc_aliases,
        broke="Python 3.10 (2021-10) removed the ABC aliases collections.Iterable, Mapping, "
        "MutableMapping, Sequence, Callable, ... (deprecated since 3.3)",
        summary="restore collections.<ABC> as the collections.abc classes on Python >= 3.10 "
        "(standard-library target: applies once a third-party target loads compatfix, or "
        "at once under python -m compatfix)",
    ),
    Shim(
        "python.inspect_getargspec",
        targets=["inspect"],
        apply=restore_getargspec,
        broke="Python 3.11 (2022-10) removed inspect.getargspec and inspect.ArgSpec "
        "(deprecated since 3.0)",
        summary="restore inspect.getargspec (ArgSpec from getfullargspec; ValueError for "
        "keyword-only parameters or annotations, as before) on Python >= 3.11 "
        "(standard-library target: applies once a third-party target loads compatfix, or "
        "at once under python -m compatfix)",
    ),
)

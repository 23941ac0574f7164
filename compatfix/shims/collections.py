"""Shims for ``collections``: the ABC aliases Python 3.10 removed.

The target is a standard-library module, so it is not a start-up trigger: nearly every
process imports it, and watching it would load the shim engine everywhere. The shim
takes effect when the engine loads, that is at the first import of a third-party target
(torch, numpy, PIL, yaml, ...), or at once under ``python -m compatfix``; like every
shim that only restores names, it is applied at the first use of one of them. A program
that imports no third-party target and runs without ``python -m compatfix`` does not
get it. The name is set only where it is missing, so on the Python versions that still
have it nothing changes.
"""

from __future__ import annotations

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
    restore_names(module, names, "collections.abc_aliases")


SHIMS = (
    Shim(
        "collections.abc_aliases",
        targets=["collections"],
        apply=restore_collections_abc_aliases,
        restores=COLLECTIONS_ABC_NAMES,
        broke="Python 3.10 (2021-10) removed the ABC aliases collections.Iterable, Mapping, "
        "MutableMapping, Sequence, Callable, ... (deprecated since 3.3)",
        summary="restore collections.<ABC> as the collections.abc classes on Python >= 3.10 "
        "(standard-library target: once a third-party target has loaded compatfix, or under "
        "python -m compatfix)",
        replacement="collections.abc.<ABC> (collections.abc.Mapping, ...)",
        renames={"collections." + name: "collections.abc." + name for name in COLLECTIONS_ABC_NAMES},
    ),
)

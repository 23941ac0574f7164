"""Shims for ``inspect``: ``getargspec``, which Python 3.11 removed.

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

import collections
from typing import Any, Callable

from compatfix.patching import restore_names
from compatfix.registry import Shim

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
    restore_names(module, {"getargspec": getargspec, "ArgSpec": ArgSpec}, "inspect.getargspec")


SHIMS = (
    Shim(
        "inspect.getargspec",
        targets=["inspect"],
        apply=restore_getargspec,
        restores=["getargspec", "ArgSpec"],
        broke="Python 3.11 (2022-10) removed inspect.getargspec and inspect.ArgSpec "
        "(deprecated since 3.0)",
        summary="restore inspect.getargspec (ArgSpec from getfullargspec; ValueError for "
        "keyword-only parameters or annotations, as before) on Python >= 3.11 "
        "(standard-library target: once a third-party target has loaded compatfix, or under "
        "python -m compatfix)",
        replacement="inspect.getfullargspec (its varkw is ArgSpec's keywords) or inspect.signature",
        rewrites={"inspect.getargspec": "inspect.getfullargspec (fields args, varargs, varkw, defaults, ...)",
                  "inspect.ArgSpec": "inspect.FullArgSpec"},
    ),
)

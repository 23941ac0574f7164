"""Shims for ``torch.multiprocessing``: ``_supports_context``, the flag that 2018-21 data
loaders test before asking for a start method's context."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim


def restore_supports_context(module) -> None:
    # torch 1.7's spawn.py: `_supports_context = sys.version_info >= (3, 4)`, whether
    # multiprocessing has get_context; true on every Python today's torch runs on.
    restore_names(module, {"_supports_context": True}, "torch.multiprocessing.supports_context")


SHIMS = (
    Shim(
        "torch.multiprocessing.supports_context",
        targets=["torch.multiprocessing"],
        requires={"torch": ">=1.8"},
        apply=restore_supports_context,
        restores=["_supports_context"],
        broke="torch 1.8-1.10 (2021) dropped the private torch.multiprocessing._supports_context with the Python 2 "
        "code (1.7.1 has it, 1.10.2 does not), which 2018-21 data-loading code tests before get_context",
        summary="restore torch.multiprocessing._supports_context as True",
        replacement="nothing: torch.multiprocessing.get_context always exists",
        rewrites={"torch.multiprocessing._supports_context": "True"},
    ),
)

"""Shims for ``torch.cuda``: ``set_device`` with more processes than GPUs on a node.

- ``torch.cuda.set_device.explain``: torch's bare "invalid device ordinal" gets what
  happened and what to do added to it.
- ``torch.cuda.set_device.oversubscribe`` (opt-in): rank N uses GPU N modulo the count.

Nothing here imports torch at module level.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from compatfix import _messages, patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_EXPLAIN = "torch.cuda.set_device.explain"
SHIM_OVERSUBSCRIBE = "torch.cuda.set_device.oversubscribe"



def _cuda_index(device: Any) -> int | None:
    if isinstance(device, bool):
        return None
    if isinstance(device, int):
        return device
    import torch

    if isinstance(device, str):
        try:
            device = torch.device(device)
        except RuntimeError:
            return None
    if isinstance(device, torch.device) and device.type == "cuda":
        return device.index
    return None


def _ordinal_advice(index: int, count: int) -> str:
    return (
        "torch.cuda.set_device(%d) asks for CUDA device %d, but this process sees %d CUDA "
        "device(s) (CUDA_VISIBLE_DEVICES=%r, LOCAL_RANK=%r): more processes were started on "
        "this node than it has GPUs. Start at most %d (--nproc_per_node %d), or let processes "
        "share GPUs (device = local rank modulo %d) with COMPATFIX_ENABLE=%s."
        % (index, index, count, os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ.get("LOCAL_RANK"),
           count, count, count, SHIM_OVERSUBSCRIBE)
    )


def _beyond_count(device: Any) -> tuple[int, int] | None:
    """(index, device count) when ``device`` names a CUDA index past the count."""
    import torch

    index = _cuda_index(device)
    if index is None or index < 0:
        return None
    count = torch.cuda.device_count()
    if count == 0 or index < count:
        return None
    return index, count


def _explaining(original: Callable) -> Callable:
    def set_device(device):
        beyond = _beyond_count(device)
        if beyond is None:
            return original(device)
        try:
            return original(device)
        except RuntimeError as exc:
            advice = _ordinal_advice(*beyond)
            if hasattr(exc, "add_note"):  # Python 3.11+: same exception, with the advice under it
                exc.add_note("compatfix: " + advice)
                raise
            raise RuntimeError("%s\ncompatfix: %s" % (exc, advice)) from exc

    return set_device


def _sharing(original: Callable) -> Callable:
    def set_device(device):
        beyond = _beyond_count(device)
        if beyond is None:
            return original(device)
        index, count = beyond
        shared = index % count
        patching.record_redirect(SHIM_OVERSUBSCRIBE, "torch.cuda.set_device(%d) -> %d" % (index, shared))
        _messages.say(
            "torch.cuda.set_device(%d): only %d CUDA device(s); processes share them, "
            "device = index modulo %d (set by %s)." % (index, count, count, SHIM_OVERSUBSCRIBE),
            key=SHIM_OVERSUBSCRIBE,
        )
        return original(shared)

    return set_device


# Two wrappers of set_device, one per shim; when both are on, sharing runs first and the
# index it passes on is in range, so the explanation has nothing to add.
def apply_set_device_explain(module) -> None:
    patching.wrap(module, "set_device", _explaining, SHIM_EXPLAIN)


def apply_set_device_oversubscribe(module) -> None:
    patching.wrap(module, "set_device", _sharing, SHIM_OVERSUBSCRIBE)


SHIMS = (
    Shim(
        SHIM_EXPLAIN,
        targets=["torch.cuda"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=1.9"},
        apply=apply_set_device_explain,
        risk=RISK_BEHAVIOUR,
        broke="torch.cuda.set_device(local_rank) with more processes than GPUs fails with a bare "
        "'CUDA error: invalid device ordinal'",
        summary="torch.cuda.set_device's 'invalid device ordinal' says how many GPUs there are, "
        "and how to launch fewer processes or share GPUs",
        replacement="launch at most torch.cuda.device_count() processes per node (--nproc_per_node)",
    ),
    Shim(
        SHIM_OVERSUBSCRIBE,
        targets=["torch.cuda"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=1.9"},
        apply=apply_set_device_oversubscribe,
        risk=RISK_BEHAVIOUR,
        default=False,
        broke="torch.cuda.set_device(local_rank) with more processes than GPUs fails with "
        "'CUDA error: invalid device ordinal'",
        summary="opt-in: torch.cuda.set_device(N) beyond the device count uses N modulo the "
        "count (processes share GPUs), with a warning",
        replacement="torch.cuda.set_device(local_rank % torch.cuda.device_count())",
    ),
)

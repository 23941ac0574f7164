"""Shims for ``torch.autograd.profiler``: ``profile(use_cuda=...)``, the switch for CUDA
timings that 2020-22 benchmarking code passes, removed in torch 2.14 for ``use_device``."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from compatfix.patching import wrap
from compatfix.registry import RISK_BEHAVIOUR, Shim

SHIM_NAME = "torch.autograd.profiler.profile.use_cuda"

# torch 1.7's profile(enabled, use_cuda, record_shapes, profile_memory, with_stack) took
# these positionally after ``enabled``; torch 1.8 made them keyword-only.
OLD_POSITIONAL = ("use_cuda", "record_shapes", "profile_memory", "with_stack")


def _with_use_cuda(signature: inspect.Signature) -> inspect.Signature:
    """Today's signature with ``use_cuda=False`` back among the keyword-only parameters."""
    parameters = list(signature.parameters.values())
    at = next((i for i, p in enumerate(parameters) if p.kind == p.VAR_KEYWORD), len(parameters))
    parameters.insert(at, inspect.Parameter("use_cuda", inspect.Parameter.KEYWORD_ONLY, default=False))
    return signature.replace(parameters=parameters)


def _accepting_use_cuda(signature: inspect.Signature) -> Callable[[Any], Any]:
    def make(init):
        def __init__(self, enabled=True, *args, **kwargs):
            # Today's profile takes nothing positional after ``enabled``: such a call can
            # only be torch 1.7's order, and would fail as it stands.
            if args and len(args) <= len(OLD_POSITIONAL):
                kwargs.update(zip(OLD_POSITIONAL, args))
                args = ()
            # torch 2.x mapped use_cuda=True to use_device="cuda" (with a FutureWarning)
            # until 2.14 removed the keyword; use_cuda=False left use_device as given.
            if kwargs.pop("use_cuda", False):
                kwargs["use_device"] = "cuda"
            init(self, enabled, *args, **kwargs)

        __init__.__signature__ = signature  # type: ignore[attr-defined]
        return __init__

    return make


def accept_use_cuda(module) -> str | None:
    profile = module.profile
    today = inspect.signature(profile.__init__)
    if "use_cuda" in today.parameters:
        return "profile still takes use_cuda"
    if "use_device" not in today.parameters:
        return "this profile has neither use_cuda nor the use_device that replaced it"
    wrap(profile, "__init__", _accepting_use_cuda(_with_use_cuda(today)), SHIM_NAME)
    return None


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["torch.autograd.profiler"],
        requires={"torch": ">=2.14"},
        apply=accept_use_cuda,
        risk=RISK_BEHAVIOUR,
        broke="torch 2.14 removed profile(use_cuda=...) (deprecated for use_device in torch 2.x), and torch 1.8 "
        "had made 1.7's positional options keyword-only: torch.autograd.profiler.profile(use_cuda=True) raises "
        "TypeError",
        summary="profile accepts use_cuda again (and torch 1.7's positional order): use_cuda=True is "
        "use_device='cuda', as torch 2.x mapped it before 2.14; a call without it is unchanged",
        replacement="use_device='cuda' (or torch.profiler.profile(activities=[ProfilerActivity.CUDA]))",
        rewrites={"torch.autograd.profiler.profile(+use_cuda)": "use_device='cuda' if use_cuda else None"},
    ),
)

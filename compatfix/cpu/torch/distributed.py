"""CPU mode (``--device cpu``) for ``torch.distributed``: the nccl backend becomes gloo.

``cpu.torch.distributed.backend``: ``init_process_group`` and ``new_group`` with the
``nccl`` backend (any case, ``Backend.NCCL``, or a ``"cpu:gloo,cuda:nccl"`` map) use
``gloo`` instead. ``init_method='env://'`` as set by torchrun works unchanged. The change is
one rewriter in ``patching.rewrite_arguments``' chain for each function, the chain that
other shims adjusting ``init_process_group`` share. Nothing here imports torch at module
level.
"""

from __future__ import annotations

import sys

from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_BACKEND = "cpu.torch.distributed.backend"

# Functions that take a ``backend`` argument.
_BACKEND_FUNCTIONS = ("init_process_group", "new_group")


def gloo_for(backend):
    """The backend CPU mode uses instead of ``backend``; None to keep it."""
    if not isinstance(backend, str):  # None (torch picks one for the CPU), or unknown
        return None
    text = backend.strip().lower()
    if text == "nccl":
        return "gloo"
    if ":" in text and "nccl" in text:  # a device map such as "cpu:gloo,cuda:nccl"
        return "gloo"
    return None


def _backend_rewriter(function_name: str):
    def rewrite(bound) -> None:
        backend = bound.arguments.get("backend")
        replacement = gloo_for(backend)
        if replacement is not None:
            patching.record_redirect(SHIM_BACKEND, "%s(backend=%r) -> %r" % (function_name, str(backend), replacement))
            bound.arguments["backend"] = replacement

    return rewrite


def redirect_nccl_to_gloo(module) -> None:
    """Applied to ``torch.distributed``: rewrite the backend of its functions and of
    ``torch.distributed.distributed_c10d``'s, which are the same objects reached both ways.
    The rewriting wrapper is made once, on the module that defines the function, and
    ``torch.distributed`` is given that same wrapper: two wrappers would be two chains."""
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    for name in _BACKEND_FUNCTIONS:
        original = getattr(module, name, None)
        if original is None:  # torch.distributed not available in this build
            continue
        rewrite = _backend_rewriter("torch.distributed." + name)
        if c10d is None or getattr(c10d, name, None) is not original:
            patching.rewrite_arguments(module, name, rewrite, SHIM_BACKEND)
            continue
        patching.rewrite_arguments(c10d, name, rewrite, SHIM_BACKEND)
        wrapper = getattr(c10d, name)
        patching.replace_attribute(module, name, wrapper, patching.shim_of(wrapper))


SHIMS = (
    Shim(
        SHIM_BACKEND,
        targets=["torch.distributed"],
        kind=AFTER_IMPORT,
        apply=redirect_nccl_to_gloo,
        device="cpu",
        risk=RISK_BEHAVIOUR,
        broke="init_process_group(backend='nccl') needs CUDA GPUs: without them torch raises "
        "'ProcessGroupNCCL is only supported with GPUs, no GPUs found!'",
        summary="CPU mode: torch.distributed.init_process_group and new_group use gloo where "
        "the code asks for nccl",
    ),
)

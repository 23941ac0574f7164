"""Shims for ``torch.nn.parallel``: ``DistributedDataParallel._sync_params``, which
pytorch-lightning 1.0-1.1's ``LightningDistributedDataParallel.forward`` calls first (it
overrides DDP's forward and copied that call from torch 1.x's)."""

from __future__ import annotations

from compatfix.patching import replace_attribute
from compatfix.registry import RISK_BEHAVIOUR, Shim

SHIM_NAME = "torch.nn.parallel.DistributedDataParallel._sync_params"


def _sync_params(self) -> None:
    """torch < 1.11: the step before the module's forward, which forward overrides copied:
    broadcast the module's buffers (BatchNorm's running statistics) from the authoritative
    rank when it syncs them (``broadcast_buffers``, while forward syncs are on). Today that
    step is ``_pre_forward``, which does that buffer sync under the same condition and
    also the reducer's per-iteration bookkeeping (``prepare_for_forward``, bucket rebuild):
    without it an override would silently skip the reducer's check that the previous
    iteration's reduction finished (unused parameters). Called with no inputs, it moves
    none."""
    if hasattr(self, "_pre_forward"):
        self._pre_forward()
    elif self.will_sync_module_buffers():
        self._sync_buffers()


def restore_sync_params(module) -> str | None:
    ddp = module.DistributedDataParallel
    if hasattr(ddp, "_sync_params"):
        return "DistributedDataParallel still has _sync_params"
    if not (hasattr(ddp, "_sync_buffers") and hasattr(ddp, "will_sync_module_buffers")):
        return "this torch has neither _sync_params nor the _sync_buffers that replaced it"
    replace_attribute(ddp, "_sync_params", _sync_params, SHIM_NAME)
    return None


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["torch.nn.parallel"],
        requires={"torch": ">=1.11"},
        apply=restore_sync_params,
        risk=RISK_BEHAVIOUR,
        broke="torch 1.11 (2022-03) removed DistributedDataParallel._sync_params (pytorch/pytorch#64514, "
        "into _sync_buffers): pytorch-lightning 1.0-1.1's DDP forward override fails with "
        "AttributeError: 'LightningDistributedDataParallel' object has no attribute '_sync_params'",
        summary="restore _sync_params as the pre-forward step (buffer broadcast from rank 0, the reducer's "
        "per-iteration bookkeeping) on today's _pre_forward",
        replacement="pytorch-lightning >= 1.2 (no forward override), or DistributedDataParallel.forward",
        rewrites={SHIM_NAME: "nothing: DistributedDataParallel.forward syncs the buffers itself"},
    ),
)

"""CPU mode (``--device cpu``) for ``mmcv.ops``: ``MMSyncBN`` on CPU tensors
(``cpu.mmcv.ops.sync_bn``; described with mmcv's parallel wrappers in
``compatfix.cpu.mmcv.parallel``).
"""

from __future__ import annotations

import threading
import types

from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_SYNCBN = "cpu.mmcv.ops.sync_bn"

_record = patching.record_redirect


# --- MMSyncBN ---------------------------------------------------------------------------------


_construction = threading.Lock()


def _group_of_one():
    """What ``mmcv.ops.sync_bn`` sees as ``torch.distributed`` while a layer is built
    without a process group: the default group (None) has one member."""
    return types.SimpleNamespace(group=types.SimpleNamespace(WORLD=None), get_world_size=lambda group=None: 1)


def _syncbn_init(original, module):
    def __init__(self, *args, **kwargs):
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return original(self, *args, **kwargs)
        _record(SHIM_SYNCBN, "MMSyncBN built without a process group -> group of one")
        with _construction:
            module.dist = _group_of_one()
            try:
                return original(self, *args, **kwargs)
            finally:
                module.dist = dist

    return __init__


def _syncbn_forward(original):
    def forward(self, input):
        import torch.distributed as dist
        import torch.nn.functional as F

        batch_statistics = self.training or not self.track_running_stats
        if input.device.type != "cpu" or not batch_statistics:
            return original(self, input)  # GPU kernels, or evaluation with running statistics
        if input.dim() < 2:
            raise ValueError("expected at least 2D input, got %dD input" % input.dim())
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked += 1
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        group = getattr(self, "group", None)
        synchronised = dist.is_available() and dist.is_initialized()
        if synchronised:
            group = dist.group.WORLD if group is None else group
            synchronised = dist.get_world_size(group) > 1
        if not synchronised:
            _record(SHIM_SYNCBN, "MMSyncBN.forward on CPU tensors, no group -> BatchNorm")
            return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias, True, factor, self.eps)
        from compatfix.cpu.torch.nn import cpu_sync_batch_norm

        _record(SHIM_SYNCBN, "MMSyncBN.forward on CPU tensors -> statistics all-reduced over gloo")
        return cpu_sync_batch_norm(
            input, self.weight, self.bias, self.running_mean, self.running_var, self.eps, factor, group)

    return forward


def patch_mmsyncbn(module) -> None:
    """Applied to ``mmcv.ops.sync_bn``."""
    cls = module.SyncBatchNorm
    patching.wrap(cls, "__init__", lambda current: _syncbn_init(current, module), SHIM_SYNCBN)
    patching.wrap(cls, "forward", _syncbn_forward, SHIM_SYNCBN)



SHIMS = (
    Shim(
        SHIM_SYNCBN,
        targets=["mmcv.ops.sync_bn"],
        requires={"mmcv": ">=1.0,<2.0"},
        kind=AFTER_IMPORT,
        apply=patch_mmsyncbn,
        device="cpu",
        risk=RISK_BEHAVIOUR,
        broke="mmcv's SyncBatchNorm ('MMSyncBN') needs a process group to be built and "
        "compiled CUDA kernels (mmcv._ext) to train",
        summary="CPU mode: MMSyncBN is built without a process group too and trains on CPU "
        "tensors as BatchNorm over the process group's whole batch (gloo all-reduce), or "
        "plain BatchNorm without a group",
    ),
)

"""Shim for ``mmcv.utils.parrots_wrapper``: its ``SyncBatchNorm``, which mmcv < 1.3.9 builds.

``mmcv.utils.syncbn_specify_ddp_gpu_num``
    ``build_norm_layer(dict(type='SyncBN'), ...)`` in mmcv < 1.3.9 calls
    ``layer._specify_ddp_gpu_num(1)``, which mmcv's ``SyncBatchNorm`` forwards to torch's;
    torch 1.9 removed it: ``AttributeError: 'super' object has no attribute
    '_specify_ddp_gpu_num'`` when building any model with a SyncBN config. torch >= 1.9
    needs no such call (mmcv PR #1138 skips it), so the fix makes the method do nothing
    where torch no longer has one.
"""

from __future__ import annotations

from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_ALIAS, Shim

SHIM_SPECIFY_GPU = "mmcv.utils.syncbn_specify_ddp_gpu_num"


def _specify_ddp_gpu_num(self, gpu_size) -> None:
    """torch < 1.9 needed the GPU count per process for SyncBN under DDP; torch >= 1.9 has
    no such setting (one device per process), so there is nothing to do."""


def patch_specify_ddp_gpu_num(module) -> None:
    """Applied to ``mmcv.utils.parrots_wrapper``, whose ``SyncBatchNorm`` defines the method."""
    import torch

    cls = getattr(module, "SyncBatchNorm", None)
    if cls is None or "_specify_ddp_gpu_num" not in vars(cls):
        return
    if hasattr(torch.nn.SyncBatchNorm, "_specify_ddp_gpu_num"):  # torch still has it
        return
    patching.replace_attribute(cls, "_specify_ddp_gpu_num", _specify_ddp_gpu_num, SHIM_SPECIFY_GPU)


SHIMS = (
    Shim(
        SHIM_SPECIFY_GPU,
        targets=["mmcv.utils.parrots_wrapper"],
        requires={"mmcv": ">=1.0,<1.3.9", "torch": ">=1.9"},
        kind=AFTER_IMPORT,
        apply=patch_specify_ddp_gpu_num,
        risk=RISK_ALIAS,
        broke="torch 1.9 removed SyncBatchNorm._specify_ddp_gpu_num; mmcv < 1.3.9 calls it "
        "when building a SyncBN layer (build_norm_layer(dict(type='SyncBN'))): "
        "AttributeError: 'super' object has no attribute '_specify_ddp_gpu_num'",
        summary="mmcv's SyncBatchNorm._specify_ddp_gpu_num does nothing where torch has no "
        "such method (torch >= 1.9 needs none)",
        replacement="mmcv >= 1.3.9",
    ),
)

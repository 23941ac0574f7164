"""Shims for mmcv 1.x's parallel wrappers (``MMDataParallel``, ``MMDistributedDataParallel``)
on torch 2.x, where the DDP internals they were written against changed.

``mmcv.parallel.get_stream_device_index``
    torch 2.1 changed ``torch.nn.parallel._functions._get_stream(device: int)`` to take a
    ``torch.device``. mmcv (1.x up to 1.7.2, its last release) imports it by name in
    ``mmcv/parallel/_functions.py`` and calls it with GPU indices while scattering
    ``DataContainer`` inputs in ``MMDataParallel``/``MMDistributedDataParallel``:
    ``AttributeError: 'int' object has no attribute 'type'``. The fix replaces mmcv's
    binding (torch's own function is untouched) with one that turns an ``int`` into
    ``torch.device('cuda', index)`` and passes everything else through.

``mmcv.parallel.ddp_replicated_tensor_flag``
    mmcv 1.6.0 (PR #2107) overrode ``DistributedDataParallel._run_ddp_forward`` for torch
    1.12 and reads ``self._use_replicated_tensor_module``, an attribute torch 1.12-2.0 set
    in ``DDP.__init__`` and torch 2.1 removed (pytorch PR #95450): every
    ``MMDistributedDataParallel`` forward fails with ``AttributeError:
    'MMDistributedDataParallel' object has no attribute '_use_replicated_tensor_module'``.
    The fix gives the class the value those torch versions had by default, ``False``
    (an instance attribute, where torch still sets one, wins over it).

``mmcv.parallel.ddp_sync_params``
    torch 1.11 replaced ``DDP._sync_params`` by ``_sync_buffers`` (and
    ``_check_sync_bufs_pre_fwd``); mmcv < 1.4.8 calls ``self._sync_params()`` at the start
    of ``train_step``/``val_step``: ``AttributeError: 'MMDistributedDataParallel' object
    has no attribute '_sync_params'``. The fix gives the class a ``_sync_params`` that
    does what mmcv >= 1.4.8 (PR #1816) does on torch >= 1.11: broadcast the buffers before
    the forward when DDP is set to (``broadcast_buffers``).

``mmcv.parallel.ddp_forward_scatters_datacontainers``
    torch 1.12 stopped calling ``self.to_kwargs`` in ``DDP.forward`` (it calls a module
    function), so mmcv < 1.6's override of ``to_kwargs``, which unwraps ``DataContainer``
    inputs, is never used: the model receives the containers, e.g. mmseg's
    ``multi_gpu_test`` fails with ``TypeError: img_metas must be a list, but got <class
    'mmcv.parallel.data_container.DataContainer'>`` (mmseg#1742). The fix gives the class
    a ``_run_ddp_forward`` that scatters with ``self.to_kwargs`` when the module has
    ``device_ids``, then runs torch's own ``_run_ddp_forward`` (as mmcv >= 1.6 does).

Nothing here imports torch or mmcv at module level.
"""

from __future__ import annotations


from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_ALIAS, RISK_BEHAVIOUR, Shim

SHIM_GET_STREAM = "mmcv.parallel.get_stream_device_index"
SHIM_REPLICATED = "mmcv.parallel.ddp_replicated_tensor_flag"
SHIM_SYNC_PARAMS = "mmcv.parallel.ddp_sync_params"
SHIM_FORWARD = "mmcv.parallel.ddp_forward_scatters_datacontainers"

MMCV_1X = ">=1.0,<2.0"


# --- _get_stream(int) ------------------------------------------------------------------------


def _stream_for_index(original):
    import torch

    def _get_stream(device):
        # mmcv passes GPU indices; torch >= 2.1 wants a torch.device
        if isinstance(device, int):
            device = torch.device("cuda", device) if device >= 0 else torch.device("cpu")
        return original(device)

    return _get_stream


def patch_get_stream(module) -> None:
    """Applied to ``mmcv.parallel._functions``."""
    patching.wrap(module, "_get_stream", _stream_for_index, SHIM_GET_STREAM)


# --- MMDistributedDataParallel ------------------------------------------------------------------


def restore_replicated_tensor_flag(module) -> None:
    """Applied to ``mmcv.parallel.distributed``."""
    cls = module.MMDistributedDataParallel
    if not hasattr(cls, "_use_replicated_tensor_module"):
        patching.replace_attribute(cls, "_use_replicated_tensor_module", False, SHIM_REPLICATED)


def _sync_params(self) -> None:
    """Broadcast the module's buffers before the forward, where DDP is set to
    (torch >= 1.11's ``_sync_buffers``; what mmcv >= 1.4.8 calls instead)."""
    if self._check_sync_bufs_pre_fwd():
        self._sync_buffers()


def restore_sync_params(module) -> None:
    """Applied to ``mmcv.parallel.distributed``."""
    cls = module.MMDistributedDataParallel
    if not hasattr(cls, "_sync_params"):
        patching.replace_attribute(cls, "_sync_params", _sync_params, SHIM_SYNC_PARAMS)


def _forward_scattering(run_forward):
    def _run_ddp_forward(self, *inputs, **kwargs):
        if self.device_ids:  # what torch < 1.12's DDP.forward did through self.to_kwargs
            inputs, kwargs = self.to_kwargs(inputs, kwargs, self.device_ids[0])
            inputs, kwargs = inputs[0], kwargs[0]
        return run_forward(self, *inputs, **kwargs)

    return _run_ddp_forward


def scatter_in_ddp_forward(module) -> None:
    """Applied to ``mmcv.parallel.distributed`` (mmcv < 1.6, whose class has no
    ``_run_ddp_forward`` of its own)."""
    patching.wrap(module.MMDistributedDataParallel, "_run_ddp_forward", _forward_scattering, SHIM_FORWARD)


SHIMS = (
    Shim(
        SHIM_GET_STREAM,
        targets=["mmcv.parallel._functions"],
        requires={"mmcv": MMCV_1X, "torch": ">=2.1"},
        kind=AFTER_IMPORT,
        apply=patch_get_stream,
        risk=RISK_ALIAS,
        broke="torch 2.1 changed torch.nn.parallel._functions._get_stream to take a "
        "torch.device; mmcv 1.x (1.7.2 included) passes GPU indices while scattering "
        "DataContainers in MMDataParallel/MMDistributedDataParallel: AttributeError: 'int' "
        "object has no attribute 'type'",
        summary="mmcv.parallel._functions._get_stream accepts a GPU index again (as "
        "torch.device('cuda', index)); torch's own function is unchanged",
        replacement="mmcv >= 1.7.2's _get_stream, which passes torch.device('cuda', index)",
    ),
    Shim(
        SHIM_REPLICATED,
        targets=["mmcv.parallel.distributed"],
        requires={"mmcv": ">=1.6.0,<2.0", "torch": ">=2.1"},
        kind=AFTER_IMPORT,
        apply=restore_replicated_tensor_flag,
        risk=RISK_ALIAS,
        broke="mmcv >= 1.6 (1.7.2 included) MMDistributedDataParallel._run_ddp_forward reads "
        "self._use_replicated_tensor_module, which torch 2.1 removed (pytorch PR #95450): "
        "AttributeError: 'MMDistributedDataParallel' object has no attribute "
        "'_use_replicated_tensor_module'",
        summary="MMDistributedDataParallel._use_replicated_tensor_module = False (torch "
        "1.12-2.0's default) where torch no longer sets it",
        replacement="a newer mmcv than 1.7.2 (none exists for 1.x): set self._use_replicated_tensor_module = False",
    ),
    Shim(
        SHIM_SYNC_PARAMS,
        targets=["mmcv.parallel.distributed"],
        requires={"mmcv": ">=1.0,<1.4.8", "torch": ">=1.11"},
        kind=AFTER_IMPORT,
        apply=restore_sync_params,
        risk=RISK_ALIAS,
        broke="torch 1.11 replaced DistributedDataParallel._sync_params by _sync_buffers; "
        "mmcv < 1.4.8 MMDistributedDataParallel.train_step/val_step call it: "
        "AttributeError: 'MMDistributedDataParallel' object has no attribute '_sync_params'",
        summary="MMDistributedDataParallel._sync_params broadcasts the buffers before the "
        "forward where DDP is set to, as mmcv >= 1.4.8 does on torch >= 1.11",
        replacement="mmcv >= 1.4.8",
    ),
    Shim(
        SHIM_FORWARD,
        targets=["mmcv.parallel.distributed"],
        requires={"mmcv": ">=1.0,<1.6.0", "torch": ">=1.12"},
        kind=AFTER_IMPORT,
        apply=scatter_in_ddp_forward,
        risk=RISK_BEHAVIOUR,
        broke="torch 1.12 no longer calls self.to_kwargs in DistributedDataParallel.forward, "
        "so mmcv < 1.6's MMDistributedDataParallel passes DataContainers to the model "
        "(mmseg multi_gpu_test: TypeError: img_metas must be a list, but got <class "
        "'mmcv.parallel.data_container.DataContainer'>)",
        summary="MMDistributedDataParallel.forward scatters its inputs with self.to_kwargs "
        "(DataContainers unwrapped) when it has device_ids, as mmcv >= 1.6 does",
        replacement="mmcv >= 1.6",
    ),
)

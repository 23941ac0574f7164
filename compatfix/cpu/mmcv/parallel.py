"""CPU mode (``--device cpu``) for OpenMMLab 1.x code: mmcv's parallel wrappers and SyncBN
(this module: ``mmcv.parallel``; ``compatfix.cpu.mmcv.ops``: ``MMSyncBN``).

The torch-level redirection (``.cuda()``, ``device='cuda'``, ``torch.cuda.*``, nccl ->
gloo, DDP without ``device_ids`` for CPU modules, ``nn.SyncBatchNorm`` over gloo) is done
by ``compatfix.cpu.torch`` and ``compatfix.cpu.torch.distributed/nn``; with it,
mmcv's ``init_dist('pytorch', backend='nccl')``, ``get_dist_info``, mmseg's
``build_dp``/``build_ddp`` (0.30; 0.11 has none) and the result collection of
``multi_gpu_test`` (``collect_results_gpu`` builds ``device='cuda'`` tensors and
all-gathers them) already run on the CPU. What mmcv needs on top, applied only under
``--device cpu``:

``cpu.mmcv.parallel.mmddp_scatter``
    ``MMDistributedDataParallel(model.cuda(), device_ids=[torch.cuda.current_device()])``
    on a CPU module has no ``device_ids`` (CPU mode's DDP drops them, torch refuses them
    for CPU modules). mmcv then hands ``train_step``/``val_step``/``forward`` their inputs
    as they are, ``DataContainer`` objects included, which it unwraps only when it
    scatters to GPUs: the model gets ``DataContainer`` where it expects tensors and
    lists. The fix scatters the inputs to the CPU first (mmcv's own ``scatter_kwargs``
    with the target ``[-1]``, as ``MMDataParallel`` does for the CPU), then runs mmcv's
    method unchanged.

``cpu.mmcv.parallel.mmdp_cpu_step``
    ``MMDataParallel(model.cuda(), device_ids=[0])`` on the CPU has no ``device_ids``
    either (torch's DataParallel finds no GPU), so mmcv takes its CPU path. In mmcv <
    1.3.2 (before PR #972, "support CPU training with MMDataParallel") the CPU path of
    ``train_step``/``val_step`` passes the per-device tuples themselves:
    ``TypeError: ... argument after ** must be a mapping, not tuple``. The fix passes the
    CPU's share, ``inputs[0]``/``kwargs[0]``, as mmcv >= 1.3.2 does.

``cpu.mmcv.parallel.scatter_to_cpu``
    Scattering to the CPU (target ``[-1]``) in mmcv < 1.4.4 gives every tensor of a
    collated ``DataContainer`` (a list with one batch per device) an extra leading
    dimension (mmcv PR #1621): the model gets ``[1, N, C, H, W]`` images. The fix returns
    the tensors as they are, as mmcv >= 1.4.4 does.

``cpu.mmcv.ops.sync_bn``
    mmcv's own ``SyncBatchNorm`` (registered as ``'MMSyncBN'``) runs compiled CUDA
    kernels (``mmcv._ext``), and its constructor asks the process group for its size.
    Under CPU mode it is constructed without a process group too (a group of one), and
    its training forward on CPU tensors is BatchNorm over the whole group's batch: the
    statistics are all-reduced over the process group by the same differentiable
    gloo computation as CPU mode's ``nn.SyncBatchNorm``
    (``compatfix.cpu.torch.distributed/nn.cpu_sync_batch_norm``), or are the local batch's
    when there is no group or a group of one. Weighted by the number of elements, the
    statistics are those of mmcv's ``stats_mode='N'``, and of its default mode when
    every rank has a batch of the same size (mmcv's default averages the ranks' means).
    mmcv's kernels also average the weight and bias gradients over the group inside the
    layer; here DDP averages them, as for any parameter: the same under DDP.
    Evaluation (running statistics) is mmcv's own code.

Nothing here imports torch or mmcv at module level.
"""
from __future__ import annotations

from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_DDP = "cpu.mmcv.parallel.mmddp_scatter"
SHIM_DP = "cpu.mmcv.parallel.mmdp_cpu_step"
SHIM_SCATTER = "cpu.mmcv.parallel.scatter_to_cpu"

_record = patching.record_redirect


# --- MMDistributedDataParallel without device_ids ---------------------------------------------


def _scattered_to_cpu(original, what: str):
    def method(self, *inputs, **kwargs):
        if not self.device_ids and getattr(self, "device_type", "cpu") == "cpu" and (inputs or kwargs):
            _record(SHIM_DDP, "MMDistributedDataParallel.%s: inputs scattered to the CPU" % what)
            inputs, kwargs = self.scatter(inputs, kwargs, [-1])
            inputs, kwargs = inputs[0], kwargs[0]
        return original(self, *inputs, **kwargs)

    return method


def patch_mmddp(module) -> None:
    """Applied to ``mmcv.parallel.distributed``."""
    cls = module.MMDistributedDataParallel
    for name, what in (("train_step", "train_step"), ("val_step", "val_step"), ("_run_ddp_forward", "forward")):
        patching.wrap(cls, name, lambda current, what=what: _scattered_to_cpu(current, what), SHIM_DDP)


# --- MMDataParallel's CPU path in mmcv < 1.3.2 ---------------------------------------------------


def _cpu_step(original, step: str):
    def method(self, *inputs, **kwargs):
        if self.device_ids:
            return original(self, *inputs, **kwargs)
        _record(SHIM_DP, "MMDataParallel.%s on the CPU: the CPU's share of the scatter passed" % step)
        inputs, kwargs = self.scatter(inputs, kwargs, [-1])
        return getattr(self.module, step)(*inputs[0], **kwargs[0])

    return method


def patch_mmdp(module) -> None:
    """Applied to ``mmcv.parallel.data_parallel``."""
    cls = module.MMDataParallel
    for step in ("train_step", "val_step"):
        patching.wrap(cls, step, lambda current, step=step: _cpu_step(current, step), SHIM_DP)


# --- scatter to the CPU in mmcv < 1.4.4 ---------------------------------------------------------


def _on_cpu(input):
    """mmcv >= 1.4.4's ``scatter(input, [-1])``: the tensors, contiguous, in the same lists."""
    if isinstance(input, list):
        return [_on_cpu(item) for item in input]
    return input.contiguous()


def _scatter_forward(original):
    def forward(target_gpus, input):
        if list(target_gpus) != [-1]:
            return original(target_gpus, input)
        _record(SHIM_SCATTER, "mmcv Scatter.forward([-1]): no extra leading dimension")
        outputs = _on_cpu(input)
        return tuple(outputs) if isinstance(outputs, list) else (outputs,)

    return forward


def patch_scatter(module) -> None:
    """Applied to ``mmcv.parallel._functions``."""
    cls = module.Scatter
    patching.wrap(cls, "forward", _scatter_forward, SHIM_SCATTER)  # wrap keeps the staticmethod



SHIMS = (
    Shim(
        SHIM_DDP,
        targets=["mmcv.parallel.distributed"],
        requires={"mmcv": ">=1.0,<2.0"},
        kind=AFTER_IMPORT,
        apply=patch_mmddp,
        device="cpu",
        risk=RISK_BEHAVIOUR,
        broke="MMDistributedDataParallel on a CPU module has no device_ids, and mmcv then "
        "passes DataContainer inputs to train_step/val_step/forward unwrapped (it unwraps "
        "them only when scattering to GPUs)",
        summary="CPU mode: MMDistributedDataParallel without device_ids scatters its inputs "
        "to the CPU (DataContainers unwrapped, as for a GPU) before train_step/val_step/forward",
    ),
    Shim(
        SHIM_DP,
        targets=["mmcv.parallel.data_parallel"],
        requires={"mmcv": ">=1.0,<1.3.2"},
        kind=AFTER_IMPORT,
        apply=patch_mmdp,
        device="cpu",
        risk=RISK_BEHAVIOUR,
        broke="mmcv < 1.3.2 MMDataParallel.train_step/val_step on the CPU pass the scatter's "
        "per-device tuples to the model: TypeError: argument after ** must be a mapping, "
        "not tuple",
        summary="CPU mode: MMDataParallel.train_step/val_step on the CPU pass the CPU's share "
        "of the scattered inputs, as mmcv >= 1.3.2 does",
    ),
    Shim(
        SHIM_SCATTER,
        targets=["mmcv.parallel._functions"],
        requires={"mmcv": ">=1.0,<1.4.4"},
        kind=AFTER_IMPORT,
        apply=patch_scatter,
        device="cpu",
        risk=RISK_BEHAVIOUR,
        broke="mmcv < 1.4.4 scatters collated DataContainers to the CPU with an extra leading "
        "dimension (mmcv PR #1621): RuntimeError: Expected 3D (unbatched) or 4D (batched) "
        "input to conv2d, but got input of size: [1, N, C, H, W]",
        summary="CPU mode: mmcv's scatter to the CPU returns the tensors as they are, as mmcv "
        ">= 1.4.4 does",
    ),
)

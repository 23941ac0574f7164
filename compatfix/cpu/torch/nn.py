"""CPU mode (``--device cpu``) for ``torch.nn``'s distributed modules written for GPUs.

Two shims, each applied only under ``--device cpu`` / ``COMPATFIX_DEVICE=cpu`` (the nccl ->
gloo backend is ``compatfix.cpu.torch.distributed``):

- ``cpu.torch.nn.DistributedDataParallel``: ``DistributedDataParallel(model,
  device_ids=[local_rank], output_device=local_rank)`` on a module whose parameters are
  all on the CPU drops ``device_ids`` and ``output_device`` (torch raises for them).
  Every other argument (``find_unused_parameters``, ``broadcast_buffers``, ...) is kept.
- ``cpu.torch.nn.SyncBatchNorm``: ``nn.SyncBatchNorm`` training on CPU tensors inside an
  initialised process group synchronises its batch statistics over the group (gloo):
  an all-reduce of the per-channel sum and count gives the global mean, a second one of
  the summed squared deviations the global (biased) variance; the input is normalised
  with them and ``running_mean``/``running_var`` are updated like torch's SyncBN does
  (unbiased variance for the running estimate). Both all-reduces are differentiable
  (their backward is an all-reduce of the gradient), so gradients are those of BatchNorm
  over the whole global batch. Without a process group (or with a group of one) it is
  plain BatchNorm, as torch's SyncBN already is; in eval mode it uses the running
  statistics, as always. DDP's check "SyncBatchNorm layers only work with GPU modules"
  is lifted for CPU modules.

Each patched callable is a plain function of its own (no proxy objects), and the
original is kept for ``compatfix.get_original``. Nothing here imports torch at module
level: the module is imported only when CPU mode is on, before torch is.
"""

from __future__ import annotations

import functools

from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_DDP = "cpu.torch.nn.DistributedDataParallel"
SHIM_SYNCBN = "cpu.torch.nn.SyncBatchNorm"

_record = patching.record_redirect


def _replace(owner, name: str, make, shim: str) -> bool:
    """``patching.wrap`` of a method the class itself defines (an inherited one is left)."""
    if name not in vars(owner):
        return False
    return patching.wrap(owner, name, make, shim)


# --- DistributedDataParallel on CPU modules ---------------------------------------------------


def _all_on_cpu(module) -> bool:
    devices = {parameter.device.type for parameter in module.parameters()}
    return devices == {"cpu"}


def _ddp_init(original):
    @functools.wraps(original)
    def __init__(self, module, device_ids=None, output_device=None, *args, **kwargs):
        if (device_ids or output_device is not None) and _all_on_cpu(module):
            _record(
                SHIM_DDP,
                "DistributedDataParallel(device_ids=%r, output_device=%r) -> CPU module, dropped"
                % (device_ids, output_device),
            )
            device_ids = output_device = None
        original(self, module, device_ids, output_device, *args, **kwargs)

    return __init__


def patch_ddp(module) -> None:
    """Applied to ``torch.nn.parallel.distributed``."""
    _replace(module.DistributedDataParallel, "__init__", _ddp_init, SHIM_DDP)


# --- SyncBatchNorm on CPU tensors --------------------------------------------------------------


_all_reduce_sum_function = None


def _all_reduce_sum(tensor, group):
    """A differentiable SUM all-reduce (its gradient is the all-reduced gradient).

    ``torch.distributed.nn.functional.all_reduce`` does the same but warns on every call
    (deprecated in torch 2.x) and is missing from older releases.
    """
    global _all_reduce_sum_function
    if _all_reduce_sum_function is None:
        import torch
        import torch.distributed as dist

        class AllReduceSum(torch.autograd.Function):
            @staticmethod
            def forward(ctx, tensor, group):
                ctx.group = group
                tensor = tensor.clone(memory_format=torch.contiguous_format)
                dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=group)
                return tensor

            @staticmethod
            def backward(ctx, grad_output):
                return AllReduceSum.apply(grad_output, ctx.group), None

        _all_reduce_sum_function = AllReduceSum
    return _all_reduce_sum_function.apply(tensor, group)


def cpu_sync_batch_norm(input, weight, bias, running_mean, running_var, eps, momentum, group):
    """Batch normalisation of ``input`` with statistics over the whole ``group``'s batch."""
    import torch

    compute = input.float() if input.dtype in (torch.float16, torch.bfloat16) else input
    channels = compute.size(1)
    dims = [0] + list(range(2, compute.dim()))
    shape = [1, channels] + [1] * (compute.dim() - 2)
    local_count = compute.numel() // channels
    # 1) global sum and count -> mean
    count = torch.full((1,), float(local_count), dtype=compute.dtype)
    totals = _all_reduce_sum(torch.cat([compute.sum(dims), count]), group)
    total_count = totals[channels]
    mean = totals[:channels] / total_count
    # 2) global sum of squared deviations -> biased variance (two passes: exact enough
    #    where sum-of-squares minus squared mean would cancel)
    centered = compute - mean.view(shape)
    var = _all_reduce_sum((centered * centered).sum(dims), group) / total_count
    output = centered * torch.rsqrt(var + eps).view(shape)
    if weight is not None:
        output = output * weight.view(shape)
    if bias is not None:
        output = output + bias.view(shape)
    with torch.no_grad():  # no .item(): no host sync, no graph break under torch.compile
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.detach().to(running_mean.dtype), alpha=momentum)
        if running_var is not None:
            n = total_count.detach()
            unbiased = var.detach() * (n / (n - 1).clamp_min(1))  # n == 1: the biased one
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype), alpha=momentum)
    return output.to(input.dtype)


def _syncbn_forward(original):
    @functools.wraps(original)
    def forward(self, input):
        import torch.distributed as dist

        if not (
            self.training
            and input.device.type == "cpu"
            and dist.is_available()
            and dist.is_initialized()
        ):
            return original(self, input)  # no sync: torch does not raise, nothing to change
        import torch.nn.functional as F

        self._check_input_dim(input)
        check_channels = getattr(self, "_check_non_zero_input_channels", None)
        if check_channels is not None:
            check_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked.item()) if self.momentum is None else self.momentum
        running_mean = self.running_mean if self.track_running_stats else None
        running_var = self.running_var if self.track_running_stats else None
        group = self.process_group if self.process_group else dist.group.WORLD
        if dist.get_world_size(group) <= 1:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, True, factor, self.eps)
        _record(SHIM_SYNCBN, "SyncBatchNorm.forward on CPU tensors -> statistics all-reduced over gloo")
        return cpu_sync_batch_norm(input, self.weight, self.bias, running_mean, running_var, self.eps, factor, group)

    return forward


def _ddp_syncbn_check(original):
    @functools.wraps(original)
    def _passing_sync_batchnorm_handle(self, module):
        if getattr(self, "device_type", None) != "cpu":
            return original(self, module)
        import torch

        if any(isinstance(layer, torch.nn.SyncBatchNorm) for layer in module.modules()):
            _record(SHIM_SYNCBN, "DistributedDataParallel: SyncBatchNorm in a CPU module -> allowed")
        return None

    return _passing_sync_batchnorm_handle


def patch_sync_batch_norm(module) -> None:
    """Applied to ``torch.nn.modules.batchnorm`` (the layer) and to
    ``torch.nn.parallel.distributed`` (DDP's check of SyncBatchNorm layers)."""
    if module.__name__ == "torch.nn.parallel.distributed":
        _replace(module.DistributedDataParallel, "_passing_sync_batchnorm_handle", _ddp_syncbn_check, SHIM_SYNCBN)
    else:
        _replace(module.SyncBatchNorm, "forward", _syncbn_forward, SHIM_SYNCBN)




SHIMS = (
    Shim(
        SHIM_DDP,
        targets=["torch.nn.parallel.distributed"],
        kind=AFTER_IMPORT,
        apply=patch_ddp,
        device="cpu",
        risk=RISK_BEHAVIOUR,
        broke="DistributedDataParallel(model, device_ids=[rank]) raises 'device_ids and "
        "output_device arguments only work with single-device/multiple-device GPU modules' "
        "for a module on the CPU",
        summary="CPU mode: DistributedDataParallel drops device_ids and output_device for a "
        "module whose parameters are on the CPU",
    ),
    Shim(
        SHIM_SYNCBN,
        targets=["torch.nn.modules.batchnorm", "torch.nn.parallel.distributed"],
        kind=AFTER_IMPORT,
        apply=patch_sync_batch_norm,
        device="cpu",
        risk=RISK_BEHAVIOUR,
        broke="SyncBatchNorm raises 'SyncBatchNorm expected input tensor to be on GPU' when "
        "training on CPU tensors in a process group, and DistributedDataParallel raises "
        "'SyncBatchNorm layers only work with GPU modules'",
        summary="CPU mode: SyncBatchNorm on CPU tensors synchronises its batch statistics "
        "over the process group (gloo all-reduce); DDP accepts it in CPU modules",
    ),
)

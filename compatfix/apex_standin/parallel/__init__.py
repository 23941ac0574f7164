"""``apex.parallel`` on torch.distributed.

- ``DistributedDataParallel`` is a ``torch.nn.parallel.DistributedDataParallel`` that
  takes apex's constructor arguments. Like apex it averages gradients over the processes
  (``gradient_average=False`` sums them; ``gradient_predivide_factor`` and
  ``allreduce_always_fp32`` are honoured through a communication hook) and does not
  broadcast buffers on every forward. The wrapped model is ``.module``, so state-dict
  keys carry apex's ``module.`` prefix. Bucketing options (``message_size``,
  ``delay_allreduce``, ``allreduce_trigger_params``, ``num_allreduce_streams``, ...)
  are accepted and left to torch, whose buckets overlap communication the same way.
- ``SyncBatchNorm`` is a ``torch.nn.SyncBatchNorm`` (so CPU mode's SyncBN shim covers
  it too) with apex's extra arguments: ``channel_last`` inputs and ``forward(input, z)``
  with ``fuse_relu``. Its state dict is BatchNorm's.
- ``convert_syncbn_model`` swaps every BatchNorm for that SyncBatchNorm, keeping the
  weights and sharing the running statistics.
"""

from __future__ import annotations

import inspect

import torch
import torch.distributed as dist
from torch.nn.modules.batchnorm import _BatchNorm

__all__ = ["DistributedDataParallel", "SyncBatchNorm", "convert_syncbn_model", "Reducer", "ReduceOp",
           "create_syncbn_process_group"]

ReduceOp = dist.ReduceOp


def _apex_allreduce_hook(state, bucket):  # no annotations: DDP checks them against its own types
    """Gradient all-reduce with apex's pre-division, post-scaling and fp32 option."""
    process_group, predivide, postscale, always_fp32 = state
    buffer = bucket.buffer()
    tensor = buffer.float() if always_fp32 and buffer.dtype != torch.float32 else buffer
    if predivide != 1.0:
        tensor.mul_(1.0 / predivide)
    future = dist.all_reduce(tensor, group=process_group, async_op=True).get_future()

    def finish(done: torch.futures.Future) -> torch.Tensor:
        reduced = done.value()[0]
        if postscale != 1.0:
            reduced.mul_(postscale)
        return reduced.to(buffer.dtype) if reduced.dtype != buffer.dtype else reduced

    return future.then(finish)


# apex never broadcasts buffers in forward. torch 2.14 renamed the option (the old name warns).
_NO_FORWARD_BUFFER_SYNC = (
    {"forward_sync_buffers": False}
    if "forward_sync_buffers" in inspect.signature(torch.nn.parallel.DistributedDataParallel.__init__).parameters
    else {"broadcast_buffers": False}
)


class DistributedDataParallel(torch.nn.parallel.DistributedDataParallel):
    """apex's DDP constructor on torch's DDP (see the module docstring)."""

    def __init__(self, module: torch.nn.Module, message_size: int = 10000000, delay_allreduce: bool = False,
                 shared_param=None, allreduce_trigger_params=None, retain_allreduce_buffers: bool = False,
                 allreduce_always_fp32: bool = False, num_allreduce_streams: int = 1,
                 allreduce_communicators=None, gradient_average: bool = True,
                 gradient_predivide_factor: float = 1.0, gradient_average_split_factor=None,
                 prof: bool = False) -> None:
        if shared_param is not None:
            raise ValueError("shared_param is no longer supported as an option.  It was misleadingly named from "
                             "the start.  It turns out overlapping communication with computation should work fine "
                             "with shared parameters.  If you still wish to delay communication to the end of the "
                             "backward pass, use delay_allreduce=True|False instead.")
        if gradient_average_split_factor is not None:  # apex's older name for it
            gradient_predivide_factor = gradient_average_split_factor
        super().__init__(module, **_NO_FORWARD_BUFFER_SYNC)
        self.message_size = message_size
        self.delay_allreduce = delay_allreduce
        self.allreduce_always_fp32 = allreduce_always_fp32
        self.gradient_average = gradient_average
        self.gradient_predivide_factor = gradient_predivide_factor
        if gradient_average and gradient_predivide_factor == 1.0 and not allreduce_always_fp32:
            return  # torch's own averaging all-reduce is apex's default
        world_size = dist.get_world_size(self.process_group)
        postscale = gradient_predivide_factor / world_size if gradient_average else 1.0
        self.register_comm_hook(
            (self.process_group, gradient_predivide_factor, postscale, allreduce_always_fp32), _apex_allreduce_hook)


class Reducer:
    """apex's manual gradient averaging: ``Reducer(module)`` broadcasts the module's
    parameters from rank 0; ``reduce()`` averages the gradients over the processes."""

    def __init__(self, module_or_grads_list) -> None:
        if isinstance(module_or_grads_list, torch.nn.Module):
            self.module = module_or_grads_list
            for param in self.module.parameters():
                dist.broadcast(param.data, 0)
        else:
            self.module = None
            self.grads = list(module_or_grads_list)

    def reduce(self) -> None:
        if self.module is not None:
            grads = [p.grad.data for p in self.module.parameters() if p.grad is not None]
        else:
            grads = self.grads
        world_size = dist.get_world_size()
        for grad in grads:
            dist.all_reduce(grad)
            grad.div_(world_size)


class SyncBatchNorm(torch.nn.SyncBatchNorm):
    """apex's SyncBatchNorm signature on torch's SyncBatchNorm."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, channel_last: bool = False,
                 fuse_relu: bool = False) -> None:
        super().__init__(num_features, eps=eps, momentum=momentum, affine=affine,
                         track_running_stats=track_running_stats, process_group=process_group)
        self.channel_last = channel_last
        self.fuse_relu = fuse_relu

    def _specify_process_group(self, process_group) -> None:
        self.process_group = process_group

    def _specify_channel_last(self, channel_last: bool) -> None:
        self.channel_last = channel_last

    def forward(self, input: torch.Tensor, z: torch.Tensor | None = None) -> torch.Tensor:
        if self.channel_last:
            input = input.movedim(-1, 1)
            z = None if z is None else z.movedim(-1, 1)
        output = super().forward(input)
        if z is not None:
            output = output + z
        if self.fuse_relu:
            output = torch.relu(output)
        return output.movedim(1, -1) if self.channel_last else output


def convert_syncbn_model(module: torch.nn.Module, process_group=None, channel_last: bool = False) -> torch.nn.Module:
    """``module`` with every BatchNorm replaced by :class:`SyncBatchNorm` (weights copied,
    running statistics shared); returns the converted module."""
    converted = module
    if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
        converted = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                  module.track_running_stats, process_group, channel_last=channel_last)
        if module.affine:
            converted.to(device=module.weight.device, dtype=module.weight.dtype)
            with torch.no_grad():
                converted.weight.copy_(module.weight)
                converted.bias.copy_(module.bias)
            converted.weight.requires_grad_(module.weight.requires_grad)
            converted.bias.requires_grad_(module.bias.requires_grad)
        converted.running_mean = module.running_mean
        converted.running_var = module.running_var
        converted.num_batches_tracked = module.num_batches_tracked
        converted.train(module.training)
    for name, child in module.named_children():
        converted.add_module(name, convert_syncbn_model(child, process_group, channel_last))
    return converted


def create_syncbn_process_group(group_size: int):
    """The process group of ``group_size`` consecutive ranks that this rank belongs to
    (None for ``group_size == 0``: the whole world)."""
    if group_size == 0:
        return None
    world_size = dist.get_world_size()
    assert world_size >= group_size
    assert world_size % group_size == 0
    group = None
    for number in range(world_size // group_size):
        ranks = list(range(number * group_size, (number + 1) * group_size))
        created = dist.new_group(ranks=ranks)
        if dist.get_rank() // group_size == number:
            group = created
    assert group is not None
    return group

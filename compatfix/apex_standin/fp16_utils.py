"""``apex.fp16_utils``: apex's pre-amp manual mixed precision (FP16_Optimizer with fp32
master weights and static or dynamic loss scaling) and its model-casting helpers, in
plain torch, with apex's rules: the dynamic scaler starts at 2**32, divides by 2 on
overflow (not below 1) and multiplies by 2 after 1000 clean iterations.

``FP16_Optimizer.state_dict()`` has apex's keys; its ``loss_scaler`` entry is this
module's scaler object, so a state saved by real apex (which pickles apex's classes)
does not load here: restart the loss scale instead (see docs/apex.md).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

__all__ = [
    "FP16_Optimizer", "LossScaler", "DynamicLossScaler", "network_to_half", "BN_convert_float", "tofp16",
    "FP16Model", "convert_module", "convert_network", "prep_param_lists", "model_grads_to_master_grads",
    "master_params_to_model_params", "to_python_float", "clip_grad_norm",
]


def to_python_float(t) -> float:
    return t.item() if hasattr(t, "item") else t[0]


class tofp16(nn.Module):  # noqa: N801 - apex's name
    """Casts its input to float16."""

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return input.half()


def BN_convert_float(module: nn.Module) -> nn.Module:  # noqa: N802 - apex's name
    """Put affine batch norms back to float32 (cudnn runs them with float16 inputs)."""
    if isinstance(module, _BatchNorm) and module.affine:
        module.float()
    for child in module.children():
        BN_convert_float(child)
    return module


def network_to_half(network: nn.Module) -> nn.Module:
    """``nn.Sequential(tofp16(), network.half())`` with batch norms kept in float32."""
    return nn.Sequential(tofp16(), BN_convert_float(network.half()))


def convert_module(module: nn.Module, dtype: torch.dtype) -> None:
    """Cast ``module``'s own floating parameters and buffers to ``dtype``."""
    for param in module.parameters(recurse=False):
        if param is not None and param.data.is_floating_point():
            param.data = param.data.to(dtype)
            if param._grad is not None:
                param._grad.data = param._grad.data.to(dtype)
    for buffer in module.buffers(recurse=False):
        if buffer is not None and buffer.data.is_floating_point():
            buffer.data = buffer.data.to(dtype)


def convert_network(network: nn.Module, dtype: torch.dtype) -> nn.Module:
    """Cast ``network`` to ``dtype``, except affine batch norms."""
    for module in network.modules():
        if isinstance(module, _BatchNorm) and module.affine:
            continue
        convert_module(module, dtype)
    return network


class FP16Model(nn.Module):
    """Converts ``network`` to float16 (batch norms float32) and casts inputs to it."""

    def __init__(self, network: nn.Module) -> None:
        super().__init__()
        self.network = convert_network(network, dtype=torch.half)

    def forward(self, *inputs):
        return self.network(*(i.half() for i in inputs))


def prep_param_lists(model: nn.Module, flat_master: bool = False):
    """(model params, float32 master copies) of ``model``'s trainable parameters."""
    model_params = [p for p in model.parameters() if p.requires_grad]
    if flat_master:
        flat = torch.cat([p.data.float().reshape(-1) for p in model_params])
        master = nn.Parameter(flat)
        master.grad = flat.new_zeros(flat.size())
        return model_params, [master]
    master_params = [p.detach().clone().float().requires_grad_() for p in model_params]
    return model_params, master_params


def model_grads_to_master_grads(model_params, master_params, flat_master: bool = False) -> None:
    if flat_master:
        master_params[0].grad.data.copy_(torch.cat([p.grad.data.reshape(-1) for p in model_params]))
        return
    for model, master in zip(model_params, master_params):
        if model.grad is None:
            master.grad = None
        elif master.grad is None:
            master.grad = model.grad.detach().float()
        else:
            master.grad.copy_(model.grad)


def master_params_to_model_params(model_params, master_params, flat_master: bool = False) -> None:
    with torch.no_grad():
        if flat_master:
            offset = 0
            for model in model_params:
                count = model.numel()
                model.copy_(master_params[0][offset:offset + count].view_as(model))
                offset += count
            return
        for model, master in zip(model_params, master_params):
            model.copy_(master)


clip_grad_norm = torch.nn.utils.clip_grad_norm_


def _has_inf_or_nan(tensors) -> bool:
    grads = [g for g in tensors if g is not None]
    if not grads:
        return False
    return not bool(torch.stack([torch.isfinite(g.float()).all() for g in grads]).all())


class LossScaler:
    """A static loss scale."""

    def __init__(self, scale: float = 1) -> None:
        self.cur_scale = scale

    def has_overflow(self, params) -> bool:
        return False

    def update_scale(self, overflow: bool) -> None:
        pass

    @property
    def loss_scale(self) -> float:
        return self.cur_scale

    def backward(self, loss: torch.Tensor, retain_graph: bool = False) -> None:
        (loss * self.loss_scale).backward(retain_graph=retain_graph)


class DynamicLossScaler(LossScaler):
    """apex's dynamic scale: ``/scale_factor`` on overflow (not below 1), ``*scale_factor``
    after ``scale_window`` iterations without one."""

    def __init__(self, init_scale: float = 2 ** 32, scale_factor: float = 2.0, scale_window: int = 1000) -> None:
        super().__init__(init_scale)
        self.cur_iter = 0
        self.last_overflow_iter = -1
        self.scale_factor = scale_factor
        self.scale_window = scale_window

    def has_overflow(self, params) -> bool:
        return _has_inf_or_nan(p.grad for p in params)

    def update_scale(self, overflow: bool) -> None:
        if overflow:
            self.cur_scale = max(self.cur_scale / self.scale_factor, 1)
            self.last_overflow_iter = self.cur_iter
        elif (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
            self.cur_scale *= self.scale_factor
        self.cur_iter += 1


class FP16_Optimizer:  # noqa: N801 - apex's name
    """Wraps an optimizer over a float16 model: the optimizer updates float32 master
    copies; ``backward(loss)`` scales the loss and produces unscaled master gradients;
    ``step()`` is skipped (and the scale lowered) when they overflowed."""

    def __init__(self, init_optimizer: torch.optim.Optimizer, static_loss_scale: float = 1.0,
                 dynamic_loss_scale: bool = False, dynamic_loss_args: dict | None = None,
                 verbose: bool = True) -> None:
        self.verbose = verbose
        self.optimizer = init_optimizer
        self.fp16_groups, self.fp32_from_fp16_groups, self.fp32_from_fp32_groups = [], [], []
        for group in self.optimizer.param_groups:
            halves, masters, fulls = [], [], []
            for index, param in enumerate(group["params"]):
                if not param.requires_grad:
                    continue
                if param.dtype in (torch.float16, torch.bfloat16):
                    master = param.detach().clone().float().requires_grad_()
                    group["params"][index] = master
                    halves.append(param)
                    masters.append(master)
                    if param in self.optimizer.state:
                        self.optimizer.state[master] = self.optimizer.state.pop(param)
                elif param.dtype == torch.float32:
                    fulls.append(param)
                    group["params"][index] = param
                else:
                    raise TypeError("Wrapped parameters must be either torch.cuda.FloatTensor or "
                                    "torch.cuda.HalfTensor. Received {}".format(param.type()))
            self.fp16_groups.append(halves)
            self.fp32_from_fp16_groups.append(masters)
            self.fp32_from_fp32_groups.append(fulls)
        self.optimizer.load_state_dict(self.optimizer.state_dict())
        if dynamic_loss_scale:
            self.dynamic_loss_scale = True
            self.loss_scaler = DynamicLossScaler(**(dynamic_loss_args or {}))
        else:
            self.dynamic_loss_scale = False
            self.loss_scaler = LossScaler(static_loss_scale)
        self.overflow = False
        self.first_closure_call_this_step = True
        self.clip_grad_norm = clip_grad_norm

    def maybe_print(self, msg: str) -> None:
        if self.verbose:
            print(msg)

    def zero_grad(self, set_grads_to_None: bool = False) -> None:  # noqa: N803 - apex's name
        """Zero the model's gradients (the masters' are rebuilt from them)."""
        for group in self.fp32_from_fp16_groups:
            for master in group:
                master.grad = None
        for group in self.fp16_groups + self.fp32_from_fp32_groups:
            for param in group:
                if set_grads_to_None or param.grad is None:
                    param.grad = None
                else:
                    param.grad.detach_().zero_()

    def _all_masters(self) -> list:
        return [p for groups in (self.fp32_from_fp16_groups, self.fp32_from_fp32_groups) for g in groups for p in g]

    def backward(self, loss: torch.Tensor, update_master_grads: bool = True, retain_graph: bool = False) -> None:
        self.loss_scaler.backward(loss.float(), retain_graph=retain_graph)
        if update_master_grads:
            self.update_master_grads()

    def update_master_grads(self) -> None:
        """Copy the float16 gradients to the masters and unscale them (nothing on overflow)."""
        if self.dynamic_loss_scale:
            self.overflow = self.loss_scaler.has_overflow(
                [p for group in self.fp16_groups + self.fp32_from_fp32_groups for p in group])
            if self.overflow:
                return
        for halves, masters in zip(self.fp16_groups, self.fp32_from_fp16_groups):
            model_grads_to_master_grads(halves, masters)
        grads = [p.grad for p in self._all_masters() if p.grad is not None]
        if grads and self.loss_scale != 1.0:
            torch._foreach_mul_(grads, 1.0 / self.loss_scale)

    def clip_master_grads(self, max_norm: float, norm_type: float = 2):
        """Clip the master gradients; -1 when this iteration overflowed."""
        if self.overflow:
            return -1
        return self.clip_grad_norm(self._all_masters(), max_norm, norm_type)

    def step(self, closure=None):
        self.loss_scaler.update_scale(self.overflow)
        if self.overflow:
            self.maybe_print("Gradient overflow.  Skipping step, reducing loss scale to {}".format(self.loss_scale))
            return None
        result = self.optimizer.step(closure) if closure is not None else self.optimizer.step()
        for halves, masters in zip(self.fp16_groups, self.fp32_from_fp16_groups):
            master_params_to_model_params(halves, masters)
        return result

    def state_dict(self) -> dict:
        return {
            "loss_scaler": self.loss_scaler,
            "dynamic_loss_scale": self.dynamic_loss_scale,
            "overflow": self.overflow,
            "first_closure_call_this_step": self.first_closure_call_this_step,
            "optimizer_state_dict": self.optimizer.state_dict(),
            "fp32_from_fp16": self.fp32_from_fp16_groups,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        self.loss_scaler = state_dict["loss_scaler"]
        self.dynamic_loss_scale = state_dict["dynamic_loss_scale"]
        self.overflow = state_dict["overflow"]
        self.first_closure_call_this_step = state_dict["first_closure_call_this_step"]
        self.optimizer.load_state_dict(state_dict["optimizer_state_dict"])
        with torch.no_grad():
            for current, saved in zip(self.fp32_from_fp16_groups, state_dict["fp32_from_fp16"]):
                for mine, theirs in zip(current, saved):
                    mine.copy_(theirs)

    @property
    def loss_scale(self) -> float:
        return self.loss_scaler.loss_scale

    @loss_scale.setter
    def loss_scale(self, value: float) -> None:
        self.loss_scaler.cur_scale = value

    @property
    def state(self):
        return self.optimizer.state

    @state.setter
    def state(self, value) -> None:
        self.optimizer.state = value

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    @param_groups.setter
    def param_groups(self, value) -> None:
        self.optimizer.param_groups = value

"""``apex.optimizers`` in plain torch: FusedAdam, FusedLAMB, FusedSGD, FusedNovoGrad.

Same constructor arguments and defaults as apex (note ``FusedAdam(adam_w_mode=True)``:
apex's FusedAdam is AdamW unless told otherwise), the same update rules as apex's CUDA
kernels (csrc/multi_tensor_{adam,lamb,sgd,novograd}.cu), and the same state layout, so
``optimizer.state_dict()`` moves between real apex and the stand-in: the step count is
``param_group['step']`` (one per group, as apex keeps it), per-parameter state is
``exp_avg``/``exp_avg_sq`` (Adam, LAMB), ``momentum_buffer`` (SGD) and ``exp_avg`` plus
the group's per-tensor norms ``param_group['exp_avg_sq'] = [fp16 norms, fp32 norms]``
(NovoGrad). Updates of float16/bfloat16 parameters are computed in float32 and written
back, as apex's kernels compute in float32.

Adam and SGD use torch's multi-tensor (``_foreach``) ops, one launch per dtype group;
LAMB and NovoGrad need per-tensor norms and loop over tensors.
"""

from __future__ import annotations

import math
from typing import Callable

import torch
from torch.optim.optimizer import Optimizer, required

__all__ = ["FusedAdam", "FusedLAMB", "FusedSGD", "FusedNovoGrad"]


def _in_float32(params: list, grads: list, states: list[list], update: Callable) -> None:
    """Run ``update(params, grads, *states)`` on float32 tensors: directly for float32
    parameters, on float32 copies written back for the others."""
    direct = [i for i, p in enumerate(params) if p.dtype == torch.float32]
    if len(direct) == len(params):
        update(params, grads, *states)
        return
    if direct:
        update([params[i] for i in direct], [grads[i] for i in direct], *[[s[i] for i in direct] for s in states])
    others = [i for i, p in enumerate(params) if p.dtype != torch.float32]
    originals = [[params[i] for i in others]] + [[s[i] for i in others] for s in states]
    copies = [[t.float() for t in tensors] for tensors in originals]
    update(copies[0], [grads[i].float() for i in others], *copies[1:])
    with torch.no_grad():
        for tensors, computed in zip(originals, copies):
            for tensor, value in zip(tensors, computed):
                tensor.copy_(value)


class _SetGradNone(Optimizer):
    set_grad_none = True

    def zero_grad(self, set_to_none: bool | None = None) -> None:
        super().zero_grad(self.set_grad_none if set_to_none is None else set_to_none)

    @staticmethod
    def _with_grads(group: dict, name: str) -> tuple[list, list]:
        params, grads = [], []
        for param in group["params"]:
            if param.grad is None:
                continue
            if param.grad.is_sparse:
                raise RuntimeError("%s does not support sparse gradients, please consider SparseAdam instead" % name)
            params.append(param)
            grads.append(param.grad)
        return params, grads

    @staticmethod
    def _next_step(group: dict) -> int:
        group["step"] = group.get("step", 0) + 1  # one count per group, as apex keeps it
        return group["step"]


class FusedAdam(_SetGradNone):
    """Adam, or AdamW with ``adam_w_mode=True`` (apex's default)."""

    def __init__(self, params, lr: float = 1e-3, bias_correction: bool = True, betas=(0.9, 0.999),
                 eps: float = 1e-8, adam_w_mode: bool = True, weight_decay: float = 0.0, amsgrad: bool = False,
                 set_grad_none: bool = True, capturable: bool = False, master_weights: bool = False) -> None:
        if amsgrad:
            raise RuntimeError("FusedAdam does not support the AMSGrad variant.")
        if master_weights and not capturable:
            raise RuntimeError("Master weights is currently only supported with the capturable version.")
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)
        self.adam_w_mode = 1 if adam_w_mode else 0
        self.set_grad_none = set_grad_none
        self.capturable = capturable
        self.master_weights = master_weights

    @torch.no_grad()
    def step(self, closure=None, grads=None, output_params=None, scale=None, grad_norms=None, grad_scaler=None):
        if any(p is not None for p in (grads, output_params, scale, grad_norms)):
            raise RuntimeError("FusedAdam has been updated.  Simply initialize it identically to torch.optim.Adam, "
                               "and call step() with no arguments.")
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            if not group["params"]:
                continue
            step = self._next_step(group)
            params, grads_ = self._with_grads(group, "FusedAdam")
            if not params:
                continue
            for param in params:
                state = self.state[param]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(param, dtype=torch.float32)
                    state["exp_avg_sq"] = torch.zeros_like(param, dtype=torch.float32)
            beta1, beta2 = group["betas"]
            lr, eps, decay = group["lr"], group["eps"], group["weight_decay"]
            correction1 = 1 - beta1 ** step if group["bias_correction"] else 1.0
            correction2 = 1 - beta2 ** step if group["bias_correction"] else 1.0
            decoupled = bool(self.adam_w_mode)

            def update(ps, gs, ms, vs):
                if decay and not decoupled:
                    gs = torch._foreach_add(gs, ps, alpha=decay)
                torch._foreach_lerp_(ms, gs, 1 - beta1)
                torch._foreach_mul_(vs, beta2)
                torch._foreach_addcmul_(vs, gs, gs, value=1 - beta2)
                denom = torch._foreach_sqrt(vs)
                torch._foreach_div_(denom, math.sqrt(correction2))
                torch._foreach_add_(denom, eps)
                if decay and decoupled:
                    torch._foreach_mul_(ps, 1 - lr * decay)
                torch._foreach_addcdiv_(ps, ms, denom, value=-lr / correction1)

            states = [self.state[p] for p in params]
            _in_float32(params, grads_, [[s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states]], update)
        return loss


class FusedSGD(_SetGradNone):
    """SGD with momentum/Nesterov as torch.optim.SGD defines it (apex's kernel is the
    same update), plus apex's ``wd_after_momentum``."""

    def __init__(self, params, lr=required, momentum: float = 0, dampening: float = 0, weight_decay: float = 0,
                 nesterov: bool = False, wd_after_momentum: bool = False, materialize_master_grads: bool = True,
                 set_grad_none: bool = False) -> None:
        if lr is not required and lr < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if weight_decay < 0.0:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
        super().__init__(params, defaults)
        self.wd_after_momentum = wd_after_momentum
        self.materialize_master_grads = materialize_master_grads
        self.most_recent_scale = 1.0
        self.scale_set_by_backward = False
        self.set_grad_none = set_grad_none

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads = self._with_grads(group, "FusedSGD")
            if not params:
                continue
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            decay, nesterov = group["weight_decay"], group["nesterov"]
            after = self.wd_after_momentum
            fresh = [i for i, p in enumerate(params) if momentum and "momentum_buffer" not in self.state[p]]
            for i in fresh:  # the first step's buffer is the (decayed) gradient itself
                self.state[params[i]]["momentum_buffer"] = torch.zeros_like(params[i], dtype=torch.float32)
            fresh_set = set(fresh)
            buffers = [[self.state[p]["momentum_buffer"] for p in params]] if momentum else []

            def update(ps, gs, *bufs):
                if decay and not after:
                    gs = torch._foreach_add(gs, ps, alpha=decay)
                if momentum:
                    (bs,) = bufs
                    old = [b for i, b in enumerate(bs) if i not in fresh_set]
                    if old:
                        torch._foreach_mul_(old, momentum)
                        torch._foreach_add_(old, [g for i, g in enumerate(gs) if i not in fresh_set],
                                            alpha=1 - dampening)
                    for i in fresh_set:
                        bs[i].copy_(gs[i])
                    gs = torch._foreach_add(gs, bs, alpha=momentum) if nesterov else bs
                if decay and after:
                    gs = torch._foreach_add(gs, ps, alpha=decay)
                torch._foreach_add_(ps, gs, alpha=-lr)

            _in_float32(params, grads, buffers, update)
        return loss


class FusedLAMB(_SetGradNone):
    """LAMB (You et al., 2019) as apex's kernel computes it: gradients divided by
    ``max(global_norm / max_grad_norm, 1)``, Adam moments, and a per-tensor trust ratio
    ``||p|| / ||update||`` applied where ``weight_decay != 0`` (or ``use_nvlamb``)."""

    def __init__(self, params, lr: float = 1e-3, bias_correction: bool = True, betas=(0.9, 0.999),
                 eps: float = 1e-6, weight_decay: float = 0.01, amsgrad: bool = False, adam_w_mode: bool = True,
                 grad_averaging: bool = True, set_grad_none: bool = True, max_grad_norm: float = 1.0,
                 use_nvlamb: bool = False) -> None:
        if amsgrad:
            raise RuntimeError("FusedLAMB does not support the AMSGrad variant.")
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps, weight_decay=weight_decay,
                        grad_averaging=grad_averaging, max_grad_norm=max_grad_norm)
        super().__init__(params, defaults)
        self.adam_w_mode = 1 if adam_w_mode else 0
        self.set_grad_none = set_grad_none
        self.use_nvlamb = use_nvlamb

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        all_grads = [p.grad for group in self.param_groups for p in group["params"] if p.grad is not None]
        if not all_grads:
            return loss
        norms = torch._foreach_norm([g.float() for g in all_grads])
        global_norm = torch.linalg.vector_norm(torch.stack(norms))
        max_norm = self.defaults["max_grad_norm"]
        clip = torch.where(global_norm > max_norm, global_norm / max_norm, torch.ones_like(global_norm))
        for group in self.param_groups:
            step = self._next_step(group)
            params, grads = self._with_grads(group, "FusedLAMB")
            for param in params:
                state = self.state[param]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(param)
                    state["exp_avg_sq"] = torch.zeros_like(param)
            beta1, beta2 = group["betas"]
            beta3 = 1 - beta1 if group["grad_averaging"] else 1.0
            correction1 = 1 - beta1 ** step if group["bias_correction"] else 1.0
            correction2 = 1 - beta2 ** step if group["bias_correction"] else 1.0
            lr, eps, decay = group["lr"], group["eps"], group["weight_decay"]
            trust = self.use_nvlamb or decay != 0
            decoupled = bool(self.adam_w_mode)

            def update(ps, gs, ms, vs):
                for p, g, m, v in zip(ps, gs, ms, vs):
                    g = g / clip
                    if not decoupled and decay:
                        g = g + decay * p
                    m.mul_(beta1).add_(g, alpha=beta3)
                    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                    change = (m / correction1) / ((v / correction2).sqrt() + eps)
                    if decoupled and decay:
                        change = change + decay * p
                    ratio = lr
                    if trust:
                        p_norm, u_norm = p.norm(), change.norm()
                        ratio = torch.where((p_norm != 0) & (u_norm != 0), lr * p_norm / u_norm,
                                            torch.full_like(p_norm, lr))
                    p.sub_(change * ratio)

            states = [self.state[p] for p in params]
            _in_float32(params, grads, [[s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states]], update)
        return loss


class FusedNovoGrad(_SetGradNone):
    """NovoGrad (Ginsburg et al., 2019) as apex's kernel computes it: a per-tensor
    gradient norm ``v`` (blended ``sqrt(b2 v^2 + (1-b2) n^2)`` for L2, ``b2 v + (1-b2) n``
    for the max norm) replaces Adam's per-element second moment."""

    def __init__(self, params, lr: float = 1e-3, bias_correction: bool = True, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, reg_inside_moment: bool = False,
                 grad_averaging: bool = True, norm_type: int = 2, init_zero: bool = False,
                 set_grad_none: bool = True) -> None:
        if amsgrad:
            raise RuntimeError("FusedNovoGrad does not support the AMSGrad variant.")
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps, weight_decay=weight_decay,
                        grad_averaging=grad_averaging, norm_type=norm_type, init_zero=init_zero)
        super().__init__(params, defaults)
        self.moment_mode = 0 if reg_inside_moment else 1
        self.set_grad_none = set_grad_none

    def load_state_dict(self, state_dict) -> None:
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            if group["params"] and "exp_avg_sq" in group:
                device = group["params"][0].device
                group["exp_avg_sq"] = [norms.to(device) for norms in group["exp_avg_sq"]]

    @staticmethod
    def _norms(grads: list, norm_type: int) -> torch.Tensor:
        if norm_type == 0:
            values = [g.float().abs().max() for g in grads]
        elif norm_type == 2:
            values = [g.float().norm() for g in grads]
        else:
            raise RuntimeError("FusedNovoGrad only support l2/inf norm now.")
        return torch.stack(values) if values else torch.zeros(0)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            step = self._next_step(group)
            params, grads = self._with_grads(group, "FusedNovoGrad")
            for param in params:
                if len(self.state[param]) == 0:
                    self.state[param]["exp_avg"] = torch.zeros_like(param)
            if not params:
                continue
            device = params[0].device
            halves = [i for i, p in enumerate(params) if p.dtype != torch.float32]
            fulls = [i for i, p in enumerate(params) if p.dtype == torch.float32]
            norm_type = group["norm_type"]
            beta1, beta2 = group["betas"]
            fresh = [self._norms([grads[i] for i in part], norm_type).to(device) for part in (halves, fulls)]
            if "exp_avg_sq" not in group:  # [fp16 tensors' norms, fp32 tensors' norms], as apex stores them
                group["exp_avg_sq"] = [torch.zeros_like(n) for n in fresh] if group["init_zero"] else [
                    n.clone() for n in fresh]
            for stored, new in zip(group["exp_avg_sq"], fresh):
                if stored.numel() != new.numel():
                    raise RuntimeError("FusedNovoGrad: the set of parameters with gradients changed between steps")
                if norm_type == 2:
                    stored.copy_((beta2 * stored * stored + (1 - beta2) * new * new).sqrt())
                else:
                    stored.mul_(beta2).add_(new, alpha=1 - beta2)
            norms = [None] * len(params)
            for stored, part in zip(group["exp_avg_sq"], (halves, fulls)):
                for k, i in enumerate(part):
                    norms[i] = stored[k]
            beta3 = 1 - beta1 if group["grad_averaging"] else 1.0
            correction1 = 1 - beta1 ** step if group["bias_correction"] else 1.0
            correction2 = math.sqrt(1 - beta2 ** step) if group["bias_correction"] else 1.0
            lr, eps, decay = group["lr"], group["eps"], group["weight_decay"]
            regularise_inside = self.moment_mode == 0
            for param, grad, norm in zip(params, grads, norms):
                moment = self.state[param]["exp_avg"]
                # .float() of a float32 tensor is the tensor itself: updated in place
                p, g, m = param.float(), grad.float(), moment.float()
                denom = norm / correction2 + eps
                if regularise_inside:
                    m.mul_(beta1).add_(g / denom + decay * p, alpha=beta3)
                    p.sub_(m / correction1, alpha=lr)
                else:
                    m.mul_(beta1).add_(g, alpha=beta3)
                    p.sub_((m / correction1) / denom + decay * p, alpha=lr)
                if p is not param:
                    param.copy_(p)
                if m is not moment:
                    moment.copy_(m)
        return loss

"""Shims for ``transformers.optimization``: the ``AdamW`` optimizer that transformers 5
removed (deprecated since 4.20 in favour of ``torch.optim.AdamW``), which 2020-22
fine-tuning scripts build as ``AdamW(params, lr=..., correct_bias=False)``.

It is not ``torch.optim.AdamW``: transformers' own decays the weights *after* the Adam
step, by ``lr * weight_decay`` times the already-updated weights, its default ``eps`` is
1e-6, and ``correct_bias=False`` (BERT's TF recipe) skips the bias correction. Runs
resumed from 4.x checkpoints need the same update, so it is rebuilt here on today's
torch with 4.x's formula and state layout (``step``, ``exp_avg``, ``exp_avg_sq``).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

from compatfix.patching import restore_names
from compatfix.registry import Shim

_optimizer_class: Any = None


def adamw_class() -> type:
    """transformers 4.x's ``AdamW``, made once, on first use (torch is imported then)."""
    global _optimizer_class
    if _optimizer_class is None:
        _optimizer_class = _make_adamw()
    return _optimizer_class


def _make_adamw() -> type:
    import torch

    class AdamW(torch.optim.Optimizer):
        """transformers 4.x's Adam with weight decay fix (Loshchilov & Hutter): the decay
        ``p -= lr * weight_decay * p`` comes after the Adam step, and ``correct_bias=False``
        leaves out Adam's bias correction, as BERT did."""

        def __init__(
            self,
            params: Iterable[Any],
            lr: float = 1e-3,
            betas: tuple[float, float] = (0.9, 0.999),
            eps: float = 1e-6,
            weight_decay: float = 0.0,
            correct_bias: bool = True,
            no_deprecation_warning: bool = False,
        ) -> None:
            # no_deprecation_warning (4.20+) silenced 4.x's FutureWarning; there is none here.
            if lr < 0.0:
                raise ValueError(f"Invalid learning rate: {lr} - should be >= 0.0")
            if not 0.0 <= betas[0] < 1.0:
                raise ValueError(f"Invalid beta parameter: {betas[0]} - should be in [0.0, 1.0)")
            if not 0.0 <= betas[1] < 1.0:
                raise ValueError(f"Invalid beta parameter: {betas[1]} - should be in [0.0, 1.0)")
            if not 0.0 <= eps:
                raise ValueError(f"Invalid epsilon value: {eps} - should be >= 0.0")
            defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                        "correct_bias": correct_bias}
            super().__init__(params, defaults)

        @torch.no_grad()
        def step(self, closure: Callable[[], Any] | None = None) -> Any:
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad
                    if grad.is_sparse:
                        raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam instead")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["exp_avg"] = torch.zeros_like(p)
                        state["exp_avg_sq"] = torch.zeros_like(p)
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    state["step"] += 1
                    exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
                    denom = exp_avg_sq.sqrt().add_(group["eps"])
                    step_size = group["lr"]
                    if group["correct_bias"]:
                        bias_correction1 = 1.0 - beta1 ** state["step"]
                        bias_correction2 = 1.0 - beta2 ** state["step"]
                        step_size = step_size * math.sqrt(bias_correction2) / bias_correction1
                    p.addcdiv_(exp_avg, denom, value=-step_size)
                    # Decoupled decay, on the weights as the Adam step left them (4.x's order).
                    if group["weight_decay"] > 0.0:
                        p.add_(p, alpha=-group["lr"] * group["weight_decay"])
            return loss

    AdamW.__module__ = "transformers.optimization"
    AdamW.__qualname__ = "AdamW"
    return AdamW


def restore_adamw(module) -> None:
    restore_names(module, {"AdamW": adamw_class()}, "transformers.optimization.AdamW")


SHIMS = (
    Shim(
        "transformers.optimization.AdamW",
        targets=["transformers.optimization"],
        requires={"transformers": ">=4.50"},
        apply=restore_adamw,
        restores=["AdamW"],
        broke="transformers 4.50 removed transformers.optimization.AdamW (deprecated in 4.20), the "
        "optimizer of 2020-22 fine-tuning scripts",
        summary="restore 4.x's AdamW (weight decay after the Adam step, eps=1e-6, correct_bias) on today's torch",
        replacement="torch.optim.AdamW (it decays before the step and has no correct_bias; eps defaults to 1e-8)",
        rewrites={"transformers.optimization.AdamW": "torch.optim.AdamW (decay order, eps and correct_bias differ)"},
    ),
)

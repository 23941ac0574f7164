"""``apex.parallel.LARC``: layer-wise adaptive rate control around any torch optimizer
(You, Gitman and Ginsburg, "Large Batch Training of Convolutional Networks",
arXiv:1708.03888), as SwAV, VISSL-era and other self-supervised code use it:
``LARC(optimizer=SGD(...), trust_coefficient=0.001, clip=False)``.

``LARC(optimizer, trust_coefficient=0.02, clip=True, eps=1e-8)`` keeps ``optimizer`` as
``.optim``. Its ``step()`` changes every gradient before the wrapped optimizer's step: for a
parameter ``w`` with gradient ``g`` in a group with learning rate ``lr`` and weight decay
``wd``, when neither ``||w||`` nor ``||g||`` is 0,

    local = trust_coefficient * ||w|| / (||g|| + wd * ||w|| + eps)
    g <- (g + wd * w) * factor,   factor = min(local / lr, 1) if clip else local

so the step's rate is ``min(lr, local)`` with ``clip`` and ``lr * local`` without. The
group's weight decay is folded into the gradient that way, so the wrapped optimizer steps
with weight decay 0; each group's own value is put back afterwards. A parameter with a zero
norm or a zero gradient keeps its gradient, weight decay not added (apex's rule).

Everything else is the wrapped optimizer's: ``param_groups``, ``state``, ``state_dict()``
(so checkpoints hold the plain optimizer's state dict, as with apex), ``load_state_dict``,
``zero_grad``, ``add_param_group``. LARC is not a ``torch.optim.Optimizer`` subclass, as in
apex; ``apex.amp`` accepts it where it accepts an optimizer.
"""

from __future__ import annotations

import torch

__all__ = ["LARC"]


class LARC:
    """Layer-wise adaptive rate control around ``optimizer`` (see the module docstring)."""

    def __init__(self, optimizer: torch.optim.Optimizer, trust_coefficient: float = 0.02, clip: bool = True,
                 eps: float = 1e-8) -> None:
        self.optim = optimizer
        self.trust_coefficient = trust_coefficient
        self.clip = clip
        self.eps = eps

    # Pickling and printing show the wrapped optimizer, as apex's LARC does.
    def __getstate__(self):
        return self.optim.__getstate__()

    def __setstate__(self, state) -> None:
        self.optim.__setstate__(state)

    def __repr__(self) -> str:
        return repr(self.optim)

    @property
    def state(self):
        return self.optim.state

    @property
    def param_groups(self) -> list:
        return self.optim.param_groups

    @param_groups.setter
    def param_groups(self, value: list) -> None:
        self.optim.param_groups = value

    def state_dict(self) -> dict:
        return self.optim.state_dict()

    def load_state_dict(self, state_dict: dict) -> None:
        self.optim.load_state_dict(state_dict)

    def zero_grad(self, *args, **kwargs) -> None:
        self.optim.zero_grad(*args, **kwargs)

    def add_param_group(self, param_group: dict) -> None:
        self.optim.add_param_group(param_group)

    def step(self) -> None:
        groups = self.optim.param_groups
        decays = [group.get("weight_decay", 0) for group in groups]
        with torch.no_grad():
            for group, decay in zip(groups, decays):
                group["weight_decay"] = 0
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    weight_norm = torch.linalg.vector_norm(param)
                    grad_norm = torch.linalg.vector_norm(param.grad)
                    if weight_norm == 0 or grad_norm == 0:
                        continue
                    local = self.trust_coefficient * weight_norm / (grad_norm + decay * weight_norm + self.eps)
                    factor = torch.clamp(local / group["lr"], max=1) if self.clip else local
                    param.grad.add_(param, alpha=decay).mul_(factor)
        try:
            self.optim.step()
        finally:
            for group, decay in zip(groups, decays):
                group["weight_decay"] = decay

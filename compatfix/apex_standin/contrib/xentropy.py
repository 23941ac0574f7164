"""``apex.contrib.xentropy``: ``SoftmaxCrossEntropyLoss``, apex's fused softmax cross
entropy with label smoothing, in torch. ``SoftmaxCrossEntropyLoss.apply(logits, labels,
smoothing=0.0, padding_idx=0, half_to_float=False)`` returns one unreduced loss per row,
(1 - smoothing) * (lse - x[label]) + smoothing * (lse - mean(x)) as apex's kernel computes
it (in float32), 0 where the label is ``padding_idx``; float32 for float16 logits when
``half_to_float``, else the logits' dtype. The backward is the kernel's: softmax minus the
smoothed one-hot target, times the incoming gradient, 0 on padding rows."""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["SoftmaxCrossEntropyLoss"]


class SoftmaxCrossEntropyLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, logits: torch.Tensor, labels: torch.Tensor, smoothing: float = 0.0,
                padding_idx: int = 0, half_to_float: bool = False) -> torch.Tensor:
        x = logits.float()
        log_sum_exp = torch.logsumexp(x, dim=-1)
        picked = x.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
        losses = (1 - smoothing) * (log_sum_exp - picked) + smoothing * (log_sum_exp - x.mean(-1))
        losses = losses.masked_fill(labels == padding_idx, 0)
        ctx.save_for_backward(logits, log_sum_exp, labels)
        ctx.smoothing, ctx.padding_idx = smoothing, padding_idx
        return losses if half_to_float and logits.dtype == torch.float16 else losses.to(logits.dtype)

    @staticmethod
    def backward(ctx: Any, grad_loss: torch.Tensor) -> tuple:
        logits, log_sum_exp, labels = ctx.saved_tensors
        grad_loss = grad_loss.float().masked_fill(labels == ctx.padding_idx, 0)
        probabilities = torch.exp(logits.float() - log_sum_exp.unsqueeze(-1))
        target = torch.full_like(probabilities, ctx.smoothing / logits.shape[-1])
        target.scatter_add_(-1, labels.unsqueeze(-1), torch.full_like(target[..., :1], 1 - ctx.smoothing))
        grad_logits = (probabilities - target) * grad_loss.unsqueeze(-1)
        return grad_logits.to(logits.dtype), None, None, None, None

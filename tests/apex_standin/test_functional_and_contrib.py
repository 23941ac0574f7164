"""The stand-ins for apex's functional layer norms (apex.normalization.fused_layer_norm),
apex.contrib.xentropy's SoftmaxCrossEntropyLoss and apex.multi_tensor_apply, checked
against formulas written out here: layer/RMS norm from their definitions, and the
label-smoothed cross entropy of apex's kernel (csrc/xentropy) from an explicit
log-sum-exp, its gradient taken by autograd through that hand-written formula."""

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only

from compatfix.apex_standin import multi_tensor_apply, normalization
from compatfix.apex_standin.contrib.xentropy import SoftmaxCrossEntropyLoss


def _layer_norm_by_hand(x, weight, bias, eps):
    x = x.double()
    mean = x.mean(-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(variance + eps) * weight.double() + bias.double()


def test_functional_layer_and_rms_norms():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 8, generator=generator)
    weight, bias = torch.rand(8, generator=generator) + 0.5, torch.randn(8, generator=generator)
    out = normalization.fused_layer_norm_affine(x, weight, bias, (8,), 1e-6)
    assert torch.allclose(out.double(), _layer_norm_by_hand(x, weight, bias, 1e-6), atol=1e-5)
    plain = normalization.fused_layer_norm(x, [8])
    assert torch.allclose(plain.double(), _layer_norm_by_hand(x, torch.ones(8), torch.zeros(8), 1e-6), atol=1e-5)
    rms = normalization.fused_rms_norm_affine(x, weight, (8,), 1e-6)
    by_hand = x.double() / torch.sqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6) * weight.double()
    assert torch.allclose(rms.double(), by_hand, atol=1e-5)
    assert torch.allclose(normalization.fused_rms_norm(x, (8,)).double(), by_hand / weight.double(), atol=1e-5)
    # FusedLayerNorm's functions answer in the input's dtype, the mixed ones in the weight's
    half = x.half()
    assert normalization.fused_layer_norm_affine(half, weight, bias, (8,)).dtype == torch.float16
    assert normalization.mixed_dtype_fused_layer_norm_affine(half, weight, bias, (8,)).dtype == torch.float32
    assert normalization.mixed_dtype_fused_rms_norm_affine(half, weight.half(), (8,)).dtype == torch.float16
    # gradients flow to the input and the affine parameters
    weight.requires_grad_(True)
    normalization.fused_layer_norm_affine(x.requires_grad_(True), weight, bias, (8,)).sum().backward()
    assert x.grad is not None and weight.grad is not None


def _xentropy_by_hand(logits, labels, smoothing, padding_idx):
    x = logits.double()
    top = x.max(-1, keepdim=True).values
    log_sum_exp = (top + torch.log(torch.exp(x - top).sum(-1, keepdim=True))).squeeze(-1)
    picked = torch.stack([x[i, label] for i, label in enumerate(labels.tolist())])
    losses = (1 - smoothing) * (log_sum_exp - picked) + smoothing * (log_sum_exp - x.mean(-1))
    return torch.where(labels == padding_idx, torch.zeros_like(losses), losses)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_softmax_cross_entropy_loss_and_its_gradient(smoothing):
    generator = torch.Generator().manual_seed(1)
    logits = torch.randn(6, 11, generator=generator, dtype=torch.float64).float().requires_grad_(True)
    labels = torch.tensor([3, 0, 10, 5, 0, 7])  # rows 1 and 4 are padding (padding_idx=0)
    losses = SoftmaxCrossEntropyLoss.apply(logits, labels, smoothing, 0, False)
    expected = _xentropy_by_hand(logits.detach(), labels, smoothing, 0)
    assert losses.shape == (6,) and losses.dtype == torch.float32
    assert torch.allclose(losses.double(), expected, atol=1e-5) and losses[1] == 0 and losses[4] == 0
    weights = torch.arange(1.0, 7.0)
    (grad,) = torch.autograd.grad((losses * weights).sum(), logits)
    reference = logits.detach().double().requires_grad_(True)
    (expected_grad,) = torch.autograd.grad(
        (_xentropy_by_hand(reference, labels, smoothing, 0) * weights.double()).sum(), reference)
    assert torch.allclose(grad.double(), expected_grad, atol=1e-5)
    assert grad[1].abs().sum() == 0 and grad[4].abs().sum() == 0
    # the same as torch's own label-smoothed loss for the rows that are not padding
    torch_losses = torch.nn.functional.cross_entropy(logits.detach(), labels, label_smoothing=smoothing,
                                                     ignore_index=0, reduction="none")
    assert torch.allclose(losses.detach(), torch_losses, atol=1e-5)


def test_softmax_cross_entropy_loss_dtypes():
    logits, labels = torch.randn(4, 5).half(), torch.tensor([1, 2, 3, 4])
    assert SoftmaxCrossEntropyLoss.apply(logits, labels, 0.0, -1, True).dtype == torch.float32
    assert SoftmaxCrossEntropyLoss.apply(logits, labels, 0.0, -1, False).dtype == torch.float16


def test_multi_tensor_applier_says_its_kernels_are_not_there():
    applier = multi_tensor_apply.multi_tensor_applier
    assert applier.available is False and applier.chunk_size == 2048 * 32
    with pytest.raises(RuntimeError, match="MultiTensorApply is not available"):
        applier(lambda *args: None, torch.zeros(1, dtype=torch.int), [[torch.ones(2)]])

"""apex.optimizers, apex.normalization and apex.fp16_utils stand-ins, checked numerically:
FusedAdam/FusedSGD against torch's Adam(W)/SGD, FusedLAMB and FusedNovoGrad against
straightforward per-tensor formulas written here from the papers and apex's kernel
documentation, and apex's state layout (a real apex cannot be installed here: its
format is built by hand from apex/optimizers/fused_adam.py, NVIDIA/apex before cb65b8ed).
"""

import copy
import math

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only

import torch.nn as nn
import torch.nn.functional as F

from compatfix.apex_standin import fp16_utils, normalization, optimizers


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3))


def train(net, optimizer, steps=5):
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        data, target = torch.randn(9, 5, generator=generator), torch.randn(9, 3, generator=generator)
        optimizer.zero_grad()
        F.mse_loss(net(data), target).backward()
        optimizer.step()
    return [p.detach() for p in net.parameters()]


def close(a, b, atol=1e-6):
    return all(torch.allclose(x, y, atol=atol) for x, y in zip(a, b))


@pytest.mark.parametrize("adam_w_mode, reference", [(True, torch.optim.AdamW), (False, torch.optim.Adam)])
def test_fused_adam_matches_torch(adam_w_mode, reference):
    ours, theirs = model(), model()
    got = train(ours, optimizers.FusedAdam(ours.parameters(), lr=0.01, weight_decay=0.1, adam_w_mode=adam_w_mode))
    want = train(theirs, reference(theirs.parameters(), lr=0.01, weight_decay=0.1))
    assert close(got, want)


def test_fused_adam_defaults_to_adamw():
    ours, theirs = model(), model()
    got = train(ours, optimizers.FusedAdam(ours.parameters(), lr=0.01, weight_decay=0.1))
    assert close(got, train(theirs, torch.optim.AdamW(theirs.parameters(), lr=0.01, weight_decay=0.1)))


@pytest.mark.parametrize("options", [dict(), dict(momentum=0.9), dict(momentum=0.9, nesterov=True, weight_decay=0.01),
                                     dict(momentum=0.5, dampening=0.3, weight_decay=0.1)])
def test_fused_sgd_matches_torch(options):
    ours, theirs = model(), model()
    got = train(ours, optimizers.FusedSGD(ours.parameters(), lr=0.05, **options))
    assert close(got, train(theirs, torch.optim.SGD(theirs.parameters(), lr=0.05, **options)))


def lamb_reference(params, grads, states, step, lr, betas, eps, decay, max_grad_norm):
    """LAMB (You et al. 2019, Algorithm 2) with apex's global-norm clipping of the gradients
    and decoupled weight decay inside the trust-ratio update."""
    beta1, beta2 = betas
    global_norm = math.sqrt(sum(float(g.pow(2).sum()) for g in grads))
    divisor = global_norm / max_grad_norm if global_norm > max_grad_norm else 1.0
    for p, g, (m, v) in zip(params, grads, states):
        g = g / divisor
        m.mul_(beta1).add_((1 - beta1) * g)
        v.mul_(beta2).add_((1 - beta2) * g * g)
        m_hat, v_hat = m / (1 - beta1 ** step), v / (1 - beta2 ** step)
        r = m_hat / (v_hat.sqrt() + eps) + decay * p
        ratio = float(p.norm() / r.norm()) if decay and p.norm() > 0 and r.norm() > 0 else 1.0
        p.sub_(lr * ratio * r)


def novograd_reference(params, grads, states, norms, step, lr, betas, eps, decay):
    """NovoGrad (Ginsburg et al. 2019) as apex documents it: a per-layer second moment of
    the gradient norm, v = sqrt(b2 v^2 + (1 - b2) ||g||^2) (first step: ||g||), bias-
    corrected, and the weight decay added to the normalised update."""
    beta1, beta2 = betas
    for i, (p, g, m) in enumerate(zip(params, grads, states)):
        n = float(g.norm())
        norms[i] = n if step == 1 else math.sqrt(beta2 * norms[i] ** 2 + (1 - beta2) * n * n)
        m.mul_(beta1).add_((1 - beta1) * g)
        m_hat = m / (1 - beta1 ** step)
        v_hat = norms[i] / math.sqrt(1 - beta2 ** step)
        p.sub_(lr * (m_hat / (v_hat + eps) + decay * p))


@pytest.mark.parametrize("kind", ["lamb", "novograd"])
def test_lamb_and_novograd_match_the_reference_formulas(kind):
    ours, theirs = model(), model()
    options = dict(lr=0.01, betas=(0.9, 0.99), weight_decay=0.05)
    if kind == "lamb":
        optimizer = optimizers.FusedLAMB(ours.parameters(), eps=1e-6, max_grad_norm=0.5, **options)
    else:
        optimizer = optimizers.FusedNovoGrad(ours.parameters(), eps=1e-8, **options)
    got = train(ours, optimizer)
    params = list(theirs.parameters())
    states = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    norms = [0.0] * len(params)
    generator = torch.Generator().manual_seed(1)
    for step in range(1, 6):
        data, target = torch.randn(9, 5, generator=generator), torch.randn(9, 3, generator=generator)
        theirs.zero_grad()
        F.mse_loss(theirs(data), target).backward()
        with torch.no_grad():
            grads = [p.grad.clone() for p in params]
            if kind == "lamb":
                lamb_reference(params, grads, states, step, eps=1e-6, max_grad_norm=0.5, lr=0.01, betas=(0.9, 0.99),
                               decay=0.05)
            else:
                novograd_reference(params, grads, [m for m, _ in states], norms, step, eps=1e-8, lr=0.01,
                                   betas=(0.9, 0.99), decay=0.05)
    assert close(got, [p.detach() for p in params], atol=1e-5)
    if kind == "novograd":  # apex keeps [fp16 tensors' norms, fp32 tensors' norms] in the group
        half_norms, full_norms = optimizer.param_groups[0]["exp_avg_sq"]
        assert half_norms.numel() == 0 and torch.allclose(full_norms, torch.tensor(norms), atol=1e-5)


def test_fused_adam_state_layout_is_apexs_and_a_saved_state_resumes():
    net = model()
    optimizer = optimizers.FusedAdam(net.parameters(), lr=0.01)
    train(net, optimizer, steps=3)
    state = optimizer.state_dict()
    # apex: the step count lives in the param group; per-parameter exp_avg / exp_avg_sq.
    assert state["param_groups"][0]["step"] == 3
    assert set(state["param_groups"][0]) >= {"lr", "bias_correction", "betas", "eps", "weight_decay", "step"}
    assert all(set(s) == {"exp_avg", "exp_avg_sq"} for s in state["state"].values())
    # A state as real apex writes it (plain dicts, float32 moments, int step) resumes.
    apex_state = {
        "state": {i: {"exp_avg": s["exp_avg"].clone(), "exp_avg_sq": s["exp_avg_sq"].clone()}
                  for i, s in state["state"].items()},
        "param_groups": [{"lr": 0.01, "bias_correction": True, "betas": (0.9, 0.999), "eps": 1e-08,
                          "weight_decay": 0.0, "step": 3, "params": list(range(4))}],
    }
    resumed = copy.deepcopy(net)
    resumed_optimizer = optimizers.FusedAdam(resumed.parameters(), lr=0.01)
    resumed_optimizer.load_state_dict(apex_state)
    assert close(train(resumed, resumed_optimizer, 2), train(net, optimizer, 2))


def test_half_parameters_are_updated_in_float32():
    half = nn.Linear(3, 2).half()
    full = copy.deepcopy(half).float()
    grads = torch.randn(2, 3)
    for net in (half, full):
        net.weight.grad = grads.to(net.weight.dtype)
    optimizers.FusedAdam([half.weight], lr=0.1).step()
    optimizers.FusedAdam([full.weight], lr=0.1).step()
    assert half.weight.dtype == torch.float16
    assert torch.allclose(half.weight.float(), full.weight, atol=1e-3)


def test_zero_grad_follows_set_grad_none():
    net = model()
    for cls, expect_none in ((optimizers.FusedAdam, True), (optimizers.FusedSGD, False)):
        optimizer = cls(net.parameters(), lr=0.1)
        net(torch.ones(1, 5)).sum().backward()
        optimizer.zero_grad()
        assert all((p.grad is None) == expect_none for p in net.parameters())


def test_fused_norms_are_torchs_with_apexs_signature():
    x = torch.randn(4, 6)
    layer = normalization.FusedLayerNorm(6, eps=1e-5)
    assert isinstance(layer, nn.LayerNorm) and set(layer.state_dict()) == {"weight", "bias"}
    assert torch.allclose(layer(x), F.layer_norm(x, (6,)), atol=1e-6)
    rms = normalization.FusedRMSNorm([6], eps=1e-5)
    assert set(rms.state_dict()) == {"weight"}
    assert torch.allclose(rms(x), x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5), atol=1e-6)
    assert normalization.FusedLayerNorm(6, elementwise_affine=False).weight is None


def test_fp16_utils_network_to_half_and_fp16_optimizer():
    net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    half = fp16_utils.network_to_half(net)
    assert half[1][0].weight.dtype == torch.float16 and half[1][1].weight.dtype == torch.float32
    torch.manual_seed(0)
    fp16_model = nn.Linear(4, 2).half()
    reference = copy.deepcopy(fp16_model).float()
    optimizer = fp16_utils.FP16_Optimizer(torch.optim.SGD(fp16_model.parameters(), lr=0.1), static_loss_scale=128.0)
    data = torch.randn(8, 4)
    optimizer.zero_grad()
    optimizer.backward(fp16_model(data.half()).float().pow(2).mean())
    optimizer.step()
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    reference(data).pow(2).mean().backward()
    reference_optimizer.step()
    assert torch.allclose(fp16_model.weight.float(), reference.weight, atol=2e-3)
    assert set(optimizer.state_dict()) == {"loss_scaler", "dynamic_loss_scale", "overflow",
                                           "first_closure_call_this_step", "optimizer_state_dict", "fp32_from_fp16"}
    dynamic = fp16_utils.FP16_Optimizer(torch.optim.SGD(nn.Linear(2, 2).half().parameters(), lr=0.1),
                                        dynamic_loss_scale=True, verbose=False)
    assert dynamic.loss_scale == 2 ** 32

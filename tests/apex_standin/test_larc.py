"""apex.parallel.LARC stand-in, checked against the LARC paper's local learning rate
(arXiv:1708.03888) worked out by hand here, and apex.amp's acceptance of a LARC object
where it takes an optimizer (apex's _initialize and scale_loss test for LARC by type)."""

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only

from compatfix.apex_standin import amp
from compatfix.apex_standin.parallel.LARC import LARC


def stepped(weight, grad, clip, lr=0.5, weight_decay=0.1, trust=0.02, **group):
    param = torch.nn.Parameter(torch.tensor(weight))
    optimizer = LARC(torch.optim.SGD([param], lr=lr, weight_decay=weight_decay, **group), trust_coefficient=trust,
                     clip=clip)
    param.grad = torch.tensor(grad)
    optimizer.step()
    return param.detach().tolist(), optimizer


# w = (3, 4): |w| = 5; g = (0.6, 0.8): |g| = 1. local = 0.02 * 5 / (1 + 0.1 * 5) = 1/15.
# The gradient with weight decay folded in is g + 0.1 w = (0.9, 1.2).
def test_scaling_mode_multiplies_the_rate_by_the_local_rate():
    weight, optimizer = stepped([3.0, 4.0], [0.6, 0.8], clip=False)
    assert weight == pytest.approx([3 - 0.5 * 0.9 / 15, 4 - 0.5 * 1.2 / 15])
    assert optimizer.param_groups[0]["weight_decay"] == 0.1


def test_clipping_mode_takes_the_smaller_of_the_two_rates():
    # local / lr = (1/15) / 0.5 = 2/15 < 1: the step's rate is the local rate.
    weight, _ = stepped([3.0, 4.0], [0.6, 0.8], clip=True)
    assert weight == pytest.approx([3 - 0.9 / 15, 4 - 1.2 / 15])
    # lr = 0.01 is below the local rate: the factor is 1, a plain SGD step with weight decay.
    weight, _ = stepped([3.0, 4.0], [0.6, 0.8], clip=True, lr=0.01)
    assert weight == pytest.approx([3 - 0.01 * 0.9, 4 - 0.01 * 1.2])


def test_zero_norms_leave_the_gradient_alone_and_skip_weight_decay():
    weight, _ = stepped([0.0, 0.0], [0.6, 0.8], clip=False)
    assert weight == pytest.approx([-0.5 * 0.6, -0.5 * 0.8])
    weight, _ = stepped([3.0, 4.0], [0.0, 0.0], clip=False)
    assert weight == pytest.approx([3.0, 4.0])


def test_a_group_without_weight_decay_and_the_delegated_optimizer_api():
    param = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
    inner = torch.optim.SGD([param], lr=0.5, momentum=0.9)
    optimizer = LARC(inner)
    assert optimizer.param_groups is inner.param_groups and optimizer.state is inner.state
    assert repr(optimizer) == repr(inner)
    param.grad = torch.tensor([0.6, 0.8])
    optimizer.step()
    assert optimizer.state_dict() == inner.state_dict()
    optimizer.zero_grad()
    assert param.grad is None
    extra = torch.nn.Parameter(torch.ones(1))
    optimizer.add_param_group({"params": [extra]})
    assert len(inner.param_groups) == 2


def test_amp_initialize_and_scale_loss_take_a_larc_object():
    model = torch.nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[3.0, 4.0]]))
    optimizer = LARC(torch.optim.SGD(model.parameters(), lr=0.5, weight_decay=0.1), clip=False)
    model, same = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    assert same is optimizer
    loss = model(torch.tensor([[0.6, 0.8]])).sum()
    with amp.scale_loss(loss, optimizer) as scaled:
        assert scaled.item() == pytest.approx(loss.item() * 2.0 ** 16)
        scaled.backward()
    assert model.weight.grad.flatten().tolist() == pytest.approx([0.6, 0.8])  # unscaled
    optimizer.step()
    # local = 0.02 * 5 / 1.5 = 1/15 (apex's default trust coefficient)
    assert model.weight.detach().flatten().tolist() == pytest.approx([3 - 0.5 * 0.9 / 15, 4 - 0.5 * 1.2 / 15])

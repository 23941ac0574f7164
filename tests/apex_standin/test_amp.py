"""apex.amp stand-in (compatfix.apex_standin.amp): opt levels on the CPU, apex's dynamic
loss scaling, unscaled gradients for clipping, apex's error texts and its state format.

Numerics run in this process on the stand-in module itself; the import path (``from
apex import amp`` with compatfix on and off) is tested in tests/shims/apex/test_apex.py. A real
apex cannot be installed here (it needs a CUDA build), so apex's formats are built by
hand from its source (apex/amp/frontend.py, scaler.py; NVIDIA/apex before cb65b8ed).
"""

import copy

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only

import torch.nn as nn
import torch.nn.functional as F

from compatfix.apex_standin import amp
from support import run_python

torch.manual_seed(0)


def tiny(bn=False):
    torch.manual_seed(0)
    layers = [nn.Linear(4, 8)] + ([nn.BatchNorm1d(8)] if bn else []) + [nn.ReLU(), nn.Linear(8, 2)]
    return nn.Sequential(*layers)


def batch():
    generator = torch.Generator().manual_seed(3)
    return torch.randn(16, 4, generator=generator), torch.randn(16, 2, generator=generator)


def reference_grads(model, data, target):
    model = copy.deepcopy(model)
    F.mse_loss(model(data), target).backward()
    return [p.grad for p in model.parameters()]


def setup(opt_level, bn=False, **kwargs):
    model = tiny(bn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    reference = copy.deepcopy(model)
    kwargs.setdefault("verbosity", 0)
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level, **kwargs)
    return model, optimizer, reference


def backward(model, optimizer, data, target, **kwargs):
    loss = F.mse_loss(model(data), target)
    with amp.scale_loss(loss, optimizer, **kwargs) as scaled:
        scaled.backward()
    return loss, scaled


@pytest.mark.parametrize("opt_level, scale", [("O0", 1.0), ("O1", 2.0 ** 16), ("O2", 2.0 ** 16), ("O3", 1.0)])
def test_opt_levels_on_the_cpu_keep_float32_and_give_true_gradients(opt_level, scale):
    model, optimizer, reference = setup(opt_level, bn=True)
    data, target = batch()
    loss, scaled = backward(model, optimizer, data, target)
    # The CPU rule: mixed precision on the CPU is float32 (as CPU mode's torch.cuda.amp).
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert model(data).dtype == torch.float32
    assert amp.state_dict() == {"loss_scaler0": {"loss_scale": scale, "unskipped": 1 if scale != 1.0 else 0}}
    assert torch.allclose(scaled, loss.float() * scale)
    for got, want in zip(amp.master_params(optimizer), reference_grads(reference, data, target)):
        assert torch.allclose(got.grad, want, atol=1e-6)


def test_o2_with_an_explicit_half_cast_keeps_float32_master_weights():
    model, optimizer, _ = setup("O2", bn=True, cast_model_type=torch.float16)
    linear, norm = model[0], model[1]
    assert linear.weight.dtype == torch.float16 and norm.weight.dtype == torch.float32  # keep_batchnorm_fp32
    masters = list(amp.master_params(optimizer))
    assert {p.dtype for p in masters} == {torch.float32}
    assert all(p is not linear.weight for p in masters)
    data, target = batch()
    assert model(data).dtype == torch.float32  # outputs cast back, inputs cast to half
    backward(model, optimizer, data, target)
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in masters)
    before = linear.weight.detach().clone()
    optimizer.step()
    assert not torch.equal(before, linear.weight)
    assert torch.equal(linear.weight, masters[0].detach().half())  # copied back into the model
    assert {v.dtype for v in model.state_dict().values() if v.is_floating_point()} == {torch.float32}
    optimizer.zero_grad()
    assert all(p.grad is None for p in model.parameters() if p.dtype == torch.float16)


def test_overflow_skips_the_step_and_halves_the_scale(capsys):
    model, optimizer, _ = setup("O1", verbosity=1)
    data, target = batch()
    loss = F.mse_loss(model(data), target)
    with amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
        model[0].weight.grad[0, 0] = float("nan")
    before = [p.detach().clone() for p in model.parameters()]
    optimizer.step()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert amp.state_dict()["loss_scaler0"] == {"loss_scale": 2.0 ** 15, "unskipped": 0}
    assert "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0" in capsys.readouterr().out
    optimizer.zero_grad()
    backward(model, optimizer, data, target)
    optimizer.step()  # the next clean step runs
    assert not all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert amp.state_dict()["loss_scaler0"] == {"loss_scale": 2.0 ** 15, "unskipped": 1}


def test_scale_grows_after_2000_clean_steps_within_its_bounds():
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0, max_loss_scale=2.0 ** 17)
    data = torch.ones(1, 2)
    scales = []
    for _ in range(4001):
        optimizer.zero_grad()
        with amp.scale_loss(model(data).sum(), optimizer) as scaled:
            scaled.backward()
        optimizer.step()
        scales.append(amp.state_dict()["loss_scaler0"]["loss_scale"])
    assert scales[1998] == 2.0 ** 16 and scales[1999] == 2.0 ** 17  # doubled at the 2000th clean step
    assert scales[3999] == 2.0 ** 17 == scales[4000]  # capped by max_loss_scale


def test_min_loss_scale_is_a_floor():
    model, optimizer, _ = setup("O1", min_loss_scale=2.0 ** 15)
    data, target = batch()
    for _ in range(3):
        with amp.scale_loss(F.mse_loss(model(data), target), optimizer) as scaled:
            scaled.backward()
            model[0].bias.grad.fill_(float("inf"))
        optimizer.step()
    assert amp.state_dict()["loss_scaler0"]["loss_scale"] == 2.0 ** 15


def test_clipping_master_params_sees_unscaled_gradients():
    model, optimizer, reference = setup("O1")
    data, target = batch()
    backward(model, optimizer, data, target)
    norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1e9)
    want = torch.linalg.vector_norm(torch.stack([g.norm() for g in reference_grads(reference, data, target)]))
    assert torch.allclose(norm, want, rtol=1e-5)


def test_gradient_accumulation_and_delay_unscale():
    data, target = batch()
    for delay in (False, True):
        model, optimizer, reference = setup("O1")
        backward(model, optimizer, data[:8], target[:8], delay_unscale=delay)
        if delay:  # still scaled until a later scale_loss without delay_unscale
            first = reference_grads(reference, data[:8], target[:8])
            assert torch.allclose(model[0].weight.grad, first[0] * 2.0 ** 16, rtol=1e-4)
        backward(model, optimizer, data[8:], target[8:])
        want = [a + b for a, b in zip(reference_grads(reference, data[:8], target[:8]),
                                      reference_grads(reference, data[8:], target[8:]))]
        for got, expected in zip(model.parameters(), want):
            assert torch.allclose(got.grad, expected, atol=1e-6)


def test_lists_and_several_losses():
    models = [tiny(), tiny()]
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in models]
    got_models, got_optimizers = amp.initialize(models, optimizers, opt_level="O1", num_losses=2, verbosity=0)
    assert isinstance(got_models, list) and isinstance(got_optimizers, list)
    single, opt = amp.initialize(tiny(), [torch.optim.SGD(tiny().parameters(), lr=0.1)], verbosity=0)
    assert isinstance(single, nn.Module) and isinstance(opt, list)
    assert isinstance(amp.initialize(tiny(), verbosity=0), nn.Module)
    models, optimizers = amp.initialize([tiny(), tiny()], [torch.optim.SGD(tiny().parameters(), lr=1)],
                                        opt_level="O1", num_losses=2, verbosity=0)
    data, target = batch()
    with amp.scale_loss(F.mse_loss(models[0](data), target), optimizers[0], loss_id=1) as scaled:
        scaled.backward()
    assert set(amp.state_dict()) == {"loss_scaler0", "loss_scaler1"}
    assert amp.state_dict()["loss_scaler1"]["unskipped"] == 1 and amp.state_dict()["loss_scaler0"]["unskipped"] == 0


def test_disabled_amp_changes_nothing():
    model = tiny()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    assert amp.initialize(model, optimizer, enabled=False) == (model, optimizer)
    loss = model(batch()[0]).sum()
    with amp.scale_loss(loss, optimizer) as scaled:
        assert scaled is loss


def test_apex_error_texts():
    with pytest.raises(RuntimeError, match=r"Unexpected optimization level O4\. Options are 'O0', 'O1', 'O2', 'O3'"):
        amp.initialize(tiny(), opt_level="O4", verbosity=0)
    with pytest.raises(RuntimeError, match=r"Incoming model is an instance of torch\.nn\.parallel\.DataParallel\. "
                                           r"Parallel wrappers should only be applied to the model\(s\) AFTER"):
        amp.initialize(nn.DataParallel(tiny()), opt_level="O1", verbosity=0)
    with pytest.raises(RuntimeError, match="With opt_level O1, batchnorm functions are automatically patched"):
        amp.initialize(tiny(), opt_level="O1", keep_batchnorm_fp32=True, verbosity=0)
    with pytest.raises(RuntimeError, match="When using amp.initialize, you do not need to call .half"):
        amp.initialize(tiny().half(), opt_level="O1", verbosity=0)


def test_scale_loss_before_initialize_raises_apexs_error():
    # A fresh process: amp state is process-wide, as in apex.
    result = run_python(code="""
        import torch
        from compatfix.apex_standin import amp
        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        with amp.scale_loss(model(torch.ones(1, 2)).sum(), optimizer) as scaled:
            scaled.backward()
        """, compatfix=False)
    assert ("RuntimeError: Invoked 'with amp.scale_loss`, but internal Amp state has not been initialized.  "
            "model, optimizer = amp.initialize(model, optimizer, opt_level=...) must be called before "
            "`with amp.scale_loss`.") in result.stderr


def apex_format(scale, unskipped):
    # apex/amp/frontend.py state_dict(): an OrderedDict of one plain dict per loss scaler.
    from collections import OrderedDict

    return OrderedDict([("loss_scaler0", {"loss_scale": scale, "unskipped": unskipped})])


def test_state_dict_round_trip_in_apexs_format():
    model, optimizer, _ = setup("O1")
    amp.load_state_dict(apex_format(1024.0, 1999))  # as real apex wrote it
    assert amp._amp_state.loss_scalers[0].loss_scale() == 1024.0
    data, target = batch()
    loss, scaled = backward(model, optimizer, data, target)
    assert torch.allclose(scaled, loss * 1024.0)  # the resumed run continues with the saved scale
    saved = amp.state_dict()
    assert saved == apex_format(2048.0, 0)  # the 2000th clean step doubled it
    assert type(saved["loss_scaler0"]["loss_scale"]) is float and type(saved["loss_scaler0"]["unskipped"]) is int
    setup("O1")
    amp.load_state_dict(saved)
    assert amp.state_dict() == saved
    with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "scaler"'):
        amp.load_state_dict({"loss_scaler0": {"loss_scale": 1.0, "unskipped": 0}, "scaler": {}})


def test_registered_and_decorated_functions_pass_through_without_casts():
    calls = []

    @amp.float_function
    def custom(x):
        calls.append(x.dtype)
        return x

    class Namespace:
        @staticmethod
        def op(x):
            return x * 2

    amp.register_half_function(Namespace, "op")
    with pytest.raises(ValueError, match="No function named missing in module"):
        amp.register_float_function(Namespace, "missing")
    setup("O1")  # CPU: float32, so nothing is cast
    assert custom(torch.ones(1)).dtype == torch.float32 and calls == [torch.float32]
    assert Namespace.op(torch.ones(1)).dtype == torch.float32


def test_o1_on_a_cuda_model_turns_cuda_autocast_on_and_steps_without_it():
    # No GPU here: the model's parameters pretend to be CUDA tensors (Tensor.is_cuda), so
    # this checks the state O1 sets up on a GPU, not float16 numerics.
    result = run_python(code="""
        import torch
        from compatfix.apex_standin import amp
        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        is_cuda = torch.Tensor.is_cuda
        torch.Tensor.is_cuda = property(lambda self: True)
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
        torch.Tensor.is_cuda = is_cuda
        seen = [torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda") == torch.float16]
        step = optimizer._amp_stash.step
        optimizer._amp_stash.step = lambda *a, **k: seen.append(torch.is_autocast_enabled("cuda"))
        with amp.scale_loss(model(torch.ones(3, 4)).sum(), optimizer) as scaled:
            scaled.backward()
        optimizer.step()
        with amp.disable_casts():
            seen.append(torch.is_autocast_enabled("cuda"))
        seen.append(torch.is_autocast_enabled("cuda"))
        amp.initialize(torch.nn.Linear(1, 1), opt_level="O0", verbosity=0)
        seen.append(torch.is_autocast_enabled("cuda"))
        print(seen)
        """, compatfix=False)
    assert result.stdout.split("\n")[0] == "[True, True, False, False, True, False]", result.stderr

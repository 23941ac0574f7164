"""CPU mode, single-process part (compatfix.cpu.torch, compatfix.cpu.torch.cuda): CUDA code runs on the CPU.

Each behaviour is checked twice in fresh interpreters on this CUDA-less machine: with
``COMPATFIX_DEVICE=cpu`` the snippet must print OK, and with compatfix on but the mode
off it must fail with torch's own CUDA error, which proves the test exercises the mode.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import CUDA_ERROR, FIXTURES, clean_env, cpu_env, on_and_off, run_python

FIXTURES = os.path.join(FIXTURES, "cpu_device")



# --- the mode off ---------------------------------------------------------------------


def test_mode_off_loads_and_changes_nothing():
    result = run_python(
        code="""
        import sys, torch
        assert not [m for m in sys.modules if m.startswith("compatfix.cpu")], sys.modules.keys()
        assert torch.cuda.is_available() is False
        assert torch.Tensor.to.__class__.__name__ == "method_descriptor"
        assert torch.zeros.__class__.__name__ == "builtin_function_or_method"
        assert torch.nn.Module.cuda.__module__ == "torch.nn.modules.module"
        try:
            torch.ones(2).cuda()
        except Exception as exc:
            print(type(exc).__name__, exc)
        else:
            raise SystemExit("Tensor.cuda worked without a GPU")
        print("OK")
        """,
        env=clean_env(),
    )
    assert result.returncode == 0, result.stderr
    assert "OK" in result.stdout
    assert CUDA_ERROR.search(result.stdout), result.stdout


def test_mode_on_loads_the_device_shim_and_keeps_originals():
    result = run_python(
        code="""
        import sys, torch, compatfix
        import compatfix.cpu.torch as cpu_torch, compatfix.cpu.torch.cuda as cpu_cuda
        assert "compatfix.cpu.torch" in sys.modules and "compatfix.cpu.torch.cuda" in sys.modules
        assert compatfix.is_patched(torch.Tensor, "cuda") and compatfix.is_patched(torch, "zeros")
        original = compatfix.get_original(torch, "zeros")
        assert original.__class__.__name__ == "builtin_function_or_method"
        assert compatfix.get_original(torch.Tensor, "to").__class__.__name__ == "method_descriptor"
        before = (torch.zeros, torch.Tensor.to, torch.cuda.synchronize)
        [shim.apply(sys.modules[shim.targets[0]]) for shim in cpu_torch.SHIMS + cpu_cuda.SHIMS if shim.default]  # a second application changes nothing
        assert (torch.zeros, torch.Tensor.to, torch.cuda.synchronize) == before
        assert compatfix.get_original(torch, "zeros") is original
        # each patched factory is a function object of its own
        assert len({id(getattr(torch, n)) for n in cpu_torch.FACTORY_NAMES if hasattr(torch, n)}) == \\
            len([n for n in cpu_torch.FACTORY_NAMES if hasattr(torch, n)])
        # the precision policy's dtype wrapper sits on top of the device one (both on by default)
        import inspect
        assert torch.zeros.__name__ == "zeros" and inspect.unwrap(torch.zeros) is original
        print("OK")
        """,
        env=cpu_env(),
    )
    assert result.returncode == 0, result.stderr
    assert "OK" in result.stdout


# --- item 1: moves and device arguments -------------------------------------------------


def test_tensor_moves():
    on_and_off(
        """
        import torch
        x = torch.randn(2, 3)
        cpu = torch.device("cpu")
        for y in (x.cuda(), x.cuda(0), x.cuda(non_blocking=True), x.cuda(device=torch.device("cuda:0")),
                  x.to("cuda"), x.to("cuda:0"), x.to(torch.device("cuda:0")), x.to(torch.device("cuda", 0)),
                  x.to(0), x.to(device="cuda"), x.to("cuda", non_blocking=True)):
            assert y.device == cpu, y.device
            assert torch.equal(y, x)
        assert x.cuda() is x  # like a move to the device a tensor is already on
        assert x.to("cuda", torch.float64).dtype == torch.float64
        # a dtype next to the device is kept (float16 is float32 under CPU mode's precision
        # policy, tests/cpu/torch/test_half_as_float32.py, so float64 shows it here)
        assert x.to(torch.device("cuda"), dtype=torch.float64).dtype == torch.float64
        assert x.to(torch.float64).dtype == torch.float64  # untouched calls still work
        assert x.to(torch.zeros(1, dtype=torch.int32)).dtype == torch.int32
        assert x.to("cpu") is x
        assert x.cuda(memory_format=torch.preserve_format) is x
        img = torch.randn(1, 3, 4, 4).cuda(memory_format=torch.channels_last)
        assert img.is_contiguous(memory_format=torch.channels_last)
        p = torch.nn.Parameter(torch.ones(2))
        assert p.cuda() is p and p.pin_memory() is p and not p.is_pinned()
        print("OK")
        """
    )


def test_module_moves():
    on_and_off(
        """
        import torch
        for move in (lambda m: m.cuda(), lambda m: m.cuda(0), lambda m: m.to("cuda"),
                     lambda m: m.to(torch.device("cuda:0")), lambda m: m.to("cuda", torch.float64),
                     lambda m: m.to(device="cuda:0", dtype=torch.float64)):
            m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
            assert move(m) is m
            assert all(p.device.type == "cpu" for p in m.parameters())
            assert all(b.device.type == "cpu" for b in m.buffers())
            m(torch.randn(2, 3).cuda().to(next(m.parameters()).dtype)).sum().backward()
        # dtype-only moves are untouched (float64: float16 is float32 under the precision policy)
        assert torch.nn.Linear(2, 2).to(torch.float64).weight.dtype == torch.float64
        print("OK")
        """
    )


def test_data_parallel_wrapping_runs_the_module():
    on_and_off(
        """
        import torch
        model = torch.nn.DataParallel(torch.nn.Linear(3, 2)).cuda()
        assert model(torch.randn(4, 3).cuda()).shape == (4, 2)
        print("OK")
        """
    )


def test_factories_with_cuda_device():
    on_and_off(
        """
        import torch
        for dev in ("cuda", "cuda:0", "cuda:1", torch.device("cuda:0"), torch.device("cuda", 0), 0):
            made = [
                torch.zeros(2, 3, device=dev), torch.ones(2, device=dev), torch.empty(2, device=dev),
                torch.full((2,), 7.0, device=dev), torch.rand(2, device=dev), torch.randn(2, device=dev),
                torch.randint(0, 5, (3,), device=dev), torch.randperm(4, device=dev),
                torch.arange(4, device=dev), torch.linspace(0, 1, 5, device=dev), torch.eye(3, device=dev),
                torch.tensor([1, 2], device=dev), torch.as_tensor([1.0], device=dev),
                torch.empty_strided((2, 2), (2, 1), device=dev), torch.logspace(0, 1, 3, device=dev),
                torch.normal(0.0, 1.0, (2,), device=dev), torch.tril_indices(3, 3, device=dev),
                torch.hann_window(4, device=dev), torch.scalar_tensor(1.0, device=dev),
            ]
            x = torch.ones(2, 2)
            made += [torch.zeros_like(x, device=dev), torch.ones_like(x, device=dev),
                     torch.empty_like(x, device=dev), torch.full_like(x, 2, device=dev),
                     torch.rand_like(x, device=dev), torch.randn_like(x, device=dev),
                     torch.randint_like(x, 3, device=dev),
                     x.new_zeros(2, device=dev), x.new_ones(2, device=dev), x.new_empty(2, device=dev),
                     x.new_full((2,), 1.0, device=dev), x.new_tensor([1.0], device=dev)]
            assert all(t.device.type == "cpu" for t in made)
        assert torch.zeros(2).device.type == "cpu" and torch.zeros(2, device="cpu").device.type == "cpu"
        assert torch.full((2,), 3, device=None).tolist() == [3, 3]
        print("OK")
        """
    )


def test_timm_mixup_builds_cuda_targets_on_the_cpu():
    # timm 0.3.2's one_hot() defaults to device='cuda' (library code, not the script).
    on_and_off(
        """
        import torch
        from timm.data.mixup import Mixup
        mixup = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1, num_classes=10)
        x, target = torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))
        x, soft = mixup(x, target)
        assert soft.shape == (4, 10) and soft.device.type == "cpu"
        assert torch.allclose(soft.sum(1), torch.ones(4))
        print("OK")
        """
    )


# --- item 2: torch.cuda as one CPU device --------------------------------------------------


def test_cuda_queries_and_controls():
    on_and_off(
        """
        import torch
        assert torch.cuda.is_available() is True and torch.cuda.device_count() == 1
        torch.cuda.set_device(0)
        assert torch.cuda.current_device() == 0
        assert isinstance(torch.cuda.get_device_name(0), str)
        assert torch.cuda.get_device_properties(0).total_memory >= 0
        torch.cuda.synchronize(); torch.cuda.empty_cache()
        for stat in (torch.cuda.max_memory_allocated, torch.cuda.memory_allocated,
                     torch.cuda.max_memory_reserved, torch.cuda.memory_reserved):
            assert stat() == 0 and stat(0) == 0
        torch.cuda.reset_peak_memory_stats()
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.deterministic = True
        with torch.cuda.device(0):
            pass
        print("OK")
        """,
        off_error="AssertionError",  # torch.cuda.is_available() is False there
    )
    on_and_off(  # without the assert: the first real CUDA query fails
        """
        import torch
        torch.cuda.set_device(0); torch.cuda.synchronize(); torch.cuda.max_memory_allocated()
        print("OK")
        """
    )


def test_cuda_seeding_seeds_the_cpu_generator():
    on_and_off(
        """
        import torch
        torch.cuda.manual_seed(3); a = torch.rand(4)
        torch.manual_seed(3); b = torch.rand(4)
        torch.cuda.manual_seed_all(5); c = torch.rand(4)
        torch.manual_seed(5); d = torch.rand(4)
        assert torch.equal(a, b) and torch.equal(c, d)
        state = torch.cuda.get_rng_state(); e = torch.rand(2)
        torch.cuda.set_rng_state(state); assert torch.equal(torch.rand(2), e)
        torch.cuda.set_rng_state(torch.zeros(16, dtype=torch.uint8))  # a GPU (philox) state: ignored
        with torch.random.fork_rng():
            torch.rand(3)
        print("OK")
        """,
        off_error="AssertionError",  # torch.cuda.manual_seed alone does not seed the CPU
    )


def test_events_time_wall_clock_and_streams_do_nothing():
    on_and_off(
        """
        import time, torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(); time.sleep(0.05); end.record(); end.synchronize()
        ms = start.elapsed_time(end)
        assert 40 <= ms < 2000, ms
        assert end.query()
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            x = torch.ones(3).cuda(non_blocking=True)
        torch.cuda.current_stream().wait_stream(stream)
        x.record_stream(torch.cuda.current_stream())
        stream.synchronize()
        assert torch.cuda.default_stream() == torch.cuda.current_stream()
        print("OK")
        """
    )


def test_amp_autocast_runs_float32_and_gradscaler_passes_through():
    on_and_off(
        """
        import torch
        from torch.cuda.amp import GradScaler, autocast
        model = torch.nn.Linear(4, 2).cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.cuda.amp.GradScaler()
        before = model.weight.detach().clone()
        with autocast():
            out = model(torch.randn(3, 4).cuda())
            loss = out.float().pow(2).mean()
        assert out.dtype == torch.float32  # the documented rule: CUDA autocast runs float32
        scaled = scaler.scale(loss)
        assert scaled is loss and scaler.get_scale() == 1.0
        scaled.backward()
        scaler.unscale_(opt); scaler.step(opt); scaler.update()
        assert not torch.equal(before, model.weight)

        @autocast(enabled=True)
        def forward(x):
            return model(x)
        assert forward(torch.randn(1, 4)).dtype == torch.float32

        state = scaler.state_dict()
        assert set(state) == {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}
        GradScaler().load_state_dict(state)
        torch.save(state, "scaler.pt")
        print("OK")
        """,
        off_error=CUDA_ERROR,
    )


def test_gradscaler_state_loads_into_a_real_scaler(tmp_path):
    path = str(tmp_path / "scaler.pt")
    saved = run_python(
        code="import torch, sys; torch.save(torch.cuda.amp.GradScaler(init_scale=1024).state_dict(), %r); print('OK')" % path,
        env=cpu_env(),
    )
    assert saved.returncode == 0, saved.stderr
    loaded = run_python(
        code="""
        import torch
        state = torch.load(%r, weights_only=True)
        scaler = torch.amp.GradScaler("cpu")
        scaler.load_state_dict(state)
        assert scaler.get_scale() == 1024.0, scaler.get_scale()
        print("OK")
        """ % path,
        env=clean_env(),
    )
    assert loaded.returncode == 0, loaded.stderr
    assert "OK" in loaded.stdout


# --- item 3: jit, compile, serialization ------------------------------------------------


def test_timm_imports_and_torchscript_still_works(tmp_path):
    script = tmp_path / "script_me.py"  # TorchScript needs a source file
    script.write_text(textwrap.dedent("""
        import torch, timm
        from timm.models.layers.activations_jit import swish_jit
        assert torch.allclose(swish_jit(torch.ones(2)), torch.nn.functional.silu(torch.ones(2)))

        @torch.jit.script
        def make(x: torch.Tensor) -> torch.Tensor:
            return torch.zeros(3) + torch.ones_like(x) + torch.full([3], 2.0)

        assert make(torch.ones(3)).tolist() == [3.0, 3.0, 3.0]
        model = timm.create_model("resnet18", num_classes=5).cuda().eval()
        assert model(torch.randn(1, 3, 32, 32).cuda()).shape == (1, 5)
        print("OK")
        """))
    result = run_python(str(script), env=cpu_env())
    assert result.returncode == 0, result.stderr
    assert "OK" in result.stdout


COMPILE_CODE = """
import sys, torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        bias = torch.zeros(x.shape[0], 4, device="cuda")
        return self.fc(x.to("cuda")).relu() + bias + x.new_ones(4, device=torch.device("cuda", 0))

model = Net().cuda()
x = torch.randn(2, 8).cuda()
expected = model(x)
compiled = torch.compile(model, backend=sys.argv[1])
assert torch.allclose(compiled(x), expected) and torch.allclose(compiled(x + 1), model(x + 1))
print("OK")
"""


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_torch_compile_of_a_small_model(backend, tmp_path):
    script = tmp_path / "compile_me.py"
    script.write_text(COMPILE_CODE)
    result = run_python(str(script), backend, env=cpu_env(), timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "OK" in result.stdout


def test_checkpoints_cross_between_cpu_mode_and_a_normal_process(tmp_path):
    saved_on = str(tmp_path / "on.pth")
    saved_off = str(tmp_path / "off.pth")
    save = """
        import pickle, torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)).%s
        torch.save({"model": model.state_dict(), "epoch": 1}, %r)
        pickle.loads(pickle.dumps(model))
        torch.save(model, %r + ".full")
        print("OK")
    """
    on = run_python(code=save % ("cuda()", saved_on, saved_on), env=cpu_env())
    off = run_python(code=save % ("cpu()", saved_off, saved_off), env=clean_env())
    assert on.returncode == 0 and off.returncode == 0, on.stderr + off.stderr
    load = """
        import torch
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4))
        for path, kwargs in ((%r, {}), (%r, {"map_location": "cuda:0"})):
            checkpoint = torch.load(path, weights_only=True, **kwargs)
            model.load_state_dict(checkpoint["model"])
            assert all(t.device.type == "cpu" for t in checkpoint["model"].values())
        print("OK")
    """
    mode_loads = run_python(code=load % (saved_off, saved_on), env=cpu_env())
    assert mode_loads.returncode == 0, mode_loads.stderr
    plain_loads = run_python(code=load.replace('{"map_location": "cuda:0"}', "{}") % (saved_on, saved_off), env=clean_env())
    assert plain_loads.returncode == 0, plain_loads.stderr
    full = run_python(code="import torch; torch.load(%r, weights_only=False); print('OK')" % (saved_on + ".full"),
                      env=clean_env())
    assert full.returncode == 0, full.stderr


def test_checkpoints_written_on_a_gpu_load(tmp_path):
    path = str(tmp_path / "gpu.pth")
    # Write a checkpoint whose storages are tagged cuda:0, as one saved on a GPU is.
    made = run_python(
        code="""
        import torch, torch.serialization as serialization
        serialization.location_tag = lambda storage: "cuda:0"
        torch.save({"w": torch.arange(4.0)}, %r)
        """ % path,
        env=clean_env(),
    )
    assert made.returncode == 0, made.stderr
    on_and_off(
        """
        import torch
        for kwargs in ({}, {"map_location": "cuda:0"}, {"map_location": torch.device("cuda")},
                       {"map_location": {"cuda:0": "cuda:1"}},
                       {"map_location": lambda storage, loc: storage.cuda(0)}):
            state = torch.load(%r, **kwargs)
            assert state["w"].tolist() == [0.0, 1.0, 2.0, 3.0] and state["w"].device.type == "cpu"
        print("OK")
        """ % path
    )


# --- item 4 and the whole: report, training script -------------------------------------------


def test_redirected_calls_are_counted_in_the_report(tmp_path):
    report = str(tmp_path / "report.json")
    result = run_python(
        code="""
        import torch
        m = torch.nn.Linear(2, 2).cuda()
        for _ in range(3):
            torch.ones(2).cuda()
        torch.zeros(1, device="cuda"); torch.cuda.synchronize()
        print("OK")
        """,
        env=cpu_env(COMPATFIX_REPORT=report),
    )
    assert result.returncode == 0, result.stderr
    with open(report, encoding="utf-8") as handle:
        data = json.load(handle)
    text = json.dumps(data)
    counts = {}
    for process in data["processes"]:
        for item in process.get("redirected", []):
            counts[item["call"]] = counts.get(item["call"], 0) + item["count"]
    assert counts.get("Tensor.cuda") == 3, text
    assert counts.get("Module.cuda") == 1, text
    assert counts.get("torch.zeros(device=cuda)") == 1, text
    assert counts.get("torch.cuda.synchronize") == 1, text


def test_mini_training_script_runs_under_cpu_mode(tmp_path):
    script = os.path.join(FIXTURES, "train_mini.py")
    with ThreadPoolExecutor(2) as pool:
        on_future = pool.submit(run_python, "-m", "compatfix", "--device", "cpu", script, str(tmp_path), "6",
                                env=clean_env())
        off_future = pool.submit(run_python, script, str(tmp_path / "off"), "6", env=clean_env())
        on, off = on_future.result(), off_future.result()
    assert on.returncode == 0, on.stdout + on.stderr
    assert "steps 6" in on.stdout and "saved" in on.stdout, on.stdout
    assert os.path.exists(tmp_path / "checkpoint.pth")
    assert off.returncode != 0
    assert "needs a GPU" in off.stderr, off.stderr
    loaded = run_python(
        code="import torch; c = torch.load(%r, weights_only=True); assert c['step'] == 6; print('OK')"
        % str(tmp_path / "checkpoint.pth"),
        env=clean_env(),
    )
    assert loaded.returncode == 0, loaded.stderr

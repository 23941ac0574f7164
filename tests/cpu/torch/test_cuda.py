"""CPU mode for the ``torch.cuda`` spellings of 2020-22 scripts (compatfix.cpu.torch and
compatfix.cpu.torch.cuda): legacy ``torch.cuda.FloatTensor`` types, ``torch.Generator(device='cuda')``,
``torch.amp.GradScaler('cuda')``, ``torch.autocast('cuda')`` and more ``torch.cuda``
queries.

As in test_torch.py, each snippet runs in fresh interpreters on this CUDA-less
machine: with ``COMPATFIX_DEVICE=cpu`` it must print OK, with compatfix on but the mode
off it must fail (torch's own CUDA error, or the snippet's assertion where torch itself
does not fail).
"""

from __future__ import annotations

import json
import textwrap

import pytest

from support import clean_env, cpu_env, on_and_off, run_python


def test_legacy_cuda_tensor_types_are_the_cpu_types():
    on_and_off(
        """
        import torch
        made = [torch.cuda.FloatTensor(3), torch.cuda.FloatTensor([1.0, 2.0]), torch.cuda.LongTensor(2, 2),
                torch.cuda.HalfTensor(2), torch.cuda.ByteTensor([1]), torch.cuda.DoubleTensor(1),
                torch.cuda.IntTensor([3]), torch.cuda.BoolTensor([True])]
        assert all(t.device.type == "cpu" for t in made)
        # HalfTensor is float32: CPU mode's precision policy (tests/cpu/torch/test_half_as_float32.py)
        assert [t.dtype for t in made[2:]] == [torch.int64, torch.float32, torch.uint8, torch.float64,
                                                 torch.int32, torch.bool]
        x = torch.ones(2, 3)
        assert x.type(torch.cuda.LongTensor).dtype == torch.int64
        assert x.type("torch.cuda.HalfTensor").dtype == torch.float32  # the precision policy
        assert x.type("torch.cuda.ShortTensor").dtype == torch.int16
        assert x.type(dtype="torch.cuda.DoubleTensor", non_blocking=True).dtype == torch.float64
        assert x.type("torch.IntTensor").dtype == torch.int32 and x.type() == "torch.FloatTensor"
        assert x.type(torch.float64).dtype == torch.float64
        # the CPU tensors that play CUDA tensors are instances of the CUDA types
        assert isinstance(x.cuda(), torch.cuda.FloatTensor) and not isinstance(x, torch.cuda.LongTensor)
        torch.set_default_tensor_type("torch.cuda.FloatTensor")
        assert torch.tensor([1.0]).device.type == "cpu" and torch.zeros(1).dtype == torch.float32
        torch.set_default_tensor_type(torch.cuda.DoubleTensor)
        assert torch.tensor([1.0]).dtype == torch.float64 and torch.empty(1).device.type == "cpu"
        torch.set_default_tensor_type(torch.FloatTensor)
        print("OK")
        """
    )


def test_generator_on_a_cuda_device_is_a_cpu_generator():
    on_and_off(
        """
        import torch
        for g in (torch.Generator(device="cuda"), torch.Generator("cuda:0"),
                  torch.Generator(torch.device("cuda", 0)), torch.Generator()):
            assert g.device.type == "cpu" and isinstance(g, torch.Generator)
        assert isinstance(torch.default_generator, torch.Generator)
        assert issubclass(torch._C.Generator, torch.Generator)
        a = torch.randn(3, device="cuda", generator=torch.Generator(device="cuda").manual_seed(7))
        b = torch.randn(3, generator=torch.Generator().manual_seed(7))
        assert torch.equal(a, b)
        loader = torch.utils.data.DataLoader(list(range(8)), batch_size=4, shuffle=True,
                                             generator=torch.Generator(device="cuda").manual_seed(0))
        assert sorted(sum((batch.tolist() for batch in loader), [])) == list(range(8))
        print("OK")
        """
    )


def test_generator_annotations_still_script(tmp_path):
    script = tmp_path / "script_generator.py"  # TorchScript needs a source file
    script.write_text(textwrap.dedent("""
        from typing import Optional
        import torch

        @torch.jit.script
        def noise(x: torch.Tensor, generator: Optional[torch.Generator] = None) -> torch.Tensor:
            return x + torch.rand(x.shape, generator=generator)

        assert noise(torch.zeros(2)).shape == (2,)
        g = torch.Generator(device="cuda").manual_seed(1)
        assert noise(torch.zeros(2), g).shape == (2,)
        print("OK")
        """))
    result = run_python(str(script), env=cpu_env())
    assert result.returncode == 0, result.stderr
    assert "OK" in result.stdout


AMP_GRAD_SCALER = """
import torch
model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for scaler in (torch.amp.GradScaler("cuda"), torch.amp.GradScaler(), torch.amp.GradScaler(device="cuda:0"),
               torch.amp.GradScaler("cuda", init_scale=1024.0), torch.amp.grad_scaler.GradScaler("cuda")):
    before = model.weight.detach().clone()
    loss = model(torch.randn(3, 4)).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(opt); scaler.step(opt); scaler.update(); opt.zero_grad()
    assert not torch.equal(before, model.weight)
    # a state that an enabled (GPU) scaler can load when the run resumes on a GPU
    torch.amp.GradScaler("cpu").load_state_dict(scaler.state_dict())
    assert set(scaler.state_dict()) == {"scale", "growth_factor", "backoff_factor", "growth_interval",
                                        "_growth_tracker"}, scaler.state_dict()
cpu_scaler = torch.amp.GradScaler("cpu")  # an explicit CPU scaler stays torch's own
assert cpu_scaler.is_enabled() and isinstance(cpu_scaler, torch.amp.grad_scaler.GradScaler)
assert cpu_scaler.scale(torch.ones(())).item() == 65536.0
print("OK")
"""


def test_amp_grad_scaler_on_cuda_is_the_passthrough():
    # Torch itself disables a CUDA GradScaler without a GPU (with a warning); the disabled
    # scaler's state_dict() is {}, which an enabled scaler refuses to load on resume.
    on = on_and_off(AMP_GRAD_SCALER, off_error="The source state dict is empty, possibly because it was saved "
                    "from a disabled instance of GradScaler.")
    assert "CUDA is not available" not in on.stderr, on.stderr


def test_autocast_cuda_spellings_run_float32():
    # Decision (docs/cpu-mode.md): CUDA autocast runs in float32. torch.autocast('cuda')
    # needs no shim for that: torch disables it on CPU tensors. This pins that behaviour.
    result = run_python(
        code="""
        import torch
        model = torch.nn.Linear(4, 2).cuda()
        x = torch.randn(3, 4).cuda()
        for region in (torch.autocast("cuda"), torch.autocast(device_type="cuda", dtype=torch.float16),
                       torch.amp.autocast("cuda"), torch.autocast("cuda", dtype=torch.bfloat16),
                       torch.cuda.amp.autocast()):
            with region:
                assert model(x).dtype == torch.float32

        @torch.autocast("cuda")
        def forward(x):
            return model(x)
        assert forward(x).dtype == torch.float32
        with torch.autocast("cpu", dtype=torch.bfloat16):  # CPU autocast is untouched
            assert model(x).dtype == torch.bfloat16
        print("OK")
        """,
        env=cpu_env(),
    )
    assert result.returncode == 0, result.stderr
    assert "OK" in result.stdout


def test_more_cuda_queries_of_training_scripts():
    on_and_off(
        """
        import torch
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1
        props = torch.cuda.get_device_properties(torch.device("cuda:0"))
        gib = props.total_memory / 1024 ** 3
        assert gib > 0 and isinstance(props.name, str) and props.multi_processor_count >= 1
        print("%s %.1f GiB sm_%d%d" % (torch.cuda.get_device_name(), gib, props.major, props.minor))
        assert torch.cuda.memory_allocated() / 1024 ** 2 == 0.0 and torch.cuda.memory_stats() == {}
        assert torch.cuda.max_memory_allocated(device=torch.device("cuda")) == 0
        assert isinstance(torch.cuda.memory_summary(), str)
        free, total = torch.cuda.mem_get_info()
        assert free <= total
        torch.backends.cudnn.benchmark = True; torch.backends.cudnn.enabled = True
        torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cudnn.allow_tf32 = True
        torch.cuda.nvtx.range_push("step"); torch.cuda.nvtx.range_pop()
        print("OK")
        """,
        off_error="AssertionError",  # is_available() is False there
    )


def test_mode_off_keeps_the_cuda_types_and_classes():
    result = run_python(
        code="""
        import torch
        assert torch.cuda.FloatTensor is not torch.FloatTensor and torch.cuda.FloatTensor.is_cuda
        assert torch.Generator is torch._C.Generator
        assert torch.amp.GradScaler.__module__ == "torch.amp.grad_scaler"
        assert torch.Tensor.type.__class__.__name__ == "method_descriptor"
        print("OK")
        """,
        env=clean_env(),
    )
    assert result.returncode == 0, result.stderr
    assert "OK" in result.stdout


def test_new_patches_apply_once_keep_originals_and_are_counted(tmp_path):
    report = str(tmp_path / "report.json")
    result = run_python(
        code="""
        import json, sys, torch, compatfix
        import compatfix.cpu.torch as cpu_torch, compatfix.cpu.torch.cuda as cpu_cuda
        assert compatfix.get_original(torch.cuda, "FloatTensor").is_cuda
        assert compatfix.get_original(torch, "Generator") is torch._C.Generator
        assert compatfix.get_original(torch.Tensor, "type").__class__.__name__ == "method_descriptor"
        before = (torch.cuda.FloatTensor, torch.Generator, torch.amp.GradScaler, torch.Tensor.type)
        [shim.apply(sys.modules[shim.targets[0]]) for shim in cpu_torch.SHIMS + cpu_cuda.SHIMS if shim.default]  # a second application changes nothing
        assert (torch.cuda.FloatTensor, torch.Generator, torch.amp.GradScaler, torch.Tensor.type) == before
        assert torch.Tensor.type.__name__ == "type" and torch.Tensor.type.__wrapped__ is not None
        torch.ones(1).type("torch.cuda.LongTensor"); torch.Generator(device="cuda")
        torch.amp.GradScaler("cuda")
        print("OK")
        """,
        env=cpu_env(COMPATFIX_REPORT=report),
    )
    assert result.returncode == 0, result.stderr
    with open(report, encoding="utf-8") as handle:
        data = json.load(handle)
    calls = {item["call"] for process in data["processes"] for item in process.get("redirected", [])}
    assert {"Tensor.type", "torch.Generator(device=cuda)", "torch.cuda.amp.GradScaler"} <= calls, calls



# --- issue 12, item 3: the rest of the torch.cuda namespace ---------------------------------


def test_legacy_cuda_storage_and_sparse_types_are_the_cpu_types():
    on_and_off(
        """
        import pickle, torch
        storage = torch.cuda.FloatStorage(3)
        assert storage.device.type == "cpu" and storage.size() == 3 and isinstance(storage, torch.cuda.FloatStorage)
        # the all_gather of pickled objects in 2020 detection code: bytes -> ByteStorage -> ByteTensor
        data = torch.cuda.ByteStorage.from_buffer(pickle.dumps({"a": 1}))
        tensor = torch.cuda.ByteTensor(data).to("cuda")
        assert pickle.loads(tensor.numpy().tobytes()) == {"a": 1}
        assert torch.cuda.LongStorage([1, 2]).tolist() == [1, 2] and torch.cuda.HalfStorage(1).dtype == torch.float16
        sparse = torch.cuda.sparse.FloatTensor(torch.tensor([[0], [1]]), torch.tensor([2.0]), torch.Size([2, 2]))
        assert sparse.device.type == "cpu" and sparse.to_dense().tolist() == [[0.0, 2.0], [0.0, 0.0]]
        print("OK")
        """
    )


def test_set_default_device_cuda_and_device_contexts_make_cpu_tensors():
    on_and_off(
        """
        import torch
        torch.set_default_device("cuda")
        layer = torch.nn.Linear(2, 2)
        made = [layer.weight, torch.zeros(2), torch.randn(2), torch.tensor([1.0]), torch.arange(3), layer(torch.ones(1, 2))]
        assert all(t.device.type == "cpu" for t in made), [t.device for t in made]
        torch.set_default_device(None)
        with torch.device("cuda"):
            assert torch.nn.Linear(2, 2).weight.device.type == "cpu" and torch.ones(1).device.type == "cpu"
        print("OK")
        """
    )


# Builds on the meta device as transformers 5's from_pretrained and accelerate do, through
# the default-device context and set_default_device; CPU mode wraps the factories they
# reach (torch's own nn.Linear included), so with only one of its two factory shims, or
# neither, the device must still be meta, as in a normal process.
DEFAULT_DEVICE_META = """
import torch
with torch.device("meta"):
    layer = torch.nn.Linear(2, 2)
    made = [layer.weight, torch.arange(3), torch.zeros(2), torch.empty(1), torch.tensor([1.0]), torch.ones(2, dtype=torch.float16)]
assert all(t.device.type == "meta" for t in made), [t.device for t in made]
assert torch.zeros(1).device.type == "cpu"
torch.set_default_device("meta")
assert torch.randn(2).device.type == "meta" and torch.nn.Embedding(3, 2).weight.device.type == "meta"
torch.set_default_device(None)
with torch.device("cpu"):
    assert torch.zeros(1, device="meta").device.type == "meta"
print("OK")
"""


@pytest.mark.parametrize("disabled", ["", "cpu.torch.factories", "cpu.torch.half_as_float32"])
def test_a_meta_default_device_stays_meta(disabled):
    for env in (cpu_env(COMPATFIX_DISABLE=disabled), clean_env(compatfix=False)):
        result = run_python(code=DEFAULT_DEVICE_META, env=env)
        assert result.stdout.split() == ["OK"], result.stderr[-3000:]


def test_nvml_queries_answer_an_idle_device():
    on_and_off(
        """
        import torch
        assert torch.cuda.utilization() == 0 and torch.cuda.utilization(0) == 0
        assert torch.cuda.memory_usage() == 0 and torch.cuda.temperature() == 0 and torch.cuda.power_draw() == 0
        assert torch.cuda.clock_rate() == 0 and torch.cuda.device_memory_used() == 0
        assert torch.cuda.list_gpu_processes() == "GPU:0\\nno processes are running"
        print("OK")
        """,
        off_error="nvidia-ml-py",
    )


def test_remaining_torch_cuda_calls_of_training_scripts():
    on_and_off(
        """
        import torch
        assert torch.cuda.get_per_process_memory_fraction() == 1.0
        assert torch.cuda.can_device_access_peer(0, 0) is False
        torch.cuda.set_stream(torch.cuda.current_stream())
        torch.cuda.set_sync_debug_mode(0)
        assert torch.cuda.get_sync_debug_mode() == 0
        assert torch.cuda.current_blas_handle() == 0
        assert isinstance(torch.cuda.ExternalStream(0), torch.cuda.Stream)
        assert torch.cuda.default_generators == (torch.default_generator,)
        model = torch.nn.Linear(2, 2)
        assert torch.cuda.make_graphed_callables(model, (torch.ones(1, 2),)) is model
        torch.cuda.random.manual_seed(3)
        assert torch.equal(torch.cuda.random.get_rng_state(), torch.get_rng_state())
        torch.cuda.profiler.start(); torch.cuda.profiler.stop()
        with torch.cuda.profiler.profile():
            torch.cuda.nvtx.range_push("step"); torch.cuda.nvtx.range_pop()
        print("OK")
        """
    )

"""CPU mode for single-process torch code: CUDA calls run on the CPU.

Under ``--device cpu`` a script written for one GPU runs unmodified on the CPU: moves to
CUDA (``Tensor.cuda``, ``Module.cuda``, ``.to('cuda'…)``), ``device='cuda'`` arguments of
tensor factories (in user and library code, e.g. timm 0.3.2's ``Mixup``) and the
``torch.cuda`` queries and controls scripts call all act on the CPU, which plays the one
CUDA device ``cuda:0``.

Approach: patch the entry points that take a device, not every op
----------------------------------------------------------------------
A ``torch.overrides.TorchFunctionMode`` would see every call, but it puts a Python
dispatch on *every* torch op (a conv, an add, a ``relu``), several microseconds each
where the op itself may take one; the issue asks for a CPU-mode run within 5% of the
same script ported to CPU by hand. So only the callables where a CUDA device can enter
are replaced, each by a function object of its own (made by a closure factory, with
``__wrapped__``, name and docstring of the original, and registered with TorchScript as
the same aten builtin, so that ``torch.jit.script`` code calling ``torch.zeros`` still
compiles). Ops between the entry points never see a CUDA device, so they run at full
speed; the wrappers' cost is one or two type tests per call of a patched callable
(measured in the report of the change that added this module). ``torch.device('cuda')``
objects cannot be changed (the class cannot be subclassed), so device arguments are
rewritten where they are consumed: a ``str`` starting with ``"cuda"``, a
``torch.device`` of type ``cuda`` and a bare ``int`` index all become ``"cpu"``.

Decisions
---------
* ``torch.cuda.is_available()`` is **True** and ``device_count()`` is 1: the CPU is the
  one CUDA device, so scripts that insist on a GPU (``assert is_available()``,
  ``device = 'cuda'`` without fallback) take the branch they were written for, and
  ``device_count`` agrees with ``is_available``. Torch internals that must not believe
  it are safe: the DataLoader's ``pin_memory`` consults ``torch.accelerator`` (no
  accelerator: pinning is off, with torch's own warning), and ``Tensor.pin_memory()``
  called directly returns the tensor itself (``is_pinned()`` stays False).
* Mixed precision: ``torch.cuda.amp.autocast(...)`` is a **no-op: the region runs in
  float32**. A hand port to the CPU drops CUDA autocast; CPU bfloat16 autocast would
  change the numerics and is slower than float32 on CPUs without bf16 units. For the
  same reason ``torch.autocast('cuda')`` (and ``device_type='cuda'``,
  ``torch.amp.autocast('cuda')``) is left to torch: it finds no CUDA, disables itself
  with a warning, and the region runs in float32 too. ``torch.cuda.amp.GradScaler()``
  and ``torch.amp.GradScaler('cuda')`` (``'cuda'`` is its default) are a scale-1
  passthrough: ``scale(loss)`` returns ``loss``, ``step(opt)`` calls ``opt.step()``
  (also when gradients are not finite, as plain float32 training would), ``unscale_``
  and ``update`` do nothing, ``get_scale()`` is 1.0 and ``is_enabled()`` False.
  Its ``state_dict()`` has the keys of a real GradScaler's with the constructor's
  ``init_scale``, so a checkpoint saved in CPU mode resumes on a GPU like a fresh
  scaler (torch's own disabled scaler would save ``{}``, which a GPU scaler refuses to
  load); ``load_state_dict`` accepts a real scaler's state. ``torch.amp.GradScaler('cpu')``
  stays torch's.
* Legacy tensor types: ``torch.cuda.FloatTensor``, ``LongTensor``, ``HalfTensor`` … are
  the CPU types ``torch.FloatTensor`` …, so ``torch.cuda.FloatTensor(3)``,
  ``x.type(torch.cuda.LongTensor)`` and ``set_default_tensor_type`` make CPU tensors,
  and ``isinstance(x.cuda(), torch.cuda.FloatTensor)`` is True. ``x.type('torch.cuda.…')``
  strings map to the CPU names. ``x.type()`` still answers ``'torch.FloatTensor'``
  (as ``x.is_cuda`` is False).
* ``torch.Generator(device='cuda')`` makes a CPU generator. ``torch.Generator`` becomes
  a class whose metaclass builds torch's ``torch._C.Generator`` and answers
  ``isinstance``/``issubclass`` for every torch generator (``torch.default_generator``
  too), so annotations, ``DataLoader(generator=…)`` and TorchScript's
  ``Optional[torch.Generator]`` keep working; ``type(g) is torch.Generator`` is False.
* Random numbers: CUDA seeding and RNG state act on the CPU generator (the CPU plays
  the CUDA device), so ``torch.cuda.manual_seed(s)`` seeds the CPU stream. A CUDA RNG
  state saved on a GPU (another format) is ignored by ``torch.cuda.set_rng_state``.
* ``torch.cuda.Event(enable_timing=True)`` measures wall time between ``record()``
  calls (CPU work is synchronous); ``Stream``, ``stream(...)``, ``current_stream()``,
  ``device(...)``, ``synchronize``, ``empty_cache`` and ``Tensor.record_stream`` do
  nothing; memory statistics are 0.
* ``torch.load`` maps CUDA storages to the CPU (``map_location`` None or CUDA becomes
  ``"cpu"``; a dict's CUDA values too; a callable's ``storage.cuda()`` returns the
  storage), so checkpoints written on a GPU load. Everything saved in CPU mode holds
  CPU tensors and loads in a normal process.

* ``is_available``, ``device_count`` and ``is_initialized`` answer torch's own modules
  (callers named ``torch`` / ``torch.*``) as torch would (False, 0): torch's internals
  (dynamo, inductor, ``fork_rng``, ``autocast``) then take their CPU paths instead of
  calling into a CUDA runtime that is not there, and ``nn.DataParallel`` finds no
  devices and simply runs the wrapped module.

Not covered: ``.cuda()``/``device='cuda'`` inside TorchScript-compiled code (TorchScript
resolves them without Python), ``torch.cuda.*Storage`` and ``torch.cuda.sparse`` legacy
types, ``torch.set_default_device('cuda')`` (torch 2.0+, after the scripts this mode is
for), ``torch.cuda.utilization()`` and other NVML queries.

Each redirected call is counted per kind with ``recorder.record_redirect`` and appears
under ``"redirected"`` in the ``--report`` JSON.
"""

from __future__ import annotations

import functools
import os
import sys
import time

from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_NAME = "cpu.torch.device"

# Tensor factories that take ``device=`` (keyword-only in torch's signatures).
FACTORY_NAMES = (
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
    "range", "linspace", "logspace", "eye", "tensor", "as_tensor", "scalar_tensor",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like", "empty_strided", "normal", "tril_indices", "triu_indices",
    "sparse_coo_tensor", "hann_window", "hamming_window", "blackman_window",
    "bartlett_window", "kaiser_window", "from_file", "empty_permuted",
)
TENSOR_NEW_NAMES = ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new_empty_strided")

_CPU = "cpu"
_record = None  # recorder.record_redirect of the active engine, bound by apply()


def _count(what: str) -> None:
    if _record is not None:
        _record(SHIM_NAME, what)


def replace_attribute(owner, name: str, value) -> bool:
    """``patching.replace_attribute`` for this shim: False when already replaced."""
    return patching.replace_attribute(owner, name, value, SHIM_NAME)


def _is_replacement(value) -> bool:
    return getattr(value, patching._MARK, None) == SHIM_NAME


def _make_is_cuda(torch):
    device_class = torch.device

    def is_cuda(device) -> bool:
        cls = device.__class__
        if cls is str:
            return device.startswith("cuda")
        if cls is device_class:
            return device.type == "cuda"
        return cls is int  # a bare index names a CUDA device

    return is_cuda


# --- tensors and modules ---------------------------------------------------------------


def _patch_tensor_and_module(torch, is_cuda) -> None:
    Tensor = torch.Tensor
    Module = torch.nn.Module
    original_to = Tensor.to
    original_cpu = Tensor.cpu
    preserve = torch.preserve_format
    original_module_to = Module.to

    def cuda(self, device=None, non_blocking=False, memory_format=preserve):
        _count("Tensor.cuda")
        if memory_format is preserve:
            return original_cpu(self)
        return original_to(self, _CPU, memory_format=memory_format)

    dtype_class = torch.dtype

    def to(self, *args, **kwargs):
        if args:
            first = args[0]
            if first.__class__ is not dtype_class and first.__class__ is not Tensor and is_cuda(first):
                _count("Tensor.to")
                args = (_CPU,) + args[1:]
        elif kwargs:
            device = kwargs.get("device")
            if device is not None and is_cuda(device):
                _count("Tensor.to")
                kwargs["device"] = _CPU
        return original_to(self, *args, **kwargs)

    def module_cuda(self, device=None):
        _count("Module.cuda")
        return self

    def module_to(self, *args, **kwargs):
        if args and args[0] is not None and not isinstance(args[0], (torch.dtype, Tensor)) and is_cuda(args[0]):
            _count("Module.to")
            args = (_CPU,) + args[1:]
        elif kwargs.get("device") is not None and is_cuda(kwargs["device"]):
            _count("Module.to")
            kwargs["device"] = _CPU
        return original_module_to(self, *args, **kwargs)

    def pin_memory(self, device=None):
        _count("Tensor.pin_memory")
        return self

    def record_stream(self, stream):
        _count("Tensor.record_stream")

    for owner, name, value, original in (
        (Tensor, "cuda", cuda, Tensor.cuda),
        (Tensor, "to", to, original_to),
        (Tensor, "pin_memory", pin_memory, Tensor.pin_memory),
        (Tensor, "record_stream", record_stream, Tensor.record_stream),
        (Module, "cuda", module_cuda, Module.cuda),
        (Module, "to", module_to, original_module_to),
    ):
        _dress(value, original, owner.__name__ + "." + name)
        replace_attribute(owner, name, value)

    for name in TENSOR_NEW_NAMES:
        original = getattr(Tensor, name, None)
        if original is not None and not _is_replacement(original):
            replace_attribute(Tensor, name, _dress(_device_kwarg_wrapper(original, "Tensor." + name, is_cuda), original, "Tensor." + name))


def _dress(wrapper, original, qualname: str):
    wrapper.__name__ = qualname.rpartition(".")[2]
    wrapper.__qualname__ = qualname
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__wrapped__ = original
    return wrapper


def _device_kwarg_wrapper(original, what: str, is_cuda):
    """A new function object that rewrites a CUDA ``device=`` to the CPU."""

    def wrapper(*args, **kwargs):
        if kwargs:
            device = kwargs.get("device")
            if device is not None and is_cuda(device):
                _count(what)
                kwargs["device"] = _CPU
        return original(*args, **kwargs)

    return wrapper


def _patch_factories(torch, is_cuda) -> None:
    from torch.jit import _builtins

    table = _builtins._get_builtin_table()
    for name in FACTORY_NAMES:
        original = getattr(torch, name, None)
        if original is None or _is_replacement(original):
            continue
        what = "torch.%s(device=cuda)" % name
        wrapper = _dress(_device_kwarg_wrapper(original, what, is_cuda), original, name)
        wrapper.__module__ = "torch"
        if replace_attribute(torch, name, wrapper):
            op = table.get(id(original))
            if op is not None:
                _builtins._register_builtin(wrapper, op)


# --- legacy tensor types, generators, torch.amp.GradScaler -----------------------------

LEGACY_TYPE_NAMES = (
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
)
_CUDA_TYPE_PREFIX = "torch.cuda."


def _patch_legacy_types(torch) -> None:
    """``torch.cuda.FloatTensor`` & co. name the CPU types: as constructors
    (``torch.cuda.FloatTensor(3)``), in ``x.type(torch.cuda.LongTensor)``, in
    ``isinstance`` (true for the CPU tensors that play CUDA ones) and in
    ``set_default_tensor_type`` (which resolves a string through these attributes)."""
    cuda = torch.cuda
    for name in LEGACY_TYPE_NAMES:
        cpu_type = getattr(torch, name, None)
        if cpu_type is not None and getattr(cuda, name, None) is not cpu_type:
            replace_attribute(cuda, name, cpu_type)  # a type: torch's own object, unmarked

    Tensor = torch.Tensor
    original_type = Tensor.type

    def type(self, *args, **kwargs):  # noqa: A001 - torch's name
        dtype = args[0] if args else kwargs.get("dtype")
        if dtype.__class__ is str and dtype.startswith(_CUDA_TYPE_PREFIX):
            _count("Tensor.type")
            cpu_name = "torch." + dtype[len(_CUDA_TYPE_PREFIX):]
            if args:
                args = (cpu_name,) + args[1:]
            else:
                kwargs["dtype"] = cpu_name
        return original_type(self, *args, **kwargs)

    if not _is_replacement(original_type):
        replace_attribute(Tensor, "type", _dress(type, original_type, "Tensor.type"))


def _patch_generator(torch, is_cuda) -> None:
    """``torch.Generator(device='cuda')`` makes a CPU generator. The class cannot be
    subclassed usefully (torch's own generators would not be instances), so
    ``torch.Generator`` becomes a class whose metaclass builds torch's generators and
    answers ``isinstance``/``issubclass`` for them."""
    original = torch.Generator
    if _is_replacement(original):
        return

    class GeneratorType(type):
        def __call__(cls, device="cpu"):
            if is_cuda(device):
                _count("torch.Generator(device=cuda)")
                device = _CPU
            return original(device)

        def __instancecheck__(cls, instance) -> bool:
            return isinstance(instance, original)

        def __subclasscheck__(cls, subclass) -> bool:
            return issubclass(subclass, original)

    Generator = GeneratorType("Generator", (), {"__doc__": original.__doc__, "__module__": "torch",
                                                "__wrapped__": original})
    replace_attribute(torch, "Generator", Generator)


def _patch_amp_grad_scaler(torch, is_cuda) -> None:
    """``torch.amp.GradScaler('cuda')`` (device defaults to 'cuda') is the scale-1
    passthrough of ``torch.cuda.amp.GradScaler``. Torch itself would disable it with a
    warning, but a disabled scaler's ``state_dict()`` is empty, and a real GPU scaler
    refuses to load that when the run resumes on a GPU."""
    amp = torch.amp
    original = amp.GradScaler
    if _is_replacement(original):
        return

    class AmpGradScaler(original):
        __doc__ = original.__doc__

        def __new__(cls, device="cuda", *args, **kwargs):
            if cls is AmpGradScaler and is_cuda(device):
                return GradScaler(*args, **kwargs)
            return super().__new__(cls)

    AmpGradScaler.__name__ = AmpGradScaler.__qualname__ = "GradScaler"
    AmpGradScaler.__module__ = original.__module__
    for module in (amp, getattr(amp, "grad_scaler", None)):
        if module is not None and getattr(module, "GradScaler", None) is original:
            replace_attribute(module, "GradScaler", AmpGradScaler)


# --- torch.load ------------------------------------------------------------------------


def _patch_load(torch, is_cuda) -> None:
    import torch.serialization as serialization

    original_load = torch.load

    def map_to_cpu(map_location):
        if map_location is None:
            return _CPU
        if isinstance(map_location, dict):
            return {k: (_CPU if is_cuda(v) else v) for k, v in map_location.items()}
        if callable(map_location):
            user = map_location

            def location(storage, where):
                result = user(storage, where)
                return storage if result is None and where.startswith("cuda") else result

            return location
        return _CPU if is_cuda(map_location) else map_location

    def load(f, map_location=None, *args, **kwargs):
        _count("torch.load(map_location)")
        return original_load(f, map_to_cpu(map_location), *args, **kwargs)

    _dress(load, original_load, "load")
    load.__module__ = "torch.serialization"
    replace_attribute(torch, "load", load)
    replace_attribute(serialization, "load", load)

    def storage_cuda(self, device=None, non_blocking=False):
        _count("Storage.cuda")
        return self

    for owner in (torch.UntypedStorage, torch.TypedStorage):
        replace_attribute(owner, "cuda", _dress(_rebind(storage_cuda), owner.cuda, owner.__name__ + ".cuda"))


def _rebind(function):
    """A copy of ``function`` (its own object, so each owner gets its own attribute)."""

    def copy(*args, **kwargs):
        return function(*args, **kwargs)

    return copy


# --- torch.cuda ------------------------------------------------------------------------


class Event:
    """``torch.cuda.Event`` in CPU mode: ``record()`` notes the wall time."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        _count("torch.cuda.Event")
        self._time = None

    def record(self, stream=None):
        self._time = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        """Milliseconds between this event's record() and ``end_event``'s."""
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

    def __repr__(self):
        return "<torch.cuda.Event (compatfix CPU mode)>"


class Stream:
    """``torch.cuda.Stream`` in CPU mode: work is synchronous, so it does nothing."""

    device_index = 0
    priority = 0

    def __init__(self, device=None, priority=0, **kwargs):
        _count("torch.cuda.Stream")

    @property
    def device(self):
        import torch

        return torch.device("cpu")

    def wait_event(self, event):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record()
        return event

    def query(self):
        return True

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, Stream)

    def __hash__(self):
        return 0

    def __repr__(self):
        return "<torch.cuda.Stream (compatfix CPU mode)>"


class _NullContext:
    """``torch.cuda.stream(s)`` / ``torch.cuda.device(i)`` in CPU mode."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class StreamContext(_NullContext):
    pass


class device(_NullContext):  # noqa: N801 - torch's name
    pass


class device_of(_NullContext):  # noqa: N801 - torch's name
    pass


class autocast:
    """``torch.cuda.amp.autocast`` in CPU mode: the region runs in float32."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        _count("torch.cuda.amp.autocast")
        self._enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return run


class GradScaler:
    """``torch.cuda.amp.GradScaler`` in CPU mode: float32 training needs no scaling, so
    this is a scale-1 passthrough with a real scaler's interface and state_dict keys."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        _count("torch.cuda.amp.GradScaler")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def is_enabled(self):
        return False

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def state_dict(self):
        return {
            "scale": self._init_scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": 0,
        }

    def load_state_dict(self, state_dict):
        self._init_scale = float(state_dict.get("scale", self._init_scale))
        self._growth_factor = float(state_dict.get("growth_factor", self._growth_factor))
        self._backoff_factor = float(state_dict.get("backoff_factor", self._backoff_factor))
        self._growth_interval = int(state_dict.get("growth_interval", self._growth_interval))

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state):
        self.__dict__.update(state)


def _cuda_functions(torch) -> dict:
    """The ``torch.cuda`` functions of CPU mode, each counted under its own name."""
    generator = torch.default_generator
    cpu_state_size = generator.get_state().numel()

    def _total_memory():
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):
            return 0

    def init():
        pass

    def current_device():
        return 0

    def set_device(device):
        pass

    def get_device_name(device=None):
        return "CPU (compatfix --device cpu)"

    def get_device_capability(device=None):
        return (0, 0)

    def get_device_properties(device=None):
        import types

        return types.SimpleNamespace(
            name=get_device_name(), major=0, minor=0, total_memory=_total_memory(),
            multi_processor_count=os.cpu_count() or 1, is_integrated=True,
        )

    def is_bf16_supported(including_emulation=True):
        return True

    def is_current_stream_capturing():
        return False

    def synchronize(device=None):
        pass

    def empty_cache():
        pass

    def ipc_collect():
        pass

    def memory_allocated(device=None):
        return 0

    def max_memory_allocated(device=None):
        return 0

    def memory_reserved(device=None):
        return 0

    def max_memory_reserved(device=None):
        return 0

    def memory_cached(device=None):
        return 0

    def max_memory_cached(device=None):
        return 0

    def reset_peak_memory_stats(device=None):
        pass

    def reset_max_memory_allocated(device=None):
        pass

    def reset_max_memory_cached(device=None):
        pass

    def reset_accumulated_memory_stats(device=None):
        pass

    def memory_stats(device=None):
        return {}

    def memory_summary(device=None, abbreviated=False):
        return "CPU mode (compatfix --device cpu): no CUDA memory is used.\n"

    def mem_get_info(device=None):
        total = _total_memory()
        return (total, total)

    def set_per_process_memory_fraction(fraction, device=None):
        pass

    def manual_seed(seed):
        generator.manual_seed(int(seed))

    def manual_seed_all(seed):
        generator.manual_seed(int(seed))

    def seed():
        generator.seed()

    def seed_all():
        generator.seed()

    def initial_seed():
        return generator.initial_seed()

    def get_rng_state(device="cuda"):
        return generator.get_state()

    def get_rng_state_all():
        return [generator.get_state()]

    def set_rng_state(new_state, device="cuda"):
        if new_state.numel() == cpu_state_size:  # a GPU-saved (philox) state is ignored
            generator.set_state(new_state)

    def set_rng_state_all(new_states):
        for state in new_states:
            set_rng_state(state)
            break

    def current_stream(device=None):
        return Stream()

    def default_stream(device=None):
        return Stream()

    def stream(stream=None):
        return StreamContext()

    functions = {name: value for name, value in locals().items() if callable(value) and not name.startswith("_")}
    return functions


def _counted(function, what: str):
    @functools.wraps(function)
    def counted(*args, **kwargs):
        _count(what)
        return function(*args, **kwargs)

    return counted


def _for_scripts(original, answer, what: str):
    """A ``torch.cuda`` query that answers ``answer`` to scripts and libraries, and
    torch's own answer to torch's internals (``torch`` and ``torch.*`` callers)."""

    def query(*args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller[:5] == "torch" and (len(caller) == 5 or caller[5] == "."):
            return original(*args, **kwargs)
        _count(what)
        return answer

    return query


def _patch_cuda(torch) -> None:
    cuda = torch.cuda
    for name, answer in (("is_available", True), ("device_count", 1), ("is_initialized", True)):
        original = getattr(cuda, name)
        if not _is_replacement(original):
            query = _dress(_for_scripts(original, answer, "torch.cuda." + name), original, name)
            query.__module__ = "torch.cuda"
            replace_attribute(cuda, name, query)
    for name, function in _cuda_functions(torch).items():
        function.__module__ = "torch.cuda"
        function.__qualname__ = name
        replace_attribute(cuda, name, _counted(function, "torch.cuda." + name))
    for name, cls in (("Event", Event), ("Stream", Stream), ("StreamContext", StreamContext),
                      ("device", device), ("device_of", device_of)):
        replace_attribute(cuda, name, cls)
    amp = cuda.amp
    for module in (amp, getattr(amp, "autocast_mode", None)):
        if module is not None:
            replace_attribute(module, "autocast", autocast)
    for module in (amp, getattr(amp, "grad_scaler", None)):
        if module is not None:
            replace_attribute(module, "GradScaler", GradScaler)


# --- the shim --------------------------------------------------------------------------


def apply_cpu_device(torch) -> None:
    global _record
    from compatfix import _engine

    engine = _engine.active()
    if engine is not None:
        _record = engine.recorder.record_redirect
    is_cuda = _make_is_cuda(torch)
    _patch_tensor_and_module(torch, is_cuda)
    _patch_factories(torch, is_cuda)
    _patch_load(torch, is_cuda)
    _patch_cuda(torch)
    _patch_legacy_types(torch)
    _patch_generator(torch, is_cuda)
    _patch_amp_grad_scaler(torch, is_cuda)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["torch"],
        kind=AFTER_IMPORT,
        apply=apply_cpu_device,
        risk=RISK_BEHAVIOUR,
        device="cpu",
        broke="code written for one CUDA GPU (model.cuda(), device='cuda', torch.cuda.*, "
        "torch.cuda.amp, torch.cuda.FloatTensor, torch.Generator(device='cuda')) fails on a "
        "machine without one: 'Torch not compiled with CUDA enabled' / 'Found no NVIDIA driver'",
        summary="CPU mode: .cuda()/.to('cuda')/device='cuda' land on the CPU; torch.cuda.* acts "
        "as one CPU device (is_available True, device_count 1, Events time wall clock, memory "
        "stats 0); torch.cuda.FloatTensor & co. are the CPU types; torch.Generator('cuda') is a "
        "CPU generator; CUDA autocast runs float32 and torch.cuda.amp.GradScaler / "
        "torch.amp.GradScaler('cuda') are a scale-1 passthrough; torch.load maps CUDA storages "
        "to the CPU",
    ),
)

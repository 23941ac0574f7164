"""CPU mode for single-process torch code: CUDA calls run on the CPU (torch-level shims;
the ``torch.cuda`` namespace is in ``compatfix.cpu.torch.cuda``).

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
* ``torch.cuda.is_available()`` is **True** and ``device_count()`` is 1 (under a
  launcher: its local world size, so every local rank has "its" device): the CPU is the
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

* Legacy ``torch.cuda.*Storage`` and ``torch.cuda.sparse.*Tensor`` types are the CPU ones
  too. A CUDA default device (``torch.set_default_device('cuda')``, ``with
  torch.device('cuda')``) is the CPU, and the other default devices (``meta``) keep
  reaching the wrapped factories (``_keep_device_contexts``).

Not covered: ``.cuda()``/``device='cuda'``/``dtype=torch.float16`` inside
TorchScript-compiled code (TorchScript resolves them without Python); the ``torch.cuda``
names docs/cpu-mode.md lists as not covered (CUDA graphs, raw allocator control).

Each concern is its own shim, so one can be disabled without the others
(``--disable cpu.torch.factories``): ``cpu.torch.tensor_moves``, ``cpu.torch.factories``,
``cpu.torch.load_map_location``, ``cpu.torch.legacy_tensor_types``, ``cpu.torch.generator``,
``cpu.torch.amp.grad_scaler``, and in ``compatfix.cpu.torch.cuda`` ``cpu.torch.cuda.device_queries``
and ``cpu.torch.cuda.amp``.

Each redirected call is counted per kind with ``recorder.record_redirect`` and appears
under ``"redirected"`` in the ``--report`` JSON.
"""

from __future__ import annotations

from compatfix import patching
from compatfix.cpu._device import CPU as _CPU, counter, dress as _dress, make_is_cuda
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_MOVES = "cpu.torch.tensor_moves"
SHIM_FACTORIES = "cpu.torch.factories"
SHIM_LOAD = "cpu.torch.load_map_location"
SHIM_LEGACY_TYPES = "cpu.torch.legacy_tensor_types"
SHIM_GENERATOR = "cpu.torch.generator"
SHIM_AMP_SCALER = "cpu.torch.amp.grad_scaler"

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


_count_move = counter(SHIM_MOVES)


# --- tensors and modules ---------------------------------------------------------------


def _patch_tensor_and_module(torch, is_cuda) -> None:
    Tensor = torch.Tensor
    Module = torch.nn.Module
    original_to = Tensor.to
    original_cpu = Tensor.cpu
    preserve = torch.preserve_format
    original_module_to = Module.to

    def cuda(self, device=None, non_blocking=False, memory_format=preserve):
        _count_move("Tensor.cuda")
        if memory_format is preserve:
            return original_cpu(self)
        return original_to(self, _CPU, memory_format=memory_format)

    dtype_class = torch.dtype

    def to(self, *args, **kwargs):
        if args:
            first = args[0]
            if first.__class__ is not dtype_class and first.__class__ is not Tensor and is_cuda(first):
                _count_move("Tensor.to")
                args = (_CPU,) + args[1:]
        elif kwargs:
            device = kwargs.get("device")
            if device is not None and is_cuda(device):
                _count_move("Tensor.to")
                kwargs["device"] = _CPU
        return original_to(self, *args, **kwargs)

    def module_cuda(self, device=None):
        _count_move("Module.cuda")
        return self

    def module_to(self, *args, **kwargs):
        if args and args[0] is not None and not isinstance(args[0], (torch.dtype, Tensor)) and is_cuda(args[0]):
            _count_move("Module.to")
            args = (_CPU,) + args[1:]
        elif kwargs.get("device") is not None and is_cuda(kwargs["device"]):
            _count_move("Module.to")
            kwargs["device"] = _CPU
        return original_module_to(self, *args, **kwargs)

    def pin_memory(self, device=None):
        _count_move("Tensor.pin_memory")
        return self

    def record_stream(self, stream):
        _count_move("Tensor.record_stream")

    for owner, name, value, original in (
        (Tensor, "cuda", cuda, Tensor.cuda),
        (Tensor, "to", to, original_to),
        (Tensor, "pin_memory", pin_memory, Tensor.pin_memory),
        (Tensor, "record_stream", record_stream, Tensor.record_stream),
        (Module, "cuda", module_cuda, Module.cuda),
        (Module, "to", module_to, original_module_to),
    ):
        _dress(value, original, owner.__name__ + "." + name)
        patching.replace_attribute(owner, name, value, SHIM_MOVES)

    for name in TENSOR_NEW_NAMES:
        original = getattr(Tensor, name, None)
        if original is not None and not patching.wrapped_by(original, SHIM_MOVES):
            patching.replace_attribute(Tensor, name, _dress(_device_kwarg_wrapper(original, "Tensor." + name, is_cuda, _count_move), original, "Tensor." + name), SHIM_MOVES)



def _device_kwarg_wrapper(original, what: str, is_cuda, count):
    """A new function object that rewrites a CUDA ``device=`` to the CPU."""

    def wrapper(*args, **kwargs):
        if kwargs:
            device = kwargs.get("device")
            if device is not None and is_cuda(device):
                count(what)
                kwargs["device"] = _CPU
        return original(*args, **kwargs)

    return wrapper



_count_factory = counter(SHIM_FACTORIES)


def _patch_factories(torch, is_cuda) -> None:
    from torch.jit import _builtins

    table = _builtins._get_builtin_table()
    for name in FACTORY_NAMES:
        original = getattr(torch, name, None)
        if original is None or patching.wrapped_by(original, SHIM_FACTORIES):
            continue
        what = "torch.%s(device=cuda)" % name
        wrapper = _dress(_device_kwarg_wrapper(original, what, is_cuda, _count_factory), original, name)
        wrapper.__module__ = "torch"
        if patching.replace_attribute(torch, name, wrapper, SHIM_FACTORIES):
            op = table.get(id(original))
            if op is not None:
                _builtins._register_builtin(wrapper, op)
    _keep_device_contexts(torch, SHIM_FACTORIES)
    _cuda_default_device_is_cpu(is_cuda)


def _cuda_default_device_is_cpu(is_cuda) -> None:
    """A CUDA default device (``torch.set_default_device('cuda')``, ``with
    torch.device('cuda')``) is the CPU, as a ``device='cuda'`` argument is."""
    from torch.utils import _device

    def device_context_init(original):
        def cpu_for_cuda(self, device):
            if is_cuda(device):
                _count_factory("default device cuda")
                device = _CPU
            original(self, device)

        return cpu_for_cuda

    patching.wrap(_device.DeviceContext, "__init__", device_context_init, SHIM_FACTORIES)


def _keep_device_contexts(torch, shim: str) -> None:
    """Keep torch's default-device contexts working over the factory wrappers.
    ``with torch.device('meta')`` and ``torch.set_default_device`` give a factory call the
    default device only if the function their ``__torch_function__`` sees is in
    ``torch.utils._device._device_constructors()``, a set built at first use from torch's
    attributes. Built after the wrappers replaced those, it holds the wrappers, while the
    call it sees is the original's that a wrapper makes: the default device was silently
    lost, and a model built "on meta" (transformers 5's ``from_pretrained``, accelerate's
    empty weights) was built and initialised on the CPU. The set gets torch's originals."""
    from torch.utils import _device

    originals = {patching.get_original(torch, name) for name in FACTORY_NAMES if patching.is_patched(torch, name)}

    def with_originals(original):
        constructors = set()

        def device_constructors():
            if not constructors:
                constructors.update(original(), originals)
            return constructors

        return device_constructors

    patching.wrap(_device, "_device_constructors", with_originals, shim)



_count_type = counter(SHIM_LEGACY_TYPES)


# --- legacy tensor types, generators, torch.amp.GradScaler -----------------------------

LEGACY_TYPE_NAMES = (
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
)
LEGACY_STORAGE_NAMES = (
    "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "ByteStorage", "CharStorage",
    "ShortStorage", "IntStorage", "LongStorage", "BoolStorage", "ComplexFloatStorage", "ComplexDoubleStorage",
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
            patching.replace_attribute(cuda, name, cpu_type, SHIM_LEGACY_TYPES)  # a type: torch's own object, unmarked
    # torch.cuda.FloatStorage & co. are the CPU storage types (FloatStorage(n), from_buffer,
    # isinstance), and torch.cuda.sparse.FloatTensor & co. the CPU sparse ones.
    for name in LEGACY_STORAGE_NAMES:
        cpu_type = getattr(torch, name, None)
        if cpu_type is not None and hasattr(cuda, name) and getattr(cuda, name) is not cpu_type:
            patching.replace_attribute(cuda, name, cpu_type, SHIM_LEGACY_TYPES)
    cuda_sparse, cpu_sparse = getattr(cuda, "sparse", None), getattr(torch, "sparse", None)
    if cuda_sparse is not None and cpu_sparse is not None:
        for name in LEGACY_TYPE_NAMES:
            cpu_type = getattr(cpu_sparse, name, None)
            if cpu_type is not None and hasattr(cuda_sparse, name) and getattr(cuda_sparse, name) is not cpu_type:
                patching.replace_attribute(cuda_sparse, name, cpu_type, SHIM_LEGACY_TYPES)

    Tensor = torch.Tensor
    original_type = Tensor.type

    def type(self, *args, **kwargs):  # noqa: A001 - torch's name
        dtype = args[0] if args else kwargs.get("dtype")
        if dtype.__class__ is str and dtype.startswith(_CUDA_TYPE_PREFIX):
            _count_type("Tensor.type")
            cpu_name = "torch." + dtype[len(_CUDA_TYPE_PREFIX):]
            if args:
                args = (cpu_name,) + args[1:]
            else:
                kwargs["dtype"] = cpu_name
        return original_type(self, *args, **kwargs)

    if not patching.wrapped_by(original_type, SHIM_LEGACY_TYPES):
        patching.replace_attribute(Tensor, "type", _dress(type, original_type, "Tensor.type"), SHIM_LEGACY_TYPES)



_count_generator = counter(SHIM_GENERATOR)


def _patch_generator(torch, is_cuda) -> None:
    """``torch.Generator(device='cuda')`` makes a CPU generator. The class cannot be
    subclassed usefully (torch's own generators would not be instances), so
    ``torch.Generator`` becomes a class whose metaclass builds torch's generators and
    answers ``isinstance``/``issubclass`` for them."""
    original = torch.Generator
    if patching.wrapped_by(original, SHIM_GENERATOR):
        return

    class GeneratorType(type):
        def __call__(cls, device="cpu"):
            if is_cuda(device):
                _count_generator("torch.Generator(device=cuda)")
                device = _CPU
            return original(device)

        def __instancecheck__(cls, instance) -> bool:
            return isinstance(instance, original)

        def __subclasscheck__(cls, subclass) -> bool:
            return issubclass(subclass, original)

    Generator = GeneratorType("Generator", (), {"__doc__": original.__doc__, "__module__": "torch",
                                                "__wrapped__": original})
    patching.replace_attribute(torch, "Generator", Generator, SHIM_GENERATOR)



_count_scaler = counter(SHIM_AMP_SCALER)


def _patch_amp_grad_scaler(torch, is_cuda) -> None:
    """``torch.amp.GradScaler('cuda')`` (device defaults to 'cuda') is the scale-1
    passthrough of ``torch.cuda.amp.GradScaler``. Torch itself would disable it with a
    warning, but a disabled scaler's ``state_dict()`` is empty, and a real GPU scaler
    refuses to load that when the run resumes on a GPU."""
    amp = torch.amp
    original = amp.GradScaler
    if patching.wrapped_by(original, SHIM_AMP_SCALER):
        return

    class AmpGradScaler(original):
        __doc__ = original.__doc__

        def __new__(cls, device="cuda", *args, **kwargs):
            if cls is AmpGradScaler and is_cuda(device):
                from compatfix.cpu.torch.cuda import GradScaler

                return GradScaler(*args, **kwargs)
            return super().__new__(cls)

    AmpGradScaler.__name__ = AmpGradScaler.__qualname__ = "GradScaler"
    AmpGradScaler.__module__ = original.__module__
    for module in (amp, getattr(amp, "grad_scaler", None)):
        if module is not None and getattr(module, "GradScaler", None) is original:
            patching.replace_attribute(module, "GradScaler", AmpGradScaler, SHIM_AMP_SCALER)



_count_load = counter(SHIM_LOAD)


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
        _count_load("torch.load(map_location)")
        return original_load(f, map_to_cpu(map_location), *args, **kwargs)

    _dress(load, original_load, "load")
    load.__module__ = "torch.serialization"
    patching.replace_attribute(torch, "load", load, SHIM_LOAD)
    patching.replace_attribute(serialization, "load", load, SHIM_LOAD)

    def storage_cuda(self, device=None, non_blocking=False):
        _count_load("Storage.cuda")
        return self

    for owner in (torch.UntypedStorage, torch.TypedStorage):
        patching.replace_attribute(owner, "cuda", _dress(_rebind(storage_cuda), owner.cuda, owner.__name__ + ".cuda"), SHIM_LOAD)


def _rebind(function):
    """A copy of ``function`` (its own object, so each owner gets its own attribute)."""

    def copy(*args, **kwargs):
        return function(*args, **kwargs)

    return copy



# --- half precision: float32 at every cast point ---------------------------------------------

SHIM_HALF = "cpu.torch.half_as_float32"
_count_half = counter(SHIM_HALF)

# Spellings of float16 that Tensor.type accepts (the CUDA ones reach it as 'torch.HalfTensor'
# once cpu.torch.legacy_types has mapped them, or as torch.FloatTensor once this shim has).
_HALF_TYPE_NAMES = ("torch.HalfTensor", "torch.cuda.HalfTensor")


def _patch_half(torch) -> None:
    """CPU mode's precision policy (docs/cpu-mode.md, "Half precision"): every explicit cast
    to float16 keeps float32. ``Tensor.half()``, ``Module.half()``, ``.to(torch.float16)``
    (tensor and module, positional or ``dtype=``), ``Tensor.type(torch.float16 |
    'torch.cuda.HalfTensor' | torch.HalfTensor)``, ``dtype=torch.float16`` in tensor
    factories and ``Tensor.new_*``, and ``torch.cuda.HalfTensor`` (``torch.FloatTensor``).
    So mmcv's ``auto_fp16``, apex O2/O3's ``model.half()``, ``network_to_half`` and
    ``FP16_Optimizer`` never meet float32 weights or inputs, and nothing computes in
    float16 on the CPU (14x slower than float32 there). A tensor cast to "half" is a new
    tensor, as the real cast makes one (also with ``copy=False``, which a real cast to
    another dtype ignores too), so writing into it leaves the source alone."""
    Tensor, Module, half = torch.Tensor, torch.nn.Module, torch.float16
    float32 = torch.float32
    tensor_to = Tensor.to
    preserve = torch.preserve_format

    def tensor_half(original):
        def half_as_float(self, memory_format=preserve):
            _count_half("Tensor.half")
            return tensor_to(self, dtype=float32, copy=True, memory_format=memory_format)

        return half_as_float

    def module_half(original):
        def half_as_float(self):
            _count_half("Module.half")
            return self.float()

        return half_as_float

    def to(copies):
        def wrap_to(original):
            def to_float_for_half(self, *args, **kwargs):
                if kwargs.get("dtype") is half:
                    _count_half("to(dtype=float16)")
                    kwargs["dtype"] = float32
                    if copies and len(args) < 2:
                        kwargs["copy"] = True
                else:
                    for index, arg in enumerate(args):
                        if arg is half:
                            _count_half("to(float16)")
                            args = args[:index] + (float32,) + args[index + 1:]
                            # a positional copy (after non_blocking) follows the dtype: it stays
                            if copies and len(args) - index < 3:
                                kwargs["copy"] = True
                            break
                return original(self, *args, **kwargs)

            return to_float_for_half

        return wrap_to

    half_names = _HALF_TYPE_NAMES
    half_type = torch.HalfTensor

    def tensor_type(original):
        def type_float_for_half(self, *args, **kwargs):  # noqa: A002 - torch's name
            dtype = args[0] if args else kwargs.get("dtype")
            if dtype is half or dtype is half_type or (dtype.__class__ is str and dtype in half_names):
                _count_half("Tensor.type(float16)")
                non_blocking = args[1] if len(args) > 1 else kwargs.get("non_blocking", False)
                return tensor_to(self, dtype=float32, non_blocking=bool(non_blocking), copy=True)
            return original(self, *args, **kwargs)

        return type_float_for_half

    patching.wrap(Tensor, "half", tensor_half, SHIM_HALF)
    patching.wrap(Module, "half", module_half, SHIM_HALF)
    patching.wrap(Tensor, "to", to(True), SHIM_HALF)
    patching.wrap(Module, "to", to(False), SHIM_HALF)
    patching.wrap(Tensor, "type", tensor_type, SHIM_HALF)
    _patch_half_factories(torch, half, float32)
    cuda = torch.cuda
    if getattr(cuda, "HalfTensor", None) is not torch.FloatTensor:
        patching.replace_attribute(cuda, "HalfTensor", torch.FloatTensor, SHIM_HALF)


def _patch_half_factories(torch, half, float32) -> None:
    """``dtype=torch.float16`` in torch's tensor factories and ``Tensor.new_*`` is float32.
    Each factory wrapper is registered with TorchScript as the same aten builtin, as
    cpu.torch.factories' are."""
    from torch.jit import _builtins

    table = _builtins._get_builtin_table()

    def dtype_wrapper(original):
        def float_for_half(*args, **kwargs):
            if kwargs and kwargs.get("dtype") is half:
                _count_half("dtype=float16")
                kwargs["dtype"] = float32
            return original(*args, **kwargs)

        return float_for_half

    for name in FACTORY_NAMES:
        current = getattr(torch, name, None)
        if current is None:
            continue
        op = table.get(id(current))
        if patching.wrap(torch, name, dtype_wrapper, SHIM_HALF):
            getattr(torch, name).__module__ = "torch"
            if op is not None:
                _builtins._register_builtin(getattr(torch, name), op)
    for name in TENSOR_NEW_NAMES:
        patching.wrap(torch.Tensor, name, dtype_wrapper, SHIM_HALF)
    _keep_device_contexts(torch, SHIM_HALF)


def _with_is_cuda(patch):
    """The shim's apply: ``patch(torch, is_cuda)``."""

    def apply(torch) -> None:
        patch(torch, make_is_cuda(torch))

    return apply


def _record(name: str, apply, broke: str, summary: str, default: bool = True) -> Shim:
    return Shim(name, targets=["torch"], kind=AFTER_IMPORT, apply=apply, risk=RISK_BEHAVIOUR, device="cpu",
                default=default,
                broke=broke + " on a machine without a GPU: 'Torch not compiled with CUDA enabled' / "
                "'Found no NVIDIA driver'", summary="CPU mode: " + summary)


SHIMS = (
    _record(SHIM_MOVES, _with_is_cuda(_patch_tensor_and_module),
            "tensor.cuda(), model.cuda(), .to('cuda'), tensor.new_zeros(device='cuda'), pin_memory()",
            "Tensor.cuda/.to('cuda')/new_*(device='cuda'), Module.cuda/.to('cuda') land on the CPU; "
            "pin_memory returns the tensor, record_stream does nothing"),
    _record(SHIM_FACTORIES, _with_is_cuda(_patch_factories),
            "torch.zeros(..., device='cuda') and the other tensor factories",
            "device='cuda' arguments of torch's tensor factories become 'cpu' (TorchScript builtins kept)"),
    _record(SHIM_LOAD, _with_is_cuda(_patch_load),
            "torch.load of a checkpoint saved on a GPU, storage.cuda() in a map_location",
            "torch.load maps CUDA storages to the CPU (map_location None/CUDA/dict/callable)"),
    _record(SHIM_LEGACY_TYPES, _patch_legacy_types,
            "torch.cuda.FloatTensor(3), x.type(torch.cuda.LongTensor), set_default_tensor_type",
            "torch.cuda.FloatTensor & co. are the CPU types; x.type('torch.cuda.X') means 'torch.X'"),
    _record(SHIM_GENERATOR, _with_is_cuda(_patch_generator),
            "torch.Generator(device='cuda')",
            "torch.Generator(device='cuda') is a CPU generator; isinstance holds for torch's generators"),
    _record(SHIM_AMP_SCALER, _with_is_cuda(_patch_amp_grad_scaler),
            "torch.amp.GradScaler('cuda') (its default device)",
            "torch.amp.GradScaler('cuda') is the scale-1 passthrough of torch.cuda.amp.GradScaler "
            "with a real scaler's state_dict keys"),
    _record(SHIM_HALF, _patch_half,
            "x.half() / model.half() / .to(torch.float16) (mmcv auto_fp16 with fp16_enabled, apex O2/O3), "
            "then 'Input type (c10::Half) and bias type (float) should be the same'",
            "half precision is float32 at every cast point: Tensor.half, Module.half and "
            ".to(torch.float16), Tensor.type(float16) and dtype=float16 in factories keep float32, "
            "torch.cuda.HalfTensor is torch.FloatTensor (CPU mode's precision policy)"),
)

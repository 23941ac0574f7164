"""CPU mode for the ``torch.cuda`` namespace: the CPU plays the one CUDA device.

``cpu.torch.cuda.device_queries``: ``is_available``/``device_count``/``is_initialized`` (True,
1 or the launcher's local world size, True to scripts; torch's own modules get torch's
answers), ``set_device``/``current_device`` and ``device(i)`` contexts, per-index device
properties (checked against the count, as torch does), memory
statistics (0), synchronisation, seeding and RNG state on the CPU generator, ``Event``
(wall-clock timing), ``Stream`` and the ``stream`` context (no-ops).
``cpu.torch.cuda.amp``: ``torch.cuda.amp.autocast`` runs its region in float32 and
``torch.cuda.amp.GradScaler`` is a scale-1 passthrough. The decisions behind each answer are
in ``compatfix.cpu.torch`` and docs/cpu-mode.md.
"""

from __future__ import annotations

import functools
import os
import sys
import time

from compatfix import patching
from compatfix.cpu import _devices
from compatfix.cpu._device import counter, dress as _dress
from compatfix.cpu._devices import local_device_count
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_QUERIES = "cpu.torch.cuda.device_queries"
SHIM_AMP = "cpu.torch.cuda.amp"

_count = counter(SHIM_QUERIES)
_count_amp = counter(SHIM_AMP)


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


# --- the devices CPU mode plays ----------------------------------------------------------
#
# One device, or under a launcher as many as the launcher starts on this node (torchrun and
# torch.distributed.launch set LOCAL_WORLD_SIZE; LOCAL_RANK + 1 at least), so that
# ``assert torch.cuda.device_count() > local_rank`` and ``set_device(local_rank)`` hold on
# every rank; how many, and what each reports, is compatfix.cpu._devices' answer, which
# nvidia-smi, pynvml, GPUtil and gpustat give too (compatfix.cpu.subprocess & co.).

_current = [0]  # the current device index (set_device, torch.cuda.device contexts)


def _index(device=None, optional=True) -> int:
    """The device index ``device`` names (None: the current one), checked against the count
    as torch checks it ("invalid device ordinal")."""
    if device is None:
        return _current[0]
    if isinstance(device, str):
        kind, _, number = device.partition(":")
        if kind not in ("cuda", "cpu"):
            raise ValueError("Expected a cuda device, but got: %s" % device)
        index = int(number) if number else _current[0]
    elif isinstance(device, int):
        index = device
    else:
        index = getattr(device, "index", None)
        if getattr(device, "type", "cuda") not in ("cuda", "cpu"):
            raise ValueError("Expected a cuda device, but got: %s" % (device,))
        index = _current[0] if index is None else index
    if index < 0 and optional:
        return _current[0]
    if not 0 <= index < local_device_count():
        raise RuntimeError("CUDA error: invalid device ordinal (device %d; CPU mode plays %d device(s): "
                           "the launcher's LOCAL_WORLD_SIZE or the CUDA_VISIBLE_DEVICES count, else 1)" % (index, local_device_count()))
    return index


class device:  # noqa: N801 - torch's name
    """``with torch.cuda.device(i)``: ``current_device()`` is ``i`` inside (None or -1: no change)."""

    def __init__(self, device):
        self.idx = -1 if device is None else (device if isinstance(device, int) and device < 0 else _index(device))
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _current[0]
        if self.idx >= 0:
            _current[0] = self.idx
        return self

    def __exit__(self, *exc):
        _current[0] = self.prev_idx
        return False


class device_of(device):  # noqa: N801 - torch's name
    """``with torch.cuda.device_of(tensor)``: CPU tensors change nothing."""

    def __init__(self, obj):
        super().__init__(-1)


class autocast:
    """``torch.cuda.amp.autocast`` in CPU mode: the region runs in float32."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        _count_amp("torch.cuda.amp.autocast")
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
        _count_amp("torch.cuda.amp.GradScaler")
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

    _total_memory = _devices.total_memory

    def init():
        pass

    def current_device():
        return _current[0]

    def set_device(device):
        index = _index(device)
        _current[0] = index

    def get_device_name(device=None):
        _index(device)
        return _devices.NAME

    def get_device_capability(device=None):
        _index(device)
        return _devices.CAPABILITY

    def get_device_properties(device=None):
        import types

        index = _index(device)
        return types.SimpleNamespace(
            name=get_device_name(index), major=_devices.CAPABILITY[0], minor=_devices.CAPABILITY[1], total_memory=_total_memory(),
            multi_processor_count=os.cpu_count() or 1, is_integrated=True, is_multi_gpu_board=False,
            uuid=_devices.uuid(index), L2_cache_size=0, warp_size=32, max_threads_per_multi_processor=1,
            regs_per_multiprocessor=0, gcnArchName="", pci_bus_id=0, pci_device_id=index, pci_domain_id=0,
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
        _index(device)
        return 0

    def max_memory_allocated(device=None):
        _index(device)
        return 0

    def memory_reserved(device=None):
        _index(device)
        return 0

    def max_memory_reserved(device=None):
        _index(device)
        return 0

    def memory_cached(device=None):
        _index(device)
        return 0

    def max_memory_cached(device=None):
        _index(device)
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
        _index(device)
        return {}

    def memory_summary(device=None, abbreviated=False):
        return "CPU mode (compatfix --device cpu): no CUDA memory is used.\n"

    def mem_get_info(device=None):
        _index(device)
        return (_devices.free_memory(), _devices.total_memory())

    def set_per_process_memory_fraction(fraction, device=None):
        pass

    # NVML-backed queries (nvidia-ml-py is not there): an idle device, no processes.
    def utilization(device=None):
        _index(device)
        return _devices.UTILIZATION

    def memory_usage(device=None):
        _index(device)
        return _devices.UTILIZATION

    def temperature(device=None):
        _index(device)
        return _devices.TEMPERATURE

    def power_draw(device=None):
        _index(device)
        return _devices.POWER_DRAW_MW

    def clock_rate(device=None):
        _index(device)
        return _devices.CLOCK_MHZ

    def device_memory_used(device=None):
        _index(device)
        return _devices.used_memory()

    def list_gpu_processes(device=None):
        return "GPU:%d\nno processes are running" % _index(device)

    def get_per_process_memory_fraction(device=None):
        _index(device)
        return 1.0

    def can_device_access_peer(device, peer_device):
        _index(device)
        _index(peer_device)
        return False

    def set_stream(stream):
        pass

    def get_sync_debug_mode():
        return 0

    def set_sync_debug_mode(debug_mode):
        pass

    def current_blas_handle():
        return 0

    def current_solver_handle():
        return 0

    def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
        # the callables, run eagerly: they compute what their graphed versions would
        return callables

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
        return [generator.get_state() for _ in range(local_device_count())]

    def set_rng_state(new_state, device="cuda"):
        # A GPU-saved (philox) state has another size and is ignored. The CPU state's size is
        # read here, not at apply time: torch.cuda is patched while torch is still importing.
        if new_state.numel() == generator.get_state().numel():
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
    """A ``torch.cuda`` query that answers ``answer`` (a callable: its result) to scripts
    and libraries, and torch's own answer to torch's internals (``torch`` and ``torch.*``
    callers)."""

    def query(*args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller[:5] == "torch" and (len(caller) == 5 or caller[5] == "."):
            return original(*args, **kwargs)
        _count(what)
        return answer() if callable(answer) else answer

    return query


def _patch_cuda(cuda) -> None:
    import torch

    for name, answer in (("is_available", True), ("device_count", local_device_count), ("is_initialized", True)):
        original = getattr(cuda, name)
        if not patching.wrapped_by(original, SHIM_QUERIES):
            query = _dress(_for_scripts(original, answer, "torch.cuda." + name), original, name)
            query.__module__ = "torch.cuda"
            patching.replace_attribute(cuda, name, query, SHIM_QUERIES)
    random = getattr(cuda, "random", None)  # torch.cuda.random.manual_seed & co.: the same functions
    for name, function in _cuda_functions(torch).items():
        function.__module__ = "torch.cuda"
        function.__qualname__ = name
        counted = _counted(function, "torch.cuda." + name)
        patching.replace_attribute(cuda, name, counted, SHIM_QUERIES)
        if random is not None and name in getattr(random, "__all__", ()):
            patching.replace_attribute(random, name, _counted(function, "torch.cuda.random." + name), SHIM_QUERIES)
    for name, cls in (("Event", Event), ("Stream", Stream), ("ExternalStream", Stream),
                      ("StreamContext", StreamContext), ("device", device), ("device_of", device_of)):
        patching.replace_attribute(cuda, name, cls, SHIM_QUERIES)
    patching.replace_attribute(cuda, "default_generators", (torch.default_generator,), SHIM_QUERIES)
    profiler = getattr(cuda, "profiler", None)  # torch.cuda imports it
    if profiler is not None:
        _patch_profiler(profiler)


def _patch_profiler(profiler) -> None:
    """``torch.cuda.profiler.start()/stop()/profile()`` (nvprof/nsys ranges) do nothing."""

    def start():
        _count("torch.cuda.profiler.start")

    def stop():
        _count("torch.cuda.profiler.stop")

    def profile():
        _count("torch.cuda.profiler.profile")
        return _NullContext()

    for function in (start, stop, profile):
        function.__module__ = "torch.cuda.profiler"
        patching.replace_attribute(profiler, function.__name__, function, SHIM_QUERIES)


def _patch_amp(amp) -> None:
    for module in (amp, getattr(amp, "autocast_mode", None)):
        if module is not None:
            patching.replace_attribute(module, "autocast", autocast, SHIM_AMP)
    for module in (amp, getattr(amp, "grad_scaler", None)):
        if module is not None:
            patching.replace_attribute(module, "GradScaler", GradScaler, SHIM_AMP)



SHIMS = (
    Shim(
        SHIM_QUERIES,
        targets=["torch.cuda"],
        kind=AFTER_IMPORT,
        apply=_patch_cuda,
        risk=RISK_BEHAVIOUR,
        device="cpu",
        broke="torch.cuda.* calls (set_device, synchronize, Event timing, memory queries, manual_seed, "
        "get_rng_state) fail on a machine without a GPU: 'Torch not compiled with CUDA enabled' / "
        "'Found no NVIDIA driver'",
        summary="CPU mode: torch.cuda.* acts as one CPU device (is_available True, device_count 1, "
        "Events time wall clock, memory stats 0, seeding and RNG state on the CPU generator)",
    ),
    Shim(
        SHIM_AMP,
        targets=["torch.cuda.amp"],
        kind=AFTER_IMPORT,
        apply=_patch_amp,
        risk=RISK_BEHAVIOUR,
        device="cpu",
        broke="torch.cuda.amp.GradScaler() disables itself without a GPU, and its empty state_dict "
        "cannot be loaded by a GPU scaler when the run resumes; autocast warns",
        summary="CPU mode: torch.cuda.amp.autocast regions run in float32; torch.cuda.amp.GradScaler is a "
        "scale-1 passthrough with a real scaler's state_dict keys",
    ),
)

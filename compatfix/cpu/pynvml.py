"""CPU mode for NVML's Python bindings, ``pynvml`` (nvidia-ml-py, the older pynvml and
nvidia-ml-py3) and nvidia-ml-py3's ``nvidia_smi``: the calls 2020-22 code makes answer for
the devices CPU mode plays (``compatfix.cpu._devices``: the count, names and memory that
``torch.cuda`` and ``nvidia-smi`` give).

- ``cpu.pynvml.standin``: where the bindings are not installed, ``import pynvml`` (or
  ``nvidia_smi``) gives a module of these answers, with NVML's constants and its
  ``NVMLError`` classes.
- ``cpu.pynvml.answers``: where they are installed, the same functions replace theirs
  (NVML cannot load without a driver, and where one is there CPU mode still plays its own
  devices); the bindings keep their own ``NVMLError`` classes, raised for what a device
  does not support. Functions not answered here raise ``NVMLError_FunctionNotFound``.

Names come back as a ``str`` that also has ``.decode()``: the bindings returned ``bytes``
until 11.515 (2022) and ``str`` since, and code of both kinds is about.
"""

from __future__ import annotations

from compatfix import patching
from compatfix.cpu import _devices
from compatfix.cpu._device import counter
from compatfix.registry import AFTER_IMPORT, PROVIDE, RISK_BEHAVIOUR, Shim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

SHIM_STANDIN = "cpu.pynvml.standin"
SHIM_ANSWERS = "cpu.pynvml.answers"
TARGETS = ("pynvml", "nvidia_smi")

_count = counter(SHIM_ANSWERS)

NVML_SUCCESS = 0
# NVML's error codes, the names of their NVMLError classes and their nvmlErrorString texts
ERRORS = {
    1: ("NVML_ERROR_UNINITIALIZED", "NVMLError_Uninitialized", "Uninitialized"),
    2: ("NVML_ERROR_INVALID_ARGUMENT", "NVMLError_InvalidArgument", "Invalid Argument"),
    3: ("NVML_ERROR_NOT_SUPPORTED", "NVMLError_NotSupported", "Not Supported"),
    4: ("NVML_ERROR_NO_PERMISSION", "NVMLError_NoPermission", "Insufficient Permissions"),
    6: ("NVML_ERROR_NOT_FOUND", "NVMLError_NotFound", "Not Found"),
    9: ("NVML_ERROR_DRIVER_NOT_LOADED", "NVMLError_DriverNotLoaded", "Driver Not Loaded"),
    12: ("NVML_ERROR_LIBRARY_NOT_FOUND", "NVMLError_LibraryNotFound", "NVML Shared Library Not Found"),
    13: ("NVML_ERROR_FUNCTION_NOT_FOUND", "NVMLError_FunctionNotFound", "Function Not Found"),
    15: ("NVML_ERROR_GPU_IS_LOST", "NVMLError_GpuIsLost", "GPU is lost"),
    999: ("NVML_ERROR_UNKNOWN", "NVMLError_Unknown", "Unknown Error"),
}
NOT_SUPPORTED, INVALID_ARGUMENT, NOT_FOUND, FUNCTION_NOT_FOUND = 3, 2, 6, 13

CONSTANTS = {
    "NVML_SUCCESS": NVML_SUCCESS,
    **{name: code for code, (name, _, _) in ERRORS.items()},
    "NVML_TEMPERATURE_GPU": 0,
    "NVML_CLOCK_GRAPHICS": 0, "NVML_CLOCK_SM": 1, "NVML_CLOCK_MEM": 2, "NVML_CLOCK_VIDEO": 3,
    "NVML_COMPUTEMODE_DEFAULT": 0, "NVML_FEATURE_DISABLED": 0, "NVML_FEATURE_ENABLED": 1,
    "NVML_PSTATE_0": 0, "NVML_BRAND_NVIDIA_RTX": 12,
    "nvmlMemory_v2": 0x02000028,  # what nvidia-ml-py >= 11.510 passes as version=
}


class Text(str):
    """A name as NVML returns it: a ``str`` that also answers ``.decode()``."""

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return str(self)


class Handle:
    """A device handle (the bindings' opaque ``c_nvmlDevice_t``)."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Handle) and other.index == self.index

    def __hash__(self) -> int:
        return self.index

    def __repr__(self) -> str:
        return "<nvmlDevice %d (compatfix CPU mode)>" % self.index


class Record:
    """A structure NVML fills in (memory, utilisation, PCI information): its fields as
    attributes, and as ``str()`` the field list the bindings print."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        return "%s(%s)" % (type(self).__name__, ", ".join("%s: %r" % item for item in self.__dict__.items()))


class Memory(Record):
    pass


class Utilization(Record):
    pass


class PciInfo(Record):
    pass


def error_string(code: int) -> str:
    return ERRORS.get(code, ERRORS[999])[2]


def make_errors() -> dict[str, Any]:
    """The stand-in's ``NVMLError`` and one subclass per code: ``NVMLError(code)`` makes an
    instance of the code's class, as the bindings' does."""

    class NVMLError(Exception):
        _by_code: dict[int, type] = {}

        def __new__(cls, value: int):
            if cls is NVMLError:
                cls = NVMLError._by_code.get(value, NVMLError)
            error = Exception.__new__(cls)
            error.value = value
            return error

        def __init__(self, value: int) -> None:
            super().__init__(value)
            self.value = value

        def __str__(self) -> str:
            return error_string(self.value)

    errors: dict[str, Any] = {"NVMLError": NVMLError}
    for code, (_, class_name, _) in ERRORS.items():
        subclass = type(class_name, (NVMLError,), {"__module__": "pynvml"})
        NVMLError._by_code[code] = subclass
        errors[class_name] = subclass
    NVMLError.__module__ = "pynvml"
    return errors


def make_functions(error: Callable[[int], BaseException]) -> dict[str, Callable]:
    """NVML's functions for CPU mode's devices; ``error(code)`` is the exception raised
    for an unsupported query or a bad handle (the bindings' own ``NVMLError(code)``)."""

    def device(handle: Any) -> int:
        if not isinstance(handle, Handle) or not 0 <= handle.index < _devices.local_device_count():
            raise error(INVALID_ARGUMENT)
        return handle.index

    def not_supported(*args: Any, **kwargs: Any) -> Any:
        raise error(NOT_SUPPORTED)

    def nvmlInit() -> None:
        pass

    def nvmlInitWithFlags(flags: int) -> None:
        pass

    def nvmlShutdown() -> None:
        pass

    def nvmlErrorString(result: int) -> Text:
        return Text(error_string(result))

    def nvmlSystemGetDriverVersion() -> Text:
        return Text(_devices.DRIVER_VERSION)

    def nvmlSystemGetNVMLVersion() -> Text:
        return Text(_devices.DRIVER_VERSION)

    def nvmlDeviceGetCount() -> int:
        return _devices.local_device_count()

    def nvmlDeviceGetHandleByIndex(index: int) -> Handle:
        if not isinstance(index, int) or not 0 <= index < _devices.local_device_count():
            raise error(INVALID_ARGUMENT)
        return Handle(index)

    def nvmlDeviceGetHandleByUUID(uuid: Any) -> Handle:
        wanted = uuid.decode() if isinstance(uuid, bytes) else str(uuid)
        for index in range(_devices.local_device_count()):
            if wanted == "GPU-" + _devices.uuid(index):
                return Handle(index)
        raise error(NOT_FOUND)

    def nvmlDeviceGetHandleByPciBusId(pci_bus_id: Any) -> Handle:
        wanted = (pci_bus_id.decode() if isinstance(pci_bus_id, bytes) else str(pci_bus_id)).upper()
        for index in range(_devices.local_device_count()):
            if wanted in (_devices.pci_bus_id(index), _devices.pci_bus_id(index)[4:]):
                return Handle(index)
        raise error(NOT_FOUND)

    def nvmlDeviceGetIndex(handle: Any) -> int:
        return device(handle)

    def nvmlDeviceGetMinorNumber(handle: Any) -> int:
        return device(handle)

    def nvmlDeviceGetName(handle: Any) -> Text:
        device(handle)
        return Text(_devices.NAME)

    def nvmlDeviceGetUUID(handle: Any) -> Text:
        return Text("GPU-" + _devices.uuid(device(handle)))

    def nvmlDeviceGetPciInfo(handle: Any) -> PciInfo:
        index = device(handle)
        bus_id = Text(_devices.pci_bus_id(index))
        return PciInfo(busId=bus_id, busIdLegacy=Text(bus_id[4:]), domain=0, bus=0, device=index,
                       pciDeviceId=0, pciSubSystemId=0)

    def nvmlDeviceGetMemoryInfo(handle: Any, version: Any = None) -> Memory:
        device(handle)
        return Memory(total=_devices.total_memory(), free=_devices.free_memory(), used=_devices.used_memory(),
                      reserved=0)

    def nvmlDeviceGetUtilizationRates(handle: Any) -> Utilization:
        device(handle)
        return Utilization(gpu=_devices.UTILIZATION, memory=_devices.UTILIZATION)

    def nvmlDeviceGetTemperature(handle: Any, sensor: int = 0) -> int:
        device(handle)
        return _devices.TEMPERATURE

    def nvmlDeviceGetPowerUsage(handle: Any) -> int:
        device(handle)
        return _devices.POWER_DRAW_MW

    def nvmlDeviceGetClockInfo(handle: Any, clock_type: int = 0) -> int:
        device(handle)
        return _devices.CLOCK_MHZ

    def nvmlDeviceGetComputeRunningProcesses(handle: Any) -> list:
        device(handle)
        return []  # CPU mode runs nothing on a GPU

    def nvmlDeviceGetCudaComputeCapability(handle: Any) -> tuple[int, int]:
        device(handle)
        return _devices.CAPABILITY

    def nvmlDeviceGetPerformanceState(handle: Any) -> int:
        device(handle)
        return 0

    def nvmlDeviceGetPersistenceMode(handle: Any) -> int:
        device(handle)
        return 0

    def _nvmlGetFunctionPointer(name: str) -> Any:
        raise error(FUNCTION_NOT_FOUND)  # no NVML library: what is not answered here is not found

    functions = {name: value for name, value in locals().items()
                 if callable(value) and name.startswith(("nvml", "_nvml"))}
    functions.update(
        nvmlSystemGetCudaDriverVersion=not_supported, nvmlSystemGetCudaDriverVersion_v2=not_supported,
        nvmlDeviceGetHandleByIndex_v2=nvmlDeviceGetHandleByIndex,
        nvmlDeviceGetHandleByPciBusId_v2=nvmlDeviceGetHandleByPciBusId,
        nvmlDeviceGetPciInfo_v3=nvmlDeviceGetPciInfo,
        nvmlDeviceGetSerial=not_supported, nvmlDeviceGetFanSpeed=not_supported,
        nvmlDeviceGetEnforcedPowerLimit=not_supported, nvmlDeviceGetPowerManagementLimit=not_supported,
        nvmlDeviceGetEncoderUtilization=not_supported, nvmlDeviceGetDecoderUtilization=not_supported,
        nvmlDeviceGetMaxClockInfo=nvmlDeviceGetClockInfo,
        nvmlDeviceGetComputeRunningProcesses_v2=nvmlDeviceGetComputeRunningProcesses,
        nvmlDeviceGetComputeRunningProcesses_v3=nvmlDeviceGetComputeRunningProcesses,
        nvmlDeviceGetGraphicsRunningProcesses=nvmlDeviceGetComputeRunningProcesses,
        nvmlDeviceGetGraphicsRunningProcesses_v2=nvmlDeviceGetComputeRunningProcesses,
        nvmlDeviceGetGraphicsRunningProcesses_v3=nvmlDeviceGetComputeRunningProcesses,
        nvmlDeviceGetDisplayMode=nvmlDeviceGetPersistenceMode,
        nvmlDeviceGetDisplayActive=nvmlDeviceGetPersistenceMode,
        nvmlDeviceGetComputeMode=nvmlDeviceGetPersistenceMode,
    )
    return functions


def _counted(function: Callable, module_name: str, name: str) -> Callable:
    def answered(*args: Any, **kwargs: Any) -> Any:
        _count("%s.%s" % (module_name, name))
        return function(*args, **kwargs)

    answered.__name__ = answered.__qualname__ = name
    answered.__module__ = module_name
    answered.__doc__ = "%s in compatfix CPU mode: answers for the devices torch.cuda plays." % name
    return answered


def provide(module) -> None:
    """Fill the new, empty ``pynvml`` / ``nvidia_smi`` module with the stand-in."""
    errors = make_errors()
    names: dict[str, Any] = dict(CONSTANTS)
    names.update(errors)
    names.update({name: _counted(function, module.__name__, name)
                  for name, function in make_functions(errors["NVMLError"]).items()})
    names["__doc__"] = ("compatfix CPU mode's stand-in for NVML's Python bindings: answers for the "
                        "devices torch.cuda plays (--device cpu). See compatfix's docs/cpu-mode.md.")
    patching.restore_names(module, {name: value for name, value in names.items() if name != "__doc__"},
                           SHIM_STANDIN)
    module.__doc__ = names["__doc__"]


def answer_installed(module):
    """Replace the installed bindings' functions with CPU mode's answers (a str: why there
    was nothing to do, for the report)."""
    error = getattr(module, "NVMLError", None)
    if error is None:
        return "%s has no NVMLError: not NVML's bindings" % module.__name__
    for name, function in make_functions(error).items():
        current = getattr(module, name, None)
        if current is None and not name.startswith("_"):
            continue  # an older binding without this function: leave it without
        if current is not None and patching.wrapped_by(current, SHIM_ANSWERS):
            continue
        patching.replace_attribute(module, name, _counted(function, module.__name__, name), SHIM_ANSWERS)
    return None


SHIMS = (
    Shim(
        SHIM_STANDIN,
        targets=TARGETS,
        kind=PROVIDE,
        apply=provide,
        risk=RISK_BEHAVIOUR,
        device="cpu",
        broke="`import pynvml` (or nvidia-ml-py3's nvidia_smi) fails where the NVML bindings are "
        "not installed, so GPU memory and utilisation queries stop the run",
        summary="CPU mode: a stand-in pynvml / nvidia_smi answering nvmlInit, nvmlDeviceGetCount, "
        "handles, names, memory, utilisation and processes for the devices torch.cuda plays",
    ),
    Shim(
        SHIM_ANSWERS,
        targets=TARGETS,
        kind=AFTER_IMPORT,
        apply=answer_installed,
        risk=RISK_BEHAVIOUR,
        device="cpu",
        broke="the installed NVML bindings raise NVMLError_LibraryNotFound / DriverNotLoaded at "
        "nvmlInit() on a machine without an NVIDIA driver, and describe the real GPUs where there is one",
        summary="CPU mode: the installed pynvml's device queries answer for the devices torch.cuda plays",
    ),
)

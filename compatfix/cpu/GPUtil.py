"""CPU mode for GPUtil: where it is not installed, ``import GPUtil`` gives a stand-in with
its API (``getGPUs``, ``getAvailable``, ``getFirstAvailable``, ``getAvailability``,
``showUtilization``, ``GPU``) answering for the devices CPU mode plays
(``compatfix.cpu._devices``). An installed GPUtil needs no shim of its own: it runs
``nvidia-smi --query-gpu=… --format=csv,noheader,nounits`` through ``subprocess.Popen``,
which ``cpu.subprocess.nvidia_smi`` answers with the same numbers.
"""

from __future__ import annotations

import math
import random
import time

from compatfix import patching
from compatfix.cpu import _devices
from compatfix.cpu._device import counter
from compatfix.registry import PROVIDE, RISK_BEHAVIOUR, Shim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SHIM = "cpu.GPUtil.standin"
_count = counter(SHIM)


class GPU:
    """One device as GPUtil describes it: memory in MiB (floats, as GPUtil parses
    nvidia-smi), ``load`` and ``memoryUtil`` as fractions."""

    def __init__(self, ID, uuid, load, memoryTotal, memoryUsed, memoryFree, driver, gpu_name, serial,  # noqa: N803 - GPUtil's names
                 display_mode, display_active, temp_gpu):
        self.id = ID
        self.uuid = uuid
        self.load = load
        self.memoryUtil = float(memoryUsed) / float(memoryTotal) if memoryTotal else math.nan
        self.memoryTotal = memoryTotal
        self.memoryUsed = memoryUsed
        self.memoryFree = memoryFree
        self.driver = driver
        self.name = gpu_name
        self.serial = serial
        self.display_mode = display_mode
        self.display_active = display_active
        self.temperature = temp_gpu


def getGPUs() -> list[GPU]:  # noqa: N802 - GPUtil's name
    _count("GPUtil.getGPUs")
    total = float(_devices.total_memory() // _devices.MIB)
    used = float(_devices.used_memory() // _devices.MIB)
    return [GPU(index, "GPU-" + _devices.uuid(index), _devices.UTILIZATION / 100.0, total, used, total - used,
                _devices.DRIVER_VERSION, _devices.NAME, "[N/A]", "Disabled", "Disabled", float(_devices.TEMPERATURE))
            for index in range(_devices.local_device_count())]


def getAvailability(GPUs, maxLoad=0.5, maxMemory=0.5, memoryFree=0, includeNan=False, excludeID=(),  # noqa: N802, N803
                    excludeUUID=()):
    """1 for each device under both thresholds, with ``memoryFree`` MiB free, not excluded."""
    def under(value, limit):
        return value < limit or (includeNan and math.isnan(value))

    return [1 if (gpu.memoryFree >= memoryFree and under(gpu.load, maxLoad) and under(gpu.memoryUtil, maxMemory)
                  and gpu.id not in excludeID and gpu.uuid not in excludeUUID) else 0
            for gpu in GPUs]


def getAvailable(order="first", limit=1, maxLoad=0.5, maxMemory=0.5, memoryFree=0, includeNan=False,  # noqa: N802, N803
                 excludeID=(), excludeUUID=()):
    """The ids of up to ``limit`` available devices, in ``order`` ('first', 'last',
    'random', 'load' or 'memory')."""
    gpus = getGPUs()
    flags = getAvailability(gpus, maxLoad, maxMemory, memoryFree, includeNan, excludeID, excludeUUID)
    available = [gpu for gpu, flag in zip(gpus, flags) if flag]
    if order == "last":
        available.sort(key=lambda gpu: gpu.id, reverse=True)
    elif order == "random":
        random.shuffle(available)
    elif order == "load":
        available.sort(key=lambda gpu: gpu.load)
    elif order == "memory":
        available.sort(key=lambda gpu: gpu.memoryUtil)
    return [gpu.id for gpu in available[:int(min(limit, len(available)))]]


def getFirstAvailable(order="first", maxLoad=0.5, maxMemory=0.5, attempts=1, interval=900, verbose=False,  # noqa: N802, N803
                      includeNan=False, excludeID=(), excludeUUID=()):
    """``[id]`` of the first available device, trying ``attempts`` times ``interval``
    seconds apart; RuntimeError when none is, as GPUtil raises."""
    for attempt in range(int(attempts)):
        if verbose:
            print("Attempting (%d/%d) to locate available GPU." % (attempt + 1, attempts))
        available = getAvailable(order=order, limit=1, maxLoad=maxLoad, maxMemory=maxMemory, includeNan=includeNan,
                                 excludeID=excludeID, excludeUUID=excludeUUID)
        if available:
            if verbose:
                print("GPU " + str(available) + " located!")
            return available
        if attempt + 1 < attempts:
            time.sleep(interval)
    raise RuntimeError("Could not find an available GPU after %s attempts with %s seconds interval."
                       % (attempts, interval))


_BASIC = [[{"attr": "id", "name": "ID"}, {"attr": "load", "name": "GPU", "suffix": "%", "scale": 100},
           {"attr": "memoryUtil", "name": "MEM", "suffix": "%", "scale": 100}]]
_ALL = [[{"attr": "id", "name": "ID"}, {"attr": "name", "name": "Name"}, {"attr": "serial", "name": "Serial"},
         {"attr": "uuid", "name": "UUID"}],
        [{"attr": "temperature", "name": "GPU temp.", "suffix": "C"},
         {"attr": "load", "name": "GPU util.", "suffix": "%", "scale": 100},
         {"attr": "memoryUtil", "name": "Memory util.", "suffix": "%", "scale": 100}],
        [{"attr": "memoryTotal", "name": "Memory total", "suffix": "MB"},
         {"attr": "memoryUsed", "name": "Memory used", "suffix": "MB"},
         {"attr": "memoryFree", "name": "Memory free", "suffix": "MB"}],
        [{"attr": "display_mode", "name": "Display mode"}, {"attr": "display_active", "name": "Display active"}]]


def _cell(gpu: GPU, column: dict[str, Any]) -> str:
    value = getattr(gpu, column["attr"])
    if isinstance(value, float):
        value = "%.0f" % (value * column.get("scale", 1))
    return str(value) + column.get("suffix", "")


def showUtilization(all=False, attrList=None, useOldCode=False):  # noqa: N802, N803, A002 - GPUtil's names
    """Print GPUtil's table of the devices (``all``: every attribute; ``attrList``: groups
    of ``{'attr', 'name', 'suffix'}`` columns)."""
    groups = attrList if attrList is not None else (_ALL if all else _BASIC)
    gpus = getGPUs()
    columns = [column for group in groups for column in group]
    cells = [[_cell(gpu, column) for column in columns] for gpu in gpus]
    widths = [max([len(column["name"])] + [len(row[i]) for row in cells]) for i, column in enumerate(columns)]
    header = "| " + " | ".join(column["name"].rjust(width) for column, width in zip(columns, widths)) + " |"
    print(header)
    print("-" * len(header))
    for row in cells:
        print("| " + " | ".join(cell.rjust(width) for cell, width in zip(row, widths)) + " |")


def provide(module) -> None:
    names = {"GPU": GPU, "getGPUs": getGPUs, "getAvailability": getAvailability, "getAvailable": getAvailable,
             "getFirstAvailable": getFirstAvailable, "showUtilization": showUtilization,
             "__version__": "1.4.0"}  # the GPUtil release whose API this is
    patching.restore_names(module, names, SHIM)
    module.__doc__ = ("compatfix CPU mode's stand-in for GPUtil: answers for the devices torch.cuda "
                      "plays (--device cpu). See compatfix's docs/cpu-mode.md.")


SHIMS = (
    Shim(
        SHIM,
        targets=["GPUtil"],
        kind=PROVIDE,
        apply=provide,
        risk=RISK_BEHAVIOUR,
        device="cpu",
        broke="`import GPUtil` fails where GPUtil is not installed, and where it is, getGPUs() finds "
        "no nvidia-smi without NVIDIA's tools: getFirstAvailable() raises 'Could not find an available GPU'",
        summary="CPU mode: a stand-in GPUtil (getGPUs, getAvailable, getFirstAvailable, showUtilization) "
        "for the devices torch.cuda plays; an installed GPUtil is answered through nvidia-smi",
    ),
)

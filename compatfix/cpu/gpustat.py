"""CPU mode for gpustat: where it is not installed, ``import gpustat`` gives a stand-in with
the API 2020-22 code uses (``new_query()``, ``GPUStatCollection`` with ``.gpus``,
``jsonify()``, ``print_formatted()``, ``GPUStat`` with ``.index``, ``.memory_used``,
``.memory_total``, ``.utilization``, ``.processes``, ``entry[...]``, ``print_gpustat``,
``gpu_count``, ``is_available``) answering for the devices CPU mode plays. An installed
gpustat needs no shim of its own: it asks pynvml, which ``cpu.pynvml.answers`` answers
with the same numbers.
"""

from __future__ import annotations

import datetime
import json
import platform
import sys

from compatfix import patching
from compatfix.cpu import _devices
from compatfix.cpu._device import counter
from compatfix.registry import PROVIDE, RISK_BEHAVIOUR, Shim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

SHIM = "cpu.gpustat.standin"
_count = counter(SHIM)
MB = 1024 * 1024  # gpustat's "MB" is a MiB


class GPUStat:
    """One device: gpustat's ``entry`` dict (None where NVML reports "Not Supported", as
    gpustat leaves it) and its properties."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry = entry

    def __getitem__(self, key: str) -> Any:
        return self.entry[key]

    def keys(self):
        return self.entry.keys()

    index = property(lambda self: self.entry["index"])
    uuid = property(lambda self: self.entry["uuid"])
    name = property(lambda self: self.entry["name"])
    memory_total = property(lambda self: self.entry["memory.total"])
    memory_used = property(lambda self: self.entry["memory.used"])
    memory_free = property(lambda self: self.entry["memory.total"] - self.entry["memory.used"])
    memory_available = memory_free
    temperature = property(lambda self: self.entry["temperature.gpu"])
    fan_speed = property(lambda self: self.entry["fan.speed"])
    utilization = property(lambda self: self.entry["utilization.gpu"])
    utilization_enc = property(lambda self: self.entry["utilization.enc"])
    utilization_dec = property(lambda self: self.entry["utilization.dec"])
    power_draw = property(lambda self: self.entry["power.draw"])
    power_limit = property(lambda self: self.entry["enforced.power.limit"])
    processes = property(lambda self: self.entry["processes"])

    def jsonify(self) -> dict[str, Any]:
        return dict(self.entry)

    def __repr__(self) -> str:
        return "<GPUStat [%d] %s | %s°C, %s %% | %d / %d MB>" % (
            self.index, self.name, self.temperature, self.utilization, self.memory_used, self.memory_total)


def _entry(index: int) -> dict[str, Any]:
    return {
        "index": index, "uuid": "GPU-" + _devices.uuid(index), "name": _devices.NAME,
        "temperature.gpu": _devices.TEMPERATURE, "fan.speed": None, "utilization.gpu": _devices.UTILIZATION,
        "utilization.enc": None, "utilization.dec": None, "power.draw": _devices.POWER_DRAW_MW // 1000,
        "enforced.power.limit": None, "memory.used": _devices.used_memory() // MB,
        "memory.total": _devices.total_memory() // MB, "processes": [],
    }


class GPUStatCollection:
    """The devices of this machine, as one query found them."""

    def __init__(self, gpu_list: list[GPUStat], driver_version: str | None = None) -> None:
        self.gpus = gpu_list
        self.hostname = platform.node()
        self.query_time = datetime.datetime.now()
        self.driver_version = driver_version

    @staticmethod
    def new_query(debug: bool = False, id: Any = None) -> GPUStatCollection:  # noqa: A002 - gpustat's name
        _count("gpustat.new_query")
        indices = list(range(_devices.local_device_count()))
        if id is not None:
            wanted = [id] if isinstance(id, int) else [int(part) for part in str(id).split(",")]
            indices = [index for index in indices if index in wanted]
        return GPUStatCollection([GPUStat(_entry(index)) for index in indices], _devices.DRIVER_VERSION)

    def __len__(self) -> int:
        return len(self.gpus)

    def __iter__(self) -> Iterator[GPUStat]:
        return iter(self.gpus)

    def __getitem__(self, index: int) -> GPUStat:
        return self.gpus[index]

    def jsonify(self) -> dict[str, Any]:
        return {"hostname": self.hostname, "driver_version": self.driver_version, "query_time": self.query_time,
                "gpus": [gpu.jsonify() for gpu in self]}

    def print_formatted(self, fp: Any = None, **kwargs: Any) -> None:
        fp = sys.stdout if fp is None else fp
        fp.write("%s  %s  %s\n" % (self.hostname, self.query_time.strftime("%a %b %d %H:%M:%S %Y"), self.driver_version))
        for gpu in self:
            fp.write("[%d] %s | %3d°C, %3d %% | %5d / %5d MB |\n"
                     % (gpu.index, gpu.name, gpu.temperature, gpu.utilization, gpu.memory_used, gpu.memory_total))

    def print_json(self, fp: Any = None) -> None:
        fp = sys.stdout if fp is None else fp
        fp.write(json.dumps(self.jsonify(), default=lambda value: value.isoformat(), indent=4, separators=(",", ":")))
        fp.write("\n")

    def __repr__(self) -> str:
        return "\n".join([self.hostname] + [repr(gpu) for gpu in self])


def new_query() -> GPUStatCollection:
    return GPUStatCollection.new_query()


def gpu_count() -> int:
    return _devices.local_device_count()


def is_available() -> bool:
    return True


def print_gpustat(*, id: Any = None, json: bool = False, debug: bool = False, **kwargs: Any) -> None:  # noqa: A002
    stats = GPUStatCollection.new_query(debug=debug, id=id)
    if json:
        stats.print_json(sys.stdout)
    else:
        stats.print_formatted(sys.stdout, **kwargs)


def provide(module) -> None:
    names = {"GPUStat": GPUStat, "GPUStatCollection": GPUStatCollection, "new_query": new_query,
             "gpu_count": gpu_count, "is_available": is_available, "print_gpustat": print_gpustat,
             "__version__": "1.0.0"}  # the gpustat release whose API this is
    patching.restore_names(module, names, SHIM)
    module.__doc__ = ("compatfix CPU mode's stand-in for gpustat: answers for the devices torch.cuda "
                      "plays (--device cpu). See compatfix's docs/cpu-mode.md.")


SHIMS = (
    Shim(
        SHIM,
        targets=["gpustat"],
        kind=PROVIDE,
        apply=provide,
        risk=RISK_BEHAVIOUR,
        device="cpu",
        broke="`import gpustat` fails where gpustat is not installed, and where it is, new_query() "
        "raises NVMLError_LibraryNotFound without an NVIDIA driver",
        summary="CPU mode: a stand-in gpustat (new_query, GPUStatCollection, GPUStat, print_gpustat) for "
        "the devices torch.cuda plays; an installed gpustat is answered through pynvml",
    ),
)

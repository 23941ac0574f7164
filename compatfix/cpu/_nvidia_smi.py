"""What the ``nvidia-smi`` program answers in CPU mode, and which commands run it (no
shims here: ``compatfix.cpu.subprocess`` and ``compatfix.cpu.os`` use these). The queries
2020-22 scripts make through ``os.popen``, ``os.system`` and ``subprocess`` (``run``,
``check_output``, ``Popen``, ``getoutput``) are answered for the devices CPU mode plays
(``compatfix.cpu._devices``, the numbers ``torch.cuda`` gives), without running a process.

A command is intercepted only when its program is ``nvidia-smi`` (the
basename of ``argv[0]``, or the first word of a shell string) and its arguments are a form
answered here: plain ``nvidia-smi``, ``-L``, ``--query-gpu=… --format=csv[,noheader][,nounits]``
(with ``-i``), ``--query-compute-apps=…`` and ``-q -d MEMORY|UTILIZATION``. Every other
command runs as it would (``nvidia-smi topo -m`` too). In a shell string, what follows the
``nvidia-smi`` command (``| grep Free > tmp``) still runs in the shell, reading the answer
from ``printf`` in place of ``nvidia-smi``'s output.

POSIX only: Windows pipes are handles, not descriptors.
"""

from __future__ import annotations

import os
import time

from compatfix.cpu import _devices

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

PROGRAM = "nvidia-smi"
NA = "[N/A]"  # what nvidia-smi prints for a field a device does not support


# --- what nvidia-smi answers ---------------------------------------------------------------


def _mib(value: int) -> str:
    return str(value // _devices.MIB)


# Each field of --query-gpu: (the name nvidia-smi prints in the header, its unit, its value
# on device i). The names and units are nvidia-smi's (`nvidia-smi --help-query-gpu`).
_GPU_FIELDS: dict[str, tuple[str, str, Callable[[int], str]]] = {
    "timestamp": ("timestamp", "", lambda i: time.strftime("%Y/%m/%d %H:%M:%S.000")),
    "driver_version": ("driver_version", "", lambda i: _devices.DRIVER_VERSION),
    "count": ("count", "", lambda i: str(_devices.local_device_count())),
    "index": ("index", "", str),
    "name": ("name", "", lambda i: _devices.NAME),
    "uuid": ("uuid", "", lambda i: "GPU-" + _devices.uuid(i)),
    "pci.bus_id": ("pci.bus_id", "", _devices.pci_bus_id),
    "serial": ("serial", "", lambda i: NA),
    "vbios_version": ("vbios_version", "", lambda i: NA),
    "display_mode": ("display_mode", "", lambda i: "Disabled"),
    "display_active": ("display_active", "", lambda i: "Disabled"),
    "persistence_mode": ("persistence_mode", "", lambda i: "Disabled"),
    "pstate": ("pstate", "", lambda i: "P0"),
    "compute_mode": ("compute_mode", "", lambda i: "Default"),
    "compute_cap": ("compute_cap", "", lambda i: "%d.%d" % _devices.CAPABILITY),
    "memory.total": ("memory.total", "MiB", lambda i: _mib(_devices.total_memory())),
    "memory.used": ("memory.used", "MiB", lambda i: _mib(_devices.used_memory())),
    "memory.free": ("memory.free", "MiB", lambda i: _mib(_devices.free_memory())),
    "utilization.gpu": ("utilization.gpu", "%", lambda i: str(_devices.UTILIZATION)),
    "utilization.memory": ("utilization.memory", "%", lambda i: str(_devices.UTILIZATION)),
    "temperature.gpu": ("temperature.gpu", "", lambda i: str(_devices.TEMPERATURE)),
    "power.draw": ("power.draw", "W", lambda i: "%.2f" % (_devices.POWER_DRAW_MW / 1000)),
    "power.limit": ("power.limit", "W", lambda i: NA),
    "fan.speed": ("fan.speed", "%", lambda i: NA),
    "clocks.current.graphics": ("clocks.current.graphics", "MHz", lambda i: str(_devices.CLOCK_MHZ)),
    "clocks.current.sm": ("clocks.current.sm", "MHz", lambda i: str(_devices.CLOCK_MHZ)),
    "clocks.current.memory": ("clocks.current.memory", "MHz", lambda i: str(_devices.CLOCK_MHZ)),
    "clocks.max.graphics": ("clocks.max.graphics", "MHz", lambda i: str(_devices.CLOCK_MHZ)),
    "clocks.max.sm": ("clocks.max.sm", "MHz", lambda i: str(_devices.CLOCK_MHZ)),
    "clocks.max.memory": ("clocks.max.memory", "MHz", lambda i: str(_devices.CLOCK_MHZ)),
}
# nvidia-smi's other spellings of the same fields
_GPU_ALIASES = {
    "gpu_name": "name", "gpu_uuid": "uuid", "gpu_bus_id": "pci.bus_id", "gpu_serial": "serial",
    "clocks.gr": "clocks.current.graphics", "clocks.sm": "clocks.current.sm",
    "clocks.mem": "clocks.current.memory", "clocks.max.gr": "clocks.max.graphics",
    "clocks.max.mem": "clocks.max.memory", "temperature.gpu.current": "temperature.gpu",
}
# --query-compute-apps: CPU mode runs nothing on a GPU, so the list is empty; the header
# names what was asked for.
_APP_FIELDS = {
    "timestamp": "", "gpu_name": "", "gpu_bus_id": "", "gpu_serial": "", "gpu_uuid": "", "pid": "",
    "process_name": "", "name": "", "used_gpu_memory": "MiB", "used_memory": "MiB",
}


def _csv(fields: list[str], header: bool, units: bool, rows: list[list[str]], unit_of: Callable[[str], str]) -> str:
    lines = []
    if header:
        lines.append(", ".join(name + (" [%s]" % unit_of(name) if unit_of(name) else "") for name in fields))
    for row in rows:
        values = []
        for name, value in zip(fields, row):
            unit = unit_of(name)
            values.append(value + " " + unit if units and unit and value != NA else value)
        lines.append(", ".join(values))
    return "".join(line + "\n" for line in lines)


def _query_gpu(fields: list[str], header: bool, units: bool, indices: list[int]) -> str | None:
    canonical = [_GPU_ALIASES.get(field, field) for field in fields]
    if not canonical or any(field not in _GPU_FIELDS for field in canonical):
        return None  # nvidia-smi would refuse the field: let it say so
    names = [_GPU_FIELDS[field][0] for field in canonical]
    rows = [[_GPU_FIELDS[field][2](index) for field in canonical] for index in indices]
    units_by_name = {_GPU_FIELDS[field][0]: _GPU_FIELDS[field][1] for field in canonical}
    return _csv(names, header, units, rows, units_by_name.__getitem__)


def _query_apps(fields: list[str], header: bool, units: bool) -> str | None:
    if not fields or any(field not in _APP_FIELDS for field in fields):
        return None
    return _csv(fields, header, units, [], _APP_FIELDS.__getitem__)


def _list_gpus() -> str:
    return "".join("GPU %d: %s (UUID: GPU-%s)\n" % (index, _devices.NAME, _devices.uuid(index))
                   for index in range(_devices.local_device_count()))


def _table() -> str:
    """Plain ``nvidia-smi``: the table of driver 470 (2021), one 3-line block per device,
    with its memory line ("0MiB / 16160MiB") second, where scripts parse it."""
    rule = "+-------------------------------+----------------------+----------------------+"
    total = _mib(_devices.total_memory()) + "MiB"
    used = _mib(_devices.used_memory()) + "MiB"
    lines = [
        time.strftime("%a %b %d %H:%M:%S %Y"),
        "+-----------------------------------------------------------------------------+",
        "| %-75s |" % ("NVIDIA-SMI %s    Driver Version: %s    CUDA Version: %s"
                       % (_devices.DRIVER_VERSION, _devices.DRIVER_VERSION, _devices.CUDA_VERSION)),
        "|-------------------------------+----------------------+----------------------+",
        "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |",
        "|                               |                      |               MIG M. |",
        "|===============================+======================+======================|",
    ]
    name = _devices.NAME if len(_devices.NAME) <= 18 else _devices.NAME[:15] + "..."
    for index in range(_devices.local_device_count()):
        lines += [
            "| %3d  %-18s  Off  | %16s Off | %20s |" % (index, name, _devices.pci_bus_id(index), "N/A"),
            "| N/A %4dC    P0  %4dW /  N/A | %10s / %8s | %5d%%  %12s |"
            % (_devices.TEMPERATURE, _devices.POWER_DRAW_MW // 1000, used, total, _devices.UTILIZATION, "Default"),
            "|                               |                      |                  N/A |",
            rule,
        ]
    lines += [
        "",
        "+-----------------------------------------------------------------------------+",
        "| Processes:                                                                  |",
        "|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |",
        "|        ID   ID                                                   Usage      |",
        "|=============================================================================|",
        "|  No running processes found                                                 |",
        "+-----------------------------------------------------------------------------+",
    ]
    return "\n".join(lines) + "\n"


def _query_sections(displays: list[str], indices: list[int]) -> str | None:
    """``nvidia-smi -q -d MEMORY`` (and ``UTILIZATION``): the sections the free-GPU pickers
    of the era grep ("grep -A4 GPU | grep Free")."""
    wanted = {display.strip().upper() for display in displays}
    if not wanted or not wanted <= {"MEMORY", "UTILIZATION"}:
        return None
    lines = [
        "",
        "==============NVSMI LOG==============",
        "",
        _entry(0, "Timestamp", time.strftime("%a %b %d %H:%M:%S %Y")),
        _entry(0, "Driver Version", _devices.DRIVER_VERSION),
        _entry(0, "CUDA Version", _devices.CUDA_VERSION),
        "",
        _entry(0, "Attached GPUs", str(_devices.local_device_count())),
    ]
    for index in indices:
        lines.append("GPU " + _devices.pci_bus_id(index))
        if "MEMORY" in wanted:
            lines += [
                "    FB Memory Usage",
                _entry(8, "Total", _mib(_devices.total_memory()) + " MiB"),
                _entry(8, "Used", _mib(_devices.used_memory()) + " MiB"),
                _entry(8, "Free", _mib(_devices.free_memory()) + " MiB"),
            ]
        if "UTILIZATION" in wanted:
            lines.append("    Utilization")
            lines += [_entry(8, what, "%d %%" % _devices.UTILIZATION) for what in ("Gpu", "Memory", "Encoder", "Decoder")]
        lines.append("")
    return "\n".join(lines) + "\n"


def _entry(indent: int, label: str, value: str) -> str:
    """One ``label : value`` line of ``nvidia-smi -q``, its colon in column 43."""
    return (" " * indent + label).ljust(42) + ": " + value


def _options(arguments: list[str]) -> dict[str, str] | None:
    """nvidia-smi's options as ``{name: value}`` (flags map to ""), or None when one is not
    part of a form answered here."""
    takes_value = {"--query-gpu": "query-gpu", "--query-compute-apps": "query-apps", "--format": "format",
                   "-i": "id", "--id": "id", "-d": "display", "--display": "display"}
    flags = {"-q": "query", "--query": "query", "-L": "list", "--list-gpus": "list"}
    found: dict[str, str] = {}
    position = 0
    while position < len(arguments):
        argument = arguments[position]
        name, equals, value = argument.partition("=")
        if name in takes_value:
            if not equals:
                position += 1
                if position == len(arguments):
                    return None
                value = arguments[position]
            key = takes_value[name]
        elif argument in flags:
            key, value = flags[argument], ""
        else:
            return None
        if key in found:
            return None
        found[key] = value
        position += 1
    return found


def _indices(option: str | None) -> list[int] | None:
    count = _devices.local_device_count()
    if option is None:
        return list(range(count))
    indices = []
    for part in option.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) >= count:
            return None  # a UUID, a bus id, or a device CPU mode does not play
        indices.append(int(part))
    return indices


def answer(arguments: list[str]) -> tuple[str, str] | None:
    """What ``nvidia-smi ARGUMENTS`` prints in CPU mode, with a short name of the form for
    the report, or None when the form is not one answered here."""
    if not arguments:
        return "nvidia-smi", _table()
    options = _options(arguments)
    if options is None:
        return None
    keys = set(options)
    if keys == {"list"}:
        return "nvidia-smi -L", _list_gpus()
    indices = _indices(options.get("id"))
    if indices is None:
        return None
    if keys in ({"query", "display"}, {"query", "display", "id"}):
        text = _query_sections(options["display"].split(","), indices)
        return None if text is None else ("nvidia-smi -q -d", text)
    form = options.get("format", "").lower().replace(" ", "").split(",")
    if form[0] != "csv" or not set(form[1:]) <= {"noheader", "nounits"}:
        return None
    header, units = "noheader" not in form, "nounits" not in form
    fields = [field.strip() for field in options.get("query-gpu", options.get("query-apps", "")).split(",")]
    if keys in ({"query-gpu", "format"}, {"query-gpu", "format", "id"}):
        text = _query_gpu(fields, header, units, indices)
        return None if text is None else ("nvidia-smi --query-gpu", text)
    if keys in ({"query-apps", "format"}, {"query-apps", "format", "id"}):
        text = _query_apps(fields, header, units)
        return None if text is None else ("nvidia-smi --query-compute-apps", text)
    return None


# --- which commands run nvidia-smi ------------------------------------------------------------


def _is_program(word: str) -> bool:
    return word.replace("\\", "/").rpartition("/")[2] in (PROGRAM, PROGRAM + ".exe")


def _first_command(command: str) -> tuple[str, str] | None:
    """``command`` split where its first simple command ends: at the first shell operator
    (``|``, ``;``, ``&``, a redirection, a parenthesis, a newline) outside quotes, a
    redirection's file-descriptor number (``2>``) going with it. None when the first
    command holds an expansion (``$``, a backquote) that only the shell can evaluate."""
    quote = None
    position = 0
    while position < len(command):
        char = command[position]
        if quote == "'":
            if char == "'":
                quote = None
        elif char == "\\":
            position += 1
        elif quote == '"':
            if char == '"':
                quote = None
            elif char in "$`":
                return None
        elif char in "'\"":
            quote = char
        elif char in "$`":
            return None
        elif char in "|&;<>()\n":
            break
        position += 1
    if quote is not None:
        return None
    head, rest = command[:position], command[position:]
    if rest[:1] in ("<", ">"):
        start = len(head)
        while start > 0 and head[start - 1].isdigit():
            start -= 1
        if start < len(head) and (start == 0 or head[start - 1] in " \t"):
            head, rest = head[:start], head[start:] + rest
    return head, rest


def plan_shell(command: str) -> tuple[str, str, str] | None:
    """For a shell command line: ``("answer", what, text)`` when it is an answered
    nvidia-smi query alone, ``("shell", what, command)`` with nvidia-smi's part replaced by
    a ``printf`` of its answer when more follows (a pipe, a redirection), else None."""
    if PROGRAM not in command:
        return None
    split = _first_command(command)
    if split is None:
        return None
    head, rest = split
    import shlex

    try:
        words = shlex.split(head)
    except ValueError:
        return None
    if not words or not _is_program(words[0]):
        return None
    answered = answer(words[1:])
    if answered is None:
        return None
    what, text = answered
    if not rest.strip():
        return "answer", what, text
    return "shell", what, "printf '%%s' %s %s" % (shlex.quote(text), rest)


def plan_popen(args: Any, shell: bool, executable: Any) -> tuple[str, str, str] | None:
    """What ``Popen(args, shell=shell, executable=executable)`` should do in CPU mode, as
    ``plan_shell`` says it, or None: run as asked."""
    try:
        if isinstance(args, (str, bytes, os.PathLike)):
            if shell:
                return plan_shell(os.fsdecode(args))
            argv = [os.fsdecode(args)]
        else:
            first = next(iter(args), None)
            if first is None:
                return None
            if shell:  # POSIX: the first item is the command line, the others its $0, $1 ...
                return plan_shell(os.fsdecode(first))
            if PROGRAM not in os.fsdecode(first if executable is None else executable):
                return None
            argv = [os.fsdecode(arg) for arg in args]
    except TypeError:  # not a command Popen could run either: let it say so
        return None
    if executable is not None:
        argv[0] = os.fsdecode(executable)
    if not _is_program(argv[0]):
        return None
    answered = answer(argv[1:])
    return None if answered is None else ("answer", answered[0], answered[1])


# --- answering as the child would --------------------------------------------------------------

_SMALL_WRITE = 4096  # always fits in a pipe's buffer: written at once, before the reader runs


def _write_all(fd: int, data: bytes) -> None:
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _write_and_close(fd: int, data: bytes) -> None:
    try:
        _write_all(fd, data)
    except OSError:  # the reader went away, as a real child's would see it
        pass
    finally:
        os.close(fd)


def emit(fd: int, text: str) -> None:
    """Write ``text`` to ``fd`` as nvidia-smi would; a long answer is written by a thread
    through its own copy of ``fd``, so that a pipe the caller has yet to read cannot block."""
    data = text.encode()
    if len(data) <= _SMALL_WRITE:
        try:
            _write_all(fd, data)
        except OSError:
            pass
        return
    import threading

    threading.Thread(target=_write_and_close, args=(os.dup(fd), data), daemon=True,
                     name="compatfix nvidia-smi answer").start()

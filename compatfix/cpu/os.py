"""CPU mode for ``os.system``: ``cpu.os.nvidia_smi`` answers the ``nvidia-smi`` queries of
``compatfix.cpu._nvidia_smi``. ``os.system`` calls C's ``system()``, not
``subprocess``, so it is wrapped itself; ``os.popen`` goes through ``subprocess.Popen``
(``compatfix.cpu.subprocess``).
"""

from __future__ import annotations

import functools
import os

from compatfix import patching
from compatfix.cpu import _nvidia_smi
from compatfix.cpu._device import counter
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

SHIM = "cpu.os.nvidia_smi"
_count = counter(SHIM)


def _wrap_system(original: Callable) -> Callable:
    @functools.wraps(original)
    def system(command):
        try:
            plan = _nvidia_smi.plan_shell(os.fsdecode(command))
        except TypeError:  # not a command: let os.system say so
            plan = None
        if plan is None:
            return original(command)
        action, what, value = plan
        _count(what)
        if action == "shell":
            return original(value)
        _nvidia_smi.emit(1, value)  # the shell's child writes to the inherited stdout
        return 0

    return system


def answer_nvidia_smi(module):
    """Wrap ``os.system`` (a str: why there was nothing to do, for the report)."""
    if os.name != "posix":
        return "nvidia-smi queries are answered on POSIX systems only"
    if not patching.wrapped_by(module.system, SHIM):
        patching.replace_attribute(module, "system", _wrap_system(module.system), SHIM)
    return None


SHIMS = (
    Shim(
        SHIM,
        targets=["os"],
        kind=AFTER_IMPORT,
        apply=answer_nvidia_smi,
        risk=RISK_BEHAVIOUR,
        device="cpu",
        broke="scripts run nvidia-smi through os.system (`nvidia-smi -q -d Memory | grep Free > tmp`, "
        "then parse tmp); without the NVIDIA tools the shell finds no program and the file is empty",
        summary="CPU mode: os.system's nvidia-smi queries are answered for the devices torch.cuda plays; "
        "in a pipeline the rest of the command still runs, reading the answer",
    ),
)

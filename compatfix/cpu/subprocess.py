"""CPU mode for ``subprocess``: ``cpu.subprocess.nvidia_smi`` answers the ``nvidia-smi``
queries of ``compatfix.cpu._nvidia_smi`` without starting a process.

Every spawn of ``subprocess.Popen`` goes through ``Popen._execute_child``: answering there,
as the child would (writing to the child's stdout, exit status 0), covers ``run``,
``check_output``, ``call``, ``getoutput``, ``Popen(...).communicate()`` and ``os.popen``,
whatever their pipes, text mode or context managers. Any other command is started as
usual; a shell string whose first command is an answered query runs with ``printf`` of the
answer in that command's place.
"""

from __future__ import annotations

import functools
import os
import sys

from compatfix import patching
from compatfix.cpu import _nvidia_smi
from compatfix.cpu._device import counter
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

SHIM = "cpu.subprocess.nvidia_smi"
_count = counter(SHIM)


def _wrap_execute_child(original: Callable) -> Callable:
    @functools.wraps(original)
    def _execute_child(self, args, executable, *rest):
        # rest: preexec_fn, close_fds, pass_fds, cwd, env, startupinfo, creationflags, shell,
        # p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite, ... (CPython's order)
        plan = _nvidia_smi.plan_popen(args, rest[7], executable)
        if plan is None or sys._getframe(2).f_globals.get("__name__", "").startswith("asyncio"):
            # asyncio's transports watch the child's pid, which an answer has not
            return original(self, args, executable, *rest)
        action, what, value = plan
        _count(what)
        if action == "shell":
            return original(self, value, executable, *rest)
        p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite = rest[8:14]
        try:
            _nvidia_smi.emit(1 if c2pwrite == -1 else c2pwrite, value)  # -1: the inherited stdout
        finally:
            self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)
        self.pid = None  # no process: nothing to wait for or signal
        self.returncode = 0

    return _execute_child


def answer_nvidia_smi(module):
    """Wrap ``Popen._execute_child`` (a str: why there was nothing to do, for the report)."""
    if os.name != "posix":
        return "nvidia-smi queries are answered on POSIX systems only"
    current = module.Popen._execute_child
    if not patching.wrapped_by(current, SHIM):
        patching.replace_attribute(module.Popen, "_execute_child", _wrap_execute_child(current), SHIM)
    return None


SHIMS = (
    Shim(
        SHIM,
        targets=["subprocess"],
        kind=AFTER_IMPORT,
        apply=answer_nvidia_smi,
        risk=RISK_BEHAVIOUR,
        device="cpu",
        broke="scripts ask nvidia-smi for GPU memory, utilisation or names (os.popen, subprocess.run, "
        "check_output, Popen); on a machine without the NVIDIA tools the output is empty or the program "
        "is missing, and the parse fails ('not enough values to unpack', FileNotFoundError)",
        summary="CPU mode: nvidia-smi's plain table, -L, --query-gpu/--query-compute-apps CSV and "
        "-q -d MEMORY are answered for the devices torch.cuda plays, without starting a process; "
        "other nvidia-smi commands run as they would",
    ),
)

"""Shims for ``time``: ``clock``, which Python 3.8 removed (deprecated since 3.3).

A standard-library target, so not a start-up trigger (see compatfix/shims/inspect.py):
the shim takes effect once a third-party target loads the engine, or at once under
``python -m compatfix``, and is applied at the first use of ``time.clock``.
"""

from __future__ import annotations

import sys
import time
import warnings

from compatfix.patching import restore_names
from compatfix.registry import Shim


def clock() -> float:
    """Removed in Python 3.8, with 3.7's meaning on each platform: the processor time of
    the process on Unix (C's clock()), wall-clock seconds from a high-resolution counter
    on Windows. Only differences between two calls mean anything, on both."""
    warnings.warn("time.clock has been deprecated in Python 3.3 and will be removed from Python 3.8: "
                  "use time.perf_counter or time.process_time instead", DeprecationWarning, 2)
    return time.perf_counter() if sys.platform == "win32" else time.process_time()


def restore_clock(module) -> None:
    restore_names(module, {"clock": clock}, "time.clock")


SHIMS = (
    Shim(
        "time.clock",
        targets=["time"],
        apply=restore_clock,
        restores=["clock"],
        broke="Python 3.8 (2019-10) removed time.clock (deprecated since 3.3), which 2020-22 code still "
        "timed its loops with",
        summary="restore time.clock with 3.7's meaning: process time on Unix, a wall clock on Windows "
        "(standard-library target: once a third-party target has loaded compatfix, or under "
        "python -m compatfix)",
        replacement="time.perf_counter (elapsed time) or time.process_time (CPU time)",
        rewrites={"time.clock": "time.perf_counter() for elapsed time, time.process_time() for CPU time"},
    ),
)

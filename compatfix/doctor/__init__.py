"""``compatfix doctor``: diagnose what no runtime shim can fix, and explain it.

Shims patch APIs inside a running process. They cannot replace a wrong package, build
compiled ops that were never built, get past an import-time version assert, upgrade an
NVIDIA driver or rebuild binaries compiled against another NumPy ABI. Each check (one module per check in this package)
inspects files and package metadata only and never imports the package it inspects:
importing would run the very import-time code that fails (the doctor has to work in a
broken environment), and would be slow.
"""

from __future__ import annotations

from typing import Callable

from compatfix.doctor._finding import Finding
from compatfix.doctor.apex import check_apex
from compatfix.doctor.mm_version_pair import check_mm_version_pair
from compatfix.doctor.mmcv_ops import check_mmcv_ops
from compatfix.doctor.numpy_abi import _MAX_BINARY_SIZE, _built_with_numpy1, check_numpy_abi
from compatfix.doctor.removed_apis import check_removed_apis
from compatfix.doctor.torch_cuda_driver import check_torch_cuda_driver, cuda_driver_version, driver_supports_cuda
from compatfix.openmmlab.versions import MAX_NAMES as _MAX_NAMES, MIN_NAMES as _MIN_NAMES
from compatfix.openmmlab.versions import assert_inclusive as _assert_inclusive, constants as _constants
from compatfix.openmmlab.versions import digit_version as _digit_version, parse as _parse

__all__ = [
    "Finding", "check_apex", "check_mm_version_pair", "check_mmcv_ops", "check_numpy_abi",
    "check_removed_apis", "check_torch_cuda_driver", "cuda_driver_version", "driver_supports_cuda", "format_findings",
    "run_checks", "_MAX_BINARY_SIZE", "_built_with_numpy1", "_MAX_NAMES", "_MIN_NAMES",
    "_assert_inclusive", "_constants", "_digit_version", "_parse",
]


# --- running and reporting ----------------------------------------------------------------

_CHECKS: tuple[tuple[str, Callable[[], list[Finding]]], ...] = (
    ("apex", check_apex),
    ("mmcv-ops", check_mmcv_ops),
    ("mm-version-pair", check_mm_version_pair),
    ("torch-cuda-driver", check_torch_cuda_driver),
    ("numpy-abi", check_numpy_abi),
    ("removed-apis", check_removed_apis),
)


def run_checks() -> list[Finding]:
    """Every check's findings, in check order.

    A check that crashes (on an environment broken in a way it did not foresee) becomes a
    finding of its own, so the other checks still report.
    """
    findings: list[Finding] = []
    for name, check in _CHECKS:
        try:
            findings.extend(check())
        except Exception as exc:
            findings.append(Finding(
                name, "warning", "the check itself failed: %r" % (exc,),
                "Please report this as a compatfix bug, with this output.",
            ))
    return findings


def format_findings(findings: list[Finding]) -> str:
    """Render findings for a terminal: one block per finding, then a tally."""
    if not findings:
        return "compatfix doctor: no problems found"
    blocks = ["%s [%s] %s\n    %s" % (f.severity.upper(), f.check, f.summary, f.advice)
              for f in findings]
    counts = []
    for severity, plural in (("error", "errors"), ("warning", "warnings"), ("info", "info")):
        count = sum(f.severity == severity for f in findings)
        if count:
            counts.append("%d %s" % (count, severity if count == 1 else plural))
    return "\n\n".join(blocks) + "\n\ncompatfix doctor: " + ", ".join(counts)

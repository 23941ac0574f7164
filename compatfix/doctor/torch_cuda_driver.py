"""Doctor check: torch's CUDA against the NVIDIA driver."""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Callable

from compatfix._versions import release_tuple

from compatfix.doctor._finding import Finding
from compatfix.doctor._packages import _package_dir
from compatfix.openmmlab.versions import constants, parse


# --- torch's CUDA vs the NVIDIA driver ---------------------------------------------------


def cuda_driver_version() -> int | None:
    """The CUDA version the NVIDIA driver supports (12040 for 12.4), or None without one.

    ``cuDriverGetVersion`` needs no ``cuInit`` and no GPU; asking torch would import it.
    """
    name = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"
    try:
        libcuda = ctypes.CDLL(name)
    except OSError:
        return None
    version = ctypes.c_int(0)
    # Non-zero is an error, e.g. CUDA_ERROR_STUB_LIBRARY from the toolkit's stub libcuda.
    if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0 or version.value <= 0:
        return None
    return version.value


def driver_supports_cuda(driver_version: int, cuda: str) -> bool:
    """Can a driver reporting ``driver_version`` (e.g. 12040) run code built for ``cuda``?

    Since CUDA 11, minor-version compatibility lets any driver of the same major run a
    build for a later minor, so only the major must be covered. Before 11 the driver had
    to be at least the exact toolkit version (torch 1.7's cu92/cu101/cu102 builds).
    """
    driver = (driver_version // 1000, driver_version % 1000 // 10)
    built = (release_tuple(cuda) + (0,))[:2]
    if built[0] >= 11:
        return driver[0] >= built[0]
    return driver >= built


def check_torch_cuda_driver(
    path: list[str] | None = None,
    driver_version: Callable[[], int | None] = cuda_driver_version,
) -> list[Finding]:
    """Is torch a CUDA build the installed NVIDIA driver cannot run?"""
    torch_dir = _package_dir("torch", path)
    if torch_dir is None:
        return []
    cuda = constants(parse(os.path.join(torch_dir, "version.py"))).get("cuda")
    if not isinstance(cuda, str):
        return []  # CPU or ROCm build
    driver = driver_version()
    if driver is None:
        return [Finding(
            "torch-cuda-driver", "info",
            "no NVIDIA driver: this CUDA build of torch (CUDA %s) runs on CPU only" % cuda,
            "Code that calls .cuda() or asks for device 'cuda' fails here; "
            "`python -m compatfix --device cpu script.py` runs it on the CPU.",
        )]
    if driver_supports_cuda(driver, cuda):
        return []
    major, minor = driver // 1000, driver % 1000 // 10
    built_major = release_tuple(cuda)[0]
    needed = "%d.x" % built_major if built_major >= 11 else cuda
    return [Finding(
        "torch-cuda-driver", "error",
        "torch is built for CUDA %s but the NVIDIA driver supports CUDA %d.%d at most: "
        "torch.cuda.is_available() is False and every CUDA call fails" % (cuda, major, minor),
        "Upgrade the NVIDIA driver to one for CUDA %s or newer (since CUDA 11, a driver "
        "runs builds for any later minor version of its own major version), or install a "
        "torch wheel built for CUDA %d.x or older (each release's CUDA variants are listed "
        "on https://pytorch.org/get-started/previous-versions/)." % (needed, major),
    )]



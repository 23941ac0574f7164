"""Doctor check: compiled extensions built against NumPy 1.x."""

from __future__ import annotations

import mmap
import os
import site

from compatfix._versions import release_tuple

from compatfix.doctor._finding import Finding
from compatfix.doctor._packages import _distribution, _package_dir


# --- binaries built against NumPy 1.x ----------------------------------------------------

# numpy 2's import_array() imports "numpy._core._multiarray_umath" and falls back to
# "numpy.core._multiarray_umath"; numpy 1.x's imports only the latter. So a binary that
# uses the NumPy C API embeds both names if built with numpy 2 headers, only the old one
# if built with numpy 1.x (checked on torch 2.14, opencv 5.0, numpy 2.4 vs. opencv 4.8.1.78
# and scipy 1.11.4 wheels). pybind11 builds the name at run time and embeds neither.
_UMATH = b"._multiarray_umath"
_NUMPY2_PREFIX = b"numpy._core"
_NUMPY1_PREFIX = b"numpy.core"
# Larger files are CUDA/LLVM libraries (libtorch_cuda.so, libcublasLt, libtriton), not
# NumPy API users; opencv's cv2 module (70 MiB in 5.0) must still be read.
_MAX_BINARY_SIZE = 256 * 2**20
# Top-level site-packages directories holding only CUDA/compiler libraries, skipped for
# speed; numpy's own binaries always match it. torch/lib is scanned on purpose:
# libtorch_python.so carries torch's NumPy ABI (torch < 2.3 was built with numpy 1.x).
_SKIP_TOP = ("nvidia", "triton", "numpy")
_SKIP_TOP_PREFIX = "cuda"


def _built_with_numpy1(filename: str) -> bool:
    with open(filename, "rb") as binary:
        try:
            data = mmap.mmap(binary.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # empty file
            return False
    with data:
        old = False
        # One pass over the file for the common suffix, then a look at what precedes it.
        at = data.find(_UMATH)
        while at != -1:
            if data[max(0, at - len(_NUMPY2_PREFIX)):at] == _NUMPY2_PREFIX:
                return False
            old = old or data[max(0, at - len(_NUMPY1_PREFIX)):at] == _NUMPY1_PREFIX
            at = data.find(_UMATH, at + 1)
        return old


def _stale_binaries(site_dir: str) -> dict[str, list[str]]:
    """{top-level name: [paths relative to site_dir]} of binaries built with numpy 1.x."""
    stale: dict[str, list[str]] = {}
    for root, dirs, files in os.walk(site_dir):
        if root == site_dir:
            dirs[:] = [d for d in dirs
                       if d not in _SKIP_TOP and not d.startswith(_SKIP_TOP_PREFIX)]
        for name in files:
            if not name.endswith((".so", ".pyd")):
                continue
            filename = os.path.join(root, name)
            try:
                if (os.path.getsize(filename) > _MAX_BINARY_SIZE
                        or not _built_with_numpy1(filename)):
                    continue
            except OSError:
                continue
            relative = os.path.relpath(filename, site_dir)
            top = relative.split(os.sep, 1)[0]
            if top == relative:  # a top-level extension module: foo.cpython-311-....so
                top = name.split(".", 1)[0]
            stale.setdefault(top, []).append(relative)
    return stale


def _owners(site_dir: str, tops: set[str]) -> dict[str, str]:
    """{top-level name: distribution name} for the given names, from metadata in site_dir."""
    from importlib import metadata

    owners: dict[str, str] = {}
    for dist in metadata.distributions(path=[site_dir]):
        listed = dist.read_text("top_level.txt")
        if listed is not None:
            names = set(listed.split())
        else:
            names = {f.parts[0].split(".", 1)[0] for f in dist.files or () if f.parts}
        for top in names & tops:
            owners.setdefault(top, dist.metadata["Name"])
    return owners


def _default_site_dirs() -> list[str]:
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return dirs


def check_numpy_abi(
    site_dirs: list[str] | None = None, path: list[str] | None = None
) -> list[Finding]:
    """Compiled modules built against NumPy 1.x while NumPy 2.x is installed."""
    numpy_dir = _package_dir("numpy", path)
    dist = _distribution("numpy", numpy_dir) if numpy_dir is not None else None
    if dist is None or release_tuple(dist.version)[0] < 2:
        return []
    findings = []
    seen = set()
    for site_dir in _default_site_dirs() if site_dirs is None else site_dirs:
        real = os.path.realpath(site_dir)
        if real in seen or not os.path.isdir(real):
            continue
        seen.add(real)
        stale = _stale_binaries(site_dir)
        if not stale:
            continue
        owners = _owners(site_dir, set(stale))
        for top, files in sorted(stale.items()):
            owner = owners.get(top, top)
            label = owner if owner == top else "%s (%s)" % (owner, top)
            findings.append(Finding(
                "numpy-abi", "error",
                "%s: %d compiled module%s built against NumPy 1.x (e.g. %s), which numpy %s "
                "refuses (\"A module that was compiled using NumPy 1.x cannot be run in "
                "NumPy %s\"): importing %s fails, or at least its NumPy interop does"
                % (label, len(files), "" if len(files) == 1 else "s", sorted(files)[0],
                   dist.version, dist.version, top),
                "Upgrade %s to a release built for NumPy 2 (`pip install -U %s`) or rebuild "
                "it from source against numpy 2; or keep this environment on NumPy 1.x "
                "(`pip install \"numpy<2\"`)." % (owner, owner),
            ))
    return findings



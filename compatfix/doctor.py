"""``compatfix doctor``: diagnose what no runtime shim can fix, and explain it.

Shims patch APIs inside a running process. They cannot replace a wrong package, build
compiled ops that were never built, get past an import-time version assert, upgrade an
NVIDIA driver or rebuild binaries compiled against another NumPy ABI. Each check below
inspects files and package metadata only and never imports the package it inspects:
importing would run the very import-time code that fails (the doctor has to work in a
broken environment), and would be slow.
"""

from __future__ import annotations

import ast
import ctypes
import mmap
import os
import re
import site
import sys
from importlib import machinery
from typing import TYPE_CHECKING, Callable, NamedTuple

from compatfix._versions import release_tuple

if TYPE_CHECKING:
    from importlib import metadata


class Finding(NamedTuple):
    """One diagnosed problem."""

    check: str  # short id of the check that found it, e.g. "apex"
    severity: str  # "error" | "warning" | "info"
    summary: str  # one line
    advice: str  # what to do about it


# --- helpers: locate and read packages without importing them --------------------------


def _package_dir(package: str, path: list[str] | None = None) -> str | None:
    """The directory ``import package`` would load, searching ``path`` (default sys.path).

    ``machinery.PathFinder`` rather than ``importlib.util.find_spec``: find_spec asks every
    finder on ``sys.meta_path``, compatfix's own included, which answers for packages it
    stands in for (apex) although nothing is installed.
    """
    spec = machinery.PathFinder.find_spec(package, path)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _parse(filename: str) -> ast.Module | None:
    try:
        with open(filename, "rb") as source:
            return ast.parse(source.read(), filename)
    except (OSError, SyntaxError, ValueError):
        return None


def _constants(tree: ast.Module | None) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` and ``NAME: T = <literal>`` assignments."""
    found: dict[str, object] = {}
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            found[target.id] = value.value
    return found


def _source_version(package_dir: str) -> str | None:
    """``__version__`` as written in ``<package>/version.py``, where mmcv keeps it."""
    version = _constants(_parse(os.path.join(package_dir, "version.py"))).get("__version__")
    return version if isinstance(version, str) else None


def _distribution(name: str, package_dir: str) -> metadata.Distribution | None:
    """The distribution ``name`` installed next to ``package_dir``, not the first on sys.path."""
    # Imported here: importlib.metadata (email, zipfile, ...) would triple this module's
    # import time.
    from importlib import metadata

    for dist in metadata.distributions(name=name, path=[os.path.dirname(package_dir)]):
        return dist
    return None


# --- apex -------------------------------------------------------------------------------

# Subpackages of NVIDIA apex. Its master dropped amp and parallel on 2025-05-08 (NVIDIA/apex
# cb65b8ed, "remove old features: amp, ddp, and rnn"); the others are still there. The PyPI
# package named "apex" (a Pyramid web toolkit, 0.9.x) has none of them.
_NVIDIA_APEX_PARTS = (
    "amp", "parallel", "optimizers", "normalization", "contrib", "fused_dense", "mlp",
    "multi_tensor_apply",
)
_REMOVED_APEX_PARTS = ("amp", "parallel")


def check_apex(path: list[str] | None = None) -> list[Finding]:
    """Is ``apex`` NVIDIA apex, the PyPI impostor, a trimmed-down apex, or absent?"""
    apex_dir = _package_dir("apex", path)
    if apex_dir is None:
        return [Finding(
            "apex", "info",
            "apex is not installed: code that imports apex gets compatfix's torch-native "
            "stand-in for apex's API",
            "Nothing to do. Build NVIDIA apex from source (https://github.com/NVIDIA/apex) "
            "only if the code needs its fused CUDA kernels; never `pip install apex`, "
            "which installs an unrelated web toolkit.",
        )]
    parts = [p for p in _NVIDIA_APEX_PARTS if os.path.isdir(os.path.join(apex_dir, p))]
    if not parts:
        dist = _distribution("apex", apex_dir)
        described = ""
        if dist is not None:
            text = " ".join((dist.metadata.get("Summary") or "",
                             " ".join(dist.requires or ())))
            if "pyramid" in text.lower():
                described = (" but the unrelated PyPI package 'apex' %s, a Pyramid web "
                             "toolkit" % dist.version)
        return [Finding(
            "apex", "error",
            "`apex` at %s is not NVIDIA apex%s (it has none of amp, optimizers, "
            "normalization, parallel, contrib)" % (apex_dir, described),
            "Uninstall it: `pip uninstall apex`. It shadows compatfix's torch-native "
            "stand-in for NVIDIA apex's API, which code that imports apex then gets. If "
            "the code needs NVIDIA's fused CUDA kernels, build NVIDIA apex from source "
            "(https://github.com/NVIDIA/apex); `pip install apex` is never NVIDIA's.",
        )]
    missing = [p for p in _REMOVED_APEX_PARTS if p not in parts]
    if missing:
        return [Finding(
            "apex", "warning",
            "NVIDIA apex at %s has no %s: apex master removed them on 2025-05-08, so "
            "2020-22 code doing `from apex import amp` or using "
            "`apex.parallel.DistributedDataParallel` fails to import"
            % (apex_dir, " or ".join("apex." + p for p in missing)),
            "If the code only needs amp/parallel, uninstall apex (`pip uninstall apex`) so "
            "that compatfix's torch-native stand-in answers `import apex`. If it also "
            "needs apex's fused kernels, build NVIDIA apex from a commit before the "
            "removal (`git checkout cb65b8ed~1` in a clone of "
            "https://github.com/NVIDIA/apex).",
        )]
    return []


# --- mmcv compiled ops ------------------------------------------------------------------


def check_mmcv_ops(path: list[str] | None = None) -> list[Finding]:
    """mmcv 1.x without its compiled ops (the lite build), or mmcv 2.x under 1.x-era code."""
    mmcv_dir = _package_dir("mmcv", path)
    if mmcv_dir is None:
        return []
    version = _source_version(mmcv_dir)
    if version is None:
        return []
    if release_tuple(version)[0] >= 2:
        return [Finding(
            "mmcv-ops", "info",
            "mmcv %s is 2.x: `mmcv.runner`, `mmcv.parallel`, `mmcv.Config` and the rest "
            "of 1.x's training framework are gone (moved to mmengine), so 1.x-era code "
            "(mmseg 0.x, mmdet 2.x) cannot import" % version,
            "For 2020-22 code install mmcv 1.x with its ops: `pip uninstall mmcv` then "
            "`MMCV_WITH_OPS=1 pip install --no-build-isolation mmcv-full==1.7.2` (builds "
            "from source).",
        )]
    # ext_loader imports mmcv._ext by name, so only a binary this interpreter can load
    # counts; one built for another Python version is as good as missing.
    has_ops = any(os.path.isfile(os.path.join(mmcv_dir, "_ext" + suffix))
                  for suffix in machinery.EXTENSION_SUFFIXES)
    if has_ops:
        return []
    return [Finding(
        "mmcv-ops", "warning",
        "mmcv %s at %s has no compiled ops (mmcv/_ext is missing: the lite `mmcv` build, "
        "not `mmcv-full`): `import mmcv.ops`, and with it model imports such as "
        "`import mmseg.models` or `import mmdet.models`, fail with "
        "\"No module named 'mmcv._ext'\"" % (version, mmcv_dir),
        "Rebuild mmcv with its ops: `pip uninstall mmcv` then `MMCV_WITH_OPS=1 pip "
        "install --no-build-isolation mmcv-full==%s` (compiles for minutes; CUDA ops need "
        "a CUDA toolkit matching torch's CUDA version). Code that never touches mmcv.ops "
        "(configs, runner, mmcv.cnn) works without them." % version,
    )]


# --- OpenMMLab packages' mmcv version assert ---------------------------------------------

# Packages that assert ``MIN <= mmcv.__version__ <(=) MAX`` when imported, and the names
# of their bounds: mmseg 0.x/1.x use MMCV_MIN/MMCV_MAX, mmdet 2.x and its siblings
# mmcv_minimum_version/mmcv_maximum_version.
_MMCV_DEPENDENTS = ("mmseg", "mmdet", "mmdet3d", "mmcls", "mmpose")
_MIN_NAMES = ("MMCV_MIN", "mmcv_minimum_version")
_MAX_NAMES = ("MMCV_MAX", "mmcv_maximum_version")

_DIGIT_VERSION = re.compile(
    r"v?(\d+(?:\.\d+)*)"
    r"(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?"
    r"(?:[-_.]?(?:post|rev|r)[-_.]?(\d*))?"
    r"(?:[-_.]?(dev)[-_.]?\d*)?"
    r"(?:\+[a-z0-9.]*)?$"
)
_PRE_RANK = {"a": -3, "alpha": -3, "b": -2, "beta": -2}  # everything else spells rc: -1


def _digit_version(version: str) -> tuple[int, ...] | None:
    """What OpenMMLab's ``digit_version`` makes of ``version``, or None if unparsable.

    Theirs (mmseg >= 0.20, mmcv.utils): the release padded/cut to 4 numbers, then
    (-3|-2|-1, n) for a/b/rc pre-releases, (-4, 0) for dev-only ones, (1, n) for post
    releases, (0, 0) otherwise. mmseg 0.11's older list-based one orders every released
    mmcv version the same way. ``_versions.release_tuple`` drops pre-release tags, which
    matters here: ``2.0.0rc4`` must sort below ``2.0.0``.
    """
    match = _DIGIT_VERSION.match(version.strip().lower())
    if match is None:
        return None
    release, pre, pre_number, post_number, dev = match.groups()
    digits = [int(part) for part in release.split(".")][:4]
    digits += [0] * (4 - len(digits))
    if pre:
        digits += [_PRE_RANK.get(pre, -1), int(pre_number or 0)]
    elif dev:
        digits += [-4, 0]
    elif post_number is not None:
        digits += [1, int(post_number or 0)]
    else:
        digits += [0, 0]
    return tuple(digits)


def _bound_role(node: ast.AST) -> str | None:
    """"min" or "max" if this side of a comparison is (derived from) the mmcv bound."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            name = sub.id.lower()
            if "min" in name:
                return "min"
            if "max" in name:
                return "max"
    return None


def _assert_inclusive(tree: ast.Module) -> dict[str, bool]:
    """Whether each bound the module's ``assert`` checks is inclusive: {"min": .., "max": ..}.

    Both spellings occur: mmseg's chained ``min <= v < max`` (0.30; 0.11 has ``<= max``)
    and mmdet's ``v >= min and v <= max``.
    """
    inclusive: dict[str, bool] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for compare in ast.walk(node.test):
            if not isinstance(compare, ast.Compare):
                continue
            operands = [compare.left] + list(compare.comparators)
            for left, op, right in zip(operands, compare.ops, operands[1:]):
                # Read every comparison as "smaller <(=) larger".
                if isinstance(op, (ast.Lt, ast.LtE)):
                    smaller, larger, closed = left, right, isinstance(op, ast.LtE)
                elif isinstance(op, (ast.Gt, ast.GtE)):
                    smaller, larger, closed = right, left, isinstance(op, ast.GtE)
                else:
                    continue
                if _bound_role(smaller) == "min":
                    inclusive["min"] = closed
                if _bound_role(larger) == "max":
                    inclusive["max"] = closed
    return inclusive


def check_mm_version_pair(path: list[str] | None = None) -> list[Finding]:
    """Would ``import mmseg`` (mmdet, ...) fail its mmcv version assert?"""
    findings = []
    mmcv_dir = _package_dir("mmcv", path)
    mmcv_version = _source_version(mmcv_dir) if mmcv_dir is not None else None
    for package in _MMCV_DEPENDENTS:
        package_dir = _package_dir(package, path)
        if package_dir is None:
            continue
        init = os.path.join(package_dir, "__init__.py")
        tree = _parse(init)
        constants = _constants(tree)
        low = next((constants[n] for n in _MIN_NAMES if isinstance(constants.get(n), str)), None)
        high = next((constants[n] for n in _MAX_NAMES if isinstance(constants.get(n), str)), None)
        inclusive = _assert_inclusive(tree) if tree is not None else {}
        if low is None or high is None or len(inclusive) != 2:
            continue  # no version assert: importing it does not check mmcv's version
        upper = "<=" if inclusive["max"] else "<"
        install = "`MMCV_WITH_OPS=1 pip install --no-build-isolation \"mmcv-full>=%s,%s%s\"`" % (
            low, upper, high)
        if mmcv_dir is None:
            findings.append(Finding(
                "mm-version-pair", "error",
                "import %s will fail: it imports mmcv, which is not installed" % package,
                "Install mmcv>=%s, %s%s with its ops: %s." % (low, upper, high, install),
            ))
            continue
        have, low_v, high_v = (_digit_version(v) for v in (mmcv_version or "", low, high))
        if have is None or low_v is None or high_v is None:
            continue
        above_min = low_v <= have if inclusive["min"] else low_v < have
        below_max = have <= high_v if inclusive["max"] else have < high_v
        if above_min and below_max:
            continue
        findings.append(Finding(
            "mm-version-pair", "error",
            "import %s will fail: MMCV==%s is used but incompatible. "
            "Please install mmcv>=%s, %s%s." % (package, mmcv_version, low, upper, high),
            "%s asserts this range when it is imported. "
            "Install an mmcv in range (%s) or a %s release whose range includes mmcv %s. "
            "Editing the bound in %s, or accepting the risk with "
            "COMPATFIX_ENABLE=mmcv.relaxed_version_assert, silences the assert, not the "
            "API changes it guards against." % (package, install, package, mmcv_version, init),
        ))
    return findings


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
    cuda = _constants(_parse(os.path.join(torch_dir, "version.py"))).get("cuda")
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


# --- running and reporting ----------------------------------------------------------------

_CHECKS: tuple[tuple[str, Callable[[], list[Finding]]], ...] = (
    ("apex", check_apex),
    ("mmcv-ops", check_mmcv_ops),
    ("mm-version-pair", check_mm_version_pair),
    ("torch-cuda-driver", check_torch_cuda_driver),
    ("numpy-abi", check_numpy_abi),
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

"""Version gating without ``packaging`` (too slow to import on the hot path).

Versions seen in this field are messy: ``2.3.0a0+ebedce2`` (NGC builds of torch),
``2.1.0+cu121``, ``1.26.0.dev0``, ``1.3.0rc1``. For gating, a version is its release
number: local labels and pre/dev/post suffixes are dropped, so a pre-release of 2.3
counts as 2.3 (it already carries 2.3's changes). ``packaging`` would say that
``2.3.0a0+ebedce2`` matches neither ``<2.3`` nor ``>=2.3``, which is useless here.
"""

from __future__ import annotations

import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the engine loads before the target
    from typing import Mapping

# Parsed by hand, not with regular expressions: this module loads with the first target
# import, and compiling two patterns there cost more than all the parsing it does.
_DIGITS = "0123456789"
_OPERATORS = (">=", "<=", "==", "!=", ">", "<")


def release_tuple(version: str) -> tuple[int, ...]:
    """``'2.3.0a0+ebedce2'`` -> ``(2, 3)``; trailing zeros are dropped for comparison."""
    text = version.strip()
    if text[:1] == "v":
        text = text[1:]
    end = 0
    while end < len(text) and (
        text[end] in _DIGITS or (text[end] == "." and end > 0 and text[end + 1: end + 2] in tuple(_DIGITS))
    ):
        end += 1
    if end == 0:
        raise ValueError("not a version: %r" % (version,))
    parts = [int(part) for part in text[:end].split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _clause(clause: str, spec: str) -> tuple[str, str]:
    """``' >= 1.9 '`` -> ``('>=', '1.9')``."""
    text = clause.strip()
    for op in _OPERATORS:
        if text.startswith(op):
            bound = text[len(op):].strip()
            if bound and not any(c.isspace() for c in bound):
                return op, bound
            break
    raise ValueError("not a version range: %r" % (spec,))


def in_range(version: str, spec: str) -> bool:
    """Whether ``version`` satisfies every comma-separated clause of ``spec``.

    Clauses: ``>=X``, ``>X``, ``<=X``, ``<X``, ``==X``, ``!=X``, and ``==X.*`` for a
    release series.
    """
    have = release_tuple(version)
    for clause in spec.split(","):
        if not clause.strip():
            continue
        op, bound = _clause(clause, spec)
        if bound.endswith(".*") and op in ("==", "!="):
            prefix = release_tuple(bound[:-2])
            padded = have + (0,) * max(0, len(prefix) - len(have))
            same = padded[: len(prefix)] == prefix
            if same != (op == "=="):
                return False
            continue
        want = release_tuple(bound)
        ok = {
            ">=": have >= want,
            ">": have > want,
            "<=": have <= want,
            "<": have < want,
            "==": have == want,
            "!=": have != want,
        }[op]
        if not ok:
            return False
    return True


_package_dists = None  # top-level package -> distributions, read once (it scans them all)


def installed_version(package: str) -> str | None:
    """The version of an importable top-level package, without importing it.

    An imported module's ``__version__`` wins (it is what is actually running, and it is
    right for ``mmcv`` installed as ``mmcv-full`` or a source-built apex); otherwise the
    distribution that provides the package is asked.
    """
    module = sys.modules.get(package)
    version = getattr(module, "__version__", None) if module is not None else None
    if isinstance(version, str):
        return version
    if sys.version_info >= (3, 10):
        from importlib import metadata
    else:  # pragma: no cover - exercised on 3.8/3.9 only
        import importlib_metadata as metadata
    global _package_dists
    if _package_dists is None:
        _package_dists = metadata.packages_distributions()
    for dist_name in _package_dists.get(package, ()) or (package,):
        try:
            return metadata.version(dist_name)
        except metadata.PackageNotFoundError:
            continue
    return None


def check_requires(requires: Mapping[str, str]) -> tuple[bool, str]:
    """Whether the installed versions need a shim, and a reason fit for a report."""
    found = []
    for package, spec in requires.items():
        version = installed_version(package)
        if version is None:
            return False, "%s is not installed" % package
        if not in_range(version, spec):
            return False, "%s %s is outside %s" % (package, version, spec)
        found.append("%s %s" % (package, version))
    return True, ", ".join(found) or "no version condition"

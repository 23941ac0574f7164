"""The one place that decides whether a shim applies here. The engine asks it before
running a shim; ``compatfix list`` asks it for every row, so the two cannot disagree."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

    from compatfix._settings import Settings
    from compatfix.registry import Shim


def decide(shim: Shim, settings: Settings, lookup: Callable[[str], Shim | None] = lambda name: None) -> tuple[bool, str]:
    """``(applies, why)`` for ``shim`` under ``settings``.

    In order: switched off or on by the user (or by default), the device mode, whether the
    package it patches is installed (a ``provide`` shim needs no package), the installed
    versions (``requires``), and the shims it yields to (``yields_to``, found
    with ``lookup``): a shim yields when one of those applies too, since that one does
    its work here.
    """
    enabled, why = settings.is_enabled(shim.name, shim.default)
    if not enabled:
        return False, why
    if shim.device is not None and shim.device != settings.device:
        return False, "only with --device %s" % shim.device
    missing = _missing_package(shim)
    if missing is not None:
        return False, "%s is not installed" % missing
    from compatfix import _versions

    needed, why = _versions.check_requires(shim.requires)
    if not needed:
        return False, why
    for name in shim.yields_to:
        other = lookup(name)
        if other is not None and other is not shim and decide(other, settings, lookup)[0]:
            return False, "%s does this here" % name
    return True, why


def _missing_package(shim: Shim) -> str | None:
    """The watched top-level package that cannot be imported here, when none of them can
    (a shim watching mmseg and mmdet applies where either is installed)."""
    from compatfix.registry import PROVIDE

    if shim.kind == PROVIDE:
        return None
    import sys

    packages = sorted({name.partition(".")[0] for name in shim.watched_modules()})
    for package in packages:
        if package in sys.modules:  # what the engine sees: the target is being imported
            return None
        import importlib.util

        try:
            if importlib.util.find_spec(package) is not None:
                return None
        except (ImportError, ValueError):
            continue
    return packages[0] if packages else None

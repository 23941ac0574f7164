"""The shim registry: one declarative record per shim, collected from the built-in shim
modules (``compatfix.shims.<library>``) and from third-party packages that declare an
entry point in the ``compatfix.shims`` group.

A record says what broke and where, which installed versions need the fix, how risky it
is, whether it is on by default, and which function applies it. The engine decides when
to call that function; nothing here imports a target library.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Callable, Iterable, Iterator, Mapping

# How a shim meets its target module.
AFTER_IMPORT = "after_import"  # patch the module right after it is imported
PROVIDE = "provide"  # provide the module when the real one cannot be found
BEFORE_CONSUMER = "before_consumer"  # patch the module before a consumer's code runs
KINDS = (AFTER_IMPORT, PROVIDE, BEFORE_CONSUMER)

# What a shim may change, from least to most sensitive.
RISK_ALIAS = "alias"  # restores a removed name; no behaviour change
RISK_BEHAVIOUR = "behaviour"  # changes or approximates behaviour
RISK_SECURITY = "security"  # widens what a file or config can execute
RISKS = (RISK_ALIAS, RISK_BEHAVIOUR, RISK_SECURITY)

# The modules that declare the built-in shims, one per target library.
BUILTIN_SHIM_MODULES = (
    "compatfix.shims.numpy",
    "compatfix.shims.apex",
    "compatfix.shims.torch._six",
    "compatfix.shims.torch_load",
    "compatfix.shims.torch_distributed",
    "compatfix.shims.launch",
    "compatfix.shims.mmcv.ops",
    "compatfix.shims.mmcv.runner",
    "compatfix.shims.mmcv.parallel",
    "compatfix.shims.mmcv.config",
    "compatfix.shims.mmcv.registry",
    "compatfix.shims.mmseg.training",
    "compatfix.shims.mmseg.amp",
    "compatfix.shims.mmseg.version_assert",
    "compatfix.shims.timm",
    "compatfix.shims.pillow",
    "compatfix.shims.yaml",
    "compatfix.shims.python",
    "compatfix.shims.torchvision",
)

# Device modes (``--device``) and the modules that declare their shims. They are loaded
# only when the mode is on, so that a run without it never pays for them.
DEVICE_SHIM_MODULES: dict[str, tuple[str, ...]] = {
    "cpu": ("compatfix.cpu.torch", "compatfix.cpu.torch.cuda", "compatfix.cpu.torch.distributed",
            "compatfix.cpu.torch.nn", "compatfix.cpu.mmcv.parallel", "compatfix.cpu.mmcv.ops"),
}

ENTRY_POINT_GROUP = "compatfix.shims"


class Shim:
    """One compatibility fix, declared as data.

    ``apply(module)`` receives the target module (for ``provide``: the new, empty module
    to fill in). ``requires`` maps an importable package name to a version range such as
    ``">=1.24"`` or ``">=1.24,<2"``: the shim applies only where every installed version
    is in range. ``consumers`` names the modules that must see the patch before their own
    import-time code runs (``before_consumer`` only). ``device`` makes a shim part of a
    device mode: it applies only under ``--device DEVICE``. ``replaces_found`` (``provide``
    only) is a predicate on the spec of a module that *was* found: True means the found
    module is unusable for what the shim provides (an unrelated distribution under the
    same name, such as PyPI's ``apex`` web toolkit), and the provided module is used
    instead. Without it, a found module always wins.
    """

    __slots__ = (
        "name", "targets", "kind", "apply", "requires", "broke", "summary",
        "risk", "default", "consumers", "device", "origin", "replaces_found",
    )

    def __init__(
        self,
        name: str,
        *,
        targets: Iterable[str],
        apply: Callable[[object], None],
        broke: str,
        summary: str,
        requires: Mapping[str, str] | None = None,
        kind: str = AFTER_IMPORT,
        risk: str = RISK_ALIAS,
        default: bool = True,
        consumers: Iterable[str] = (),
        device: str | None = None,
        origin: str = "compatfix",
        replaces_found: Callable[[object], bool] | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError("shim %r: kind must be one of %s" % (name, KINDS))
        if risk not in RISKS:
            raise ValueError("shim %r: risk must be one of %s" % (name, RISKS))
        self.name = name
        self.targets = tuple(targets)
        self.kind = kind
        self.apply = apply
        self.requires = dict(requires or {})
        self.broke = broke
        self.summary = summary
        self.risk = risk
        self.default = default
        self.consumers = tuple(consumers)
        if kind == BEFORE_CONSUMER and not self.consumers:
            raise ValueError("shim %r: before_consumer needs consumers" % name)
        self.device = device
        self.origin = origin
        if replaces_found is not None and kind != PROVIDE:
            raise ValueError("shim %r: replaces_found is for provide shims only" % name)
        self.replaces_found = replaces_found

    def __repr__(self) -> str:
        return "Shim(%r, kind=%r, targets=%r)" % (self.name, self.kind, self.targets)

    def watched_modules(self) -> tuple[str, ...]:
        """The module names whose import triggers this shim."""
        return self.consumers if self.kind == BEFORE_CONSUMER else self.targets


def builtin_shims(devices: Iterable[str] = ()) -> list[Shim]:
    """compatfix's own shims, with those of the named device modes."""
    module_names = list(BUILTIN_SHIM_MODULES)
    for device in devices:
        module_names.extend(DEVICE_SHIM_MODULES.get(device, ()))
    shims: list[Shim] = []
    for module_name in module_names:
        shims.extend(importlib.import_module(module_name).SHIMS)
    return shims


def declared_entry_points(group: str, path: Iterable[str] | None = None) -> Iterator[tuple[str, str]]:
    """``(name, "module:attr")`` for each entry point of ``group`` declared by the
    distributions on ``path`` (default ``sys.path``), the first of each name winning, as
    with ``importlib.metadata``.

    The ``entry_points.txt`` files are read directly: ``importlib.metadata`` would add
    ~40 ms and ~80 modules to the first import of numpy, where this engine loads.
    """
    seen: set[str] = set()
    for entry in sys.path if path is None else path:
        folder = entry or os.curdir
        try:
            names = sorted(os.listdir(folder))
        except OSError:  # not a folder (a zip, a missing entry)
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            distribution = re.sub(r"[-_.]+", "-", name.rpartition(".")[0].partition("-")[0]).lower()
            if distribution in seen:
                continue
            seen.add(distribution)
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                continue
            if "[%s]" % group in text:
                yield from _section_items(text, group)


def _section_items(text: str, section: str) -> Iterator[tuple[str, str]]:
    inside = False
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            inside = line == "[%s]" % section
            continue
        if inside and "=" in line:
            name, _, value = line.partition("=")
            yield name.strip(), value.split("[")[0].strip()  # drop any [extras]


def _load(value: str) -> object:
    module_name, _, attribute = value.partition(":")
    loaded: object = importlib.import_module(module_name.strip())
    for part in filter(None, attribute.strip().split(".")):
        loaded = getattr(loaded, part)
    return loaded


def plugin_shims() -> tuple[list[Shim], list[str]]:
    """Shims that installed packages declare in the ``compatfix.shims`` entry-point group.

    An entry point names a sequence of ``Shim`` records (or a callable returning one).
    Returns the shims and one problem line per entry point that could not be loaded.
    """
    shims: list[Shim] = []
    problems: list[str] = []
    for name, value in declared_entry_points(ENTRY_POINT_GROUP):
        try:
            declared = _load(value)
            if callable(declared):
                declared = declared()
            records = list(declared)
            for record in records:
                if not isinstance(record, Shim):
                    raise TypeError("%r is not a compatfix.registry.Shim" % (record,))
                record.origin = "plugin %s" % value
        except Exception as exc:
            problems.append(
                "plugin shims from entry point %r (%s) could not be loaded and are "
                "ignored: %s: %s" % (name, value, type(exc).__name__, exc)
            )
            continue
        shims.extend(records)
    return shims, problems


def all_shims(devices: Iterable[str] = ()) -> tuple[list[Shim], list[str]]:
    """Every known shim (built-in first, with the named device modes, then plugins) and
    any loading problems. A plugin shim whose name is already taken is dropped with a
    problem line.
    """
    shims = builtin_shims(devices)
    extra, problems = plugin_shims()
    seen = {shim.name for shim in shims}
    for shim in extra:
        if shim.name in seen:
            problems.append("plugin shim %r (%s) reuses a shim name and is ignored" % (shim.name, shim.origin))
            continue
        seen.add(shim.name)
        shims.append(shim)
    return shims, problems

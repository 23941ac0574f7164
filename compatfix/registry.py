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
import sys

from compatfix._plugins import plugin_entry_points

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the engine loads before the target
    from typing import Any, Callable, Iterable, Mapping

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

# Device modes (``--device``) and the package holding each one's shim modules. Those are
# loaded only when the mode is on, so that a run without it never pays for them.
DEVICE_PACKAGES: dict[str, str] = {"cpu": "compatfix.cpu"}
BUILTIN_PACKAGE = "compatfix.shims"


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
    instead. Without it, a found module always wins. ``yields_to`` names shims (on the
    same targets) that do this shim's work where they apply: then this one has nothing
    to do (the CPU mode's backend rewrite, for the nccl fallback). ``restores`` names
    every attribute the shim may give back to its targets, when that is all it does
    (``patching.restore_names``): such a shim is applied at the first use of one of those
    names on the target, not at the target's import, so an import pays nothing for
    aliases its program never uses (``after_import`` only; restoring a name it does not
    declare is an error).

    What code would say instead, for ``compatfix scan`` and the catalogue (data only, never
    used at run time): ``replacement`` in words, for the shim as a whole; ``renames`` maps
    a full dotted name the shim fixes to the name that replaces it with the same meaning
    (a pure rename, alias or moved import, safe to rewrite: ``numpy.float`` -> ``float``);
    ``rewrites`` maps a name to what to write instead where that is more than a rename (the
    call or its meaning changes: shown, never rewritten). Their keys are what the scan looks
    for in source code: a dotted name (``torch._six``, which also covers every name below
    it), or a call pattern: ``name()`` (a call of exactly that name), ``*.method('--x')``
    (that method on any object, with that string among its positional arguments),
    ``name(+kw)`` / ``name(-kw:N)`` (a call passing keyword ``kw`` / passing it neither by
    keyword nor as positional argument ``N``), and ``module.*(...)`` (any function of the
    module). A restored name (``restores``) or a provided module must be a key of one of them.
    """

    __slots__ = (
        "name", "targets", "kind", "apply", "requires", "broke", "summary",
        "risk", "default", "consumers", "device", "origin", "replaces_found",
        "yields_to", "restores", "replacement", "renames", "rewrites", "source",
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
        yields_to: Iterable[str] = (),
        restores: Iterable[str] = (),
        replacement: str | None = None,
        renames: Mapping[str, str] | None = None,
        rewrites: Mapping[str, str] | None = None,
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
        self.yields_to = tuple(yields_to)
        self.restores = frozenset(restores)
        if self.restores and kind != AFTER_IMPORT:
            raise ValueError("shim %r: restores is for after_import shims only" % name)
        self.replacement = replacement
        self.renames = dict(renames or {})
        self.rewrites = dict(rewrites or {})
        if set(self.renames) & set(self.rewrites):
            raise ValueError("shim %r: a name is either renamed or rewritten, not both" % name)
        # Where the record is written, for `compatfix list` and the catalogue.
        caller = sys._getframe(1)
        self.source = "%s:%d" % (caller.f_code.co_filename, caller.f_lineno)

    def __repr__(self) -> str:
        return "Shim(%r, kind=%r, targets=%r)" % (self.name, self.kind, self.targets)

    def watched_modules(self) -> tuple[str, ...]:
        """The module names whose import triggers this shim."""
        return self.consumers if self.kind == BEFORE_CONSUMER else self.targets


def _package_folder(package: str) -> str:
    here = os.path.dirname(os.path.abspath(__file__))  # compatfix/
    return os.path.join(here, *package.split(".")[1:])


def discover_modules(package: str) -> list[str]:
    """Every module below ``package`` (a compatfix sub-package), found on disk without
    importing anything: the built-in shim modules are the files, not a hand-kept list."""
    folder = _package_folder(package)
    found = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith(("__", ".")) and
                            os.path.exists(os.path.join(root, f, "__init__.py")))
        relative = os.path.relpath(root, folder)
        prefix = package if relative == os.curdir else package + "." + relative.replace(os.sep, ".")
        for name in sorted(files):
            if not name.endswith(".py") or (name.startswith("__") and name != "__init__.py"):
                continue
            found.append(prefix if name == "__init__.py" else prefix + "." + name[:-3])
    return sorted(found)


def builtin_modules(devices: Iterable[str] = ()) -> list[str]:
    """The built-in shim modules, with those of the named device modes."""
    names = discover_modules(BUILTIN_PACKAGE)
    for device in devices:
        if device in DEVICE_PACKAGES:
            names.extend(discover_modules(DEVICE_PACKAGES[device]))
    return names


def shims_of(module_name: str) -> list[Shim]:
    """The records a shim module declares (none for a package without ``SHIMS``)."""
    return list(getattr(importlib.import_module(module_name), "SHIMS", ()))


def builtin_shims(devices: Iterable[str] = ()) -> list[Shim]:
    """compatfix's own shims, with those of the named device modes (imports every shim
    module: for ``compatfix list`` and the index generator, never at run time)."""
    shims: list[Shim] = []
    for module_name in builtin_modules(devices):
        shims.extend(shims_of(module_name))
    return shims


INDEX_MODULE = "compatfix._shim_index"


def index_source() -> str:
    """The text of ``compatfix/_shim_index.py``: for each watched module (a target, or a
    consumer of a ``before_consumer`` shim), the shim modules that declare shims for it,
    so that the first import of a target loads only its own shim modules. Regenerate with
    ``python -m compatfix.registry > compatfix/_shim_index.py``; a test keeps it in sync."""
    def table(module_names: list[str], first_use: bool) -> dict[str, list[str]]:
        """watched module -> the shim modules to import: at its import (``first_use``
        False), or at the first use of a name its restoring shims declare (True)."""
        by_watched: dict[str, list[str]] = {}
        for module_name in module_names:
            for shim in shims_of(module_name):
                if bool(shim.restores) != first_use:
                    continue
                for watched in shim.watched_modules():
                    modules = by_watched.setdefault(watched, [])
                    if module_name not in modules:
                        modules.append(module_name)
        return dict(sorted(by_watched.items()))

    def first_use_names(module_names: list[str]) -> dict[str, tuple[str, ...]]:
        names: dict[str, set[str]] = {}
        for module_name in module_names:
            for shim in shims_of(module_name):
                for target in shim.targets if shim.restores else ():
                    names.setdefault(target, set()).update(shim.restores)
        return {target: tuple(sorted(found)) for target, found in sorted(names.items())}

    def render(mapping: dict[str, list[str]], indent: str) -> list[str]:
        return ["%s%r: %r," % (indent, key, tuple(value)) for key, value in mapping.items()]

    def render_first_use(module_names: list[str], indent: str) -> list[str]:
        modules = table(module_names, True)
        return ["%s%r: (%r, frozenset(%r))," % (indent, target, tuple(modules[target]), names)
                for target, names in first_use_names(module_names).items()]

    names = sorted(shim.name for shim in builtin_shims(DEVICE_PACKAGES))
    shim_modules = discover_modules(BUILTIN_PACKAGE)
    builtin = table(shim_modules, False)
    lines = [
        '"""Generated by `python -m compatfix.registry > compatfix/_shim_index.py`: do not edit.',
        "",
        "Which shim modules declare shims for each watched module (the engine imports only",
        "those on that module's first import), the names that restoring shims give back on",
        "their first use, and every built-in shim's name.",
        '"""',
        "",
        "# watched module -> the shim modules imported at its first import",
        "BUILTIN = {",
        *render(builtin, "    "),
        "}",
        "",
        "# target module -> (the shim modules imported at the first use of one of the names,",
        "# the names its restoring shims declare)",
        "ON_FIRST_USE = {",
        *render_first_use(shim_modules, "    "),
        "}",
        "",
        "DEVICES = {",
    ]
    for device, package in sorted(DEVICE_PACKAGES.items()):
        lines += ["    %r: {" % device, *render(table(discover_modules(package), False), "        "), "    },"]
    lines += ["}", "", "DEVICES_ON_FIRST_USE = {"]
    for device, package in sorted(DEVICE_PACKAGES.items()):
        lines += ["    %r: {" % device, *render_first_use(discover_modules(package), "        "), "    },"]
    lines += ["}", ""]
    lines += ["NAMES = frozenset({", *("    %r," % name for name in names), "})", ""]
    return "\n".join(lines)


def _load(value: str) -> object:
    module_name, _, attribute = value.partition(":")
    loaded: object = importlib.import_module(module_name.strip())
    for part in filter(None, attribute.strip().split(".")):
        loaded = getattr(loaded, part)
    return loaded


def plugin_shims(entry_points: Iterable[tuple[str, str]] | None = None) -> tuple[list[Shim], list[str]]:
    """Shims that installed packages declare in the ``compatfix.shims`` entry-point group
    (``entry_points``: the ``(name, "module:attr")`` pairs already found; by default the
    path is scanned).

    An entry point names a sequence of ``Shim`` records (or a callable returning one).
    Returns the shims and one problem line per entry point that could not be loaded.
    """
    shims: list[Shim] = []
    problems: list[str] = []
    if entry_points is None:  # a fresh scan (compatfix list), which refreshes the engine's cache
        entry_points = plugin_entry_points(use_cache=False)
    for name, value in entry_points:
        try:
            declared: Any = _load(value)
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


if __name__ == "__main__":
    sys.stdout.write(index_source())

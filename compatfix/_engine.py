"""The shim engine: loaded on the first import of a target package, it decides which
shims apply, runs them at the right moment of an import, and records the outcome.

Policy (principle 2): a shim that raises is reported once and the import goes on
without it; strict mode turns that into an error. Each shim runs at most once per
module object, and never when the installed versions do not need it.

The top floor of the core (tests/test_layering.py holds the floors): it reads the
settings (``_settings``), the index (``_shim_index``), the plugin scan (``_plugins``),
the registry, the decision (``_decision``) and patching, and gives itself to what it
drives: the finder hand-off (``_finder``), first-use restoration (``_first_use``) and
the outcomes and report (``_outcomes``). None of those imports it.
"""

import _thread  # not threading: most targets never import it
import importlib
import sys
import weakref

from compatfix import _first_use, _plugins
from compatfix._finder import HookedLoader, ImportHandler, ProvidingLoader, can_hook
from compatfix._settings import Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

    FirstUse = Mapping[str, tuple[tuple[str, ...], frozenset[str]]]

    from compatfix._outcomes import Outcomes
    from compatfix._report import Recorder
    from compatfix.registry import Shim

# What a target's first import loads of compatfix is this module, the settings, the
# index, the plugin scan's cache, the finder hand-off and first-use restoration. The
# registry, patching, the decision, the outcomes and the recorder are imported where
# they are first needed: an import whose shims all wait for a first use (numpy's
# restored aliases) needs none of them. For the same reason these modules quote their
# annotations instead of `from __future__ import annotations`, whose module numpy itself
# never loads.


class CompatfixError(RuntimeError):
    """A shim failed to apply in strict mode."""


_active: "Engine | None" = None


def active() -> "Engine | None":
    """The engine of this process, once a target import has loaded it."""
    return _active


class Engine:
    """Runs the shims of one process.

    ``shims`` are registered at once (plugins, tests). ``index`` maps a watched module to
    the shim modules that declare shims for it (``compatfix._shim_index``): those modules
    are imported on that module's first import, so a target pays only for its own shims.
    ``first_use`` maps a target to the shim modules whose shims only restore names, and
    those names: they are imported, and their shims applied, at the first use of one of
    the names on the target (``_first_use.RestoreOnFirstUse``), so an import pays nothing for
    aliases its program never uses. A shim module that cannot be imported turns off its
    own shims only (one message).
    """

    def __init__(
        self,
        shims: "list[Shim]",
        settings: "Settings",
        problems=(),
        index: "Mapping[str, tuple[str, ...]] | None" = None,
        known_names=(),
        first_use: "FirstUse | None" = None,
    ) -> None:
        self.settings = settings
        self.shims: dict[str, Shim] = {}
        self._outcomes: Outcomes | None = None
        self.after: dict[str, list[Shim]] = {}
        self.before: dict[str, list[Shim]] = {}
        self.provide: dict[str, Shim] = {}
        self.on_first_use: dict[str, list[Shim]] = {}  # target -> its name-restoring shims
        self._index: Mapping[str, tuple[str, ...]] = index or {}
        self._first_use_modules = {target: modules for target, (modules, _) in (first_use or {}).items()}
        # target -> the names whose first use applies its name-restoring shims
        self.first_use_names: dict[str, set[str]] = {
            target: set(names) for target, (_, names) in (first_use or {}).items()}
        # Every module name whose import the engine handles: the indexes' keys and the
        # targets and consumers of the shims registered so far (plugins).
        self.watched_names: set[str] = set(self._index) | set(self.first_use_names)
        self._loaded_modules: set[str] = set()
        self._done: dict[str, weakref.WeakSet] = {}  # shim name -> modules it ran on
        self._lock = _thread.RLock()
        for shim in shims:
            self._register(shim)
        problems = list(problems) + settings.problems
        if settings.disable or settings.enable:
            problems += settings.unknown_names(set(known_names) | set(self.shims))
        if settings.device == "cpu":
            problems.append("CPU mode (--device cpu): CUDA calls in this program run on the CPU")
        for problem in problems:
            self.outcomes.note(problem)

    @property
    def outcomes(self) -> "Outcomes":
        """What happened in this process, and its report (``compatfix._outcomes``), made
        on first use."""
        outcomes = self._outcomes
        if outcomes is None:
            from compatfix import _outcomes

            with self._lock:
                if self._outcomes is None:
                    self._outcomes = _outcomes.Outcomes(self.settings)
                outcomes = self._outcomes
        return outcomes

    @property
    def recorder(self) -> "Recorder":
        """The outcomes' recorder (``compatfix._report.Recorder``): shims and device modes
        add the calls they redirect and the restored names used."""
        return self.outcomes.recorder

    @classmethod
    def from_environment(cls) -> "Engine":
        global _active
        from compatfix import _shim_index

        settings = Settings.from_environ()
        # Read only: copied below when a device mode adds to them.
        index: Mapping[str, tuple[str, ...]] = _shim_index.BUILTIN
        first_use: FirstUse = _shim_index.ON_FIRST_USE
        if settings.device:
            device_index = dict(index)
            for name, modules in _shim_index.DEVICES.get(settings.device, {}).items():
                device_index[name] = device_index.get(name, ()) + tuple(modules)
            device_first_use = dict(first_use)
            for name, (modules, names) in _shim_index.DEVICES_ON_FIRST_USE.get(settings.device, {}).items():
                known_modules, known_names = device_first_use.get(name, ((), frozenset()))
                device_first_use[name] = (known_modules + modules, known_names | names)
            index, first_use = device_index, device_first_use
        found = _plugins.plugin_entry_points()
        plugins: list[Shim] = []
        problems: list[str] = []
        if found:
            from compatfix.registry import plugin_shims

            plugins, problems = plugin_shims(found)
        taken = [shim for shim in plugins if shim.name in _shim_index.NAMES]
        for shim in taken:
            problems.append("plugin shim %r (%s) reuses a shim name and is ignored" % (shim.name, shim.origin))
        engine = cls([shim for shim in plugins if shim not in taken], settings, problems,
                     index=index, known_names=_shim_index.NAMES, first_use=first_use)
        _active = engine
        if settings.report_path:
            engine.outcomes.register_report()
        return engine

    def _register(self, shim: "Shim") -> None:
        from compatfix.registry import AFTER_IMPORT, BEFORE_CONSUMER, PROVIDE

        if shim.name in self.shims:
            return
        self.shims[shim.name] = shim
        self.watched_names.update(shim.watched_modules())
        if shim.restores:
            for target in shim.targets:
                self.on_first_use.setdefault(target, []).append(shim)
                self.first_use_names.setdefault(target, set()).update(shim.restores)
        elif shim.kind == AFTER_IMPORT:
            for target in shim.targets:
                self.after.setdefault(target, []).append(shim)
        elif shim.kind == BEFORE_CONSUMER:
            for consumer in shim.consumers:
                self.before.setdefault(consumer, []).append(shim)
        elif shim.kind == PROVIDE:
            for target in shim.targets:
                self.provide[target] = shim

    def load_shims_for(self, fullname: str, first_use: bool = False) -> None:
        """Import the shim modules that declare shims for ``fullname`` (once each): those
        applied at its import, or (``first_use``) those applied at the first use of a name
        they restore."""
        modules = (self._first_use_modules if first_use else self._index).get(fullname)
        if not modules:
            return
        with self._lock:
            for module_name in modules:
                if module_name in self._loaded_modules:
                    continue
                self._loaded_modules.add(module_name)
                try:
                    declared = list(importlib.import_module(module_name).SHIMS)
                except Exception as exc:
                    if self.settings.strict:
                        raise
                    problem = (
                        "shim module %s could not be loaded (%s: %s); its shims are off, the "
                        "others still apply" % (module_name, type(exc).__name__, exc)
                    )
                    self.outcomes.note(problem)
                    continue
                for shim in declared:
                    self._register(shim)

    # --- what the finder asks ---------------------------------------------------------

    def watched(self) -> "set[str]":
        return set(self.watched_names)

    def handles(self, fullname: str) -> bool:
        return fullname in self.watched_names

    def prepare_spec(self, fullname: str, spec):
        """Hook the real module's loader, or provide a missing one; None to step aside.

        A found module is also replaced by a provided one when its provide shim judges
        it unusable (``Shim.replaces_found``, e.g. an unrelated package of that name).
        """
        self.load_shims_for(fullname)
        if spec is None or self._replaces_found(fullname, spec):
            shim = self.provide.get(fullname)
            if shim is not None and self._should_run(shim, fullname):
                import importlib.util

                return importlib.util.spec_from_loader(fullname, ProvidingLoader(self, shim))  # type: ignore[arg-type]
            if spec is None:
                return None
        if (fullname in self.after or fullname in self.before or fullname in self.first_use_names) \
                and can_hook(spec.loader):
            spec.loader = HookedLoader(self, spec.loader)
        return spec

    def _replaces_found(self, fullname: str, spec) -> bool:
        shim = self.provide.get(fullname)
        if shim is None or shim.replaces_found is None:
            return False
        try:
            return bool(shim.replaces_found(spec))
        except Exception as exc:  # a broken predicate must not break the import
            self._failed(shim, fullname, exc)
            return False

    def catch_up(self) -> None:
        """Apply shims to targets that were imported before compatfix was activated."""
        for name in sorted(self.watched_names.intersection(sys.modules)):
            module = sys.modules.get(name)
            if module is None:
                continue
            self.load_shims_for(name)
            self.run_before(name)
            self.run_after(module)

    # --- running shims ----------------------------------------------------------------

    def run_before(self, consumer: str) -> None:
        self.load_shims_for(consumer)
        for shim in self.before.get(consumer, ()):
            for target in shim.targets:
                if not self._should_run(shim, target):
                    continue
                module = sys.modules.get(target)
                if module is None:
                    try:
                        module = importlib.import_module(target)
                    except Exception as exc:
                        self._failed(shim, target, exc)
                        continue
                self._apply(shim, module)

    def run_after(self, module) -> None:
        self.load_shims_for(module.__name__)
        for shim in self.after.get(module.__name__, ()):
            if self._should_run(shim, module.__name__):
                self._apply(shim, module)
        if module.__name__ in self.first_use_names:
            _first_use.RestoreOnFirstUse.install(self, module)

    def apply_on_first_use(self, module) -> None:
        """Apply the name-restoring shims of ``module`` (a name they restore is being used)."""
        name = module.__name__
        self.load_shims_for(name, first_use=True)
        for shim in self.on_first_use.get(name, ()):
            if self._should_run(shim, name):
                self._apply(shim, module)

    def decide(self, shim: "Shim") -> "tuple[bool, str]":
        """Whether ``shim`` applies here and why: ``compatfix._decision.decide``, the same
        function ``compatfix list`` uses."""
        from compatfix import _decision

        return _decision.decide(shim, self.settings, self.shims.get)

    def _should_run(self, shim: "Shim", target: str) -> bool:
        applies, why = self.decide(shim)
        if not applies:
            self.outcomes.record_once(shim, target, "skipped", reason=why)
        return applies

    def _apply(self, shim: "Shim", module) -> bool:
        """Run ``shim`` on ``module`` unless it already ran there; False if it failed.

        The outcome is what the apply did: "applied" with the changes the patching
        functions counted (a provided module is a change), else "nothing_to_do" with the
        reason the apply returned, or that the target already works.
        """
        from compatfix import patching
        from compatfix.registry import PROVIDE

        with self._lock:
            done = self._done.setdefault(shim.name, weakref.WeakSet())
            if module in done:
                return True
            done.add(module)
        try:
            with patching.collect_changes(self) as changes:
                reason = shim.apply(module)
        except Exception as exc:
            self._failed(shim, module.__name__, exc)
            return False
        if shim.kind == PROVIDE:
            changes.insert(0, "provided %s" % module.__name__)
        elif not changes and reason is None and shim.origin != "compatfix":
            # A plugin may change things without compatfix.patching: it ran, and what it
            # changed is not known.
            changes.append("not counted (the shim does not use compatfix.patching)")
        self.outcomes.applied(shim, module.__name__, changes, reason)
        return True

    def shimmed_modules(self) -> "list":
        """The module objects some shim ran on."""
        with self._lock:
            return [module for done in self._done.values() for module in done]

    def forget(self, module) -> None:
        """Let every shim run on ``module`` again (it is being reloaded)."""
        with self._lock:
            for done in self._done.values():
                done.discard(module)

    def _failed(self, shim: "Shim", target: str, exc: "Exception") -> None:
        error = "%s: %s" % (type(exc).__name__, exc)
        self.outcomes.failed(shim, target, error)
        if self.settings.strict:
            raise CompatfixError("shim %r failed to apply to %s (strict mode): %s" % (shim.name, target, error)) from exc

    @property
    def tracking_uses(self) -> bool:
        """Whether restored names should record where they are used (report mode)."""
        return bool(self.settings.report_path)


_handler_lock = _thread.RLock()
_loading_thread: "int | None" = None  # the thread loading the engine, while it does


def handler_for(finder) -> "ImportHandler | None":
    """``finder``'s import handler, made on the first target import: it loads the engine,
    then applies the shims of targets imported before it (``Engine.catch_up``). Other
    threads wait for it; on the loading thread itself, imports the loading makes (a
    plugin importing numpy at its top) are plain ones, and ``catch_up`` shims them."""
    global _loading_thread
    with _handler_lock:
        if finder.handler is not None:
            return finder.handler
        if _loading_thread == _thread.get_ident():
            return None
        _loading_thread = _thread.get_ident()
        try:
            engine = Engine.from_environment()
        finally:
            _loading_thread = None
        finder.handler = ImportHandler(engine)
        # Targets imported before the engine existed (before activation, or plugin
        # targets imported before any built-in target) get their shims now.
        engine.catch_up()
        return finder.handler

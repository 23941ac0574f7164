"""The shim engine: loaded on the first import of a target package, it decides which
shims apply, runs them at the right moment of an import, and records the outcome.

Policy (principle 2): a shim that raises is reported once and the import goes on
without it; strict mode turns that into an error. Each shim runs at most once per
module object, and never when the installed versions do not need it.
"""

import _thread  # not threading: most targets never import it
import importlib
import os
import sys
import weakref


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Mapping

    FirstUse = Mapping[str, tuple[tuple[str, ...], frozenset[str]]]

    from compatfix._report import Recorder
    from compatfix.registry import Shim

# What a target's first import loads of compatfix is this module (with the settings) and
# the index. The registry, patching, the decision, messages and the recorder are imported
# where they are first needed: an import whose shims all wait for a first use (numpy's
# restored aliases) needs none of them. For the same reason this module quotes its
# annotations instead of `from __future__ import annotations`, whose module numpy itself
# never loads.

ENTRY_POINT_GROUP = "compatfix.shims"  # where installed packages declare plugin shims


def _say(text: str) -> None:
    from compatfix import _messages

    _messages.say(text)


# --- settings ----------------------------------------------------------------------------
# Read from the environment, so that every process of a run (launcher workers, spawn
# children) sees the options given to ``python -m compatfix``. Bad values never crash the
# program: each yields one problem line and is ignored. (They live here, not in a module
# of their own, because every target's first import needs them: a module costs that
# import about 0.35M instructions before its first line runs.)

ENV_DISABLE = "COMPATFIX_DISABLE"
ENV_ENABLE = "COMPATFIX_ENABLE"
ENV_STRICT = "COMPATFIX_STRICT"
ENV_REPORT = "COMPATFIX_REPORT"
ENV_DEVICE = "COMPATFIX_DEVICE"

DEVICES = ("cpu",)
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def split_names(value: str) -> "tuple[str, ...]":
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _matches(name: str, pattern: str) -> bool:
    """fnmatch's case-sensitive match, imported only for a pattern that needs it (the
    engine loads with the first target import, and most runs name no pattern at all)."""
    if not any(c in pattern for c in "*?["):
        return name == pattern
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)


class Settings:
    """Parsed options. ``problems`` lists what was wrong with the raw values."""

    def __init__(
        self,
        disable: "Iterable[str]" = (),
        enable: "Iterable[str]" = (),
        strict: bool = False,
        report_path: "str | None" = None,
        device: "str | None" = None,
        problems: "Iterable[str]" = (),
    ) -> None:
        self.disable = tuple(disable)
        self.enable = tuple(enable)
        self.strict = strict
        self.report_path = report_path
        self.device = device
        self.problems = list(problems)

    @classmethod
    def from_environ(cls, environ: "Mapping[str, str] | None" = None) -> "Settings":
        env = os.environ if environ is None else environ
        problems = []
        strict_raw = env.get(ENV_STRICT, "").strip().lower()
        if strict_raw not in _TRUE + _FALSE:
            problems.append("%s=%r is not a yes/no value; strict mode stays off" % (ENV_STRICT, strict_raw))
        device = env.get(ENV_DEVICE, "").strip().lower() or None
        if device is not None and device not in DEVICES:
            problems.append(
                "%s=%r is not a known device (known: %s); ignoring it" % (ENV_DEVICE, device, ", ".join(DEVICES))
            )
            device = None
        return cls(
            disable=split_names(env.get(ENV_DISABLE, "")),
            enable=split_names(env.get(ENV_ENABLE, "")),
            strict=strict_raw in _TRUE,
            report_path=env.get(ENV_REPORT, "").strip() or None,
            device=device,
            problems=problems,
        )

    def unknown_names(self, known: "Iterable[str]") -> "list[str]":
        """Problem lines for disable/enable patterns that match no known shim."""
        known = list(known)
        problems = []
        for variable, patterns in ((ENV_DISABLE, self.disable), (ENV_ENABLE, self.enable)):
            for pattern in patterns:
                if not any(_matches(name, pattern) for name in known):
                    problems.append(
                        "%s names %r, which matches no shim (see `compatfix list`); ignoring it" % (variable, pattern)
                    )
        return problems

    def is_enabled(self, name: str, default: bool) -> "tuple[bool, str]":
        """Whether a shim is on, and why (for reports). Disabling wins over enabling."""
        for pattern in self.disable:
            if _matches(name, pattern):
                return False, "disabled by %s=%s" % (ENV_DISABLE, pattern)
        for pattern in self.enable:
            if _matches(name, pattern):
                return True, "enabled by %s=%s" % (ENV_ENABLE, pattern)
        if default:
            return True, "on by default"
        return False, "off by default (enable with %s=%s)" % (ENV_ENABLE, name)


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
    the names on the target (``_RestoreOnFirstUse``), so an import pays nothing for
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
        self._recorder: Recorder | None = None
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
        self._recorded: set[tuple[str, str, str]] = set()
        self._lock = _thread.RLock()
        for shim in shims:
            self._register(shim)
        problems = list(problems) + settings.problems
        if settings.disable or settings.enable:
            problems += settings.unknown_names(set(known_names) | set(self.shims))
        if settings.device == "cpu":
            problems.append("CPU mode (--device cpu): CUDA calls in this program run on the CPU")
        for problem in problems:
            self.recorder.note(problem)
            _say(problem)
        self._report_registered = False
        self._report_written = False

    @property
    def recorder(self) -> "Recorder":
        """What happened in this process (``compatfix._report``), made on first use."""
        recorder = self._recorder
        if recorder is None:
            from compatfix import _report

            with self._lock:
                if self._recorder is None:
                    self._recorder = _report.Recorder()
                recorder = self._recorder
        return recorder

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
        found = plugin_entry_points()
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
        engine._register_report()
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
                    self.recorder.note(problem)
                    _say(problem)
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

                return importlib.util.spec_from_loader(fullname, _ProvidingLoader(self, shim))  # type: ignore[arg-type]
            if spec is None:
                return None
        if (fullname in self.after or fullname in self.before or fullname in self.first_use_names) \
                and _can_hook(spec.loader):
            spec.loader = _HookedLoader(self, spec.loader)
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
            _RestoreOnFirstUse.install(self, module)

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
            self._record_once(shim, target, "skipped", reason=why)
        return applies

    def _record_once(self, shim: "Shim", target: str, outcome: str, **fields) -> None:
        key = (shim.name, target, outcome)
        with self._lock:
            if key in self._recorded:
                return
            self._recorded.add(key)
        self.recorder.add(outcome, shim=shim.name, module=target, **fields)

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
            with patching.collect_changes() as changes:
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
        if changes:
            self.recorder.add("applied", shim=shim.name, module=module.__name__, risk=shim.risk, changed=changes)
        else:
            why = reason if isinstance(reason, str) else "%s already has what this shim restores" % module.__name__
            self.recorder.add("nothing_to_do", shim=shim.name, module=module.__name__, reason=why)
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
        self.recorder.add("failed", shim=shim.name, module=target, error=error)
        if self.settings.strict:
            raise CompatfixError("shim %r failed to apply to %s (strict mode): %s" % (shim.name, target, error)) from exc
        _say(
            "shim %r failed to apply to %s and is skipped (%s). The program goes on without it; "
            "to silence this, disable it with --disable %s or COMPATFIX_DISABLE=%s."
            % (shim.name, target, error, shim.name, shim.name)
        )

    # --- the report ---------------------------------------------------------------------

    def _register_report(self) -> None:
        path = self.settings.report_path
        if not path or self._report_registered:
            return
        from compatfix import _report

        problem = _report.check_writable(path)
        if problem:
            self.recorder.note(problem)
            _say(problem)
            return
        self._report_registered = True
        import atexit

        atexit.register(self.write_report)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._after_fork_in_child)
        multiprocessing = sys.modules.get("multiprocessing")
        if multiprocessing is not None and multiprocessing.parent_process() is not None:
            _write_at_multiprocessing_exit(self)

    def _after_fork_in_child(self) -> None:
        # A forked child (a DataLoader worker on Linux) inherits this engine: it reports
        # what happens in it, as a process of its own.
        self.recorder.start_over()
        self._report_written = False
        util = sys.modules.get("multiprocessing.util")
        if util is not None:
            # multiprocessing clears inherited finalizers when the child starts, then
            # runs its after-fork callbacks: register the writer from there.
            util.register_after_fork(self, _write_at_multiprocessing_exit)

    def write_report(self) -> None:
        path = self.settings.report_path
        if not path or self._report_written:
            return
        self._report_written = True  # atexit and a multiprocessing finalizer may both call
        run_id = os.environ.get("COMPATFIX_RUN_ID", str(os.getpid()))
        from compatfix import _report

        try:
            _report.write(path, self.recorder.process_record(), run_id)
        except Exception as exc:
            _say("could not write the report to %r: %s" % (path, exc))

    @property
    def tracking_uses(self) -> bool:
        """Whether restored names should record where they are used (report mode)."""
        return bool(self.settings.report_path)


def _write_at_multiprocessing_exit(engine: "Engine") -> None:
    """multiprocessing children leave through os._exit, which skips atexit."""
    from multiprocessing import util

    util.Finalize(None, engine.write_report, exitpriority=0)


def _can_hook(loader) -> bool:
    return loader is not None and hasattr(loader, "exec_module")


class _RestoreOnFirstUse:
    """A target module's ``__getattr__`` until one of the names its name-restoring shims
    declare is used: that use applies them (their module is imported, each is decided and
    applied), and the name then resolves as it would have if they had run at import.
    Every other name goes to the module's own ``__getattr__``, or is an AttributeError.

    A name the module serves itself wins (its own ``__getattr__`` is asked first): a
    shim never overwrites a name that works.
    """

    def __init__(self, engine: "Engine", module, names, previous) -> None:
        self.engine = engine
        self.module = module
        self.names = names
        self.previous = previous  # the module's own __getattr__, or None
        self.done = False
        self.applying: int | None = None  # the thread applying, while it does

    @classmethod
    def install(cls, engine: "Engine", module) -> None:
        names = engine.first_use_names.get(module.__name__)
        current = vars(module).get("__getattr__")
        if isinstance(current, cls):  # a reload that kept ours: start again from the module's own
            current = current.previous
        module.__getattr__ = cls(engine, module, frozenset(names or ()), current)

    def __call__(self, name: str):
        if name in self.names and not self.done and self.applying != _thread.get_ident():
            if self.previous is not None:
                try:
                    return self.previous(name)
                except AttributeError:
                    pass
            with self.engine._lock:
                if not self.done:
                    self.applying = _thread.get_ident()
                    try:
                        self.engine.apply_on_first_use(self.module)
                    finally:
                        self.applying = None
                        self.done = True
                        namespace = vars(self.module)
                        if namespace.get("__getattr__") is self:  # nothing was put in front
                            if self.previous is None:
                                del namespace["__getattr__"]
                            else:
                                namespace["__getattr__"] = self.previous
            namespace = vars(self.module)
            if name in namespace:
                return namespace[name]
            current = namespace.get("__getattr__")
            if current is not None and current is not self:
                # restoring served it from a __getattr__ of its own (report mode, a value
                # made on first use), which falls back to this one
                return current(name)
        if self.previous is not None:
            return self.previous(name)
        raise AttributeError("module %r has no attribute %r" % (self.module.__name__, name))


def own_getattr(module):
    """``module``'s own ``__getattr__`` (None if it has none), behind the first-use hook."""
    current = vars(module).get("__getattr__")
    return current.previous if isinstance(current, _RestoreOnFirstUse) else current


class _HookedLoader:
    """Wraps a target's real loader to run shims around its ``exec_module``.

    Everything else is delegated, and the module's ``__loader__`` and
    ``__spec__.loader`` are set back to the real loader before its code runs, so that
    resource readers and introspection see the real thing.
    """

    def __init__(self, engine: "Engine", loader) -> None:
        self._engine = engine
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module) -> None:
        name = module.__name__
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        if module in self._engine.shimmed_modules():
            # importlib.reload runs the module's code again over the same object, undoing
            # what its shims did: let them run again.
            self._engine.forget(module)
        self._engine.run_before(name)
        self._loader.exec_module(module)
        self._engine.run_after(module)


class _ProvidingLoader:
    """Creates a module that no longer exists upstream and lets its shim fill it in."""

    def __init__(self, engine: "Engine", shim: "Shim") -> None:
        self._engine = engine
        self._shim = shim

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        module.__compatfix_provided__ = self._shim.name
        if not self._engine._apply(self._shim, module):
            raise ModuleNotFoundError(
                "No module named %r (compatfix could not provide it, see the warning above)" % module.__name__,
                name=module.__name__,
            )


# --- the finder's import handler ---------------------------------------------------------


class ImportHandler:
    """Answers the imports that the start-up finder (``_compatfix_bootstrap``) hands over:
    those of a watched module get a hooked loader (shims run around its code) or a
    provided module; every other name is None after one set lookup.

    Imports that another finder makes while this one asks it for the real spec (the same
    name asked again on this thread) are stepped aside from, so that no import loops.
    """

    def __init__(self, engine: "Engine") -> None:
        self.engine = engine
        # The same set as the engine's, which the finder asks before calling find_spec.
        self.watched = engine.watched_names
        self._local = _thread._local()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.watched:
            return None
        busy = self._local.__dict__.setdefault("busy", set())
        if fullname in busy:  # another finder asked importlib again: step aside
            return None
        # A name already in sys.modules is being reloaded (importlib.reload asks the
        # finders again): its new load is hooked like the first.
        busy.add(fullname)
        try:
            spec = _find_real_spec(fullname, path, target)
        finally:
            busy.discard(fullname)
        return self.engine.prepare_spec(fullname, spec)

    def spec_of_existing(self, fullname):
        """For an import that loading the engine completed (a plugin's top-level import
        of it): the module already in ``sys.modules``, not a second copy of it."""
        if fullname not in self.watched:
            return None
        return _spec_of_existing(fullname, sys.modules[fullname])


def _find_real_spec(fullname, path, target):
    """The spec the rest of ``sys.meta_path`` finds, compatfix's own finder left out."""
    for finder in list(sys.meta_path):
        if getattr(type(finder), "is_compatfix_finder", False):
            continue
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        spec = find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


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


class _AlreadyImported:
    """Loader that gives the import in progress the module already in ``sys.modules``."""

    def __init__(self, module) -> None:
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        if self.spec is not None:
            module.__spec__ = self.spec  # the import system set ours; put the real one back


def _spec_of_existing(fullname, module):
    from importlib.machinery import ModuleSpec

    loader = _AlreadyImported(module)
    spec = ModuleSpec(fullname, loader, origin=getattr(module, "__file__", None))
    spec.submodule_search_locations = getattr(module, "__path__", None)
    # importlib swaps a found spec for sys.modules[fullname].__spec__ when the module
    # appeared meanwhile, and would run the module's code again: let it find ours.
    if loader.spec is not None:
        try:
            module.__spec__ = spec
        except AttributeError:
            pass
    return spec


# --- plugin shims ------------------------------------------------------------------------


def plugin_entry_points(use_cache: bool = True) -> "list[tuple[str, str]]":
    """The ``compatfix.shims`` entry points of the distributions on ``sys.path``, through
    a cache of the last scan.

    A scan (``declared_entry_points``) lists every folder on the path and looks into
    every distribution: in a venv of 80 distributions, about 1.5M instructions and 2 ms of
    system calls, in every process that imports a target. So its result is kept in
    compatfix's own ``__pycache__`` folder with the path's folders and their modification
    times, and used while none of them changed: installing, upgrading or removing a
    distribution creates or removes its metadata folder, which changes the folder it is
    in. An ``entry_points.txt`` edited in place by hand is not seen until then:
    ``compatfix list`` scans without the cache (``use_cache=False``) and refreshes it. The
    cache holds only what
    the ``entry_points.txt`` files say, where only those who may change compatfix's own
    code can write; a folder changed in the last two seconds is not cached, as a file
    system with coarse timestamps could change it again within the same time stamp.
    """
    key, settled = _path_key()
    cache = _entry_point_cache()
    try:
        text = _read_bytes(cache).decode("utf-8") if use_cache else ""
    except (OSError, UnicodeDecodeError):
        text = ""
    cached_key, separator, body = text.partition("\n\n")
    if separator and cached_key == key:
        return [(name, value) for name, _, value in (line.partition("\t") for line in body.splitlines())]
    from compatfix.registry import declared_entry_points  # a miss: the scan itself is there

    found = list(declared_entry_points(ENTRY_POINT_GROUP))
    if settled:
        _write_entry_point_cache(cache, key, found)
    return found


_CACHE_FORMAT = "compatfix entry points 1"


def _entry_point_cache() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__",
                        "entry-points.%s.txt" % sys.implementation.cache_tag)


def _path_key() -> "tuple[str, bool]":
    """The folders on ``sys.path`` (absolute) with their modification times, one per line,
    and whether none of them changed in the last two seconds."""
    import time

    lines = [_CACHE_FORMAT, ENTRY_POINT_GROUP]
    recent = time.time_ns() - 2_000_000_000
    settled = True
    for entry in sys.path:
        folder = entry if os.path.isabs(entry) else os.path.abspath(entry or os.curdir)
        try:
            modified = os.stat(folder).st_mtime_ns
        except OSError:
            modified = -1
        settled = settled and modified < recent
        lines.append("%d %s" % (modified, folder))
    return "\n".join(lines), settled


def _write_entry_point_cache(cache: str, key: str, found: "list[tuple[str, str]]") -> None:
    text = key + "\n\n" + "".join("%s\t%s\n" % item for item in found)
    from compatfix import _files

    try:
        # Whole or not at all, for processes reading it now; never through a planted link.
        _files.replace_with(cache, text.encode("utf-8"), mode=0o644)
    except OSError:  # a read-only install (no __pycache__, or not ours to write): scan each time
        pass


def _read_bytes(file: str) -> bytes:
    """The file's bytes, without the text and buffer layers of ``open``."""
    descriptor = os.open(file, os.O_RDONLY)
    try:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(descriptor)

"""Start-up activation: the only compatfix code that runs in every Python process.

It must stay stdlib-only and nearly free (principle 1): it reads a few environment
variables and puts one small meta-path finder on ``sys.meta_path``. The finder looks at
an import only when the imported name's top-level package is one compatfix has shims
for; the shim registry, wrapt and the shims themselves load the first time that happens.

Entry points into this module: ``bootstrap()`` (named by ``compatfix.pth`` and
``compatfix.start``), the sitecustomize folder, and ``python -m compatfix``.

It is a top-level module, not part of the ``compatfix`` package, so that start-up loads
one small file instead of two (the package's ``__init__`` loads only when needed).
"""

import _thread  # not `threading`: that module is not loaded at start-up and costs time
import os
import sys

# Top-level packages that some built-in shim targets or waits for. A test checks that
# this equals what the registry declares, so the two cannot drift apart. Standard-library
# targets (argparse, collections, ...) are left out on purpose: almost every process
# imports them, so their shims wait until a third-party target has loaded the engine.
TRIGGER_PACKAGES = frozenset({"apex", "mmcv", "mmdet", "mmseg", "numpy", "PIL", "pkg_resources", "scipy", "skimage", "sklearn", "timm", "torch", "torchvision", "yaml"})

# How this process was activated: None (not at all), "pth", "sitecustomize" or "cli".
activated_by = None  # type: str | None


_OFF_VALUES = ("0", "false", "no", "off")
_ON_VALUES = ("", "1", "true", "yes", "on")


_told_unknown_value = False


def _switched_off() -> bool:
    # -I promises an interpreter unaffected by the user's environment; honour it.
    if sys.flags.isolated:
        return True
    value = os.environ.get("COMPATFIX", "1").strip().lower()
    if value in _OFF_VALUES:
        return True
    global _told_unknown_value
    if value not in _ON_VALUES and not _told_unknown_value:
        # A typo must not pass for a decision: say what was understood (once: the .pth and
        # the sitecustomize folder may both ask).
        _told_unknown_value = True
        sys.stderr.write(
            "compatfix: COMPATFIX=%r is not a known value (on: 1, true, yes, on; off: 0, false, no, "
            "off); compatfix stays on.\n" % os.environ["COMPATFIX"]
        )
    return False


class CompatfixFinder:
    """Meta-path finder that hands imports of target modules to the shim engine.

    For any other name it returns None after one set lookup, so ordinary imports pay
    nothing measurable. It never imports anything itself until a target is imported.
    """

    is_compatfix_finder = True  # how installed_finder() recognises it (no isinstance:
    # a second copy of this module, e.g. from another sys.path entry, must match too)

    def __init__(self) -> None:
        self.packages = set(TRIGGER_PACKAGES)
        if "TORCHELASTIC_RUN_ID" in os.environ:
            # A worker started by torchrun / torch.distributed.launch may parse its
            # --local_rank before it imports torch: there argparse is a trigger too.
            self.packages.add("argparse")
        self._engine = None
        self._engine_lock = _thread.RLock()
        self._local = _thread._local()

    @property
    def engine(self):
        """The shim engine, loaded on first use (imports the registry and the shims);
        None if it could not be loaded, in which case compatfix steps aside for good."""
        engine = self._engine
        if engine is None and self.packages:
            with self._engine_lock:
                if self._engine is None and self.packages:
                    # While the engine loads, imports it causes on this thread (a plugin
                    # importing numpy at its top) are plain imports: catch_up shims them.
                    self._local.loading = True
                    try:
                        self._engine = self._load_engine()
                    finally:
                        self._local.loading = False
                    if self._engine is not None:
                        # Targets imported before the engine existed (before activation,
                        # or plugin targets imported before any built-in target) get
                        # their shims now.
                        self._engine.catch_up()
                engine = self._engine
        return engine

    def _load_engine(self):
        try:
            from compatfix import _engine

            return _engine.Engine.from_environment(self)
        except Exception as exc:
            # Never make an import fail because compatfix itself is broken.
            self.packages = set()
            if os.environ.get("COMPATFIX_STRICT", "").strip().lower() in ("1", "true", "yes", "on"):
                raise
            sys.stderr.write(
                "compatfix: could not load its shims (%s: %s); the program goes on without "
                "compatfix. Set COMPATFIX=0 to silence this.\n" % (type(exc).__name__, exc)
            )
            return None

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in self.packages:
            return None
        local = self._local.__dict__
        if local.get("loading"):
            return None
        busy = local.setdefault("busy", set())
        if fullname in busy:  # another finder asked importlib again: step aside
            return None
        reloading = fullname in sys.modules  # importlib.reload asks finders again
        engine = self.engine
        if engine is None or not engine.handles(fullname):
            return None
        existing = sys.modules.get(fullname)
        if existing is not None and not reloading:
            # Loading the engine imported this very module (a plugin's top-level import):
            # hand the import system that module, not a second copy of it.
            return _spec_of_existing(fullname, existing)
        busy.add(fullname)
        try:
            spec = self._find_real_spec(fullname, path, target)
        finally:
            busy.discard(fullname)
        return engine.prepare_spec(fullname, spec)

    def _find_real_spec(self, fullname, path, target):
        for finder in list(sys.meta_path):
            if finder is self:
                continue
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None

    def invalidate_caches(self) -> None:
        pass


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


def installed_finder() -> "CompatfixFinder | None":
    for finder in sys.meta_path:
        if getattr(type(finder), "is_compatfix_finder", False):
            return finder
    return None


_activate_lock = _thread.allocate_lock()


def activate(source: str) -> "CompatfixFinder":
    """Install the finder once per process (idempotent) and remember who asked first."""
    global activated_by
    with _activate_lock:
        finder = installed_finder()
        if finder is None:
            finder = CompatfixFinder()
            sys.meta_path.insert(0, finder)
            if activated_by is None:
                activated_by = source
            if os.environ.get("COMPATFIX_REPORT") and not os.environ.get("COMPATFIX_RUN_ID"):
                start_run()
    # Targets imported before activation (an interactive session, a late sitecustomize):
    # loading the engine applies their shims.
    if any(name in sys.modules for name in finder.packages):
        finder.engine
    return finder


def start_run() -> None:
    """Name a new run: every process of the tree (launcher workers, spawn children)
    inherits the id and adds its record to the same report."""
    os.environ["COMPATFIX_RUN_ID"] = "%d-%s" % (os.getpid(), os.urandom(4).hex())


def bootstrap() -> None:
    """Zero-argument start-up hook named by ``compatfix.pth`` and ``compatfix.start``."""
    if _switched_off():
        return
    try:
        activate("pth")
    except Exception as exc:  # never let start-up break the interpreter
        sys.stderr.write("compatfix: activation failed and is skipped: %r\n" % (exc,))

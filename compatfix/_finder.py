"""The finder hand-off: what answers the imports that the start-up finder
(``_compatfix_bootstrap``) hands to the engine once a target import has loaded it.

``ImportHandler`` finds the real spec and lets the engine prepare it
(``Engine.prepare_spec``); ``HookedLoader`` runs the engine's shims around a target's own
loader, ``ProvidingLoader`` creates a module that no longer exists upstream. None of them
imports the engine: each is given it, so the engine stands above this module
(``compatfix._engine.handler_for`` makes the handler).
"""

import sys
import _thread  # not threading: most targets never import it

TYPE_CHECKING = False
if TYPE_CHECKING:
    from compatfix._engine import Engine
    from compatfix.registry import Shim

# Annotations are quoted instead of ``from __future__ import annotations``: this module
# loads with a target's first import (numpy never loads __future__ itself).


def can_hook(loader) -> bool:
    return loader is not None and hasattr(loader, "exec_module")


class HookedLoader:
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
        # A module may put another object in its place in sys.modules while it runs
        # (transformers' _LazyModule): the import returns that one, so shim that one, as
        # long as it answers to the same name (anything else is not what the shims target).
        placed = sys.modules.get(name, module)
        self._engine.run_after(placed if getattr(placed, "__name__", None) == name else module)


class ProvidingLoader:
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

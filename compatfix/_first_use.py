"""First-use restoration: the ``__getattr__`` the engine puts on a target module whose
shims only restore names, so that an import pays nothing for aliases its program never
uses; the first use of one of those names applies them.

A bottom floor of the core: it imports no compatfix module. It is given the engine
(``Engine.run_after`` installs it) and asks it only for ``first_use_names``, ``_lock``
and ``apply_on_first_use``; ``compatfix.patching`` asks it for a module's own
``__getattr__`` behind the hook (``own_getattr``).
"""

import _thread  # not threading: most targets never import it

TYPE_CHECKING = False
if TYPE_CHECKING:
    from compatfix._engine import Engine

# Annotations are quoted instead of ``from __future__ import annotations``: this module
# loads with numpy's import, which never loads __future__ itself.


class RestoreOnFirstUse:
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
    return current.previous if isinstance(current, RestoreOnFirstUse) else current

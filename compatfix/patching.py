"""The one way a shim changes something: restore removed names without overwriting working
ones (``restore_names``), set or wrap an attribute (``replace_attribute``, ``wrap``), or let
several shims rewrite one function's arguments (``rewrite_arguments``). Every change keeps
the first original for ``get_original``/``is_patched`` and is counted for the shim that made
it, so the engine can tell "applied" from "nothing to do".

Restored names are plain module attributes, so using them costs nothing extra. In report
mode (``--report``) they are served by a module ``__getattr__`` instead, which records
the caller's ``file:line``: that list is what a user needs to fix the code for good.

wrapt is not used: ``functools.update_wrapper`` keeps the name, docstring, module and (through
``__wrapped__``) the signature that ``inspect.signature`` reports, and ``wrap`` rebuilds
``staticmethod``/``classmethod`` descriptors itself; importing wrapt would cost the first
target import ~2 ms for nothing these shims need (docs/writing-shims.md).
"""

from __future__ import annotations

import functools
import _thread  # not threading: most targets never import it
import warnings
from types import ModuleType

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the engine loads before numpy
    from typing import Any, Callable, Iterable, Mapping

_MISSING = object()
# (owner's qualified name, attribute) -> the value before compatfix touched it.
# setdefault keeps the first original when a patch is applied again.
_saved: dict[tuple[str, str], Any] = {}

# The attribute every replacement carries: the name of the shim that put it there.
_MARK = "__compatfix_shim__"

_collecting = _thread._local()

# The engine that applies shims in this process, as each apply passes it in
# (``collect_changes``): patching never imports the engine, which stands above it. Calls
# that a device mode redirects long after the apply are counted on its recorder.
_applying_engine: Any = None


def _owner_name(owner: Any) -> str:
    if isinstance(owner, ModuleType):
        return owner.__name__
    return "%s.%s" % (getattr(owner, "__module__", "?"), getattr(owner, "__qualname__", repr(owner)))


def _note_change(what: str) -> None:
    changes = getattr(_collecting, "changes", None)
    if changes is not None:
        changes.append(what)


class collect_changes:
    """Context manager the engine puts around one ``apply``: the list it yields receives
    one line per change the patching functions make on this thread.

    ``engine`` is the engine applying: what ``restore_names`` asks (the shim's record, report
    mode and its recorder) and where ``record_redirect`` counts. It is duck-typed (``shims``,
    ``tracking_uses``, ``recorder``) so that this module needs no import of it."""

    def __init__(self, engine: Any = None) -> None:
        self._engine = engine

    def __enter__(self) -> list[str]:
        global _applying_engine
        self._outer = getattr(_collecting, "changes", None)
        self._outer_engine = getattr(_collecting, "engine", None)
        _collecting.changes = []
        _collecting.engine = self._engine
        if self._engine is not None:
            _applying_engine = self._engine
        return _collecting.changes

    def __exit__(self, *exc_info: object) -> None:
        inner = _collecting.changes
        _collecting.changes = self._outer
        _collecting.engine = self._outer_engine
        if self._outer is not None:  # a nested apply (a provide importing a target)
            self._outer.extend(inner)


def has_working_name(module: ModuleType, name: str) -> bool:
    """Whether ``module.name`` resolves, through the module's own ``__getattr__`` too."""
    if name in vars(module):
        return True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            getattr(module, name)
        except AttributeError:
            return False
    return True


class Lazy:
    """A restored value made on first use. For a name whose value lives in a submodule the
    target imports lazily (``numpy.char``): restoring it eagerly would make every import of
    the target pay for that submodule. The name is then served by a module ``__getattr__``
    until its first use, which makes it a plain attribute."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def provided_submodule(dotted: str) -> Lazy:
    """The value of a parent's attribute for a submodule that a provide shim makes
    (``pandas.util.testing``): imported at the attribute's first use. Where that shim is off
    the import fails, and the attribute is then missing as it would be without compatfix."""
    parent, _, leaf = dotted.rpartition(".")

    def load() -> Any:
        import importlib

        try:
            return importlib.import_module(dotted)
        except ModuleNotFoundError as err:
            raise AttributeError("module %r has no attribute %r" % (parent, leaf)) from err

    return Lazy(load)


def _resolved(names: dict[str, Any], name: str) -> Any:
    value = names[name]
    if isinstance(value, Lazy):
        value = names[name] = value.make()
    return value


def _absent_names(module: ModuleType, names: Iterable[str]) -> list[str]:
    """The ``names`` that do not resolve on ``module``, as ``has_working_name`` says, with
    one warnings context for all of them, and none for a plain module without its own
    ``__getattr__`` (its ``__dict__`` then says everything)."""
    attributes = vars(module)
    unknown = [name for name in names if name not in attributes]
    if not unknown or (type(module) is ModuleType and "__getattr__" not in attributes):
        return unknown
    absent = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in unknown:
            try:
                getattr(module, name)
            except AttributeError:
                absent.append(name)
    return absent


def restore_names(module: ModuleType, names: Mapping[str, Any], shim: str) -> list[str]:
    """Give ``module`` back the ``names`` that upstream removed; returns those restored.

    A name that exists and works is never overwritten. A value may be a ``Lazy``.
    """
    absent = set(_absent_names(module, names))
    missing = {name: value for name, value in names.items() if name in absent}
    if not missing:
        return []
    engine = getattr(_collecting, "engine", None)  # the engine whose apply this is, if any
    record = engine.shims.get(shim) if engine is not None else None
    if record is not None and record.restores and not record.restores.issuperset(missing):
        # The engine applies such a shim at the first use of a declared name: an
        # undeclared one would not be there until some declared name had been used.
        raise ValueError("shim %r restores %s, which its record's restores= does not name"
                         % (shim, ", ".join(sorted(set(missing) - record.restores))))
    if engine is not None and engine.tracking_uses:
        _serve_from_getattr(module, missing, shim, engine.recorder)
    else:
        lazy = {name: value for name, value in missing.items() if isinstance(value, Lazy)}
        for name, value in missing.items():
            if name not in lazy:
                _saved.setdefault((module.__name__, name), _MISSING)
                setattr(module, name, value)
        if lazy:
            _serve_from_getattr(module, lazy, shim, None)
    for name in sorted(missing):
        _note_change("restored %s.%s" % (module.__name__, name))
    return sorted(missing)


def _serve_from_getattr(module: ModuleType, names: dict[str, Any], shim: str, recorder: Any) -> None:
    """Serve ``names`` from a module ``__getattr__`` in front of the module's own: with a
    ``recorder`` (report mode) every use is recorded with its call site; without one, each
    (lazy) name becomes a plain attribute at its first use."""
    from compatfix import _first_use

    previous = vars(module).get("__getattr__")
    own = _first_use.own_getattr(module)  # the engine's first-use hook is not the original
    _saved.setdefault((module.__name__, "__getattr__"), _MISSING if own is None else own)
    prefix = module.__name__ + "."

    def __getattr__(name: str) -> Any:
        if name in names:
            if recorder is not None:
                recorder.record_use(shim, prefix + name, depth=1)
                return _resolved(names, name)
            value = _resolved(names, name)
            setattr(module, name, value)
            return value
        if previous is not None:
            return previous(name)
        raise AttributeError("module %r has no attribute %r" % (module.__name__, name))

    for name in names:
        _saved.setdefault((module.__name__, name), _MISSING)
    module.__getattr__ = __getattr__  # type: ignore[method-assign]


def shim_of(value: Any) -> str | None:
    """The shim whose replacement ``value`` is, or None."""
    try:
        return vars(value).get(_MARK)
    except TypeError:  # no __dict__: a builtin, a slotted object, a plain value
        return getattr(value, _MARK, None) if isinstance(value, type) else None


def wrapped_by(value: Any, shim: str) -> bool:
    """Whether ``shim``'s replacement is ``value`` or anywhere down its ``__wrapped__``
    chain (another shim, or the user, may have wrapped it since)."""
    seen = 0
    while value is not None and seen < 100:
        if shim_of(value) == shim:
            return True
        value = getattr(value, "__wrapped__", None)
        seen += 1
    return False


def replace_attribute(owner: Any, name: str, value: Any, shim: str) -> bool:
    """Set ``owner.name = value`` for ``shim``, keeping the first original for
    ``get_original``. Returns False, changing nothing, when ``owner.name`` already is
    (or wraps) that shim's replacement: applying a shim twice is harmless.
    """
    current = getattr(owner, name, _MISSING)
    if current is not _MISSING and wrapped_by(current, shim):
        return False
    _saved.setdefault((_owner_name(owner), name), current)
    try:
        setattr(value, _MARK, shim)
    except (AttributeError, TypeError):  # a builtin or a class with __slots__
        pass
    setattr(owner, name, value)
    _note_change("%s %s.%s" % ("added" if current is _MISSING else "replaced", _owner_name(owner), name))
    return True


def wrap(owner: Any, name: str, make_wrapper: Callable[[Any], Any], shim: str) -> bool:
    """Replace the function ``owner.name`` with ``make_wrapper(current)``.

    ``current`` is the attribute as it resolves now (inherited, or another shim's wrapper).
    The wrapper gets ``current``'s name, docstring, module and ``__wrapped__`` (so
    ``inspect.signature`` reports the original signature); a ``staticmethod`` or
    ``classmethod`` on a class is unwrapped, wrapped and re-wrapped in the same descriptor.
    Returns False, changing nothing, when ``owner.name`` is missing or already wrapped by
    ``shim`` anywhere down its ``__wrapped__`` chain.
    """
    descriptor = None
    current: Any = _MISSING
    if isinstance(owner, type):
        for klass in owner.__mro__:
            if name in vars(klass):
                raw = vars(klass)[name]
                if isinstance(raw, (staticmethod, classmethod)):
                    descriptor = type(raw)
                    current = raw.__func__
                break
    if descriptor is None:
        current = getattr(owner, name, _MISSING)
        if current is _MISSING:
            return False
    if wrapped_by(current, shim):
        return False
    wrapper = functools.update_wrapper(make_wrapper(current), current)
    try:
        setattr(wrapper, _MARK, shim)
    except (AttributeError, TypeError):
        pass
    return replace_attribute(owner, name, wrapper if descriptor is None else descriptor(wrapper), shim)


# --- several shims adjusting one function's arguments -------------------------------------

_REWRITERS = "__compatfix_rewriters__"
_REWRITE_SHIM = "compatfix.rewrite_arguments"


def rewrite_arguments(
    owner: Any, name: str, rewrite: Callable[[Any], None], shim: str, *, order: int = 0
) -> bool:
    """Let ``shim`` adjust the arguments of ``owner.name`` before each call.

    ``rewrite(bound)`` receives the call's ``inspect.BoundArguments`` (defaults applied) and
    changes ``bound.arguments`` in place. All shims rewriting one function share a single
    wrapper; their rewriters run by ascending ``order``, then in the order they were added.
    Returns False when ``shim`` already rewrites this function.
    """
    current = getattr(owner, name, _MISSING)
    if current is _MISSING:
        return False
    rewriters = _rewriters_of(current)
    if rewriters is None:
        wrap(owner, name, _argument_rewriter, _REWRITE_SHIM)
        current = getattr(owner, name)
        rewriters = _rewriters_of(current)
        if rewriters is None:  # owner.name could not be wrapped (a read-only attribute)
            return False
    if any(existing_shim == shim for _, _, existing_shim, _ in rewriters):
        return False
    rewriters.append((order, len(rewriters), shim, rewrite))
    rewriters.sort(key=lambda entry: entry[:2])
    _saved.setdefault((_owner_name(owner), name), getattr(current, "__wrapped__", current))
    _note_change("%s rewrites the arguments of %s.%s" % (shim, _owner_name(owner), name))
    return True


def _rewriters_of(function: Any) -> list[Any] | None:
    while function is not None:
        rewriters = getattr(function, "__dict__", {}).get(_REWRITERS)
        if rewriters is not None:
            return rewriters
        function = getattr(function, "__wrapped__", None)
    return None


def _argument_rewriter(original: Callable[..., Any]) -> Callable[..., Any]:
    import inspect

    signature = inspect.signature(original)
    rewriters: list = []

    def with_rewritten_arguments(*args: Any, **kwargs: Any) -> Any:
        if rewriters:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            for _, _, _, rewrite in list(rewriters):
                rewrite(bound)
            args, kwargs = bound.args, bound.kwargs
        return original(*args, **kwargs)

    setattr(with_rewritten_arguments, _REWRITERS, rewriters)
    return with_rewritten_arguments


def record_redirect(shim: str, what: str) -> None:
    """Count a call that a device mode redirected, for the report."""
    engine = _applying_engine
    if engine is not None:
        engine.recorder.record_redirect(shim, what)


def _first_use_hook(owner: Any, name: str) -> Any:
    """The engine's first-use ``__getattr__`` on a target module, if ``owner.name`` is it.
    The engine puts it there without this module (a target's import must not load it),
    so it has no saved original: the module's own ``__getattr__`` is behind it."""
    if name != "__getattr__" or not isinstance(owner, ModuleType):
        return None
    from compatfix import _first_use

    current = vars(owner).get("__getattr__")
    return current if current is not None and _first_use.own_getattr(owner) is not current else None


def is_patched(owner: Any, name: str) -> bool:
    """Whether compatfix changed or added ``owner.name``."""
    return (_owner_name(owner), name) in _saved or _first_use_hook(owner, name) is not None


def get_original(owner: Any, name: str) -> Any:
    """``owner.name`` as it was before compatfix; AttributeError if it did not exist."""
    key = (_owner_name(owner), name)
    original = _saved.get(key, _MISSING)
    if key not in _saved:
        hook = _first_use_hook(owner, name)
        if hook is not None:
            if hook.previous is None:
                raise AttributeError("%s.%s did not exist before compatfix" % key)
            return hook.previous
        return getattr(owner, name)
    if original is _MISSING:
        raise AttributeError("%s.%s did not exist before compatfix restored it" % key)
    return original

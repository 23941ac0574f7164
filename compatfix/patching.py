"""Tools for writing shims: restore removed names without overwriting working ones,
and keep the originals of everything replaced (``get_original``, ``is_patched``).

Restored names are plain module attributes, so using them costs nothing extra. In report
mode (``--report``) they are served by a module ``__getattr__`` instead, which records
the caller's ``file:line``: that list is what a user needs to fix the code for good.
"""

from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any, Mapping

_MISSING = object()
# (owner's qualified name, attribute) -> the value before compatfix touched it.
# setdefault keeps the first original when a patch is applied again.
_saved: dict[tuple[str, str], Any] = {}


def _owner_name(owner: Any) -> str:
    if isinstance(owner, ModuleType):
        return owner.__name__
    return "%s.%s" % (getattr(owner, "__module__", "?"), getattr(owner, "__qualname__", repr(owner)))


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


def restore_names(module: ModuleType, names: Mapping[str, Any], shim: str) -> list[str]:
    """Give ``module`` back the ``names`` that upstream removed; returns those restored.

    A name that exists and works is never overwritten.
    """
    from compatfix import _engine

    missing = {name: value for name, value in names.items() if not has_working_name(module, name)}
    if not missing:
        return []
    engine = _engine.active()
    if engine is not None and engine.tracking_uses:
        _serve_with_tracking(module, missing, shim, engine.recorder)
    else:
        for name, value in missing.items():
            _saved.setdefault((module.__name__, name), _MISSING)
            setattr(module, name, value)
    return sorted(missing)


def _serve_with_tracking(module: ModuleType, names: dict[str, Any], shim: str, recorder) -> None:
    previous = vars(module).get("__getattr__")
    _saved.setdefault((module.__name__, "__getattr__"), _MISSING if previous is None else previous)
    prefix = module.__name__ + "."

    def __getattr__(name: str) -> Any:
        if name in names:
            recorder.record_use(shim, prefix + name, depth=1)
            return names[name]
        if previous is not None:
            return previous(name)
        raise AttributeError("module %r has no attribute %r" % (module.__name__, name))

    for name in names:
        _saved.setdefault((module.__name__, name), _MISSING)
    module.__getattr__ = __getattr__


_MARK = "__compatfix_shim__"  # on every replacement: the shim that put it there


def replace_attribute(owner: Any, name: str, value: Any, shim: str) -> bool:
    """Set ``owner.name = value`` for ``shim``, keeping the first original for
    ``get_original``. Returns False, changing nothing, when ``owner.name`` already is
    that shim's replacement: applying a shim twice is harmless.
    """
    current = getattr(owner, name, _MISSING)
    if getattr(current, _MARK, None) == shim:
        return False
    _saved.setdefault((_owner_name(owner), name), current)
    try:
        setattr(value, _MARK, shim)
    except (AttributeError, TypeError):  # a builtin or a class with __slots__
        pass
    setattr(owner, name, value)
    return True


def record_redirect(shim: str, what: str) -> None:
    """Count a call that a device mode redirected, for the report."""
    from compatfix import _engine

    engine = _engine.active()
    if engine is not None:
        engine.recorder.record_redirect(shim, what)


def is_patched(owner: Any, name: str) -> bool:
    """Whether compatfix changed or added ``owner.name``."""
    return (_owner_name(owner), name) in _saved


def get_original(owner: Any, name: str) -> Any:
    """``owner.name`` as it was before compatfix; AttributeError if it did not exist."""
    key = (_owner_name(owner), name)
    original = _saved.get(key, _MISSING)
    if key not in _saved:
        return getattr(owner, name)
    if original is _MISSING:
        raise AttributeError("%s.%s did not exist before compatfix restored it" % key)
    return original

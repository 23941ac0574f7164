"""Shims for PyYAML: ``yaml.load(f)`` without a Loader, which PyYAML 6 turned into an error.

PyYAML 5.1-5.4 answered such a call with ``FullLoader`` (and a warning). This shim
answers it with a safe loader instead: ``yaml.SafeLoader`` plus the plain ``!!python/``
tags that ``yaml.dump`` writes for Python values (``!!python/tuple`` for every tuple in a
dumped config, ``!!python/str``, ``!!python/unicode`` from Python 2 dumps ...). It leaves
out what FullLoader adds on top of those: ``!!python/name:``, which hands the program a
reference to any importable function (``!!python/name:os.system``). docs/yaml.md has the
decision, the evidence and the remaining risk.

The wrappers keep PyYAML's ``__module__`` and ``__qualname__`` (``functools.wraps``), so
``pickle.dumps(yaml.load)`` still pickles a reference to ``yaml.load``.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

from compatfix._messages import say
from compatfix.patching import record_redirect, replace_attribute
from compatfix.registry import RISK_BEHAVIOUR, Shim

SHIM_NAME = "yaml.default_loader"
LOADER_NAME = "CompatfixDefaultLoader"

# FullLoader's tags that build only plain values (PyYAML's constructor.py registers them
# on FullConstructor): everything FullLoader knows but python/name.
_PLAIN_PYTHON_TAGS = {
    "none": "construct_yaml_null",
    "bool": "construct_yaml_bool",
    "str": "construct_python_str",
    "unicode": "construct_python_unicode",
    "bytes": "construct_python_bytes",
    "int": "construct_yaml_int",
    "long": "construct_python_long",
    "float": "construct_yaml_float",
    "complex": "construct_python_complex",
    "list": "construct_yaml_seq",
    "tuple": "construct_python_tuple",
    "dict": "construct_yaml_map",
}


_loaders: "weakref.WeakKeyDictionary[Any, type]" = weakref.WeakKeyDictionary()


def default_loader_class(yaml_module) -> type:
    """``yaml.SafeLoader`` plus the plain ``!!python/`` tags (one class per yaml module)."""
    loader = _loaders.get(yaml_module)
    if loader is not None:
        return loader
    full = yaml_module.constructor.FullConstructor
    loader = type(LOADER_NAME, (yaml_module.SafeLoader,), {
        "__doc__": "SafeLoader plus the !!python/ tags of plain values (compatfix's yaml.load default).",
        "__module__": __name__,
    })
    for tag, constructor in _PLAIN_PYTHON_TAGS.items():
        loader.add_constructor("tag:yaml.org,2002:python/" + tag, getattr(full, constructor))
    _loaders[yaml_module] = loader
    return loader


def _default_loader(yaml_module, function: str) -> Any:
    say(
        "yaml.%s() was called without Loader, which PyYAML 6 requires: using compatfix's safe default "
        "(yaml.SafeLoader plus the plain !!python/ tags such as !!python/tuple; not FullLoader's "
        "!!python/name). Pass Loader=yaml.SafeLoader, or Loader=yaml.FullLoader for PyYAML 5's "
        "behaviour, to silence this." % function,
        key="%s:%s" % (SHIM_NAME, function),
    )
    record_redirect(SHIM_NAME, "yaml.%s without Loader -> %s" % (function, LOADER_NAME))
    return default_loader_class(yaml_module)


def _with_default(yaml_module, original: Any, function: str) -> Any:
    @functools.wraps(original)
    def wrapper(stream: Any, Loader: Any = None) -> Any:
        if Loader is None:
            Loader = _default_loader(yaml_module, function)
        return original(stream, Loader)

    return wrapper


def default_to_safe_loader(yaml_module) -> None:
    # Only where Loader is still required (a PyYAML that has a default keeps its own).
    for name in ("load", "load_all"):
        original = getattr(yaml_module, name)
        if getattr(original, "__defaults__", None) is None:
            replace_attribute(yaml_module, name, _with_default(yaml_module, original, name), SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["yaml"],
        requires={"yaml": ">=6"},
        apply=default_to_safe_loader,
        risk=RISK_BEHAVIOUR,
        broke="PyYAML 6.0 (2021-10) made Loader a required argument of yaml.load and "
        "yaml.load_all: TypeError: load() missing 1 required positional argument: 'Loader'",
        summary="yaml.load/load_all without Loader use SafeLoader plus the plain !!python/ tags "
        "(tuple, str, ...) that yaml.dump writes, never FullLoader's !!python/name or the unsafe "
        "loader, and say so once",
        replacement="yaml.safe_load(stream), or yaml.load(stream, Loader=yaml.SafeLoader)",
        rewrites={"yaml.load(-Loader:1)": "yaml.safe_load(stream)", "yaml.load_all(-Loader:1)": "yaml.safe_load_all(stream)"},
    ),
)

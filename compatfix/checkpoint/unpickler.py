"""The data-only load: torch's own weights-only unpickler, widened by a documented
allow-list of data classes, each rebuilt by a validating constructor of ours
(docs/checkpoints.md, "What the data-only loader adds").

Why torch's unpickler, and how it is widened
--------------------------------------------
torch's weights-only unpickler (``torch._weights_only_unpickler``) already decides every
opcode: it resolves a GLOBAL only from its allow-list and ``add_safe_globals``, calls
(REDUCE) or creates (NEWOBJ) only allow-listed callables, gives a state (BUILD) only to
instances of allow-listed types, fills (SETITEMS) only plain dicts, and torch checks
what it loaded (sparse tensors' indices) only when ``weights_only=True``. So a data-only
load *is* a ``weights_only=True`` load, run inside ``data_only_scope()``. Two hooks,
installed once by the shim and inert outside the scope, add the allow-list:

- ``_get_user_allowed_globals`` (which torch asks at every GLOBAL, REDUCE, NEWOBJ and
  BUILD) also answers the names below, with our stand-ins. Its ``values()``, which torch
  asks "may this be called / built?", lists only the stand-ins, never a real class the
  file may merely name (``numpy.float64`` as a config value);
- ``Unpickler`` (a subclass of torch's) lets SETITEMS fill a dict stand-in before its
  BUILD, keeps numpy objects in the memo until they are built, and checks the result.

The stand-ins
-------------
- ``argparse.Namespace``, yacs ``CfgNode``, mmcv ``Config``/``ConfigDict``, addict
  ``Dict``: a private subclass (same layout) that the pickle may create empty (NEWOBJ,
  never with arguments: ``Config(filename=...)`` would read that file) and fill. Its
  ``__setstate__`` checks the state's shape and then makes the object the real class;
  an object the pickle never BUILDs gets the class's default state when the load ends,
  so no private class leaves a load.
- numpy ``dtype``, ``ndarray`` (``_reconstruct``) and ``scalar``: numpy's own
  ``__setstate__`` trusts its input (a forged ``flags`` field makes an array of object
  pointers read from the file), so it is never called. A pickle's ``dtype(...)`` and
  ``_reconstruct(...)`` give a pending object; its BUILD state is checked (the dtype
  grammar, no object fields, offsets inside the item size, bounded shapes, the exact
  number of data bytes) and the real object is built from that description with
  ``numpy.dtype(...)`` and ``numpy.frombuffer(...)``; it replaces the pending object on
  the stack and in the memo. A pending object that is read back before its BUILD, or
  never built, fails the load.
- ``pathlib`` paths: built from string parts only.

When the load ends, one walk over the result (each object once, bounded depth and
count) refuses anything private that is left: a stand-in used as a value, a pending
numpy object.
"""

from __future__ import annotations

import _compat_pickle
import importlib
import os
import pickle
import re
import threading
from typing import Any, Callable, Iterator

from compatfix.checkpoint.protocol2 import Protocol2Reader

MAX_DEPTH = 1000  # deeper data breaks repr, copy and pickle (C recursion) anyway
MAX_OBJECTS = 20_000_000  # containers and instances the final walk visits
MAX_NDIM = 64  # numpy 2's NPY_MAXDIMS
MAX_PATH_PARTS = 4096

_scope = threading.local()  # .depth: data_only_scope nesting; .load: the pickle being read; .notes


class LoadNotes:
    """What the data-only loads of one ``data_only_scope`` used beyond torch's own
    weights-only loader: ``classes``, the data-only globals they resolved, and
    ``protocols``, the pickle protocols above 2 they read as protocol 2."""

    def __init__(self) -> None:
        self.classes: set[str] = set()
        self.protocols: set[int] = set()

    def __bool__(self) -> bool:
        return bool(self.classes or self.protocols)


class data_only_scope:
    """Inside it, this thread's ``weights_only=True`` loads also accept the data-only
    allow-list and pickles of protocol 3+; ``LoadNotes`` says what they used."""

    def __enter__(self) -> LoadNotes:
        _scope.depth = getattr(_scope, "depth", 0) + 1
        _scope.notes = LoadNotes()
        return _scope.notes

    def __exit__(self, *exc_info: object) -> None:
        _scope.depth -= 1


def _in_scope() -> bool:
    return getattr(_scope, "depth", 0) > 0


def _current_load() -> "_Load":
    load = getattr(_scope, "load", None)
    if load is None:
        raise pickle.UnpicklingError("compatfix's data-only classes are made only by its loader")
    return load


def _refuse(text: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError("compatfix's data-only loader: " + text)


# --- Python classes rebuilt from their state ------------------------------------------------


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _check_attribute_names(cls: type, state: Any) -> dict:
    if not isinstance(state, dict):
        raise _refuse("a %s's state must be a dict, not %s" % (cls.__qualname__, type(state).__qualname__))
    for name in state:
        if type(name) is not str:
            raise _refuse("a %s's attribute names must be strings, not %r" % (cls.__qualname__, name))
        if _is_dunder(name):
            raise _refuse("a %s's state may not set the dunder name %r" % (cls.__qualname__, name))
        # vars() of each class of the MRO: no getattr, which a class's __getattr__ could answer.
        if any(name in vars(klass) for klass in cls.__mro__):
            raise _refuse("a %s's state may not set %r, which the class defines" % (cls.__qualname__, name))
    return state


def _set_namespace_state(namespace: Any, state: Any) -> None:
    import argparse

    vars(namespace).update(_check_attribute_names(argparse.Namespace, state))


_CFG_NODE_STATE = ("__immutable__", "__deprecated_keys__", "__renamed_keys__", "__new_allowed__")


def _set_cfg_node_state(node: dict, state: Any) -> None:
    # yacs keeps four flags in the instance __dict__; nothing else belongs there.
    if not isinstance(state, dict) or not set(state) <= set(_CFG_NODE_STATE):
        raise _refuse("a yacs CfgNode's state must be a dict of %s" % sorted(_CFG_NODE_STATE))
    vars(node).update(state)


def _default_cfg_node_state(node: dict) -> None:
    # What CfgNode.__init__ sets, for a node the pickle created but never gave a state.
    vars(node).update({"__immutable__": False, "__deprecated_keys__": set(), "__renamed_keys__": {},
                       "__new_allowed__": False})


def _set_addict_state(node: dict, state: Any) -> None:
    # addict's __getstate__ returns the dict itself (its items were set already).
    if state is node:
        return
    if type(state) is not dict:
        raise _refuse("an addict Dict's state must be a dict")
    dict.update(node, state)


def _set_mmcv_config_state(config: Any, state: Any) -> None:
    # What mmcv's Config.__getstate__ returns: (ConfigDict, filename, text).
    if not (isinstance(state, tuple) and len(state) == 3 and isinstance(state[0], dict)
            and all(item is None or type(item) is str for item in state[1:])):
        raise _refuse("an mmcv Config's state must be (ConfigDict, filename, text)")
    for name, value in zip(("_cfg_dict", "_filename", "_text"), state):
        object.__setattr__(config, name, value)


def _no_default_state(instance: Any) -> None:
    raise _refuse("the file creates a %s but never gives it its state" % type(instance).__qualname__)


def _leave_as_created(instance: Any) -> None:
    pass


class _RebuiltStandIn:
    """Marks the private subclasses ``_rebuilder`` makes."""

    __slots__ = ()


_rebuilders: dict[type, type] = {}


def _item_pairs(args: tuple) -> bool:
    # addict's __getnewargs__ gives its items as (key, value) pairs, which dict.__new__
    # ignores: the items come again with SETITEMS.
    return all(type(arg) is tuple and len(arg) == 2 for arg in args)


def _no_arguments(args: tuple) -> bool:
    return not args


def _rebuilder(cls: type, apply_state: Callable[[Any, Any], None], finish: Callable[[Any], None],
               new_arguments: Callable[[tuple], bool] = _no_arguments) -> type:
    """A private subclass of ``cls`` (same layout: it adds no slots) that a pickle may
    create (NEWOBJ, with arguments that ``new_arguments`` accepts and that are ignored)
    and give one state, which ``apply_state`` checks and sets before the object becomes a
    ``cls``; ``finish`` gives the state of an object that got none."""
    rebuilder = _rebuilders.get(cls)
    if rebuilder is not None:
        return rebuilder
    base_new = dict.__new__ if issubclass(cls, dict) else object.__new__

    def __new__(stand_in: type, *args: Any, **kwargs: Any) -> Any:
        if kwargs or not new_arguments(args):
            raise _refuse("a %s is created empty and rebuilt from its state, never from other arguments"
                          % cls.__qualname__)
        load = _current_load()
        instance = base_new(stand_in)
        load.created.append(instance)
        return instance

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # Reached only by REDUCE (a call): NEWOBJ creates without calling __init__.
        raise _refuse("%s is rebuilt from its state; a pickle may not call it" % cls.__qualname__)

    def __setstate__(self: Any, state: Any) -> None:
        apply_state(self, state)
        object.__setattr__(self, "__class__", cls)  # cls.__setattr__ may refuse (frozen CfgNode)

    namespace: dict[str, Any] = {
        "__slots__": (),
        "__new__": __new__,
        "__init__": __init__,
        "__setstate__": __setstate__,
        "_compatfix_real_class": cls,
        "_compatfix_finish": staticmethod(finish),
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
    }
    if issubclass(cls, dict):
        namespace["__setitem__"] = dict.__setitem__  # never the class's own (addict's builds children)
    rebuilder = type(cls.__name__, (cls, _RebuiltStandIn), namespace)
    _rebuilders[cls] = rebuilder
    return rebuilder


def _finish_rebuilt(instance: Any) -> None:
    stand_in = type(instance)
    stand_in._compatfix_finish(instance)
    object.__setattr__(instance, "__class__", stand_in._compatfix_real_class)


# --- pathlib ------------------------------------------------------------------------------

_PATH_NAMES = ("PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath")
_path_builders: dict[str, type] = {}


def _path_builder(name: str) -> type:
    """A stand-in that a pickle calls with a path's parts (``PurePath.__reduce__``) and
    that returns the real path, built from strings only."""
    builder = _path_builders.get(name)
    if builder is not None:
        return builder
    import pathlib

    # A concrete path of the other OS cannot be instantiated here; its pure twin holds
    # the same parts.
    real_name = name
    if name == "WindowsPath" and os.name != "nt":
        real_name = "PureWindowsPath"
    elif name == "PosixPath" and os.name == "nt":
        real_name = "PurePosixPath"
    real = getattr(pathlib, real_name)

    def __new__(stand_in: type, *parts: Any) -> Any:
        if len(parts) > MAX_PATH_PARTS or not all(type(part) is str for part in parts):
            raise _refuse("a pathlib path is built from at most %d strings" % MAX_PATH_PARTS)
        return real(*parts)

    builder = type(name, (), {"__slots__": (), "__new__": __new__, "__module__": "pathlib",
                              "__qualname__": name})
    _path_builders[name] = builder
    return builder


# --- numpy --------------------------------------------------------------------------------


def _numpy() -> Any:
    import numpy

    return numpy


# A dtype's type string as numpy pickles it: kind and size ("f8", "V16", "U20", "M8").
# "O" (object) is not in it: an object dtype holds pointers, never data.
_TYPE_STRING = re.compile(r"\A([biufcSUVMm])(\d{1,10})\Z")
_ENDIAN = ("<", ">", "|", "=")
_MAX_ITEMSIZE = 1 << 31
_DATETIME_UNIT = re.compile(rb"\A(Y|M|W|D|h|m|s|ms|us|ns|ps|fs|as|generic)\Z")


def _real_dtype(value: Any, what: str) -> Any:
    numpy = _numpy()
    if type(value) is _PendingDtype:
        value = value.built
    if not isinstance(value, numpy.dtype):
        raise _refuse("%s must be a numpy dtype, not %s" % (what, type(value).__qualname__))
    if value.hasobject:
        raise _refuse("%s holds Python objects (an object dtype), which a data-only load never builds" % what)
    return value


def _small_int(value: Any, low: int, high: int, what: str) -> int:
    if type(value) is not int or not low <= value <= high:
        raise _refuse("%s must be an integer from %d to %d, not %r" % (what, low, high, value))
    return value


def _shape(value: Any, what: str) -> tuple[int, ...]:
    if type(value) is not tuple or len(value) > MAX_NDIM:
        raise _refuse("%s must be a tuple of at most %d sizes" % (what, MAX_NDIM))
    return tuple(_small_int(size, 0, (1 << 63) - 1, what) for size in value)


def _dtype_from_description(type_string: str, state: Any) -> Any:
    """The dtype a pickle describes (the arguments of its ``dtype(...)`` and its BUILD
    state), built by ``numpy.dtype`` from checked parts; UnpicklingError otherwise."""
    numpy = _numpy()
    match = _TYPE_STRING.match(type_string)
    if match is None:
        raise _refuse("a numpy dtype of type %r is not data (kinds b i u f c S U V M m)" % type_string)
    kind = match.group(1)
    if type(state) is not tuple or len(state) not in (8, 9) or state[0] not in (3, 4):
        raise _refuse("a numpy dtype's state must be (3|4, endian, subarray, names, fields, size, alignment, "
                      "flags[, metadata])")
    endian, subarray, names, fields, size, _alignment, flags = state[1:8]
    if endian not in _ENDIAN:
        raise _refuse("a numpy dtype's byte order must be one of %s" % "".join(_ENDIAN))
    _small_int(size, -1, _MAX_ITEMSIZE, "a numpy dtype's item size")
    _small_int(flags, 0, 0xFFFF, "a numpy dtype's flags")
    if names is not None:
        built = _structured_dtype(kind, names, fields, size, flags)
    elif subarray is not None:
        if kind != "V" or type(subarray) is not tuple or len(subarray) != 2:
            raise _refuse("a numpy subarray dtype's state must hold (base dtype, shape)")
        base = _real_dtype(subarray[0], "a numpy subarray's base")
        shape = _shape(subarray[1], "a numpy subarray's shape")
        count = 1
        for dimension in shape:
            count *= dimension
        if count * base.itemsize != size:
            raise _refuse("a numpy subarray dtype's size does not match its shape")
        built = numpy.dtype((base, shape))
    elif kind in "SUV":
        if size < 1 or (kind == "U" and size % 4):
            raise _refuse("a numpy %s dtype needs a positive item size%s" % (kind, " (4 per character)" * (kind == "U")))
        built = numpy.dtype("%s%d" % (kind, size // 4 if kind == "U" else size))
    elif kind in "Mm":
        built = numpy.dtype("%s8[%s]" % (kind, _datetime_unit(state)))
    else:
        built = numpy.dtype(type_string)
    if endian in "<>" and built.byteorder != "|":
        built = built.newbyteorder(endian)
    if size != -1 and built.itemsize != size:
        raise _refuse("a numpy dtype's item size %d does not match its description (%d)" % (size, built.itemsize))
    if built.hasobject or built.itemsize == 0:
        raise _refuse("a numpy dtype must hold data of a positive size")
    return built


def _datetime_unit(state: tuple) -> str:
    metadata = state[8] if len(state) == 9 else None
    unit = metadata[1] if type(metadata) is tuple and len(metadata) == 2 else None
    if not (type(unit) is tuple and len(unit) == 4 and type(unit[0]) is bytes and _DATETIME_UNIT.match(unit[0])):
        raise _refuse("a numpy datetime dtype's state must name its unit")
    step = _small_int(unit[1], 1, 1 << 31, "a numpy datetime unit's multiple")
    return "%s%s" % (step if step != 1 else "", unit[0].decode("ascii"))


def _structured_dtype(kind: str, names: Any, fields: Any, size: int, flags: int) -> Any:
    numpy = _numpy()
    if kind != "V" or type(names) is not tuple or type(fields) is not dict or size < 0:
        raise _refuse("a numpy structured dtype's state must hold its names, fields and size")
    spec: dict[str, list] = {"names": [], "formats": [], "offsets": [], "titles": []}
    for name in names:
        field = fields.get(name) if type(name) is str else None
        if type(field) is not tuple or len(field) not in (2, 3):
            raise _refuse("a numpy structured dtype's field %r must be (dtype, offset[, title])" % (name,))
        field_dtype = _real_dtype(field[0], "the numpy field %r" % name)
        offset = _small_int(field[1], 0, size, "the numpy field %r's offset" % name)
        if offset + field_dtype.itemsize > size:
            raise _refuse("the numpy field %r lies outside the item size %d" % (name, size))
        title = field[2] if len(field) == 3 else None
        if title is not None and type(title) is not str:
            raise _refuse("the numpy field %r's title must be a string" % name)
        for key, value in zip(spec, (name, field_dtype, offset, title)):
            spec[key].append(value)
    described = dict(spec, itemsize=size, aligned=bool(flags & 0x80))  # 0x80: NPY_ALIGNED_STRUCT
    return numpy.dtype(described)


class _PendingDtype:
    """What a pickle's ``numpy.dtype(type_string, align, copy)`` gives: the type string,
    until the BUILD state completes the description."""

    __slots__ = ("type_string", "built")
    __hash__ = None  # type: ignore[assignment]  # never a dict key or a set member

    def __new__(cls, type_string: Any = None, align: Any = False, copy: Any = True) -> "_PendingDtype":
        if type(type_string) is not str or type(align) not in (bool, int) or type(copy) not in (bool, int):
            raise _refuse("numpy.dtype is rebuilt from (type string, align, copy) and its state")
        pending = object.__new__(cls)
        pending.type_string = type_string
        pending.built = None
        _current_load().pending.append(pending)
        return pending

    def __init__(self, *args: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        if self.built is not None:
            raise _refuse("a numpy dtype gets its state once")
        self.built = _dtype_from_description(self.type_string, state)
        _current_load().replace_top(self, self.built)


class _PendingArray:
    """What a pickle's ``numpy.core.multiarray._reconstruct(ndarray, (0,), b'b')`` gives,
    until the BUILD state ``(1, shape, dtype, is_fortran, data)`` describes the array."""

    __slots__ = ("built",)
    __hash__ = None  # type: ignore[assignment]

    def __setstate__(self, state: Any) -> None:
        if self.built is not None:
            raise _refuse("a numpy array gets its state once")
        self.built = _array_from_description(state)
        _current_load().replace_top(self, self.built)


def _reconstruct(cls: Any = None, shape: Any = None, typecode: Any = None) -> _PendingArray:
    numpy = _numpy()
    if cls is not numpy.ndarray or shape != (0,) or typecode not in (b"b", "b"):
        raise _refuse("numpy's _reconstruct is rebuilt for (numpy.ndarray, (0,), b'b') only")
    pending = object.__new__(_PendingArray)
    pending.built = None
    _current_load().pending.append(pending)
    return pending


def _array_from_description(state: Any) -> Any:
    if type(state) is tuple and len(state) == 5 and state[0] == 1:
        state = state[1:]
    if type(state) is not tuple or len(state) != 4:
        raise _refuse("a numpy array's state must be (1, shape, dtype, is_fortran, data)")
    return _array_from(*state)


def _frombuffer(data: Any = None, dtype: Any = None, shape: Any = None, order: Any = None) -> Any:
    # How numpy pickles an array in protocol 5 (numpy.core.numeric._frombuffer).
    if order not in ("C", "F"):
        raise _refuse("numpy's _frombuffer is rebuilt for the orders 'C' and 'F' only")
    return _array_from(shape, dtype, order == "F", data)


def _array_from(shape: Any, dtype: Any, fortran: Any, data: Any) -> Any:
    numpy = _numpy()
    shape = _shape(shape, "a numpy array's shape")
    dtype = _real_dtype(dtype, "a numpy array's dtype")
    if type(fortran) not in (bool, int) or type(data) not in (bytes, bytearray):
        raise _refuse("a numpy array's state must hold a flag and its data as bytes")
    if dtype.subdtype is not None:
        raise _refuse("a numpy array's dtype may not be a subarray")
    count = 1
    for dimension in shape:
        count *= dimension
    if count * dtype.itemsize != len(data):
        raise _refuse("a numpy array of shape %s and dtype %s needs %d bytes, the file gives %d"
                      % (shape, dtype, count * dtype.itemsize, len(data)))
    flat = numpy.frombuffer(data, dtype=dtype, count=count) if count else numpy.empty(0, dtype=dtype)
    return flat.reshape(shape, order="F" if fortran else "C").copy(order="K")


def _scalar(dtype: Any = None, data: Any = None) -> Any:
    numpy = _numpy()
    dtype = _real_dtype(dtype, "a numpy scalar's dtype")
    if type(data) not in (bytes, bytearray) or len(data) != dtype.itemsize or dtype.subdtype is not None:
        raise _refuse("a numpy scalar of dtype %s is built from exactly %d bytes" % (dtype, dtype.itemsize))
    return numpy.frombuffer(bytes(data), dtype=dtype, count=1).copy()[0]


_PENDING = (_PendingDtype, _PendingArray)


def _numpy_name(module: str, name: str) -> tuple[Any, bool] | None:
    """(what a pickle's numpy name resolves to, whether the pickle may call or build it)."""
    numpy = _numpy()
    if module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        builders: dict[str, Any] = {"scalar": _scalar, "_reconstruct": _reconstruct}
        return (builders[name], True) if name in builders else None
    if module in ("numpy.core.numeric", "numpy._core.numeric"):
        return (_frombuffer, True) if name == "_frombuffer" else None
    if module == "numpy":
        if name == "dtype":
            return _PendingDtype, True
        # vars(), not getattr(): numpy's module __getattr__ would import submodules.
        value = vars(numpy).get(name)
        wanted: type = numpy.generic
        if name == "ndarray":  # _reconstruct's first argument
            return value, False
    else:  # numpy.dtypes: the dtype classes of numpy >= 1.25 (Float64DType ...)
        value = vars(importlib.import_module("numpy.dtypes")).get(name)
        wanted = numpy.dtype
    if isinstance(value, type) and issubclass(value, wanted):
        return value, False  # a type as a value (a config's dtype=numpy.float32): named, never called
    return None


# --- the allow-list -------------------------------------------------------------------------


def _empty_bytes(*args: Any) -> bytes:
    # Pickle protocol 2 writes b"" as a call of bytes() (other bytes as _codecs.encode):
    # the empty call only, never bytes(n), which would allocate n bytes.
    if args:
        raise _refuse("bytes() is rebuilt without arguments only (protocol 2's b\"\")")
    return b""


def _builtins_name(module: str, name: str) -> tuple[Any, bool] | None:
    return (_empty_bytes, True) if name == "bytes" else None


def _argparse_name(module: str, name: str) -> tuple[Any, bool] | None:
    import argparse

    if name != "Namespace":
        return None
    return _rebuilder(argparse.Namespace, _set_namespace_state, _leave_as_created), True


def _pathlib_name(module: str, name: str) -> tuple[Any, bool] | None:
    return (_path_builder(name), True) if name in _PATH_NAMES else None


def _yacs_name(module: str, name: str) -> tuple[Any, bool] | None:
    if name != "CfgNode":
        return None
    from yacs.config import CfgNode

    return _rebuilder(CfgNode, _set_cfg_node_state, _default_cfg_node_state), True


def _mmcv_name(module: str, name: str) -> tuple[Any, bool] | None:
    if name not in ("Config", "ConfigDict"):
        return None
    config = importlib.import_module("mmcv.utils.config")
    if name == "ConfigDict":
        return _rebuilder(config.ConfigDict, _set_addict_state, _leave_as_created, _item_pairs), True
    return _rebuilder(config.Config, _set_mmcv_config_state, _no_default_state), True


def _addict_name(module: str, name: str) -> tuple[Any, bool] | None:
    if name != "Dict":
        return None
    from addict import Dict

    return _rebuilder(Dict, _set_addict_state, _leave_as_created, _item_pairs), True


# The data-only names, by the module a pickle names. Each resolver imports only its own
# fixed module, and only when a pickle names it.
_DATA_ONLY: dict[str, Callable[[str, str], "tuple[Any, bool] | None"]] = {
    "builtins": _builtins_name,
    "argparse": _argparse_name,
    "pathlib": _pathlib_name,
    "pathlib._local": _pathlib_name,  # Python 3.13's pickles
    "numpy": _numpy_name,
    "numpy.dtypes": _numpy_name,
    "numpy.core.multiarray": _numpy_name,
    "numpy._core.multiarray": _numpy_name,
    "numpy.core.numeric": _numpy_name,
    "numpy._core.numeric": _numpy_name,
    "yacs.config": _yacs_name,
    "mmcv.utils.config": _mmcv_name,
    "addict.addict": _addict_name,
}


def _modern_name(module: str, name: str) -> tuple[str, str]:
    if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2 names (__builtin__ ...)
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _resolve(key: str) -> tuple[Any, bool] | None:
    """(what the data-only allow-list resolves ``key`` to, whether a pickle may call or
    build it), or None. A Python 2 name resolves as its Python 3 name would, in torch's
    allow-list too."""
    module, _, name = key.rpartition(".")
    modern_module, modern_name = _modern_name(module, name)
    modern = "%s.%s" % (modern_module, modern_name)
    if modern != key:
        from torch import _weights_only_unpickler as weights_only

        for allowed in (weights_only._get_allowed_globals(), weights_only._get_user_allowed_globals()):
            if modern in allowed:
                return allowed[modern], True
    resolver = _DATA_ONLY.get(modern_module)
    if resolver is None:
        return None
    try:
        return resolver(modern_module, modern_name)
    except ImportError:  # the file names yacs, and yacs is not installed
        return None


class _ScopedGlobals(dict):
    """torch's user allow-list, plus the data-only names a pickle asks for. torch asks
    ``key in``, ``[key]`` and ``values()`` ("may this be called or built?")."""

    def __init__(self, user_allowed: dict, load: "_Load") -> None:
        super().__init__(user_allowed)
        self._load = load

    def _data_only(self, key: Any) -> tuple[Any, bool] | None:
        if type(key) is not str:
            return None
        found = self._load.resolved.get(key)
        if found is None:
            found = _resolve(key)
            if found is None:
                return None
            self._load.resolved[key] = found
            if found[1]:
                self._load.callable.append(found[0])
            notes = getattr(_scope, "notes", None)
            if notes is not None:
                notes.classes.add(key)
        return found

    def __contains__(self, key: Any) -> bool:
        return dict.__contains__(self, key) or self._data_only(key) is not None

    def __getitem__(self, key: Any) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        found = self._data_only(key)
        if found is None:
            raise KeyError(key)
        return found[0]

    def values(self) -> list:  # type: ignore[override]
        return list(dict.values(self)) + self._load.callable + [_PendingArray]


def _scoped_user_allowed_globals(original: Callable[[], dict]) -> Callable[[], dict]:
    """torch's ``_get_user_allowed_globals``, widened while this thread reads a pickle
    inside ``data_only_scope``."""

    def user_allowed_globals() -> dict:
        allowed = original()
        load = getattr(_scope, "load", None) if _in_scope() else None
        return allowed if load is None else _ScopedGlobals(allowed, load)

    return user_allowed_globals


class _Memo(dict):
    """The unpickler's memo: a numpy object comes back from it only once it is built."""

    def __getitem__(self, index: Any) -> Any:
        value = dict.__getitem__(self, index)
        if type(value) in _PENDING:
            if value.built is None:
                raise _refuse("the file refers back to a numpy object before giving it its state")
            return value.built
        return value


class _Load:
    """The state of one pickle read inside the scope."""

    def __init__(self, unpickler: Any) -> None:
        self.unpickler = unpickler
        self.created: list[Any] = []  # rebuilt stand-ins this pickle created
        self.pending: list[Any] = []  # pending numpy objects
        self.resolved: dict[str, tuple[Any, bool]] = {}
        self.callable: list[Any] = []  # the stand-ins torch may call or build

    def replace_top(self, pending: Any, built: Any) -> None:
        # torch's BUILD left the object it gives a state on top of the stack.
        stack = self.unpickler.stack
        if not stack or stack[-1] is not pending:
            raise _refuse("a numpy object's state must follow it")
        stack[-1] = built

    def finish(self, result: Any) -> None:
        for pending in self.pending:
            if pending.built is None:
                raise _refuse("the file creates a numpy %s but never gives it its state"
                              % ("dtype" if type(pending) is _PendingDtype else "array"))
        for instance in self.created:
            if isinstance(instance, _RebuiltStandIn):
                _finish_rebuilt(instance)
        _check_result(result, set(map(id, self.callable)))


def _children(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for key, item in dict.items(value):
            yield key
            yield item
    elif isinstance(value, (list, tuple, set, frozenset)):
        yield from value
    try:
        instance_dict = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return
    if type(instance_dict) is dict:
        yield from instance_dict.values()


def _check_result(result: Any, stand_ins: set[int]) -> None:
    """Refuse a result that holds anything private, in one walk: each object once, at
    most MAX_OBJECTS of them, at most MAX_DEPTH deep."""
    torch_tensor = _torch_tensor()
    numpy = __import__("sys").modules.get("numpy")
    leaves: tuple = (str, bytes, bytearray, int, float, complex, bool, type(None))
    if numpy is not None:
        leaves += (numpy.ndarray, numpy.generic, numpy.dtype)
    if torch_tensor is not None:
        leaves += (torch_tensor,)
    seen: set[int] = set()
    todo: list[tuple[Any, int]] = [(result, 0)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, leaves):
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if len(seen) > MAX_OBJECTS:
            raise _refuse("the checkpoint holds more than %d objects" % MAX_OBJECTS)
        if depth > MAX_DEPTH:
            raise _refuse("the checkpoint's data nests deeper than %d levels" % MAX_DEPTH)
        if id(value) in stand_ins or type(value) in _PENDING or isinstance(value, _RebuiltStandIn):
            raise _refuse("the file uses %s as a value, which only its loader may hold"
                          % getattr(value, "__qualname__", type(value).__qualname__))
        for child in _children(value):
            if not isinstance(child, leaves):
                todo.append((child, depth + 1))


def _torch_tensor() -> type | None:
    torch = __import__("sys").modules.get("torch")
    return getattr(torch, "Tensor", None)


def _read_as_protocol_2(unpickler: Any) -> None:
    """Make ``unpickler`` read its pickle in protocol-2 opcodes, the only ones torch's
    reads (``protocol2``). A protocol-2 pickle is read as it is, past its PROTO opcode."""
    head = unpickler.read(2)
    if head[:1] == b"\x80" and len(head) == 2:
        if head[1] > 2:
            notes = getattr(_scope, "notes", None)
            if notes is not None:
                notes.protocols.add(head[1])
            reader = Protocol2Reader(unpickler.read, unpickler.readline)
            unpickler.read, unpickler.readline = reader.read, reader.readline
        return
    # No PROTO opcode (protocol 0 or 1, or not a pickle): torch's unpickler reads it all.
    source_read, source_readline = unpickler.read, unpickler.readline
    unread = bytearray(head)

    def read(size: int = -1) -> bytes:
        if not unread:
            return source_read(size)
        taken = bytes(unread[:size]) if size >= 0 else bytes(unread)
        del unread[:len(taken)]
        return taken + (source_read(size - len(taken)) if size > len(taken) else b"")

    def readline() -> bytes:
        if not unread:
            return source_readline()
        end = unread.find(b"\n")
        return read(end + 1) if end >= 0 else read(len(unread)) + source_readline()

    unpickler.read, unpickler.readline = read, readline


def data_only_unpickler(base: type) -> type:
    """torch's weights-only ``Unpickler`` (``base``), which inside ``data_only_scope``
    also reads the data-only allow-list; outside it, ``base`` unchanged."""

    class Unpickler(base):  # type: ignore[valid-type, misc]
        __doc__ = base.__doc__

        def load(self) -> Any:
            if not _in_scope():
                return super().load()
            _read_as_protocol_2(self)
            load = _Load(self)
            self.memo = _Memo()
            outer = getattr(_scope, "load", None)
            _scope.load = load
            try:
                result = super().load()
                load.finish(result)
            finally:
                _scope.load = outer
            return result

        def _check_set_item_target(self, opcode: str) -> None:
            # A dict stand-in is filled before its BUILD (pickle's order), with dict.__setitem__.
            if _in_scope() and isinstance(self.stack[-1], _RebuiltStandIn) and isinstance(self.stack[-1], dict):
                return
            super()._check_set_item_target(opcode)

    Unpickler.__module__ = base.__module__
    Unpickler.__qualname__ = base.__qualname__
    return Unpickler


def install(weights_only_module: Any, shim: str) -> bool:
    """Put the two hooks on ``torch._weights_only_unpickler`` for ``shim``; whether it
    changed anything (applying twice is harmless)."""
    from compatfix.patching import replace_attribute, wrap, wrapped_by

    changed = wrap(weights_only_module, "_get_user_allowed_globals", _scoped_user_allowed_globals, shim)
    current = weights_only_module.Unpickler
    if not wrapped_by(current, shim):
        changed = replace_attribute(weights_only_module, "Unpickler", data_only_unpickler(current), shim) or changed
    return changed

"""The data-only unpickler: torch's loading machinery with a pickle module that resolves
only torch's own weights-only allow-list, the user's ``add_safe_globals`` and the
data-only classes below, and rebuilds objects the way torch's weights-only loader
reasons about them (docs/checkpoints.md, "What the loader can build").

Why allow-listing a class with ``torch.serialization.add_safe_globals`` is not enough
-------------------------------------------------------------------------------------
torch's weights-only unpickler lets ``SETITEM``/``SETITEMS`` (the opcodes that fill a
dict) act only on objects whose type is exactly ``dict``, ``OrderedDict`` or ``Counter``
(``_check_set_item_target``; torch 2.14: "Can only SETITEMS for dict,
collections.OrderedDict, collections.Counter, but got <class 'yacs.config.CfgNode'>").
Every dict subclass (yacs ``CfgNode``, mmcv ``ConfigDict``, addict ``Dict``) pickles its
items with those opcodes, so it fails even when allow-listed. Pickle's own unpickler
would fill it through the class's ``__setitem__`` and look ``__setstate__`` up through
the class's ``__getattr__``, which for these classes returns *items*: a crafted file
could store a callable under the key ``"__setstate__"``. So the data-only loader hands
the unpickler a private subclass whose ``__setitem__`` is ``dict.__setitem__`` and whose
``__setstate__`` checks the state and then turns the object into the real class: the
dict subclass is rebuilt as the dict it is, from its items and state, without running
its own methods. mmcv's ``Config`` (not a dict) gets the same treatment, and none of
these stand-ins can be called: a pickle may create them empty, never run their
``__init__`` with its own arguments (``Config(filename=...)`` reads that file).

Why BUILD is checked here
-------------------------
pickle's ``BUILD`` opcode sets the state of whatever object is on the stack. Left as
pickle has it, a file could BUILD an allow-listed *class* or *function* itself (state
``(None, {"_str": ...})`` on ``pathlib.PurePath`` redirects every later path of the
process), BUILD an object twice (a rebuilt ``CfgNode`` after its state check), or set
names that shadow methods. So BUILD here acts only once, only on an instance that this
load created, with state made of plain values and of objects this load created, and
never with a dunder name or a name that the class defines.
"""

from __future__ import annotations

import _compat_pickle
import importlib
import os
import pickle
import threading
import types
from collections import OrderedDict
from typing import Any, Callable

class RefusedGlobal(pickle.UnpicklingError):
    """The pickle names a global that is not on the data-only allow-list."""


_CFG_NODE_STATE = frozenset({"__immutable__", "__deprecated_keys__", "__renamed_keys__", "__new_allowed__"})


def _set_cfg_node_state(node: dict, state: Any) -> None:
    # yacs keeps four flags in the instance __dict__; nothing else belongs there.
    if not isinstance(state, dict) or not set(state) <= _CFG_NODE_STATE:
        raise pickle.UnpicklingError("a yacs CfgNode's state must be a dict of %s" % sorted(_CFG_NODE_STATE))
    vars(node).update(state)


def _set_addict_state(node: dict, state: Any) -> None:
    # addict's __getstate__ returns the dict itself (its items were set already).
    if state is node:
        return
    if not isinstance(state, dict):
        raise pickle.UnpicklingError("an addict Dict's state must be a dict")
    dict.update(node, state)


def _set_mmcv_config_state(config: Any, state: Any) -> None:
    # What mmcv's Config.__getstate__ returns: (ConfigDict, filename, text).
    if not (isinstance(state, tuple) and len(state) == 3 and isinstance(state[0], dict)
            and all(item is None or isinstance(item, str) for item in state[1:])):
        raise pickle.UnpicklingError("an mmcv Config's state must be (ConfigDict, filename, text)")
    for name, value in zip(("_cfg_dict", "_filename", "_text"), state):
        object.__setattr__(config, name, value)


_rebuilders: dict[type, type] = {}


def _rebuilder(cls: type, apply_state: Callable[[Any, Any], None]) -> type:
    """A private subclass of ``cls`` for the unpickler. The pickle can create it
    (NEWOBJ) and give it its state (BUILD), which ``apply_state`` checks and sets before
    the object becomes a ``cls`` (same layout: the subclass adds no slots). It cannot be
    called, so the class's ``__init__`` never runs with a file's arguments (mmcv's
    ``Config(filename=...)`` would read that file); a dict subclass's items go in with
    ``dict.__setitem__``."""
    rebuilder = _rebuilders.get(cls)
    if rebuilder is None:

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise pickle.UnpicklingError("%s is rebuilt from its state; a pickle may not call it" % cls.__qualname__)

        def __setstate__(self, state: Any) -> None:
            apply_state(self, state)
            object.__setattr__(self, "__class__", cls)  # cls.__setattr__ may refuse (frozen CfgNode)

        namespace = {
            "__slots__": (),
            "__init__": __init__,
            "__setstate__": __setstate__,
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
        }
        if issubclass(cls, dict):
            namespace["__setitem__"] = dict.__setitem__
        rebuilder = type(cls.__name__, (cls,), namespace)
        _rebuilders[cls] = rebuilder
    return rebuilder


_PATH_NAMES = ("PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath")


def _pathlib_global(module: str, name: str) -> Any:
    import pathlib

    if name not in _PATH_NAMES:
        return None
    # A concrete path of the other OS cannot be instantiated here; its pure twin holds
    # the same parts.
    if name == "WindowsPath" and os.name != "nt":
        name = "PureWindowsPath"
    elif name == "PosixPath" and os.name == "nt":
        name = "PurePosixPath"
    return getattr(pathlib, name)


def _numpy_global(module: str, name: str) -> Any:
    import numpy

    if module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        if name not in ("scalar", "_reconstruct"):
            return None
        try:  # numpy 1.x pickles name numpy.core, numpy 2.x numpy._core: either loads
            multiarray = importlib.import_module("numpy._core.multiarray")
        except ImportError:
            multiarray = importlib.import_module("numpy.core.multiarray")
        return getattr(multiarray, name)
    # vars(), not getattr(): numpy's module __getattr__ would import submodules.
    if module == "numpy":  # dtype, ndarray and the scalar types (float64, int64, bool_ ...)
        value = vars(numpy).get(name)
        if name in ("dtype", "ndarray"):
            return value
        wanted: type = numpy.generic
    elif module == "numpy.dtypes":  # the dtype classes of numpy >= 1.25 (Float64DType ...)
        value = vars(importlib.import_module("numpy.dtypes")).get(name)
        wanted = numpy.dtype
    else:
        return None
    return value if isinstance(value, type) and issubclass(value, wanted) else None


def _yacs_global(module: str, name: str) -> Any:
    if name != "CfgNode":
        return None
    from yacs.config import CfgNode

    return _rebuilder(CfgNode, _set_cfg_node_state)


def _mmcv_global(module: str, name: str) -> Any:
    if name not in ("Config", "ConfigDict"):
        return None
    config = importlib.import_module("mmcv.utils.config")
    if name == "ConfigDict":
        return _rebuilder(config.ConfigDict, _set_addict_state)
    return _rebuilder(config.Config, _set_mmcv_config_state)


def _addict_global(module: str, name: str) -> Any:
    if name != "Dict":
        return None
    from addict import Dict

    return _rebuilder(Dict, _set_addict_state)


def _argparse_global(module: str, name: str) -> Any:
    import argparse

    return argparse.Namespace if name == "Namespace" else None


# The data-only classes, by the module a pickle names. Each resolver imports only its
# own fixed module, and only when a pickle names it.
_DATA_ONLY: dict[str, Callable[[str, str], Any]] = {
    "argparse": _argparse_global,
    "pathlib": _pathlib_global,
    "numpy": _numpy_global,
    "numpy.dtypes": _numpy_global,
    "numpy.core.multiarray": _numpy_global,
    "numpy._core.multiarray": _numpy_global,
    "yacs.config": _yacs_global,
    "mmcv.utils.config": _mmcv_global,
    "addict.addict": _addict_global,
}

_collecting = threading.local()  # .names: the data-only globals one load resolved


def _torch_allowed(key: str) -> Any:
    from torch import _weights_only_unpickler as weights_only

    found = weights_only._get_allowed_globals().get(key)
    return found if found is not None else weights_only._get_user_allowed_globals().get(key)


def data_only_global(module: str, name: str) -> Any:
    """What the data-only loader resolves ``module.name`` to; RefusedGlobal if nothing."""
    if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2 names (__builtin__ ...)
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    key = "%s.%s" % (module, name)
    found = _torch_allowed(key)
    if found is not None:
        return found
    resolve = _DATA_ONLY.get(module)
    if resolve is not None:
        found = resolve(module, name)
        if found is not None:
            names = getattr(_collecting, "names", None)
            if names is not None:
                names.add(key)
            return found
    raise RefusedGlobal("the file names the global %s, which is not on the data-only allow-list" % key)



# What a state may hold besides objects this load created: plain values and containers.
_PLAIN = (type(None), bool, int, float, complex, str, bytes, bytearray)
_CONTAINERS = (list, tuple, set, frozenset, dict)
# Objects that are code, or lead to it: never a BUILD target, never a state value.
_CODE = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
         types.BuiltinMethodType, types.MethodWrapperType, types.WrapperDescriptorType, staticmethod,
         classmethod, property)
_MAX_STATE_DEPTH = 200


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _class_defines(cls: type, name: str) -> bool:
    # vars() of each class of the MRO: no getattr, which a class's __getattr__ could answer.
    return any(name in vars(klass) for klass in cls.__mro__)


class DataOnlyUnpickler(pickle._Unpickler):
    """pickle's (pure-Python) unpickler, resolving globals only through
    ``data_only_global`` and checking every BUILD (see the module's docstring)."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._created: dict[int, Any] = {}  # id -> object: instances a BUILD may act on
        self._made: dict[int, Any] = {}  # id -> object: everything this load made (state values)

    def find_class(self, module: str, name: str) -> Any:
        return data_only_global(module, name)

    # --- which objects this load created -------------------------------------------------

    def _remember_top(self, buildable: bool) -> None:
        made = self.stack[-1]
        if isinstance(made, _CODE):
            return
        self._made[id(made)] = made
        if buildable:
            self._created[id(made)] = made

    def _creating(opcode: bytes, buildable: bool = True) -> Callable[["DataOnlyUnpickler"], None]:
        handler = pickle._Unpickler.dispatch[opcode[0]]

        def create(self: "DataOnlyUnpickler") -> None:
            handler(self)
            self._remember_top(buildable)

        return create

    dispatch[pickle.REDUCE[0]] = _creating(pickle.REDUCE)
    dispatch[pickle.NEWOBJ[0]] = _creating(pickle.NEWOBJ)
    dispatch[pickle.NEWOBJ_EX[0]] = _creating(pickle.NEWOBJ_EX)
    dispatch[pickle.OBJ[0]] = _creating(pickle.OBJ)
    dispatch[pickle.INST[0]] = _creating(pickle.INST)
    # Storages come from torch's persistent_load: data, but never a BUILD target.
    dispatch[pickle.PERSID[0]] = _creating(pickle.PERSID, buildable=False)
    dispatch[pickle.BINPERSID[0]] = _creating(pickle.BINPERSID, buildable=False)
    del _creating

    # --- BUILD -------------------------------------------------------------------------

    def _check_state(self, value: Any, depth: int = 0, seen: set[int] | None = None) -> None:
        if isinstance(value, _PLAIN) or id(value) in self._made:
            return
        if depth > _MAX_STATE_DEPTH:
            raise pickle.UnpicklingError("a BUILD state nests deeper than %d levels" % _MAX_STATE_DEPTH)
        seen = set() if seen is None else seen
        if id(value) in seen:
            return
        if type(value) in _CONTAINERS or type(value) is OrderedDict:
            seen.add(id(value))
            items = value.items() if isinstance(value, dict) else ((item, None) for item in value)
            for key, item in items:
                self._check_state(key, depth + 1, seen)
                self._check_state(item, depth + 1, seen)
            return
        if isinstance(value, _CODE) or callable(value):
            raise pickle.UnpicklingError(
                "a BUILD state may hold data only, not %s" % getattr(value, "__qualname__", type(value).__qualname__)
            )
        # A non-callable allow-listed global (a torch.dtype, torch.layout ...): data.

    def _check_names(self, cls: type, names: Any) -> None:
        for name in names:
            if not isinstance(name, str):
                raise pickle.UnpicklingError("a BUILD state's names must be strings, not %r" % (name,))
            if _is_dunder(name):
                raise pickle.UnpicklingError("a BUILD state may not set the dunder name %r" % name)
            if _class_defines(cls, name):
                raise pickle.UnpicklingError(
                    "a BUILD state may not set %r, which the class %s defines" % (name, cls.__qualname__)
                )

    def load_build(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        cls = type(inst)
        if isinstance(inst, _CODE):
            raise pickle.UnpicklingError(
                "BUILD on %s refused: a pickle may not change a class, function or module"
                % getattr(inst, "__qualname__", cls.__qualname__)
            )
        if self._created.pop(id(inst), None) is not inst:  # pop: one BUILD per object
            raise pickle.UnpicklingError(
                "BUILD on a %s refused: only an object this load just created may get a state, once"
                % cls.__qualname__
            )
        self._check_state(state)
        if cls in _rebuilders.values():
            cls.__setstate__(inst, state)  # the rebuilder checks the state's shape itself
            return
        if cls is _torch_tensor_class():
            inst.set_(*state)  # torch < 1.6 tensors (torch's weights-only loader does the same)
            return
        setstate = next((vars(klass)["__setstate__"] for klass in cls.__mro__ if "__setstate__" in vars(klass)), None)
        if setstate is not None:
            # The class's own state check (numpy arrays and dtypes, torch Parameter):
            # looked up on the class, never through the instance's __getattr__.
            setstate(inst, state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if slots:
            # Every slot is a class attribute: no slot may be set from a file.
            self._check_names(cls, slots)
        if state:
            if not isinstance(state, dict):
                raise pickle.UnpicklingError("a BUILD state must be a dict, not %s" % type(state).__qualname__)
            self._check_names(cls, state)
            try:
                instance_dict = object.__getattribute__(inst, "__dict__")
            except AttributeError:
                raise pickle.UnpicklingError("a %s has no attributes to set" % cls.__qualname__) from None
            instance_dict.update(state)

    dispatch[pickle.BUILD[0]] = load_build


def _torch_tensor_class() -> type | None:
    import sys

    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None)


def _data_only_load(file, **kwargs) -> Any:
    return DataOnlyUnpickler(file, **kwargs).load()


# torch.load's ``pickle_module``: what torch uses of one (``Unpickler``, ``load``).
DATA_ONLY_PICKLE = types.ModuleType("compatfix.data_only_pickle")
DATA_ONLY_PICKLE.Unpickler = DataOnlyUnpickler
DATA_ONLY_PICKLE.load = _data_only_load

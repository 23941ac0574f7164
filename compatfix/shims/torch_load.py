"""``torch.load`` under torch >= 2.6, whose ``weights_only=True`` default refuses the
checkpoints of 2019-24 research code: they pickle ``args`` (``argparse.Namespace``),
numpy scalars for ``best_acc``, yacs ``CfgNode`` and mmcv ``Config``/``ConfigDict``
configs, ``pathlib`` paths.

The policy (docs/checkpoints.md), applied only when the caller passed neither
``weights_only`` nor ``pickle_module`` (a caller who chose keeps the choice) and neither
``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` nor ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` is set:

1. torch's own weights-only load runs first, unchanged.
2. If torch refuses the file, the **data-only loader** (shim ``torch.load.data_only_classes``,
   on by default) loads it again: torch's loading machinery with a pickle module whose
   ``find_class`` resolves only torch's own weights-only allow-list, the user's
   ``add_safe_globals`` and the data-only classes below. Every callable a pickle can
   reach comes from that list, so no code the file names runs. A zip checkpoint whose
   pickle names anything else is not even unpickled: its global names are read first.
3. If that refuses too, the file loads with full pickle (``weights_only=False``) only
   when it is trusted (shim ``torch.load.trusted_files``, risk "security"): its sha256 is
   in the trust store of checkpoints that this machine's ``torch.save`` wrote under
   compatfix (``compatfix._trust``), or the user opted in with
   ``COMPATFIX_TORCH_LOAD=trust-all`` or ``COMPATFIX_TORCH_LOAD_TRUST=<files or folders>``
   (a warning naming the file, once per file). Hashing happens only here, and only for
   files whose size matches a stored checkpoint's.
4. Otherwise the load fails with torch's message plus what compatfix tried and how to
   opt in.

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
"""

from __future__ import annotations

import _compat_pickle
import importlib
import io
import os
import pickle
import threading
import types
from typing import Any, Callable

from compatfix import _messages, _trust
from compatfix.patching import record_redirect, replace_attribute
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, RISK_SECURITY, Shim

SHIM_DATA_ONLY = "torch.load.data_only_classes"
SHIM_TRUSTED = "torch.load.trusted_files"
ENV_POLICY = "COMPATFIX_TORCH_LOAD"  # "trust-all": every refused file loads with full pickle
ENV_TRUST_PATHS = "COMPATFIX_TORCH_LOAD_TRUST"  # files or folders, os.pathsep-separated
TRUST_ALL = "trust-all"
TORCH_REFUSAL = "Weights only load failed"  # how torch's UnpicklingError begins
_TORCH_TRUE = ("1", "y", "yes", "true")  # what torch reads as set in TORCH_FORCE_*
_MARK = "__compatfix_torch_load__"


class _Policy:
    """Which steps of the policy are on in this process (the shims that are applied)."""

    data_only = False
    trusted = False


# --- the data-only loader ---------------------------------------------------------------


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


class DataOnlyUnpickler(pickle.Unpickler):
    """pickle's unpickler, resolving globals only through ``data_only_global``."""

    def find_class(self, module: str, name: str) -> Any:
        return data_only_global(module, name)


def _data_only_load(file, **kwargs) -> Any:
    return DataOnlyUnpickler(file, **kwargs).load()


# torch.load's ``pickle_module``: what torch uses of one (``Unpickler``, ``load``).
DATA_ONLY_PICKLE = types.ModuleType("compatfix.data_only_pickle")
DATA_ONLY_PICKLE.Unpickler = DataOnlyUnpickler
DATA_ONLY_PICKLE.load = _data_only_load


# --- trust --------------------------------------------------------------------------------


def _file_name(f: Any) -> str:
    if isinstance(f, (str, bytes, os.PathLike)):
        return os.fsdecode(os.fspath(f))
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else "<%s object>" % type(f).__name__


def _file_path(f: Any) -> str | None:
    """The file system path of a path or of an open regular file, else None."""
    if isinstance(f, (str, bytes, os.PathLike)):
        return os.fsdecode(os.fspath(f))
    name = getattr(f, "name", None)
    if isinstance(name, str) and os.path.isfile(name):
        return name
    return None


def _explicit_trust(f: Any) -> str | None:
    """The user's switch that trusts ``f``, or None."""
    policy = os.environ.get(ENV_POLICY, "").strip().lower()
    if policy == TRUST_ALL:
        return "%s=%s" % (ENV_POLICY, TRUST_ALL)
    if policy not in ("", "safe"):
        _messages.say(
            "%s=%r is not a known value (known: safe, %s); using the safe default" % (ENV_POLICY, policy, TRUST_ALL)
        )
    path = _file_path(f)
    listed = [part for part in os.environ.get(ENV_TRUST_PATHS, "").split(os.pathsep) if part.strip()]
    if path is None or not listed:
        return None
    real = os.path.realpath(path)
    for entry in listed:
        trusted = os.path.realpath(os.path.expanduser(entry.strip()))
        if real == trusted or real.startswith(trusted.rstrip(os.sep) + os.sep):
            return "%s lists %s" % (ENV_TRUST_PATHS, entry.strip())
    return None


def _stored_trust(f: Any, rewind: Callable[[], None]) -> str | None:
    """Why the trust store trusts ``f``'s bytes, or None. Hashes only when a stored
    checkpoint has the same size."""
    store = _trust.store_path()
    if store is None:
        return None
    sizes = _trust.trusted_sizes(store)
    if not sizes:
        return None
    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fsdecode(os.fspath(f))
        if os.path.getsize(path) not in sizes:
            return None
        digest = _trust.sha256_of_file(path)
    else:
        rewind()
        start = f.tell()
        size = f.seek(0, io.SEEK_END) - start
        if size not in sizes:
            return None
        rewind()
        digest = _trust.sha256_of_stream(f)
    if not _trust.is_trusted(digest, store):
        return None
    return "this machine's torch.save wrote these bytes under compatfix (sha256 %s…, trust store %s)" % (
        digest[:16],
        store,
    )


def remember_saved(f: Any) -> None:
    """Record what ``torch.save`` just wrote to ``f`` in the trust store."""
    if _trust.store_path() is None:
        return
    if not isinstance(f, (str, bytes, os.PathLike)):
        flush = getattr(f, "flush", None)
        if flush is None or _file_path(f) is None:
            return  # a buffer, a socket: nothing on disk to trust later
        flush()
    path = _file_path(f)
    try:
        _trust.record(path, _trust.sha256_of_file(path), os.path.getsize(path))
    except OSError as exc:
        _messages.say(
            "could not record %s in the trust store (%s); it will need an opt-in to load "
            "if torch's weights-only loader refuses it" % (path, exc),
            key="trust store write",
        )


# --- the torch.load and torch.save wrappers ---------------------------------------------


def _torch_environment_decides() -> bool:
    return any(
        os.environ.get(name, "0").strip().lower() in _TORCH_TRUE
        for name in ("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    )


def _rewinder(f: Any) -> Callable[[], None] | None:
    """A function putting ``f`` back where the first load started; None if it cannot."""
    if isinstance(f, (str, bytes, os.PathLike)):
        return lambda: None  # torch opens the path again
    try:
        start = f.tell()
        f.seek(start)
    except (AttributeError, OSError, ValueError):
        return None
    return lambda: f.seek(start)


def _refusal(torch_error: Exception, f: Any, tried: list[str]) -> pickle.UnpicklingError:
    name = _file_name(f)
    store = _trust.store_path()
    lines = [
        str(torch_error),
        "",
        "compatfix: torch.load(%r) refused. What compatfix tried:" % name,
    ]
    lines += ["  - %s" % step for step in tried]
    lines += [
        "Loading this file with full pickle would run any code it contains. If you trust it, opt in with "
        "%s=%s (this file; a folder trusts the files under it; several are separated by %r), %s=%s "
        "(every file), or torch.load(..., weights_only=False) in the code. compatfix's "
        "docs/checkpoints.md explains the policy."
        % (ENV_TRUST_PATHS, _file_path(f) or "PATH", os.pathsep, ENV_POLICY, TRUST_ALL),
    ]
    if store is None:
        lines.append("(The trust store is off: %s=off.)" % _trust.ENV_TRUST_STORE)
    return pickle.UnpicklingError("\n".join(lines))


_DATA_ONLY_STEP = (
    "its data-only loader (argparse.Namespace, numpy scalars/dtypes/arrays, pathlib paths, yacs CfgNode, "
    "mmcv Config/ConfigDict; it runs no code from the file), which refused it: "
)


def _refused_global_in(f: Any, rewind: Callable[[], None]) -> str | None:
    """Why the data-only loader would refuse ``f``, from the global names in its pickle,
    read without loading anything (zip checkpoints); None if it would not, or when the
    file cannot be scanned (then the loader decides). Spares a full load of a file that
    holds other classes, and never unpickles a file that names e.g. ``os.system``."""
    from torch.serialization import get_unsafe_globals_in_checkpoint

    rewind()
    try:
        keys = get_unsafe_globals_in_checkpoint(f)
    except Exception:  # torch < 1.6's format, opcodes torch's scanner does not know
        return None
    for key in sorted(keys):
        module, _, name = key.rpartition(".")
        try:
            data_only_global(module, name)
        except Exception as exc:
            return "%s (found by scanning the file, before loading it)" % exc
    return None


def _load_data_only(original, f, rewind, map_location, mmap, pickle_load_args) -> tuple[bool, Any]:
    """``(True, the loaded object)``, or ``(False, why the data-only loader refused)``."""
    rewind()
    _collecting.names = set()
    try:
        result = original(f, map_location, DATA_ONLY_PICKLE, weights_only=False, mmap=mmap, **pickle_load_args)
        used = ", ".join(sorted(_collecting.names)) or "torch's own classes only"
    except Exception as exc:
        return False, str(exc)
    finally:
        _collecting.names = None
    record_redirect(SHIM_DATA_ONLY, "torch.load(%s): data-only classes %s" % (_file_name(f), used))
    _messages.say(
        "torch.load: torch >= 2.6's weights-only default refused a checkpoint with data-only classes (%s); "
        "compatfix loaded it with its data-only loader, which runs no code from the file "
        "(docs/checkpoints.md)" % used,
        key=SHIM_DATA_ONLY,
    )
    return True, result


def _load_refused(original, f, rewind, torch_error, map_location, mmap, pickle_load_args) -> Any:
    """What compatfix does with a file that torch's weights-only load refused."""
    name = _file_name(f)
    tried = ["torch's weights-only load (above)"]
    if rewind is None:
        tried.append("nothing else: the file object cannot seek back for another try")
        raise _refusal(torch_error, f, tried) from None
    if _Policy.data_only:
        refused = _refused_global_in(f, rewind)
        if refused is None:
            loaded, outcome = _load_data_only(original, f, rewind, map_location, mmap, pickle_load_args)
            if loaded:
                return outcome
            refused = outcome
        tried.append(_DATA_ONLY_STEP + refused)
    else:
        tried.append("not its data-only loader: shim %s is disabled" % SHIM_DATA_ONLY)
    if not _Policy.trusted:
        tried.append("not its trust rules: shim %s is disabled" % SHIM_TRUSTED)
        raise _refusal(torch_error, f, tried) from None
    reason = _explicit_trust(f)
    if reason is not None:
        _messages.say(
            "WARNING: torch.load(%r) runs with full pickle (weights_only=False) because %s: any code "
            "inside this file runs. torch's weights-only loader and compatfix's data-only loader "
            "refused it." % (name, reason),
            key="torch.load full pickle " + name,
        )
    else:
        reason = _stored_trust(f, rewind)
        if reason is None:
            tried.append(
                "its trust store of checkpoints that this machine's torch.save wrote under compatfix "
                "(%s), which does not hold these bytes" % (_trust.store_path() or "off")
            )
            raise _refusal(torch_error, f, tried) from None
        _messages.say(
            "torch.load(%r) runs with full pickle (weights_only=False): %s" % (name, reason),
            key="torch.load full pickle " + name,
        )
    record_redirect(SHIM_TRUSTED, "torch.load(%s): full pickle, %s" % (name, reason))
    rewind()
    return original(f, map_location, weights_only=False, mmap=mmap, **pickle_load_args)


def _make_load(original: Callable[..., Any]) -> Callable[..., Any]:
    def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
        if weights_only is not None or pickle_module is not None or _torch_environment_decides():
            # The caller (or the user, through torch's own variables) decided.
            return original(
                f, map_location, pickle_module, weights_only=weights_only, mmap=mmap, **pickle_load_args
            )
        rewind = _rewinder(f)
        try:
            return original(f, map_location, mmap=mmap, **pickle_load_args)
        except pickle.UnpicklingError as exc:
            if not str(exc).startswith(TORCH_REFUSAL):
                raise
            torch_error = exc
        return _load_refused(original, f, rewind, torch_error, map_location, mmap, pickle_load_args)

    load.__wrapped__ = original
    load.__name__ = "load"
    load.__qualname__ = "load"
    load.__doc__ = original.__doc__
    load.__module__ = "torch.serialization"
    setattr(load, _MARK, True)
    return load


def _make_save(original: Callable[..., Any]) -> Callable[..., Any]:
    def save(obj, f, *args, **kwargs):
        result = original(obj, f, *args, **kwargs)
        if _Policy.trusted:
            remember_saved(f)
        return result

    save.__wrapped__ = original
    save.__name__ = "save"
    save.__qualname__ = "save"
    save.__doc__ = original.__doc__
    save.__module__ = "torch.serialization"
    setattr(save, _MARK, True)
    return save


def _install(torch: types.ModuleType, shim: str) -> None:
    """Put the wrappers on torch and torch.serialization (once for both shims)."""
    import torch.serialization as serialization

    for name, make in (("load", _make_load), ("save", _make_save)):
        current = getattr(serialization, name)
        if getattr(current, _MARK, False):
            continue
        wrapper = make(current)
        replace_attribute(serialization, name, wrapper, shim)
        if getattr(torch, name, None) is current:
            replace_attribute(torch, name, wrapper, shim)


def allow_data_only_classes(torch: types.ModuleType) -> None:
    _install(torch, SHIM_DATA_ONLY)
    _Policy.data_only = True


def trust_own_and_opted_in_files(torch: types.ModuleType) -> None:
    _install(torch, SHIM_TRUSTED)
    _Policy.trusted = True


_BROKE = (
    "torch 2.6 (2025-01) made weights_only=True the default of torch.load: checkpoints that "
    "pickle argparse.Namespace, numpy scalars/dtypes, yacs CfgNode, mmcv Config/ConfigDict or "
    "pathlib paths fail with 'Weights only load failed ... Unsupported global' (dict subclasses "
    "fail even when allow-listed: 'Can only SETITEMS for dict ...')"
)

SHIMS = (
    Shim(
        SHIM_DATA_ONLY,
        targets=["torch"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=2.6"},
        apply=allow_data_only_classes,
        risk=RISK_BEHAVIOUR,
        broke=_BROKE,
        summary="when torch's weights-only default refuses a checkpoint, load it again with a "
        "data-only unpickler (torch's allow-list + Namespace, numpy scalars/dtypes/arrays, pathlib "
        "paths, yacs CfgNode, mmcv Config/ConfigDict rebuilt from their state); runs no code from "
        "the file; an explicit weights_only is respected",
    ),
    Shim(
        SHIM_TRUSTED,
        targets=["torch"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=2.6"},
        apply=trust_own_and_opted_in_files,
        risk=RISK_SECURITY,
        broke=_BROKE + "; checkpoints that pickle the project's own classes cannot be loaded safely at all",
        summary="torch.save records the sha256 of each file it writes in a trust store; a file the "
        "safe loaders refuse loads with full pickle only if its bytes are in that store or the user "
        "opted in (COMPATFIX_TORCH_LOAD=trust-all, COMPATFIX_TORCH_LOAD_TRUST=paths), with a warning "
        "naming the file",
    ),
)

"""The ``torch.load`` policy under torch >= 2.6 (docs/checkpoints.md), applied only when
the caller passed neither ``weights_only`` nor ``pickle_module`` (a caller who chose keeps
the choice) and neither ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` nor
``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` is set:

1. torch's own weights-only load runs first, unchanged.
2. If torch refuses the file, the **data-only loader** (shim ``torch.serialization.load_data_only_classes``,
   ``compatfix.checkpoint.unpickler``) loads it again. A zip checkpoint whose pickle
   names a global the loader does not resolve is not even unpickled: its global names
   are read first.
3. If that refuses too, the file loads with full pickle (``weights_only=False``) only
   when it is trusted (shim ``torch.serialization.load_trusted_files``, risk "security"): its sha256 is
   in the trust store (``compatfix.checkpoint.trust_store``), or the user opted in with
   ``COMPATFIX_TORCH_LOAD=trust-all`` or ``COMPATFIX_TORCH_LOAD_TRUST=<files or folders>``.
   For the store, the file is read once: those bytes are hashed and those bytes are
   loaded, from memory, so nothing can swap the file between the check and the load.
4. Otherwise the load fails with a message that leads with the reason (the global that
   is not allowed) and the opt-ins, then what compatfix tried, then torch's own text.

Which steps are on is not state that an apply leaves behind: each load asks the engine's
settings whether each of the two shims is enabled (``current_policy``).
"""

from __future__ import annotations

import io
import os
import pickle
import stat
from dataclasses import dataclass
from typing import Any, Callable

from compatfix import _messages
from compatfix.checkpoint import trust_store
from compatfix.checkpoint.unpickler import DATA_ONLY_PICKLE, _collecting, data_only_global
from compatfix.patching import record_redirect

SHIM_DATA_ONLY = "torch.serialization.load_data_only_classes"
SHIM_TRUSTED = "torch.serialization.load_trusted_files"
ENV_POLICY = "COMPATFIX_TORCH_LOAD"  # "trust-all": every refused file loads with full pickle
ENV_TRUST_PATHS = "COMPATFIX_TORCH_LOAD_TRUST"  # files or folders, os.pathsep-separated
TRUST_ALL = "trust-all"
TORCH_REFUSAL = "Weights only load failed"  # how torch's UnpicklingError begins
_TORCH_TRUE = ("1", "y", "yes", "true")  # what torch reads as set in TORCH_FORCE_*
# The owner of the torch.load/torch.save wrappers that both shims share (patching.wrap's
# ``shim`` argument): whichever shim applies first installs them, and each call asks the
# engine's settings which of the two is on.
SHARED_WRAPPER = "compatfix.checkpoint.policy"


@dataclass(frozen=True)
class Policy:
    """Which steps of the policy are on: one per shim."""

    data_only: bool
    trusted: bool


def current_policy() -> Policy:
    """The policy the engine's settings give the two shims (both off without an engine:
    then nothing installed the wrappers)."""
    from compatfix import _engine

    engine = _engine.active()
    if engine is None:
        return Policy(data_only=False, trusted=False)

    def enabled(name: str) -> bool:
        shim = engine.shims.get(name)
        return shim is not None and engine.settings.is_enabled(name, shim.default)[0]

    return Policy(data_only=enabled(SHIM_DATA_ONLY), trusted=enabled(SHIM_TRUSTED))


# --- names and paths ---------------------------------------------------------------------


def _is_path(f: Any) -> bool:
    return isinstance(f, (str, bytes, os.PathLike))


def _file_name(f: Any) -> str:
    if _is_path(f):
        return os.fsdecode(os.fspath(f))
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else "<%s object>" % type(f).__name__


def _regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _file_path(f: Any) -> str | None:
    """The file system path of a path or of an open regular file, else None."""
    if _is_path(f):
        return os.fsdecode(os.fspath(f))
    name = getattr(f, "name", None)
    if isinstance(name, str) and _regular_file(name):
        return name
    return None


# --- trust --------------------------------------------------------------------------------


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


def _read_once(f: Any, rewind: Callable[[], None], sizes: set[int]) -> bytes | None:
    """The bytes of ``f`` (a regular file's path, or a stream from where the load
    started), read once, if their size is one a stored checkpoint has; else None."""
    if _is_path(f):
        try:
            fd = trust_store.open_regular(os.fspath(f))
        except OSError:
            return None  # a pipe, a device, a file that is gone: nothing to trust
        with os.fdopen(fd, "rb") as handle:
            if os.fstat(handle.fileno()).st_size not in sizes:
                return None
            return handle.read(max(sizes) + 1)
    rewind()
    start = f.tell()
    size = f.seek(0, io.SEEK_END) - start
    if size not in sizes:
        return None
    rewind()
    return f.read(max(sizes) + 1)


def _stored_trust(f: Any, rewind: Callable[[], None]) -> tuple[str, bytes] | None:
    """Why the trust store trusts ``f``'s bytes, and those bytes; None if it does not.
    Reads only files whose size matches a stored checkpoint's."""
    store = trust_store.store_path()
    if store is None:
        return None
    sizes = trust_store.trusted_sizes(store)
    if not sizes:
        return None
    data = _read_once(f, rewind, sizes)
    if data is None or len(data) not in sizes:
        return None
    digest = trust_store.sha256_of_bytes(data)
    if not trust_store.is_trusted(digest, store):
        return None
    reason = "this machine's torch.save wrote these bytes under compatfix (sha256 %s…, trust store %s)" % (
        digest[:16],
        store,
    )
    return reason, data


def remember_saved(f: Any) -> None:
    """Record what ``torch.save`` just wrote to ``f`` in the trust store. Never raises:
    the save has succeeded, whatever happens here."""
    try:
        if trust_store.store_path() is None:
            return
        if not _is_path(f):
            flush = getattr(f, "flush", None)
            if flush is None or _file_path(f) is None:
                return  # a buffer, a socket: nothing on disk to trust later
            flush()
        path = _file_path(f)
        if path is None or not _regular_file(path):
            return  # a named pipe, a device: never opened again to hash it
        trust_store.record(path, trust_store.sha256_of_file(path), os.path.getsize(path))
    except trust_store.UnsafeStore as exc:
        trust_store._warn_unsafe(exc)
    except Exception as exc:
        _messages.say(
            "could not record %s in the trust store (%s); it will need an opt-in to load "
            "if torch's weights-only loader refuses it" % (ascii(_file_name(f)), exc),
            key="trust store write",
        )


# --- the load ------------------------------------------------------------------------------


def _torch_environment_decides() -> bool:
    return any(
        os.environ.get(name, "0").strip().lower() in _TORCH_TRUE
        for name in ("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    )


def _rewinder(f: Any) -> Callable[[], None] | None:
    """A function putting ``f`` back where the first load started; None if it cannot."""
    if _is_path(f):
        return lambda: None  # torch opens the path again
    try:
        start = f.tell()
        f.seek(start)
    except (AttributeError, OSError, ValueError):
        return None
    return lambda: f.seek(start)


def _refusal(torch_error: Exception, f: Any, reason: str, tried: list[str]) -> pickle.UnpicklingError:
    store = trust_store.store_path()
    lines = [
        "compatfix: torch.load(%r) refused: %s." % (_file_name(f), reason),
        "Loading this file with full pickle would run any code it contains. If you trust it, opt in with "
        "%s=%s (this file; a folder trusts the files under it; several are separated by %r), %s=%s "
        "(every file), or torch.load(..., weights_only=False) in the code. compatfix's "
        "docs/checkpoints.md explains the policy."
        % (ENV_TRUST_PATHS, _file_path(f) or "PATH", os.pathsep, ENV_POLICY, TRUST_ALL),
        "What compatfix tried:",
    ]
    lines += ["  - %s" % step for step in tried]
    if store is None:
        lines.append("(The trust store is off: %s=off.)" % trust_store.ENV_TRUST_STORE)
    lines += ["", "torch's own message:", str(torch_error)]
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


def _torch_reason(torch_error: Exception) -> str:
    # torch's first line after its preamble, e.g. "Unsupported global: GLOBAL posix.system".
    for line in str(torch_error).splitlines():
        line = line.strip()
        if line.startswith(("Unsupported", "Can only")):
            return "torch's weights-only loader: " + line
    return "torch's weights-only loader refused it"


def _load_refused(original, f, rewind, torch_error, map_location, mmap, pickle_load_args, policy: Policy) -> Any:
    """What compatfix does with a file that torch's weights-only load refused."""
    name = _file_name(f)
    tried = ["torch's weights-only load (its message is below)"]
    reason = _torch_reason(torch_error)
    if rewind is None:
        tried.append("nothing else: the file object cannot seek back for another try")
        raise _refusal(torch_error, f, reason, tried) from None
    if policy.data_only:
        refused = _refused_global_in(f, rewind)
        if refused is None:
            loaded, outcome = _load_data_only(original, f, rewind, map_location, mmap, pickle_load_args)
            if loaded:
                return outcome
            refused = outcome
        reason = refused
        tried.append(_DATA_ONLY_STEP + refused)
    else:
        tried.append("not its data-only loader: shim %s is disabled" % SHIM_DATA_ONLY)
    if not policy.trusted:
        tried.append("not its trust rules: shim %s is disabled" % SHIM_TRUSTED)
        raise _refusal(torch_error, f, reason, tried) from None
    why = _explicit_trust(f)
    source = f
    if why is not None:
        _messages.say(
            "WARNING: torch.load(%r) runs with full pickle (weights_only=False) because %s: any code "
            "inside this file runs. torch's weights-only loader and compatfix's data-only loader "
            "refused it." % (name, why),
            key="torch.load full pickle " + name,
        )
        rewind()
    else:
        stored = _stored_trust(f, rewind)
        if stored is None:
            tried.append(
                "its trust store of checkpoints that this machine's torch.save wrote under compatfix "
                "(%s), which does not hold these bytes" % (trust_store.store_path() or "off")
            )
            raise _refusal(torch_error, f, reason, tried) from None
        why, data = stored
        source = io.BytesIO(data)  # the bytes that were hashed, not a second open
        mmap = None  # torch maps only a file by name
        _messages.say(
            "torch.load(%r) runs with full pickle (weights_only=False): %s" % (name, why),
            key="torch.load full pickle " + name,
        )
    record_redirect(SHIM_TRUSTED, "torch.load(%s): full pickle, %s" % (name, why))
    return original(source, map_location, weights_only=False, mmap=mmap, **pickle_load_args)


def make_load(original: Callable[..., Any], policy_of: Callable[[], Policy] = current_policy) -> Callable[..., Any]:
    """``torch.load`` with the policy; ``policy_of`` says, at each call, which steps are on."""
    import functools

    @functools.wraps(original)
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
        return _load_refused(original, f, rewind, torch_error, map_location, mmap, pickle_load_args, policy_of())

    return load


def make_save(original: Callable[..., Any], policy_of: Callable[[], Policy] = current_policy) -> Callable[..., Any]:
    """``torch.save`` that records what it wrote in the trust store when trust is on."""
    import functools

    @functools.wraps(original)
    def save(obj, f, *args, **kwargs):
        result = original(obj, f, *args, **kwargs)
        if policy_of().trusted:
            remember_saved(f)
        return result

    return save

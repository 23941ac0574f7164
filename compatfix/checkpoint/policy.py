"""The ``torch.load`` policy under torch >= 2.6 (docs/checkpoints.md), applied only when
the caller passed neither ``weights_only`` nor ``pickle_module`` (a caller who chose keeps
the choice) and neither ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` nor
``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` is set:

1. torch's own weights-only load runs, with the data-only allow-list added when shim
   ``torch.serialization.load_data_only_classes`` is on (``compatfix.checkpoint.unpickler``:
   torch's unpickler and torch's checks, plus a few data classes rebuilt by validating
   constructors). One pass: a file torch accepts loads exactly as torch loads it.
2. If that refuses the file, it loads with full pickle (``weights_only=False``) only
   when it is trusted (shim ``torch.serialization.load_trusted_files``, risk "security"): its
   sha256 is in the trust store (``compatfix.checkpoint.trust_store``), or the user opted
   in with ``COMPATFIX_TORCH_LOAD=trust-all`` or ``COMPATFIX_TORCH_LOAD_TRUST=<files or
   folders>``. For the store, the file is read once: those bytes are hashed and those
   bytes are loaded, from memory, so nothing can swap the file between the check and
   the load. ``torch.save`` records the sha256 of the bytes it writes, as it writes them.
3. Otherwise the load fails with a message that leads with the reason (the global that
   is not allowed) and the opt-ins, then what compatfix tried, then torch's own text. A
   file that is not a checkpoint at all (an HTML error page saved as ``model.pth``) says
   so, and is offered no opt-in.

Which steps are on is not state that an apply leaves behind: each call asks the engine's
settings whether each of the two shims is enabled (``current_policy``).
"""

from __future__ import annotations

import io
import os
import pickle
import stat
from dataclasses import dataclass
from typing import Any, Callable

from compatfix import _files, _messages
from compatfix.checkpoint import trust_store
from compatfix.checkpoint.unpickler import LoadNotes, data_only_scope
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
    started), read once, if their size is one a stored checkpoint has; else None. Reads
    the size of this file, never more (a store may list a 100 GB checkpoint)."""
    if _is_path(f):
        try:
            fd = trust_store.open_regular(os.fspath(f))
        except OSError:
            return None  # a pipe, a device, a file that is gone: nothing to trust
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size not in sizes:
                return None
            data = handle.read(size + 1)
    else:
        rewind()
        start = f.tell()
        size = f.seek(0, io.SEEK_END) - start
        if size not in sizes:
            return None
        rewind()
        data = f.read(size + 1)
    return data if len(data) == size else None  # it grew or shrank while being read


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
    if data is None:
        return None
    digest = trust_store.sha256_of_bytes(data)
    if not trust_store.is_trusted(digest, store):
        return None
    reason = "this machine's torch.save wrote these bytes under compatfix (sha256 %s…, trust store %s)" % (
        digest[:16],
        store,
    )
    return reason, data


# --- the save ------------------------------------------------------------------------------


class _HashingWriter:
    """What ``torch.save`` writes into when its file is recorded: the file itself, with
    every byte hashed on its way there, so the store records the bytes that were written
    (not whatever a name holds after the save). It has no ``fileno``: torch then writes
    every byte through ``write`` (its legacy format would write storages to the
    descriptor directly); the bytes are the same."""

    def __init__(self, target: Any) -> None:
        import hashlib  # only when a save is recorded: it loads OpenSSL

        self._target = target
        self._digest = hashlib.sha256()
        self.size = 0

    def write(self, data: Any) -> int:
        written = self._target.write(data)
        view = memoryview(data).cast("B")
        if written is not None and written < len(view):
            view = view[:written]  # a raw file took part of it: the rest never reached the file
        self._digest.update(view)
        self.size += len(view)
        return len(view)

    def flush(self) -> None:
        flush = getattr(self._target, "flush", None)
        if flush is not None:
            flush()

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def _regular_descriptor(f: Any) -> bool:
    """Whether the open file ``f`` writes to a regular file, asked of its descriptor
    (never of its name, which may name another file by now)."""
    try:
        return stat.S_ISREG(os.fstat(f.fileno()).st_mode)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False  # a buffer, a socket, a pipe: nothing on disk to trust later


def _remember(written: _HashingWriter, where: str) -> None:
    """Record what ``torch.save`` wrote. Never raises: the save has succeeded, whatever
    happens here."""
    try:
        trust_store.record(where, written.hexdigest(), written.size)
    except trust_store.UnsafeStore as exc:
        trust_store._warn_unsafe(exc)
    except _files.LockTimeout:
        _messages.say(
            "the trust store is busy (another process held its lock for over %.0f s); %s is not recorded and "
            "will need an opt-in to load if torch's weights-only loader refuses it"
            % (trust_store.LOCK_TIMEOUT, ascii(where)),
            key="trust store busy",
        )
    except Exception as exc:
        _messages.say(
            "could not record %s in the trust store (%s); it will need an opt-in to load "
            "if torch's weights-only loader refuses it" % (ascii(where), exc),
            key="trust store write",
        )


def _save_recorded(original: Callable[..., Any], obj: Any, f: Any, args: tuple, kwargs: dict) -> Any:
    if _is_path(f):
        with open(f, "wb") as handle:  # as torch opens a path
            regular = _regular_descriptor(handle)
            written = _HashingWriter(handle)
            result = original(obj, written, *args, **kwargs)
        if not regular:
            return result  # a device or a pipe named by a path: nothing on disk to trust later
        where = os.path.abspath(os.fsdecode(os.fspath(f)))
    elif _regular_descriptor(f):
        written = _HashingWriter(f)
        result = original(obj, written, *args, **kwargs)
        name = getattr(f, "name", None)
        where = os.path.abspath(name) if isinstance(name, str) else "<file descriptor %d>" % f.fileno()
    elif callable(getattr(f, "write", None)):
        # A buffer (io.BytesIO, an fsspec or cloud file): its bytes are this save's bytes,
        # and reach a file later if they reach one at all (Lightning saves that way).
        written = _HashingWriter(f)
        result = original(obj, written, *args, **kwargs)
        where = "%s%s.%s>" % (trust_store.BUFFER_PREFIX, type(f).__module__, type(f).__qualname__)
    else:
        return original(obj, f, *args, **kwargs)  # torch's own error for what is not a file
    _remember(written, where)
    return result


def make_save(original: Callable[..., Any], policy_of: Callable[[], Policy] = current_policy) -> Callable[..., Any]:
    """``torch.save`` that records the bytes it writes in the trust store when trust is on."""
    import functools

    @functools.wraps(original)
    def save(obj, f, *args, **kwargs):
        if not policy_of().trusted or trust_store.store_path() is None:
            return original(obj, f, *args, **kwargs)
        return _save_recorded(original, obj, f, args, kwargs)

    return save


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
        "(every file), or torch.load(..., weights_only=False) in the code. The policy: %s"
        % (ENV_TRUST_PATHS, _file_path(f) or "PATH", os.pathsep, ENV_POLICY, TRUST_ALL,
           _messages.docs_link("checkpoints.md")),
        "What compatfix tried:",
    ]
    lines += ["  - %s" % step for step in tried]
    if store is None:
        lines.append("(The trust store is off: %s=off.)" % trust_store.ENV_TRUST_STORE)
    lines += ["", "torch's own message:", str(torch_error)]
    return pickle.UnpicklingError("\n".join(lines))


_DATA_ONLY_STEP = (
    "torch's weights-only load with compatfix's data-only classes (argparse.Namespace, numpy "
    "scalars/dtypes/arrays, pathlib paths, yacs CfgNode, mmcv Config/ConfigDict, each rebuilt from "
    "checked data; it runs no code from the file), which refused it"
)


def _torch_reason(torch_error: Exception) -> str:
    # The unpickler's line after torch's preamble, e.g. "Unsupported global: GLOBAL posix.system".
    for line in str(torch_error).splitlines():
        line = line.strip()
        if line.startswith("WeightsUnpickler error: "):
            line = line[len("WeightsUnpickler error: "):]
        if line.startswith(("Unsupported", "Can only", "compatfix's data-only loader", "Trying to")):
            return line.rstrip(".")
    return "torch's weights-only loader refused it"


# --- files that are not checkpoints ---------------------------------------------------------

_LOOKS_LIKE = (
    ((b"<!doctype html", b"<html", b"<head", b"<?xml", b"<body"),
     "an HTML page: a download that saved an error or login page instead of the file?"),
    ((b"version https://git-lfs",), "a Git LFS pointer: run `git lfs pull` to fetch the real file"),
    ((b"{", b"["), "JSON text, not a checkpoint"),
)


def _what_it_looks_like(head: bytes) -> str:
    text = head.lstrip().lower()
    if not text:
        return "an empty file"
    for prefixes, description in _LOOKS_LIKE:
        if text.startswith(prefixes):
            return description
    if all(32 <= byte < 127 or byte in b"\t\r\n" for byte in head[:512]):
        return "a text file"
    return "not a pickle"


def _pickles_parse(stream: Any, count: int) -> bool:
    """Whether ``stream`` holds ``count`` well-formed pickles, read opcode by opcode
    (``pickletools.genops``: nothing is built or run)."""
    import pickletools

    try:
        for _ in range(count):
            for _ in pickletools.genops(stream):
                pass
    except Exception:
        return False
    return True


def _not_a_checkpoint(f: Any, rewind: Callable[[], None]) -> str | None:
    """What ``f`` looks like if no loader could parse it (neither a zip checkpoint nor
    torch's older pickles), else None."""
    if _is_path(f):
        with open(f, "rb") as handle:
            return _describe_unparseable(handle, lambda: handle.seek(0))
    rewind()
    return _describe_unparseable(f, rewind)


def _describe_unparseable(handle: Any, rewind: Callable[[], Any]) -> str | None:
    head = handle.read(512)
    rewind()
    if not head.startswith(b"PK\x03\x04"):
        # torch < 1.6's format: the magic number, the protocol, the system info, the object.
        return None if _pickles_parse(handle, 4) else _what_it_looks_like(head)
    # torch's zip reader opened it already (the refusal came from the unpickler); read
    # its pickle with the same reader.
    from torch.serialization import _open_zipfile_reader

    try:
        with _open_zipfile_reader(handle) as archive:
            pickled = archive.get_record("data.pkl")
    except Exception:
        return "a damaged zip file (an interrupted download?)"
    return None if _pickles_parse(io.BytesIO(pickled), 1) else "a zip whose data.pkl is not a pickle"


def _pickle_protocol(f: Any, rewind: Callable[[], None]) -> int:
    """The pickle protocol of the checkpoint's (first) pickle; 0 if it cannot tell."""
    try:
        if _is_path(f):
            with open(f, "rb") as handle:
                head = handle.read(4)
                if head.startswith(b"PK\x03\x04"):
                    handle.seek(0)
                    head = _zip_pickle_head(handle)
        else:
            rewind()
            head = f.read(4)
            if head.startswith(b"PK\x03\x04"):
                rewind()
                head = _zip_pickle_head(f)
            rewind()
    except Exception:
        return 0
    return head[1] if len(head) > 1 and head[0] == 0x80 else 0


def _unsupported_operand_reason(reason: str, protocol: int, policy: Policy) -> str:
    """torch's "Unsupported operand 149" in words: the opcode's name, and the protocol
    that wrote it where that is newer than the one torch's loader reads."""
    import pickletools
    import re

    number = re.search(r"Unsupported operand (\d+)", reason)
    opcode = pickletools.code2op.get(chr(int(number.group(1)))) if number else None
    name = opcode.name if opcode else "unknown"
    if protocol <= 2:
        return "%s (%s)" % (reason, name)
    saved = "it was saved with pickle protocol %d (torch.save(..., pickle_protocol=%d))" % (protocol, protocol)
    if not policy.data_only:
        return ("%s, and torch's weights-only loader reads protocol 2 only (compatfix's data-only load, "
                "shim %s, reads it as protocol 2)" % (saved, SHIM_DATA_ONLY))
    return ("%s and holds a %s instruction, which has no protocol-2 form that torch's weights-only loader "
            "reads" % (saved, name))


def _zip_pickle_head(handle: Any) -> bytes:
    from torch.serialization import _open_zipfile_reader

    with _open_zipfile_reader(handle) as archive:
        return bytes(archive.get_record("data.pkl")[:2])


def _unreadable(torch_error: Exception, f: Any, what: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        "compatfix: torch.load(%r) failed: this is not a checkpoint that any loader can read (%s). "
        "Nothing about it is a security question: fetch or save the file again.\n\ntorch's own message:\n%s"
        % (_file_name(f), what, torch_error)
    )


# --- the load itself ------------------------------------------------------------------------


def _note_data_only(f: Any, used: LoadNotes) -> None:
    what = []
    if used.classes:
        what.append("data-only classes %s" % ", ".join(sorted(used.classes)))
    if used.protocols:
        what.append("pickle protocol %s, which it reads as protocol 2"
                    % ", ".join(str(protocol) for protocol in sorted(used.protocols)))
    record_redirect(SHIM_DATA_ONLY, "torch.load(%s): %s" % (_file_name(f), "; ".join(what)))
    _messages.say(
        "torch.load: torch >= 2.6's weights-only default refuses a checkpoint with %s; compatfix loaded it "
        "with torch's weights-only loader, which runs no code from the file (%s)"
        % (" and ".join(what), _messages.docs_link("checkpoints.md")),
        key=SHIM_DATA_ONLY,
    )


def _load_refused(original, f, rewind, torch_error, map_location, mmap, pickle_load_args, policy: Policy) -> Any:
    """What compatfix does with a file that the weights-only load refused."""
    name = _file_name(f)
    reason = _torch_reason(torch_error)
    if policy.data_only:
        tried = [_DATA_ONLY_STEP + " (its message is below)"]
    else:
        tried = ["torch's weights-only load (its message is below)",
                 "not its data-only classes: shim %s is disabled" % SHIM_DATA_ONLY]
    if rewind is None:
        tried.append("nothing else: the file object cannot seek back for another try")
        raise _refusal(torch_error, f, reason, tried) from None
    unreadable = _not_a_checkpoint(f, rewind)
    if unreadable is not None:
        raise _unreadable(torch_error, f, unreadable) from None
    protocol = _pickle_protocol(f, rewind)
    if "Unsupported operand" in reason:
        reason = _unsupported_operand_reason(reason, protocol, policy)
    if not policy.trusted:
        tried.append("not its trust rules: shim %s is disabled" % SHIM_TRUSTED)
        raise _refusal(torch_error, f, reason, tried) from None
    why = _explicit_trust(f)
    source = f
    if why is not None:
        _messages.say(
            "WARNING: torch.load(%r) runs with full pickle (weights_only=False) because %s: any code "
            "inside this file runs. torch's weights-only loader refused it, with compatfix's data-only "
            "classes or without." % (name, why),
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
        policy = policy_of()
        rewind = _rewinder(f)
        try:
            if not policy.data_only:
                return original(f, map_location, mmap=mmap, **pickle_load_args)
            with data_only_scope() as used:
                loaded = original(f, map_location, mmap=mmap, **pickle_load_args)
            if used:
                _note_data_only(f, used)
            return loaded
        except pickle.UnpicklingError as exc:
            if not str(exc).startswith(TORCH_REFUSAL):
                raise
            torch_error = exc
        return _load_refused(original, f, rewind, torch_error, map_location, mmap, pickle_load_args, policy)

    return load

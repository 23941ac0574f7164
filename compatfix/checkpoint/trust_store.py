"""The trust store: content hashes of the checkpoints that this machine's ``torch.save``
wrote while compatfix was active, so that they load again under torch >= 2.6's
weights-only default (see docs/checkpoints.md and compatfix/checkpoint/policy.py).

One line per checkpoint, tab-separated: ``sha256  size  UTC time  path``. The path is
only for people auditing the store; trust is by content, so a copy of a checkpoint is
trusted too, and the same path holding other bytes is not. The store lives at
``$COMPATFIX_TRUST_STORE``, else ``$XDG_CACHE_HOME/compatfix/trusted-checkpoints.tsv``,
else ``~/.cache/compatfix/trusted-checkpoints.tsv``; ``COMPATFIX_TRUST_STORE=off``
turns it off.

The store says which files may run code, so only its owner may write it: a store file
or folder that is not owned by this user, or that group or others can write, is ignored
(one message; nothing is trusted from it and nothing is added to it). compatfix creates
the folder 0700 and the file 0600. The path field is escaped (JSON string escapes,
ASCII only), so no save path can add a line, whatever separator it holds.

Writers take a lock (``compatfix._files.locked``: it dies with its holder, and a writer
gives up after ``LOCK_TIMEOUT`` seconds, skipping the record with one message) and append
one line, starting a new line first if the last one was cut short (a full disk, a killed
writer). When the store grows past ``MAX_ENTRIES`` it is rewritten, oldest lines dropped (saves into
a buffer first), through a new temporary file and an atomic rename, so a reader never
sees half a store.
Readers take no lock, and skip every line that is not exactly four well-formed fields.
"""

from __future__ import annotations

import os
import stat
import time
from typing import Callable, Iterator

from compatfix import _files, _messages

ENV_TRUST_STORE = "COMPATFIX_TRUST_STORE"
STORE_FILE_NAME = "trusted-checkpoints.tsv"
MAX_ENTRIES = 10000
MAX_STORE_BYTES = 64 << 20  # ~10000 lines are ~2 MB: a larger file is not one compatfix wrote
LOCK_TIMEOUT = 1.0  # seconds a torch.save waits for another process's record, then skips its own
_MAX_SIZE_DIGITS = 19  # sizes below 2**63; a longer "size" is garbage (and int() of it is slow)
_HEX = frozenset("0123456789abcdef")
_HEADER = (
    "# compatfix trust store: checkpoints that torch.save wrote on this machine under compatfix.\n"
    "# sha256\tsize\tsaved (UTC)\tpath when saved (JSON-escaped)\n"
)
_CHUNK = 1 << 20
# The path field of a save into a buffer (io.BytesIO, an fsspec or cloud file object):
# its bytes may reach a file later (Lightning writes its checkpoint through one).
BUFFER_PREFIX = "<buffer: "


class UnsafeStore(OSError):
    """The store (or its folder) could be written by someone else: it is not used."""


def store_path() -> str | None:
    """Where the trust store is, or None when it is turned off."""
    configured = os.environ.get(ENV_TRUST_STORE, "").strip()
    if configured.lower() in ("off", "0", "no", "false", "none"):
        return None
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "compatfix", STORE_FILE_NAME)


def _unsafe_because(info: os.stat_result, what: str) -> str | None:
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # Windows: no owner/mode bits to check
        return None
    if info.st_uid != getuid():
        return "%s is owned by uid %d, not by this user (uid %d)" % (what, info.st_uid, getuid())
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "%s can be written by group or others (mode %o)" % (what, stat.S_IMODE(info.st_mode))
    return None


def check_safe(path: str) -> None:
    """UnsafeStore if the store at ``path`` or its folder could have been written by
    someone other than this user; nothing if they do not exist yet."""
    folder = os.path.dirname(path)
    problems = []
    try:
        problems.append(_unsafe_because(os.stat(folder), "its folder %s" % folder))
    except FileNotFoundError:
        return
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            problems.append("%s is not a regular file" % path)
        else:
            problems.append(_unsafe_because(info, path))
    problems = [problem for problem in problems if problem]
    if problems:
        raise UnsafeStore(
            "compatfix ignores the trust store %s: %s. Anyone who can write it can make any file load with "
            "full pickle. Use a store only you can write (chmod 700 the folder, chmod 600 the file, or "
            "%s=PATH elsewhere), or %s=off." % (path, "; ".join(problems), ENV_TRUST_STORE, ENV_TRUST_STORE)
        )


def _warn_unsafe(exc: UnsafeStore) -> None:
    _messages.say(str(exc), key="trust store unsafe")


def sha256_of_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def open_regular(path: str, flags: int = os.O_RDONLY) -> int:
    """An fd for ``path`` if it is a regular file; OSError otherwise. Opening with
    O_NONBLOCK means a named pipe never blocks the open; fstat then refuses it."""
    fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("%s is not a regular file" % path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_store(path: str) -> str:
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_STORE_BYTES + 1)
    if len(data) > MAX_STORE_BYTES:
        raise OSError("the trust store %s is larger than %d bytes" % (path, MAX_STORE_BYTES))
    return data.decode("utf-8", "replace")


def entries(path: str | None = None) -> Iterator[tuple[str, int, str, str]]:
    """``(sha256, size, saved, path)`` for each line of the store, oldest first. An
    unsafe store (see ``check_safe``) holds nothing, with one message."""
    path = store_path() if path is None else path
    if path is None:
        return
    try:
        check_safe(path)
        text = _read_store(path)
    except UnsafeStore as exc:
        _warn_unsafe(exc)
        return
    except OSError:
        return
    for line in text.split("\n"):  # "\n" only: the writer escapes every other separator
        if line.startswith("#"):
            continue
        fields = line.split("\t", 3)
        if len(fields) != 4 or not _well_formed(fields[0], fields[1]):
            continue  # a line being written right now, cut short, or broken by hand
        yield fields[0], int(fields[1]), fields[2], fields[3]


def _well_formed(digest: str, size: str) -> bool:
    return (len(digest) == 64 and set(digest) <= _HEX and 0 < len(size) <= _MAX_SIZE_DIGITS
            and size.isascii() and size.isdigit())


def trusted_sizes(path: str | None = None) -> set[int]:
    """The sizes of the trusted checkpoints: a file of another size needs no hashing."""
    return {size for _, size, _, _ in entries(path)}


def is_trusted(digest: str, path: str | None = None) -> bool:
    return any(entry[0] == digest for entry in entries(path))


def escape_path(checkpoint: str) -> str:
    """The path as one line of ASCII: JSON's string escapes (every control character,
    every non-ASCII character such as U+2028 or U+0085, and the lone surrogates that
    stand for a non-UTF-8 file name's bytes)."""
    import json

    return json.dumps(checkpoint)[1:-1]


def _make_folder(folder: str) -> None:
    if os.path.isdir(folder):
        return
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)  # makedirs applies the umask


def _ends_with_newline(fd: int) -> bool:
    size = os.fstat(fd).st_size
    if size == 0:
        return True
    os.lseek(fd, size - 1, os.SEEK_SET)
    return os.read(fd, 1) == b"\n"


def record(checkpoint: str | bytes, digest: str, size: int, path: str | None = None) -> None:
    """Add a checkpoint that this machine wrote to the store (UnsafeStore, OSError, and
    ``compatfix._files.LockTimeout`` when another writer holds the store too long)."""
    path = store_path() if path is None else path
    if path is None:
        return
    if isinstance(checkpoint, bytes):
        checkpoint = os.fsdecode(checkpoint)
    _make_folder(os.path.dirname(path))
    check_safe(path)
    saved = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = "%s\t%d\t%s\t%s\n" % (digest, size, saved, escape_path(checkpoint))
    with _files.locked(path + ".lock", timeout=LOCK_TIMEOUT):
        kept = list(entries(path))
        if len(kept) < MAX_ENTRIES:
            try:
                fd = open_regular(path, os.O_RDWR | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
            except FileNotFoundError:
                fd = _files.create_exclusive(path)
                line = _HEADER + line
            with os.fdopen(fd, "wb") as handle:
                if not _ends_with_newline(fd):
                    line = "\n" + line  # the last line was cut short: keep it out of ours
                handle.write(line.encode("ascii"))
            return
        kept = _rotated(kept)
        text = _HEADER + "".join("%s\t%d\t%s\t%s\n" % entry for entry in kept) + line
        _files.replace_with(path, text.encode("ascii"))


def is_buffer_entry(entry: tuple[str, int, str, str]) -> bool:
    """Whether ``entry`` is a save into a buffer (``<buffer: io.BytesIO>``), not a file."""
    return entry[3].startswith(BUFFER_PREFIX)


def _rotated(kept: list[tuple[str, int, str, str]]) -> list[tuple[str, int, str, str]]:
    """The entries a full store keeps, room for one more: the oldest buffer saves go first
    (a program that copies its state through a buffer at every step must not push out its
    checkpoints), then the oldest of the others."""
    excess = len(kept) - MAX_ENTRIES + 1
    dropped = set()
    for index, entry in enumerate(kept):
        if len(dropped) == excess:
            break
        if is_buffer_entry(entry):
            dropped.add(index)
    kept = [entry for index, entry in enumerate(kept) if index not in dropped]
    return kept[len(kept) - MAX_ENTRIES + 1:]


def forget(matches: "Callable[[tuple[str, int, str, str]], bool]", path: str | None = None) -> int:
    """Drop the entries ``matches`` accepts; how many were dropped (UnsafeStore, OSError,
    LockTimeout)."""
    path = store_path() if path is None else path
    if path is None or not os.path.lexists(path):
        return 0
    check_safe(path)
    with _files.locked(path + ".lock", timeout=LOCK_TIMEOUT):
        kept = list(entries(path))
        remaining = [entry for entry in kept if not matches(entry)]
        if len(remaining) != len(kept):
            text = _HEADER + "".join("%s\t%d\t%s\t%s\n" % entry for entry in remaining)
            _files.replace_with(path, text.encode("ascii"))
    return len(kept) - len(remaining)

"""The trust store: content hashes of the checkpoints that this machine's ``torch.save``
wrote while compatfix was active, so that they load again under torch >= 2.6's
weights-only default (see docs/checkpoints.md and compatfix/shims/torch_load.py).

One line per checkpoint, tab-separated: ``sha256  size  UTC time  path``. The path is
only for people auditing the store; trust is by content, so a copy of a checkpoint is
trusted too, and the same path holding other bytes is not. The store lives at
``$COMPATFIX_TRUST_STORE``, else ``$XDG_CACHE_HOME/compatfix/trusted-checkpoints.tsv``,
else ``~/.cache/compatfix/trusted-checkpoints.tsv``; ``COMPATFIX_TRUST_STORE=off``
turns it off.

Writers take a lock file and append one line; when the store grows past
``MAX_ENTRIES`` it is rewritten, oldest lines dropped, through a temporary file and an
atomic rename, so a reader never sees half a store. Readers take no lock.
"""

from __future__ import annotations

import os
import time
from typing import IO, Iterator

from compatfix._report import _locked

ENV_TRUST_STORE = "COMPATFIX_TRUST_STORE"
STORE_FILE_NAME = "trusted-checkpoints.tsv"
MAX_ENTRIES = 10000
_HEADER = (
    "# compatfix trust store: checkpoints that torch.save wrote on this machine under compatfix.\n"
    "# sha256\tsize\tsaved (UTC)\tpath when saved\n"
)
_CHUNK = 1 << 20


def store_path() -> str | None:
    """Where the trust store is, or None when it is turned off."""
    configured = os.environ.get(ENV_TRUST_STORE, "").strip()
    if configured.lower() in ("off", "0", "no", "false", "none"):
        return None
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "compatfix", STORE_FILE_NAME)


def sha256_of_stream(stream: IO[bytes]) -> str:
    """The sha256 of what ``stream`` holds from its current position to its end."""
    import hashlib  # only when a file is hashed: it loads OpenSSL

    digest = hashlib.sha256()
    for chunk in iter(lambda: stream.read(_CHUNK), b""):
        digest.update(chunk)
    return digest.hexdigest()


def sha256_of_file(path: str) -> str:
    with open(path, "rb") as handle:
        return sha256_of_stream(handle)


def entries(path: str | None = None) -> Iterator[tuple[str, int, str, str]]:
    """``(sha256, size, saved, path)`` for each line of the store, oldest first."""
    path = store_path() if path is None else path
    if path is None:
        return
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return
    for line in lines:
        if line.startswith("#"):
            continue
        fields = line.split("\t", 3)
        if len(fields) != 4 or len(fields[0]) != 64 or not fields[1].isdigit():
            continue  # a line being written right now, or one a person broke by hand
        yield fields[0], int(fields[1]), fields[2], fields[3]


def trusted_sizes(path: str | None = None) -> set[int]:
    """The sizes of the trusted checkpoints: a file of another size needs no hashing."""
    return {size for _, size, _, _ in entries(path)}


def is_trusted(digest: str, path: str | None = None) -> bool:
    return any(entry[0] == digest for entry in entries(path))


def record(checkpoint: str, digest: str, size: int, path: str | None = None) -> None:
    """Add a checkpoint that this machine wrote to the store."""
    path = store_path() if path is None else path
    if path is None:
        return
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    saved = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = "%s\t%d\t%s\t%s\n" % (digest, size, saved, os.path.abspath(checkpoint).replace("\n", " "))
    with _locked(path + ".lock"):
        kept = list(entries(path))
        if len(kept) < MAX_ENTRIES:
            new = not os.path.exists(path)
            with open(path, "a", encoding="utf-8") as handle:
                if new:
                    handle.write(_HEADER)
                handle.write(line)
            return
        kept = kept[len(kept) - MAX_ENTRIES + 1:]
        temporary = "%s.%d.tmp" % (path, os.getpid())
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(_HEADER)
            handle.writelines("%s\t%d\t%s\t%s\n" % entry for entry in kept)
            handle.write(line)
        os.replace(temporary, path)

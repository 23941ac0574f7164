"""How compatfix writes files (the report, the trust store, caches): never through a name
that someone else could have planted, and never waiting long on a lock.

- ``create_exclusive`` makes a new file with ``O_CREAT|O_EXCL|O_NOFOLLOW``: a link or a
  file planted at that name makes it fail, instead of being followed or truncated;
- ``replace_with`` writes a temporary file of an unpredictable name made that way, then
  renames it over the target (a reader sees the old file or the new one, never half);
- ``locked`` is an ``flock`` on a lock file, so a lock dies with the process holding it
  (a writer killed by the OOM killer leaves nothing that blocks the next one), and gives
  up after ``timeout`` seconds with ``LockTimeout``: bookkeeping never stalls a save.

Standard library only, and ``os`` alone until a file is written.
"""

from __future__ import annotations

import os

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class LockTimeout(OSError):
    """Another process held the lock for longer than the caller waits."""


def create_exclusive(path: str, mode: int = 0o600) -> int:
    """A write descriptor for a file created at ``path`` now; FileExistsError if
    anything (a file, a link, even a dangling one) is there."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY, mode)


def replace_with(path: str, data: bytes, mode: int = 0o600) -> None:
    """Make ``path`` hold ``data``: written to a new temporary file beside it, then renamed
    over it (the rename replaces a link at ``path``; it never writes through one)."""
    folder, name = os.path.split(os.path.abspath(path))
    for _ in range(100):
        temporary = os.path.join(folder, ".%s.%s.tmp" % (name, os.urandom(8).hex()))
        try:
            fd = create_exclusive(temporary, mode)
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError("no free temporary name beside %s" % path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


class locked:
    """``with locked(path, timeout):``: an exclusive lock on the lock file ``path``."""

    def __init__(self, path: str, timeout: float = 1.0) -> None:
        self.path = path
        self.timeout = timeout
        self.fd = -1

    def __enter__(self) -> "locked":
        import time

        deadline = time.monotonic() + self.timeout
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC | _BINARY, 0o600)
            try:
                while not _try_lock(fd):
                    if time.monotonic() > deadline:
                        raise LockTimeout("%s is held by another process" % self.path)
                    time.sleep(0.005)
                # The holder before us may have removed the file it locked: then this
                # descriptor locks a name nobody else will open. Lock the file that is there.
                if _same_file(fd, self.path):
                    self.fd = fd
                    return self
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)

    def __exit__(self, *exc_info: object) -> None:
        try:
            if os.name != "nt":  # Windows cannot remove an open file; the lock file stays
                os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)  # closing releases the lock


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _same_file(fd: int, path: str) -> bool:
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)

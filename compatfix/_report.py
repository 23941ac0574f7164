"""What happened in this process: shims applied (what they changed), skipped (why not
needed here), nothing to do (ran, found the target already working), failed (error), and
where user code used a name that only exists because compatfix restored it.

With ``--report PATH`` / ``COMPATFIX_REPORT`` every process of the run adds its record
to one JSON file at exit (launcher workers and spawn children included), merged under
a lock file. Without it, nothing is written and deprecated-name tracking is off, so
restored names cost no more than any module attribute.
"""

from __future__ import annotations

import os
import sys
import _thread  # not threading: most targets never import it
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the engine loads before the target
    from typing import Any

from compatfix import _files, _messages

_IMPORT_MACHINERY = ("<frozen importlib", "importlib/__init__", "importlib\\__init__")


class Recorder:
    def __init__(self) -> None:
        self.applied: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []
        self.nothing_to_do: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self._uses: dict[tuple[str, str, str, int], int] = {}
        self._redirects: dict[tuple[str, str], int] = {}
        self._lock = _thread.allocate_lock()

    def add(self, outcome: str, **fields: Any) -> None:
        with self._lock:
            getattr(self, outcome).append(fields)

    def start_over(self) -> None:
        """Forget everything: a forked child keeps a record of its own."""
        self._lock = _thread.allocate_lock()  # the parent's may have been held at fork time
        self.applied, self.skipped, self.nothing_to_do, self.failed, self.notes = [], [], [], [], []
        self._uses = {}
        self._redirects = {}

    def note(self, text: str) -> None:
        with self._lock:
            self.notes.append(text)

    def record_use(self, shim: str, name: str, depth: int) -> None:
        """Count a use of a restored name at the first caller outside the import system."""
        frame = sys._getframe(depth + 1)
        while frame is not None and (
            frame.f_code.co_filename.startswith(_IMPORT_MACHINERY)
            or frame.f_globals.get("__name__", "").startswith("compatfix.")
        ):
            frame = frame.f_back
        where = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("<unknown>", 0)
        key = (shim, name) + where
        with self._lock:
            self._uses[key] = self._uses.get(key, 0) + 1

    def record_redirect(self, shim: str, what: str) -> None:
        """Count a call that a device mode redirected (``Tensor.cuda`` -> CPU, ...)."""
        # No lock: this runs on hot paths (every redirected .cuda()); under a thread
        # race a count may be lost, which a report can live with.
        key = (shim, what)
        self._redirects[key] = self._redirects.get(key, 0) + 1

    def deprecated_uses(self) -> list[dict[str, Any]]:
        with self._lock:
            items = sorted(self._uses.items())
        return [
            {"shim": shim, "name": name, "file": path, "line": line, "count": count}
            for (shim, name, path, line), count in items
        ]

    def process_record(self) -> dict[str, Any]:
        uses = self.deprecated_uses()
        with self._lock:
            return {
                "pid": os.getpid(),
                "argv": list(sys.argv),
                "rank": _messages.process_rank(),
                "applied": list(self.applied),
                "skipped": list(self.skipped),
                "nothing_to_do": list(self.nothing_to_do),
                "failed": list(self.failed),
                "notes": list(self.notes),
                "deprecated_uses": uses,
                "redirected": [
                    {"shim": shim, "call": what, "count": count}
                    for (shim, what), count in sorted(self._redirects.items())
                ],
            }


LOCK_TIMEOUT = 1.0  # seconds a process's exit waits for the other ranks' writes, then skips
MAX_REPORT_BYTES = 64 << 20  # a report of thousands of processes is a few MB


def _read_report(path: str) -> Any:
    """The report at ``path`` if it is a regular file of at most MAX_REPORT_BYTES, else
    None (then it is replaced). Never opens a pipe or a device for reading: O_NONBLOCK
    keeps the open of a FIFO from waiting for a writer, fstat then refuses it."""
    import json
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_REPORT_BYTES:
            return None
        data = handle.read(MAX_REPORT_BYTES + 1)
    if len(data) > MAX_REPORT_BYTES:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError:
        return None


def write(path: str, record: dict[str, Any], run_id: str) -> None:
    """Add this process's record to the run's report at ``path``.

    A report left by an earlier run (another run id), or one that is not a regular
    file of a sane size, is replaced.
    """
    import json

    from compatfix import __version__

    problem = check_writable(path)
    if problem:
        raise OSError(problem)
    # Every rank of a run adds its record at exit: a lock (which dies with its holder)
    # and a write through a new, unpredictably named file (never a planted link).
    with _files.locked(path + ".lock", timeout=LOCK_TIMEOUT):
        report = _read_report(path)
        if not isinstance(report, dict) or report.get("run_id") != run_id or not isinstance(
            report.get("processes"), list
        ):
            report = {"compatfix_version": __version__, "run_id": run_id, "processes": []}
        report["processes"].append(record)
        _files.replace_with(path, json.dumps(report, indent=2).encode("utf-8"), mode=0o644)


def check_writable(path: str) -> str | None:
    """A problem line if a report cannot be written at ``path``, else None: it must be a
    regular file, or a name a regular file can be created at."""
    import stat

    folder = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        return "report path %r is a folder; no report will be written" % path
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        return "report path %r cannot be used (%s); no report will be written" % (path, exc)
    if info is not None and not stat.S_ISREG(info.st_mode):
        return "report path %r is not a regular file (a pipe, a device ...); no report will be written" % path
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        return "report path %r is not writable; no report will be written" % path
    return None

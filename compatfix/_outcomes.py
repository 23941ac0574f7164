"""Outcomes and the report: what happened to each shim in this process ("applied",
"nothing_to_do", "skipped", "failed", the problems noted), and the ``--report`` file
written from it when the process ends (at exit, in forked and multiprocessing children
too).

Made by the engine on its first outcome (``Engine.outcomes``): an import whose shims all
wait for a first use (numpy's restored aliases) never loads this module. It stands below
the engine and imports none of it; it is given the settings.
"""

from __future__ import annotations

import os
import sys
import _thread  # not threading: most targets never import it

from compatfix import _messages, _report

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the engine loads before the target
    from compatfix._settings import Settings
    from compatfix.registry import Shim


class Outcomes:
    """The recorder of one process, and the report written from it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.recorder = _report.Recorder()
        self._recorded: set[tuple[str, str, str]] = set()
        self._lock = _thread.allocate_lock()
        self._report_registered = False
        self._report_written = False

    def note(self, problem: str) -> None:
        """A problem with the settings or a shim module: recorded, and said once."""
        self.recorder.note(problem)
        _messages.say(problem)

    def record_once(self, shim: Shim, target: str, outcome: str, **fields: object) -> None:
        key = (shim.name, target, outcome)
        with self._lock:
            if key in self._recorded:
                return
            self._recorded.add(key)
        self.recorder.add(outcome, shim=shim.name, module=target, **fields)

    def applied(self, shim: Shim, target: str, changes: list[str], reason: object) -> None:
        """One apply's outcome: "applied" with the changes the patching functions counted,
        else "nothing_to_do" with the reason the apply returned, or that the target
        already works."""
        if changes:
            self.recorder.add("applied", shim=shim.name, module=target, risk=shim.risk, changed=changes)
        else:
            why = reason if isinstance(reason, str) else "%s already has what this shim restores" % target
            self.recorder.add("nothing_to_do", shim=shim.name, module=target, reason=why)

    def failed(self, shim: Shim, target: str, error: str) -> None:
        """A shim that raised: recorded; said unless strict mode makes it an error (the
        engine raises that)."""
        self.recorder.add("failed", shim=shim.name, module=target, error=error)
        if not self.settings.strict:
            _messages.say(
                "shim %r failed to apply to %s and is skipped (%s). The program goes on without it; "
                "to silence this, disable it with --disable %s or COMPATFIX_DISABLE=%s."
                % (shim.name, target, error, shim.name, shim.name)
            )

    # --- the report ---------------------------------------------------------------------

    def register_report(self) -> None:
        path = self.settings.report_path
        if not path or self._report_registered:
            return
        problem = _report.check_writable(path)
        if problem:
            self.note(problem)
            return
        self._report_registered = True
        import atexit

        atexit.register(self.write_report)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._after_fork_in_child)
        multiprocessing = sys.modules.get("multiprocessing")
        if multiprocessing is not None and multiprocessing.parent_process() is not None:
            _write_at_multiprocessing_exit(self)

    def _after_fork_in_child(self) -> None:
        # A forked child (a DataLoader worker on Linux) inherits this engine: it reports
        # what happens in it, as a process of its own.
        self.recorder.start_over()
        self._report_written = False
        util = sys.modules.get("multiprocessing.util")
        if util is not None:
            # multiprocessing clears inherited finalizers when the child starts, then
            # runs its after-fork callbacks: register the writer from there.
            util.register_after_fork(self, _write_at_multiprocessing_exit)

    def write_report(self) -> None:
        path = self.settings.report_path
        if not path or self._report_written:
            return
        self._report_written = True  # atexit and a multiprocessing finalizer may both call
        run_id = os.environ.get("COMPATFIX_RUN_ID", str(os.getpid()))
        try:
            _report.write(path, self.recorder.process_record(), run_id)
        except Exception as exc:
            _messages.say("could not write the report to %r: %s" % (path, exc))


def _write_at_multiprocessing_exit(outcomes: Outcomes) -> None:
    """multiprocessing children leave through os._exit, which skips atexit."""
    from multiprocessing import util

    util.Finalize(None, outcomes.write_report, exitpriority=0)

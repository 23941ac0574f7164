"""Shims for rich: ``Console.clear_live`` on a console without a live display.

rich 14.1 (2025-07) keeps a stack of live displays, and ``Console.clear_live()`` pops it,
so a call without a live display raises ``IndexError: pop from empty list``; before, it set
the console's one live display to None, whether or not there was one. pytorch-lightning
1.5's ``RichProgressBar`` clears the console's live display before it starts its own, at
the sanity check of the first ``trainer.fit``.
"""

from __future__ import annotations

import io
from typing import Any, Callable

from compatfix.patching import wrap
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_CLEAR_LIVE = "rich.console.clear_live_without_live"


def _without_live_is_a_no_op(clear_live: Callable[[Any], None]) -> Callable[[Any], None]:
    def clear_live_if_any(self: Any) -> None:
        if not getattr(self, "_live_stack", True):
            return  # rich < 14.1: clearing when nothing is live changed nothing
        clear_live(self)

    return clear_live_if_any


def tolerate_clear_without_live(module) -> str | None:
    try:
        module.Console(file=io.StringIO()).clear_live()
    except IndexError:
        wrap(module.Console, "clear_live", _without_live_is_a_no_op, SHIM_CLEAR_LIVE)
        return None
    return "Console.clear_live() without a live display works here"


SHIMS = (
    Shim(
        SHIM_CLEAR_LIVE,
        targets=["rich.console"],
        kind=AFTER_IMPORT,
        requires={"rich": ">=14.1"},
        apply=tolerate_clear_without_live,
        risk=RISK_BEHAVIOUR,
        broke="rich 14.1 (2025-07) made Console.clear_live() pop a stack of live displays, so a call without "
        "one raises IndexError; pytorch-lightning 1.5's RichProgressBar makes that call at the first trainer.fit",
        summary="Console.clear_live() without a live display does nothing again, as before rich 14.1; "
        "with one, it clears it as today",
        replacement="pytorch-lightning >= 1.6, or call clear_live() only inside a Live",
    ),
)

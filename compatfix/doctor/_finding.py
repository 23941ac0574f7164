"""What a doctor check reports."""

from __future__ import annotations

from typing import NamedTuple


class Finding(NamedTuple):
    """One diagnosed problem."""

    check: str  # short id of the check that found it, e.g. "apex"
    severity: str  # "error" | "warning" | "info"
    summary: str  # one line
    advice: str  # what to do about it

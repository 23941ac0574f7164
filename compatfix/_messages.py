"""User-facing messages: each one once per process, and only on rank 0 of a
distributed run, so that 64 workers do not print 64 copies."""

from __future__ import annotations

import os
import _thread  # not threading: most targets never import it, and the engine loads with them

# The wheel ships no docs/ folder, so messages point at the published pages, built from
# this one constant (pyproject.toml's project URLs name the same place).
DOCS_URL = "https://github.com/compatfix/compatfix/blob/main/docs/"

_RANK_VARIABLES = ("RANK", "LOCAL_RANK", "SLURM_PROCID")
_said: set[str] = set()
_lock = _thread.allocate_lock()


def process_rank() -> int | None:
    """This process's rank as the launcher set it, or None outside distributed runs."""
    for variable in _RANK_VARIABLES:
        value = os.environ.get(variable, "").strip()
        if value.isdigit():
            return int(value)
    return None


def docs_link(page: str, section: str = "") -> str:
    """The URL of ``docs/<page>`` (and its ``#section`` anchor), for a message to point at."""
    return DOCS_URL + page + ("#" + section if section else "")


def is_rank_zero() -> bool:
    return process_rank() in (None, 0)


def say(text: str, key: str | None = None) -> bool:
    """Print ``compatfix: text`` once per process (per ``key``), on rank 0 only.

    Messages go through the ``compatfix`` logger at WARNING level, so an application's
    logging configuration can route or silence them. Returns whether it was printed.
    """
    key = text if key is None else key
    with _lock:
        if key in _said:
            return False
        _said.add(key)
    if not is_rank_zero():
        return False
    import logging

    logging.getLogger("compatfix").warning("compatfix: %s", text)
    return True

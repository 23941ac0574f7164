"""What a finding means on this environment: the shim's decision (``_decision.decide``,
as ``compatfix list`` asks it) or, for an inventory entry no shim covers, the installed
version against the release that removed the name. Versions come from the installed
distributions' metadata; nothing is imported.
"""

from __future__ import annotations

import sys
from typing import Callable

from compatfix import _decision
from compatfix._settings import Settings
from compatfix._versions import check_requires
# The doctor's reading of the same inventory: one answer to "is this removed here?".
from compatfix.doctor.removed_apis import DEPENDENCY_NAMES, installed_version, removed_in_version
from compatfix.inventory import Removal
from compatfix.registry import Shim

# A finding's status, and whether it needs the user to act.
FIXED = "fixed"  # a shim fixes it here at run time (or a dependency brings the module back)
OPT_IN = "opt-in"  # a shim exists and would fix it, but is off (default off, disabled, device mode)
NOT_FIXED = "not-fixed"  # broken here and nothing fixes it: the replacement is the way out
WORKS = "works"  # not broken with the versions installed here
UNKNOWN = "unknown"  # the library is not installed here: cannot tell
CONFLICT = "conflict"  # a requirement that today's stack does not satisfy
UNPARSED = "unparsed"  # a file that is not Python 3
CHANGED = "changed"  # the name exists here again, with another meaning than the code's
STATUSES = (NOT_FIXED, UNPARSED, CONFLICT, OPT_IN, CHANGED, FIXED, WORKS, UNKNOWN)
NEEDS_ACTION = frozenset({NOT_FIXED, OPT_IN, CONFLICT, UNPARSED})



def shim_status(shim: Shim, settings: Settings, lookup: Callable[[str], Shim | None]) -> tuple[str, str]:
    """``(status, why)`` for a use that ``shim`` fixes."""
    applies, why = _decision.decide(shim, settings, lookup)
    if applies:
        return FIXED, "%s applies here (%s)" % (shim.name, why)
    enabled, _ = settings.is_enabled(shim.name, shim.default)
    if not enabled:
        return OPT_IN, "%s is %s: enable it with --enable %s" % (
            shim.name, "off by default" if not shim.default else "disabled", shim.name)
    if shim.device is not None and shim.device != settings.device:
        return OPT_IN, "%s works only with --device %s" % (shim.name, shim.device)
    if why.endswith(" is not installed"):
        return UNKNOWN, why
    needed, _ = check_requires(shim.requires)
    if not needed:
        return WORKS, "not broken here: %s" % why
    return FIXED, "%s: %s" % (shim.name, why)  # yields to another shim that does its work


def removed_here(removal: Removal, python: tuple[int, int] | None = None) -> tuple[bool | None, str]:
    """Whether the installed library (or this Python) is at or after the removal, and the
    version seen; None where the library is not installed."""
    if removal.library == "python":
        have: str | None = "%d.%d" % (python or sys.version_info[:2])
    else:
        have = installed_version(removal.library)
    if have is None:
        return None, "%s is not installed" % removal.library
    return removed_in_version(removal.removed_in, have), "%s %s" % (removal.library, have)


def returned_status(removal: Removal, meaning: str) -> tuple[str, str] | None:
    """``(CHANGED, why)`` where the installed library is at or after the release that
    brought a removed name back with another meaning (``removal.returned_in``); None
    before it, or where the library is not installed."""
    have = installed_version(removal.library)
    if have is None or not removal.returned_in or not removed_in_version(removal.returned_in, have):
        return None
    return CHANGED, "%s %s has it again, as %s; no shim changes it back" % (removal.library, have, meaning)


def removal_status(removal: Removal) -> tuple[str, str]:
    """``(status, why)`` for a use of a name of ``removal`` that no shim covers."""
    removed, have = removed_here(removal)
    if removed is None:
        return UNKNOWN, have
    if not removed:
        return WORKS, "not broken here (%s); removed in %s" % (have, removal.removed_in)
    if removal.dependency:
        missing = [name for name in DEPENDENCY_NAMES.findall(removal.dependency) if installed_version(name) is None]
        if not missing:
            return FIXED, "%s: brought back by compatfix's dependency %s" % (have, removal.dependency)
        return NOT_FIXED, "%s: comes back with %s, not installed here (pip install %s)" % (
            have, removal.dependency, " ".join(missing))
    if removal.reason:
        return NOT_FIXED, "%s: no shim: %s" % (have, removal.reason)
    return NOT_FIXED, "%s: shim %s does not restore this name" % (have, removal.shim)

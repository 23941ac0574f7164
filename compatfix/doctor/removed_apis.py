"""Doctor check: the removed APIs compatfix cannot restore here (compatfix.inventory).

For every inventory entry whose library is installed at or after the release that removed
the API (for "python": the running interpreter), it names the entries that have no shim and
says what to do instead, the opt-in shims (how to enable them), and the redistributions
compatfix depends on that are not installed (compatfix installed with ``--no-deps``).
"""

from __future__ import annotations

import re
import sys
from typing import Callable, Mapping

from compatfix._versions import release_tuple
from compatfix.doctor._finding import Finding

# inventory library -> the distribution that carries it
DISTRIBUTIONS = {
    "numpy": "numpy", "torch": "torch", "torchvision": "torchvision", "scipy": "scipy",
    "scikit-learn": "scikit-learn", "scikit-image": "scikit-image", "setuptools": "setuptools",
}
_FIRST_VERSION = re.compile(r"\s*(\d+(?:\.\d+)*)")
# `standard-imghdr`, `legacy-cgi` ... in a dependency's text
DEPENDENCY_NAMES = re.compile(r"`([A-Za-z0-9][A-Za-z0-9._-]*)`")


def installed_version(distribution: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def removed_in_version(removed_in: str, have: str) -> bool:
    """Whether version ``have`` is at or after the release ``removed_in`` names (True when it names none)."""
    match = _FIRST_VERSION.match(removed_in)
    if match is None:  # no release number: cannot tell, so name it
        return True
    return release_tuple(have) >= release_tuple(match.group(1))


def check_removed_apis(
    versions: Mapping[str, str | None] | None = None,
    python: tuple[int, int] | None = None,
    installed: Callable[[str], str | None] | None = None,
) -> list[Finding]:
    """``versions``: library -> installed version (default: the distributions' metadata);
    ``python``: the interpreter's (major, minor); ``installed``: distribution -> version, for
    the dependencies. All three are for tests."""
    from compatfix import inventory

    installed = installed or installed_version
    python = python or (sys.version_info[0], sys.version_info[1])
    findings = []
    for removal in inventory.REMOVALS:
        if removal.library == "python":
            have: str | None = "%d.%d" % python
        elif versions is not None:
            have = versions.get(removal.library)
        else:
            distribution = DISTRIBUTIONS.get(removal.library)
            have = installed(distribution) if distribution else None
        if have is None or not removed_in_version(removal.removed_in, have):
            continue
        where = "%s %s" % (removal.library, have)
        if removal.reason:
            findings.append(Finding(
                "removed-apis", "info",
                "%s: %s (removed: %s) has no compatfix shim; old code used it for: %s"
                % (where, removal.names, removal.removed_in, removal.old_use),
                "What to do: %s." % removal.reason,
            ))
        elif removal.shim and removal.opt_in:
            findings.append(Finding(
                "removed-apis", "info",
                "%s: %s (removed: %s) is restored only on request"
                % (where, removal.names, removal.removed_in),
                "If your code relies on the old behaviour, run it with `python -m compatfix --enable %s ...` "
                "(or COMPATFIX_ENABLE=%s)%s." % (removal.shim, removal.shim,
                                                 "; " + removal.note if removal.note else ""),
            ))
        elif removal.dependency:
            missing = [name for name in DEPENDENCY_NAMES.findall(removal.dependency) if installed(name) is None]
            if missing:
                findings.append(Finding(
                    "removed-apis", "warning",
                    "%s: %s (removed: %s) comes back through %s, which %s not installed"
                    % (where, removal.names, removal.removed_in, ", ".join(missing),
                       "is" if len(missing) == 1 else "are"),
                    "Install it: `pip install %s` (compatfix declares it as a dependency; an install with "
                    "--no-deps skips it)." % " ".join(missing),
                ))
    return findings

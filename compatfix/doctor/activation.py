"""Whether compatfix is active in this interpreter, and if not, why not.

``compatfix status`` prints it, and ``compatfix list`` and ``compatfix doctor`` start
with it: a shim "applies" only where compatfix runs at all. The reasons are the ones the
start-up code itself acts on (``_compatfix_bootstrap``: ``COMPATFIX``, ``-I``), then the
ones it never gets to see (``-S``, a ``compatfix.pth`` that is not in a folder the
``site`` module reads).
"""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

_HOW = {
    "pth": "compatfix.pth, read at start-up",
    "sitecustomize": "the sitecustomize folder on PYTHONPATH",
    "cli": "python -m compatfix",
    "api": "compatfix.activate()",
}
_STILL_RUNS = "`python -m compatfix script.py` (or `compatfix run`) still runs a program with it"


class Activation(NamedTuple):
    active: bool
    interpreter: str  # sys.executable
    reason: str  # how it was activated, or why it was not
    advice: str  # what to do about it ("" when active)

    def line(self) -> str:
        """One line for the top of `compatfix list` and `compatfix doctor`."""
        from compatfix import __version__

        if self.active:
            return "compatfix %s is active in %s (%s)" % (__version__, self.interpreter, self.reason)
        return "compatfix %s is NOT active in %s: %s; %s" % (__version__, self.interpreter, self.reason, self.advice)

    def as_dict(self) -> dict[str, object]:
        from compatfix import __version__

        return {"version": __version__, **self._asdict()}


def site_folders() -> list[str]:
    """The folders whose ``.pth`` files this interpreter's ``site`` module reads."""
    import site

    folders = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return folders


def activation_state() -> Activation:
    """Whether compatfix is active in this interpreter, and why (not)."""
    interpreter = sys.executable
    if "_compatfix_bootstrap" in sys.modules and sys.modules["_compatfix_bootstrap"] is None:
        # compatfix.pth marks a start-up module that failed to import this way.
        return Activation(False, interpreter, "its start-up module _compatfix_bootstrap failed to import",
                          "reinstall compatfix (pip install --force-reinstall ...)")
    try:
        import _compatfix_bootstrap as bootstrap
    except ImportError:
        return Activation(False, interpreter, "its start-up module _compatfix_bootstrap is not importable",
                          "reinstall compatfix")
    if bootstrap.activated_by is not None:
        return Activation(True, interpreter, "by " + _HOW.get(bootstrap.activated_by, bootstrap.activated_by), "")
    if sys.flags.isolated:
        return Activation(False, interpreter, "python -I (isolated mode) keeps it off", _STILL_RUNS)
    value = os.environ.get("COMPATFIX", "1").strip().lower()
    if value in bootstrap._OFF_VALUES:
        return Activation(False, interpreter, "COMPATFIX=%s switches it off" % os.environ["COMPATFIX"],
                          "unset COMPATFIX to turn it on; " + _STILL_RUNS)
    if sys.flags.no_site:
        return Activation(False, interpreter, "python -S: the site module did not run, so no .pth file was read",
                          _STILL_RUNS)
    folders = site_folders()
    found = [folder for folder in folders if os.path.isfile(os.path.join(folder, "compatfix.pth"))]
    if not found:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        return Activation(
            False, interpreter,
            "there is no compatfix.pth in this interpreter's site-packages (%s); compatfix is imported from %s"
            % (", ".join(folders) or "none", root),
            "install it into this interpreter (pip install ...), or put the folder that "
            "`compatfix sitecustomize-path` prints on PYTHONPATH; " + _STILL_RUNS)
    return Activation(
        False, interpreter, "%s was not read at start-up" % os.path.join(found[0], "compatfix.pth"),
        "see the activation guide: " + _docs_link())


def _docs_link() -> str:
    from compatfix import _messages

    return _messages.docs_link("activation.md")

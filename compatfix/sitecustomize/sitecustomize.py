"""compatfix activation for interpreters that do not read compatfix.pth (a
PYTHONPATH-only deployment, an embedded interpreter, a read-only site-packages).

Put this folder on PYTHONPATH (``compatfix sitecustomize-path`` prints it). After
activating compatfix it hands over to the next ``sitecustomize`` on the path, if any,
so an existing one (a distribution's or the user's) still runs.
"""

import os
import sys


def _activate() -> None:
    if os.environ.get("COMPATFIX", "1").strip().lower() in ("0", "false", "no", "off") or sys.flags.isolated:
        return  # decided without importing anything
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        import _compatfix_bootstrap as bootstrap
    except ImportError:
        # Only this folder is on the path: compatfix itself sits two levels up.
        sys.path.append(package_root)
        import _compatfix_bootstrap as bootstrap
    if not bootstrap._switched_off():  # also says, once, when COMPATFIX has an unknown value
        bootstrap.activate("sitecustomize")


def _chain_load_next() -> None:
    """Import the sitecustomize that this one shadows, as if this one were not there."""
    here = os.path.dirname(os.path.abspath(__file__))
    this_module = sys.modules.pop("sitecustomize")
    saved_path = list(sys.path)
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    try:
        import sitecustomize  # noqa: F401  (the next one on the path, if any)
    except ImportError as exc:
        if exc.name != "sitecustomize":
            raise
        sys.modules["sitecustomize"] = this_module
    finally:
        sys.path[:] = saved_path


try:
    _activate()
except Exception as exc:  # never let start-up break the interpreter
    sys.stderr.write("compatfix: activation failed and is skipped: %r\n" % (exc,))
_chain_load_next()

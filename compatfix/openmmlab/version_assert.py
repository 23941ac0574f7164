"""Opt-in: let ``import mmseg`` / ``import mmdet`` past their mmcv version assert.

``mmcv.relaxed_version_assert`` (off by default; ``COMPATFIX_ENABLE=mmcv.relaxed_version_assert``)
    Every mmseg and mmdet release asserts at import that the installed mmcv lies in the
    range it was tested with (``MMCV_MIN``/``MMCV_MAX``, mmdet's
    ``mmcv_minimum_version``/``mmcv_maximum_version``), and fails otherwise with
    ``AssertionError: MMCV==1.7.2 is used but incompatible. Please install mmcv>=1.1.4,
    <=1.3.0.`` Research code vendors an old mmseg (Swin's segmentation code: mmseg 0.11,
    mmcv <= 1.3.0) while the mmcv that still installs on current Python and torch is a
    newer 1.x. ``compatfix doctor`` explains the mismatch; by default nothing changes.

    When enabled, while the module-level code of ``mmseg/__init__.py`` or
    ``mmdet/__init__.py`` reads ``mmcv.__version__``, it reads a version inside that
    package's own range (its upper bound when the bound is inclusive, else its lower
    bound), with a warning naming both versions; everything else (``mmcv.__version__``
    anywhere else, including later checks inside those packages, and the package
    metadata) still sees the installed version. Only when the installed mmcv and both
    bounds are 1.x: an mmcv 2.x is never passed off for 1.x code, nor 1.x for 2.x code.

    What it cannot do: the assert guarded real API differences inside 1.x (runner and
    hook changes between mmcv 1.3 and 1.7). The import goes on; whatever differs fails
    later, where it is used, or needs other shims.
"""

from __future__ import annotations

import sys
from types import ModuleType

from compatfix import patching

SHIM_NAME = "mmcv.relaxed_version_assert"
CONSUMERS = ("mmseg", "mmdet")

# (consumer, its __init__ file, installed mmcv version) -> the version it is shown.
_shown: dict[tuple[str, str, str], str] = {}


def version_for(consumer: str, filename: str, installed: str) -> str:
    """The mmcv version ``consumer``'s ``__init__`` (at ``filename``) should see."""
    key = (consumer, filename, installed)
    if key not in _shown:
        _shown[key] = _decide(consumer, filename, installed)
    return _shown[key]


def _decide(consumer: str, filename: str, installed: str) -> str:
    from compatfix.openmmlab import versions

    tree = versions.parse(filename)
    constants = versions.constants(tree)
    low = next((constants[n] for n in versions.MIN_NAMES if isinstance(constants.get(n), str)), None)
    high = next((constants[n] for n in versions.MAX_NAMES if isinstance(constants.get(n), str)), None)
    inclusive = versions.assert_inclusive(tree) if tree is not None else {}
    if low is None or high is None or len(inclusive) != 2:
        return installed  # no version assert we understand: leave it to run as written
    have, low_v, high_v = (versions.digit_version(v) for v in (installed, low, high))
    if have is None or low_v is None or high_v is None:
        return installed
    above_min = low_v <= have if inclusive["min"] else low_v < have
    below_max = have <= high_v if inclusive["max"] else have < high_v
    if above_min and below_max:
        return installed  # in range: the assert passes as it is
    if not have[0] == low_v[0] == high_v[0] == 1:
        return installed  # never across the mmcv 1.x / 2.x boundary
    if inclusive["max"] and (low_v <= high_v if inclusive["min"] else low_v < high_v):
        shown = high
    elif inclusive["min"] and low_v < high_v:
        shown = low
    else:
        return installed  # no version passes this assert
    from compatfix import _messages

    what = "%s asserts mmcv>=%s, %s%s: shown %s instead of %s" % (
        consumer, low, "<=" if inclusive["max"] else "<", high, shown, installed)
    patching.record_redirect(SHIM_NAME, what)
    _messages.say(
        "%s only accepts mmcv>=%s, %s%s and mmcv %s is installed: its import-time version "
        "assert is shown mmcv %s (%s is enabled), so the import goes on. The API differences "
        "the assert guards against are still there; if something fails later, install an mmcv "
        "in range (`compatfix doctor` says which)."
        % (consumer, low, "<=" if inclusive["max"] else "<", high, installed, shown, SHIM_NAME),
        key=what,
    )
    return shown


def _get_version(module) -> str:
    installed = module.__dict__["__version__"]
    frame = sys._getframe(1)
    if frame.f_code.co_name != "<module>":
        return installed
    consumer = frame.f_globals.get("__name__")
    if consumer not in CONSUMERS:
        return installed
    return version_for(consumer, frame.f_code.co_filename, installed)


def _set_version(module, value: str) -> None:
    module.__dict__["__version__"] = value


def serve_version_to_consumers(mmcv: ModuleType) -> None:
    """Give the ``mmcv`` module a ``__version__`` that the consumers' import-time code
    sees through :func:`version_for`; its stored value stays the installed version."""
    cls = type(mmcv)
    if patching.wrapped_by(cls, SHIM_NAME):
        return
    served = type(cls.__name__, (cls,), {
        "__module__": cls.__module__,
        "__version__": property(_get_version, _set_version),
    })
    patching.replace_attribute(mmcv, "__class__", served, SHIM_NAME)

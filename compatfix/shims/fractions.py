"""Shims for ``fractions``: ``gcd``, which Python 3.9 removed (deprecated since 3.5).

A standard-library target, so not a start-up trigger (see compatfix/shims/inspect.py):
the shim takes effect once a third-party target loads the engine, or at once under
``python -m compatfix``, and is applied at the first use of ``fractions.gcd``.
"""

from __future__ import annotations

import math
import warnings

from compatfix.patching import restore_names
from compatfix.registry import Shim


def gcd(a, b):
    """Removed in Python 3.9: the greatest common divisor of ``a`` and ``b``. Unlike
    ``math.gcd``, the result has the sign of ``b`` (unless ``b`` is 0), and floats and
    Fractions are accepted, by Euclid's algorithm."""
    warnings.warn("fractions.gcd() is deprecated. Use math.gcd() instead.", DeprecationWarning, 2)
    if type(a) is int and type(b) is int:
        return -math.gcd(a, b) if (b or a) < 0 else math.gcd(a, b)
    while b:
        a, b = b, a % b
    return a


def restore_gcd(module) -> None:
    restore_names(module, {"gcd": gcd}, "fractions.gcd")


SHIMS = (
    Shim(
        "fractions.gcd",
        targets=["fractions"],
        apply=restore_gcd,
        restores=["gcd"],
        broke="Python 3.9 (2020-10) removed fractions.gcd (deprecated since 3.5 for math.gcd)",
        summary="restore fractions.gcd with its sign rule (the sign of b) and Euclid's algorithm "
        "for non-integers (standard-library target: once a third-party target has "
        "loaded compatfix, or under python -m compatfix)",
        replacement="math.gcd (non-negative; fractions.gcd took the sign of b)",
        rewrites={"fractions.gcd": "math.gcd (always non-negative, integers only)"},
    ),
)

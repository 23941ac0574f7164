"""fractions.gcd (compatfix.shims.fractions), which Python 3.9 removed, against this
interpreter's real standard library: missing with compatfix off; with it on it follows
Python 3.8's documented rule (the sign of b; Euclid's algorithm for non-integers)."""

from __future__ import annotations

import json

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern", "py312", "py313")

CALLS = "[[12, -8], [-12, 8], [-12, -8], [0, 0], [0, -5], [7, 0], [3.0, 1.5], [[1, 2], [1, 3]]]"


def test_fractions_gcd_fails_without_compatfix():
    result = run_python(code="import numpy, fractions\nfractions.gcd(4, 6)", compatfix=False)
    assert "AttributeError: module 'fractions' has no attribute 'gcd'" in result.stderr


def test_fractions_gcd_has_the_sign_of_b_and_accepts_fractions():
    result = run_python(code="""
        import json, warnings, numpy, fractions
        from fractions import Fraction
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for a, b in %s:
                if isinstance(a, list):
                    a, b = Fraction(*a), Fraction(*b)
                out.append(str(fractions.gcd(a, b)))
        print(json.dumps([out, sorted({w.category.__name__ for w in caught})]))
        """ % CALLS)
    assert result.returncode == 0, result.stderr
    # Python 3.8's documentation: "Unless b == 0, the result will have the same sign as b"
    assert json.loads(result.stdout) == [
        ["-4", "4", "-4", "0", "-5", "7", "1.5", "1/6"],
        ["DeprecationWarning"],
    ]

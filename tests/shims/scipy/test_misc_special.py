"""scipy.misc.logsumexp, comb, factorial, factorial2, factorialk and pade (moved out of
scipy.misc in SciPy 1.3) against the real SciPy 1.17: missing with compatfix off; with it
on, values computed here from their definitions."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")

NAMES = ["logsumexp", "comb", "factorial", "factorial2", "factorialk", "pade"]


def test_they_are_missing_without_compatfix():
    result = run_python(
        code="import warnings; warnings.simplefilter('ignore')\nimport scipy.misc\n"
        "print(' '.join(n for n in %r if not hasattr(scipy.misc, n)))" % (NAMES,),
        compatfix=False,
    )
    assert result.stdout.split() == NAMES, result.stderr[-2000:]


def test_they_compute_what_they_did():
    result = run_python(
        code="""
        import math, warnings
        warnings.simplefilter("ignore", DeprecationWarning)  # scipy.misc itself is deprecated
        from scipy.misc import logsumexp, comb, factorial, factorial2, factorialk, pade
        assert math.isclose(logsumexp([1.0, 2.0, 3.0]), math.log(math.e + math.e ** 2 + math.e ** 3))
        assert comb(5, 2) == 10 and comb(5, 2, exact=True) == 10
        assert factorial(5) == 120 and math.isclose(factorial2(7), 7 * 5 * 3 * 1)
        assert factorial2(7, exact=True) == 105 and factorialk(7, 3, exact=True) == 7 * 4 * 1
        # exp's Taylor series 1 + x + x^2/2 + x^3/6: its (1, 1) Pade approximant is (1 + x/2) / (1 - x/2)
        p, q = pade([1.0, 1.0, 0.5, 1.0 / 6], 1, 1)
        assert math.isclose(p(0.5) / q(0.5), 1.25 / 0.75)
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-2000:]

"""scipy.integrate.simps, trapz and cumtrapz against the real SciPy 1.17: missing with
compatfix off; with it on they compute the old rules, evaluated by hand here."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")


def test_renamed_functions_are_missing_without_compatfix():
    result = run_python(
        code="import scipy.integrate as i; print([n for n in ('simps', 'trapz', 'cumtrapz') if hasattr(i, n)])",
        compatfix=False,
    )
    assert result.stdout.split() == ["[]"], result.stderr


def test_old_rules():
    result = run_python(
        code="""
        import numpy as np
        from scipy.integrate import simps, trapz, cumtrapz
        y = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
        x = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
        # Simpson's rule, odd samples: h/3 (y0 + 4 y1 + 2 y2 + 4 y3 + y4).
        assert np.isclose(simps(y, x), 0.5 / 3 * (1 + 12 + 4 + 20 + 4))
        assert np.isclose(trapz(y, x), 0.5 * (1 / 2 + 3 + 2 + 5 + 4 / 2))
        assert np.allclose(cumtrapz(y, x), np.cumsum(0.5 * (y[1:] + y[:-1]) / 2))
        # Even samples, even='avg' (SciPy < 1.11's default): the mean of Simpson on the
        # first three intervals plus a trapezoid on the last, and the reverse.
        e = np.array([1.0, 3.0, 2.0, 5.0])
        first = 1 / 3 * (1 + 12 + 2) + (2 + 5) / 2
        last = (1 + 3) / 2 + 1 / 3 * (3 + 8 + 5)
        assert np.isclose(simps(e), (first + last) / 2)
        assert np.isclose(simps(e, even="first"), first) and np.isclose(simps(e, even="last"), last)
        assert np.allclose(simps(np.stack([e, 2 * e]), axis=1), [(first + last) / 2, first + last])
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr

"""The NumPy names SciPy's top level re-exported until 1.12 (scipy.finfo, scipy.sum,
scipy.sqrt, ...) against the real SciPy of the stack: missing with compatfix off; with it
on, the NumPy objects themselves, and for sqrt, log and the other numpy.lib.scimath
names SciPy 1.11 took from there, the complex-valued results SciPy gave
(scipy.sqrt(-1) == 1j, where numpy.sqrt(-1) is nan)."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern")

PRESENT = "import scipy\nprint([hasattr(scipy, n) for n in ('finfo', 'sum', 'sqrt', 'rand', 'ifft', 'pi')])"


def test_missing_without_compatfix():
    assert run_python(code=PRESENT, compatfix=False).stdout.split() == ["[False,", "False,", "False,", "False,",
                                                                        "False,", "False]"]
    disabled = clean_env(COMPATFIX_DISABLE="scipy.numpy_names")
    assert run_python(code=PRESENT, env=disabled).stdout.split()[0] == "[False,"


def test_they_are_the_numpy_objects():
    result = run_python(
        code="""
        import cmath, math
        import numpy as np
        import scipy
        from scipy import finfo, array, zeros, pi, float64

        assert finfo is np.finfo and scipy.sum is np.sum and array is np.array and zeros is np.zeros
        assert float64 is np.float64 and pi == math.pi and scipy.inf == math.inf
        assert scipy.finfo(float).eps == 2.0 ** -52 and scipy.sum([1, 2, 3]) == 6
        assert scipy.sqrt(-1) == 1j and scipy.log(-1) == cmath.log(-1) and scipy.sqrt(4) == 2
        assert scipy.rand(3).shape == (3,) and scipy.randn(2, 2).shape == (2, 2)
        assert np.allclose(scipy.ifft([1, 1, 1, 1]), [1, 0, 0, 0])
        assert scipy.show_config is not np.show_config  # SciPy's own names stay its own
        assert scipy.linalg.__name__ == "scipy.linalg"
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

"""scipy.sparse.linalg.eigen.arpack (dropped in SciPy 1.12) against the real SciPy of the
stack: missing with compatfix off; with it on, importable and an attribute, holding
scipy.sparse.linalg's ARPACK names, whose eigsh finds the eigenvalues of a diagonal
matrix (its diagonal)."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern")

IMPORT = """
import warnings
warnings.simplefilter("ignore", DeprecationWarning)  # scipy.sparse.linalg.eigen itself is deprecated
import scipy.sparse.linalg.eigen as eigen
print(hasattr(eigen, "arpack"))
try:
    from scipy.sparse.linalg.eigen.arpack import ArpackError, eigsh
    print("module")
except ImportError:
    print("no-module")
"""


def test_missing_without_compatfix():
    assert run_python(code=IMPORT, compatfix=False).stdout.split() == ["False", "no-module"]
    result = run_python(code=IMPORT, env=clean_env(COMPATFIX_DISABLE="scipy.sparse.linalg.eigen.arpack"))
    assert result.stdout.split() == ["False", "no-module"], result.stderr[-2000:]
    result = run_python(code=IMPORT, env=clean_env(COMPATFIX_DISABLE="scipy.sparse.linalg.eigen.arpack.attribute"))
    assert result.stdout.split() == ["False", "no-module"], result.stderr[-2000:]


def test_the_old_module_path_works():
    result = run_python(
        code="""
        import warnings
        warnings.simplefilter("error", DeprecationWarning)  # the restored path itself does not warn
        import numpy as np
        import scipy.sparse
        import scipy.sparse.linalg as linalg
        from scipy.sparse.linalg.eigen.arpack import ArpackError, ArpackNoConvergence, eigs, eigsh, svds
        import scipy.sparse.linalg.eigen.arpack as arpack

        assert ArpackError is linalg.ArpackError and ArpackNoConvergence is linalg.ArpackNoConvergence
        assert eigs is linalg.eigs and svds is linalg.svds and scipy.sparse.linalg.eigen.arpack is arpack
        values = eigsh(scipy.sparse.diags(np.arange(1.0, 21.0)), k=3, which="LM", return_eigenvectors=False)
        assert np.allclose(sorted(values), [18.0, 19.0, 20.0])
        assert issubclass(ArpackNoConvergence, ArpackError)
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

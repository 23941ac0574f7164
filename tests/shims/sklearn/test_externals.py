"""sklearn.externals.joblib against the real scikit-learn 1.9: gone with compatfix off;
with it on, both spellings old model-saving code used give joblib's own functions."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern")


def test_joblib_is_missing_without_compatfix():
    result = run_python(code="from sklearn.externals import joblib", compatfix=False)
    assert "cannot import name 'joblib' from 'sklearn.externals'" in result.stderr


def test_both_spellings_give_joblib():
    result = run_python(
        code="""
        import os, tempfile
        import joblib as real
        from sklearn.externals import joblib
        from sklearn.externals.joblib import Parallel, delayed, dump, load
        assert joblib is real and dump is real.dump and Parallel is real.Parallel
        path = os.path.join(tempfile.mkdtemp(), "model.pkl")
        dump({"w": [1, 2]}, path)
        assert joblib.load(path) == {"w": [1, 2]}
        assert Parallel(n_jobs=1)(delayed(abs)(x) for x in (-1, -2)) == [1, 2]
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr


def test_without_the_module_shim_only_the_attribute_is_back():
    env = clean_env(True, COMPATFIX_DISABLE="sklearn.externals.joblib.module")
    result = run_python(code="from sklearn.externals import joblib\nimport sklearn.externals.joblib", env=env)
    assert "No module named 'sklearn.externals.joblib'" in result.stderr

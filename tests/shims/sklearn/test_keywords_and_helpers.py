"""KMeans(n_jobs=) (removed in scikit-learn 1.0), TSNE(n_iter=) (removed in 1.7) and
sklearn.metrics._base._check_pos_label_consistency (moved out) against the real
scikit-learn of the stack: TypeErrors and a missing name with compatfix off; with it on,
the old calls give what today's calls give (KMeans's labels do not depend on n_jobs;
n_iter is max_iter), the estimators keep the keyword as a parameter (get_params, clone),
and the helper answers as scikit-learn 0.24-1.0's docstring says."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern")

CALLS = """
from sklearn.cluster import KMeans
from sklearn.manifold import TSNE
import sklearn.metrics._base as base
for make in (lambda: KMeans(n_clusters=2, n_jobs=2), lambda: TSNE(n_iter=300)):
    try:
        make()
        print("accepted")
    except TypeError:
        print("TypeError")
print(hasattr(base, "_check_pos_label_consistency"))
"""


def test_missing_without_compatfix():
    assert run_python(code=CALLS, compatfix=False).stdout.split() == ["TypeError", "TypeError", "False"]


def test_each_shim_is_its_own():
    for disabled, expected in [
        ("sklearn.cluster.KMeans.n_jobs", ["TypeError", "accepted", "True"]),
        ("sklearn.manifold.TSNE.n_iter", ["accepted", "TypeError", "True"]),
        ("sklearn.metrics._base._check_pos_label_consistency", ["accepted", "accepted", "False"]),
    ]:
        result = run_python(code=CALLS, env=clean_env(COMPATFIX_DISABLE=disabled))
        assert result.stdout.split() == expected, (disabled, result.stderr[-2000:])


def test_kmeans_n_jobs_and_tsne_n_iter():
    result = run_python(
        code="""
        import inspect
        import numpy as np
        from sklearn.base import clone
        from sklearn.cluster import KMeans
        from sklearn.manifold import TSNE

        X = np.random.RandomState(0).rand(60, 4)
        old = KMeans(n_clusters=3, n_init=3, random_state=0, n_jobs=-1).fit(X)
        today = KMeans(n_clusters=3, n_init=3, random_state=0).fit(X)
        assert (old.labels_ == today.labels_).all() and np.allclose(old.cluster_centers_, today.cluster_centers_)
        assert old.get_params()["n_jobs"] == -1 and clone(old).n_jobs == -1 and "n_jobs=-1" in repr(old)
        assert KMeans().get_params()["n_jobs"] is None and repr(KMeans()) == "KMeans()"
        assert "n_jobs" in inspect.signature(KMeans).parameters

        small = X[:30]
        embedded = TSNE(n_iter=250, perplexity=5, random_state=0, init="random").fit_transform(small)
        expected = TSNE(max_iter=250, perplexity=5, random_state=0, init="random").fit_transform(small)
        assert np.allclose(embedded, expected)
        tsne = TSNE(n_iter=400)
        assert tsne.max_iter == 400 and clone(tsne).max_iter == 400 and clone(tsne).n_iter == 400
        assert "n_iter" in inspect.signature(TSNE).parameters
        try:
            TSNE(n_iter=300, max_iter=500)
        except ValueError:
            print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_check_pos_label_consistency_keeps_its_meaning():
    result = run_python(
        code="""
        import numpy as np
        from sklearn.metrics._base import _check_pos_label_consistency as check

        assert check(None, np.array([0, 1, 1])) == 1 and check(None, [-1, 1]) == 1 and check(None, [1, 1]) == 1
        assert check(None, [0, 0]) == 1 and check(None, [-1]) == 1
        assert check("spam", ["spam", "eggs"]) == "spam" and check(2, [2, 3]) == 2
        failed = 0
        for labels in (["spam", "eggs"], [1, 2], [0, 1, 2]):
            try:
                check(None, labels)
            except ValueError as err:
                assert "pos_label is not specified" in str(err)
                failed += 1
        assert failed == 3
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

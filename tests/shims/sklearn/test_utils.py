"""sklearn.utils.linear_assignment_ against the real scikit-learn 1.9: missing with
compatfix off; with it on, linear_assignment returns scikit-learn 0.22's (n, 2) array of
(row, column) pairs, sorted by row, of a minimum-cost assignment. The expected pairs are found
here by brute force over every assignment."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")


def test_linear_assignment_is_missing_without_compatfix():
    result = run_python(code="from sklearn.utils.linear_assignment_ import linear_assignment", compatfix=False)
    assert "No module named 'sklearn.utils.linear_assignment_'" in result.stderr


def test_the_old_n_by_2_array():
    result = run_python(
        code="""
        import itertools
        import numpy as np
        from sklearn.utils.linear_assignment_ import linear_assignment

        def brute_force(cost):
            rows, columns = cost.shape
            # The old solver transposed a tall matrix: n = min(rows, columns) pairs.
            best = None
            if rows <= columns:
                for chosen in itertools.permutations(range(columns), rows):
                    pairs = [(r, c) for r, c in enumerate(chosen)]
                    total = sum(cost[r, c] for r, c in pairs)
                    best = min(best, (total, pairs)) if best else (total, pairs)
            else:
                for chosen in itertools.permutations(range(rows), columns):
                    pairs = sorted((r, c) for c, r in enumerate(chosen))
                    total = sum(cost[r, c] for r, c in pairs)
                    best = min(best, (total, pairs)) if best else (total, pairs)
            return np.array(best[1], dtype=int).reshape(-1, 2)

        rng = np.random.default_rng(0)
        for shape in ((4, 4), (3, 5), (5, 3), (1, 4)):
            cost = rng.permutation(shape[0] * shape[1]).reshape(shape).astype(float)  # a unique optimum
            got = linear_assignment(cost)
            assert got.shape == (min(shape), 2) and got.dtype.kind == "i", (got.shape, got.dtype)
            assert np.array_equal(got, brute_force(cost)), (shape, got, brute_force(cost))
        # DeepSORT's use: a list of lists, rows and columns read from the pairs.
        matches = linear_assignment([[0.9, 0.1], [0.2, 0.8]])
        assert matches.tolist() == [[0, 1], [1, 0]]
        assert linear_assignment(np.zeros((0, 3))).shape == (0, 2)
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr


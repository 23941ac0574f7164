"""Shims for ``sklearn.utils``: the ``linear_assignment_`` module scikit-learn 0.23 removed."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim


def linear_assignment(X):
    """scikit-learn < 0.23's Hungarian solver: the minimum-cost assignment of the cost
    matrix ``X`` as an ``(n, 2)`` integer array of (row, column) pairs sorted by row,
    ``n = min(X.shape)``. Equal-cost optima may be broken differently than the old code."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    rows, columns = linear_sum_assignment(np.atleast_2d(np.asarray(X)))
    indices = np.column_stack((rows, columns)).astype(int)
    return indices[np.lexsort((indices[:, 1], indices[:, 0]))]


def provide_linear_assignment(module) -> None:
    restore_names(module, {"linear_assignment": linear_assignment}, "sklearn.utils.linear_assignment_")


SHIMS = (
    Shim(
        "sklearn.utils.linear_assignment_",
        targets=["sklearn.utils.linear_assignment_"],
        kind=PROVIDE,
        requires={"sklearn": ">=0.23", "scipy": ">=0.17"},
        apply=provide_linear_assignment,
        broke="scikit-learn 0.23 (2020-05) removed sklearn.utils.linear_assignment_ (deprecated in 0.21), "
        "whose linear_assignment every SORT/DeepSORT-derived tracker calls",
        summary="provide linear_assignment(X) on scipy.optimize.linear_sum_assignment, returning the old "
        "(n, 2) array of (row, column) pairs",
        replacement="np.stack(scipy.optimize.linear_sum_assignment(X), axis=1)",
        rewrites={"sklearn.utils.linear_assignment_": "scipy.optimize.linear_sum_assignment (returns two index arrays)",
                  "sklearn.utils.linear_assignment_.linear_assignment":
                  "np.stack(scipy.optimize.linear_sum_assignment(X), axis=1)"},
    ),
)

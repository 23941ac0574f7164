"""Shims for ``sklearn.metrics``: ``metrics._base._check_pos_label_consistency``, the
private helper 2020-22 calibration and ROC code imported from there (scikit-learn 0.24-1.0
defined it in ``sklearn.metrics._base``; today it lives in ``sklearn.utils.validation``)."""

from __future__ import annotations

from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import Shim


def _check_pos_label_consistency(pos_label: Any, y_true: Any) -> Any:
    """scikit-learn 0.24-1.0's helper: ``pos_label`` as given; when it is None, 1.0 if the
    labels of ``y_true`` are {0, 1}, {-1, 1}, {0}, {-1} or {1}, and a ValueError otherwise
    (strings included), asking for pos_label."""
    import numpy as np

    if pos_label is not None:
        return pos_label
    classes = np.unique(y_true)
    # the dtype test first: comparing strings with numbers would warn in np.array_equal
    if classes.dtype.kind in "OUS" or not any(
            np.array_equal(classes, allowed) for allowed in ([0, 1], [-1, 1], [0], [-1], [1])):
        classes_repr = ", ".join(repr(c) for c in classes.tolist())
        raise ValueError(
            f"y_true takes value in {{{classes_repr}}} and pos_label is not specified: either make y_true take "
            "value in {0, 1} or {-1, 1} or pass pos_label explicitly."
        )
    return 1.0


def restore_check_pos_label_consistency(base) -> None:
    restore_names(base, {"_check_pos_label_consistency": _check_pos_label_consistency},
                  "sklearn.metrics._base._check_pos_label_consistency")


SHIMS = (
    Shim(
        "sklearn.metrics._base._check_pos_label_consistency",
        targets=["sklearn.metrics._base"],
        requires={"sklearn": ">=1.1"},
        apply=restore_check_pos_label_consistency,
        restores=["_check_pos_label_consistency"],
        broke="scikit-learn moved the private sklearn.metrics._base._check_pos_label_consistency (0.24-1.0) "
        "to sklearn.utils.validation",
        summary="restore it with its 0.24-1.0 body: pos_label, or 1.0 for labels in {0, 1} or {-1, 1}, or a "
        "ValueError",
        replacement="pass pos_label explicitly (sklearn.utils.validation._check_pos_label_consistency is private)",
        rewrites={"sklearn.metrics._base._check_pos_label_consistency":
                  "pass pos_label explicitly (the helper is private; it moved to sklearn.utils.validation)"},
    ),
)

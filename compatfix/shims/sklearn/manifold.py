"""Shims for ``sklearn.manifold``: ``TSNE(n_iter=)``, renamed ``max_iter`` in
scikit-learn 1.5 and removed in 1.7."""

from __future__ import annotations

from typing import Any

from compatfix.registry import Shim
from compatfix.shims.sklearn import accept_keyword


def _n_iter_as_max_iter(n_iter: Any, kwargs: dict[str, Any]) -> None:
    # clone() passes both back, equal; two different values are 1.5's error
    if kwargs.get("max_iter", n_iter) != n_iter:
        raise ValueError("Both 'n_iter' and 'max_iter' attributes were set. Attribute 'n_iter' was deprecated in "
                         "version 1.5; only set the 'max_iter' attribute.")
    kwargs["max_iter"] = n_iter


def accept_n_iter(manifold) -> None:
    accept_keyword(manifold.TSNE, "n_iter", _n_iter_as_max_iter, "sklearn.manifold.TSNE.n_iter")


SHIMS = (
    Shim(
        "sklearn.manifold.TSNE.n_iter",
        targets=["sklearn.manifold"],
        requires={"sklearn": ">=1.7"},
        apply=accept_n_iter,
        broke="scikit-learn 1.7 (2025-06) removed TSNE's n_iter (renamed max_iter in 1.5): "
        "TSNE(n_iter=...) is a TypeError",
        summary="accept n_iter as max_iter",
        replacement="TSNE(max_iter=...)",
        rewrites={"sklearn.manifold.TSNE(+n_iter)": "max_iter="},
    ),
)

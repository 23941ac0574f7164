"""Shims for ``sklearn.cluster``: ``KMeans(n_jobs=)``, removed in scikit-learn 1.0."""

from __future__ import annotations

from typing import Any

from compatfix.registry import Shim
from compatfix.shims.sklearn import accept_keyword


def _drop_n_jobs(n_jobs: Any, kwargs: dict[str, Any]) -> None:
    """Since 0.23 KMeans runs its n_init starts on OpenMP threads, all cores by default,
    and n_jobs only chose how many: the clustering never depended on it, so it goes."""


def accept_n_jobs(cluster) -> None:
    accept_keyword(cluster.KMeans, "n_jobs", _drop_n_jobs, "sklearn.cluster.KMeans.n_jobs")


SHIMS = (
    Shim(
        "sklearn.cluster.KMeans.n_jobs",
        targets=["sklearn.cluster"],
        requires={"sklearn": ">=1.0"},
        apply=accept_n_jobs,
        broke="scikit-learn 1.0 (2021-09) removed KMeans's n_jobs (deprecated in 0.23, when KMeans moved to "
        "OpenMP threads): KMeans(n_clusters=k, n_jobs=-1) is a TypeError",
        summary="accept n_jobs and ignore it (it only set the number of threads; the clustering is the same)",
        replacement="drop n_jobs (threadpoolctl.threadpool_limits limits the threads)",
        rewrites={"sklearn.cluster.KMeans(+n_jobs)": "drop n_jobs (threadpoolctl.threadpool_limits limits the threads)"},
    ),
)

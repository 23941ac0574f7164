"""Shims for ``sklearn.externals``: the vendored joblib scikit-learn 0.23 removed."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import AFTER_IMPORT, PROVIDE, Shim


def restore_joblib(externals) -> None:
    import joblib

    restore_names(externals, {"joblib": joblib}, "sklearn.externals.joblib")


def provide_joblib(module) -> None:
    # ``import sklearn.externals.joblib`` / ``from sklearn.externals.joblib import dump``: the
    # module gets joblib's public names (it is a new module object, not joblib itself).
    import joblib

    names = getattr(joblib, "__all__", None) or [n for n in vars(joblib) if not n.startswith("_")]
    restore_names(module, {name: getattr(joblib, name) for name in names}, "sklearn.externals.joblib.module")


BROKE = ("scikit-learn 0.23 (2020-05) removed sklearn.externals.joblib (deprecated in 0.21), the joblib "
         "that model-saving code imported as `from sklearn.externals import joblib`")

SHIMS = (
    Shim(
        "sklearn.externals.joblib",
        targets=["sklearn.externals"],
        kind=AFTER_IMPORT,
        requires={"sklearn": ">=0.23", "joblib": ">=0.11"},
        apply=restore_joblib,
        restores=["joblib"],
        broke=BROKE,
        summary="restore sklearn.externals.joblib as the joblib package scikit-learn depends on",
        replacement="import joblib",
        renames={"sklearn.externals.joblib": "joblib"},
    ),
    Shim(
        "sklearn.externals.joblib.module",
        targets=["sklearn.externals.joblib"],
        kind=PROVIDE,
        requires={"sklearn": ">=0.23", "joblib": ">=0.11"},
        apply=provide_joblib,
        broke=BROKE,
        summary="provide the module sklearn.externals.joblib with joblib's public names (dump, load, "
        "Parallel, delayed, Memory)",
        replacement="import joblib",
        renames={"sklearn.externals.joblib": "joblib"},
    ),
)

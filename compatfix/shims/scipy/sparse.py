"""Shims for ``scipy.sparse``: the module path ``scipy.sparse.linalg.eigen.arpack``, where
SciPy <= 1.7 defined ARPACK's ``eigs``, ``eigsh``, ``svds``, ``ArpackError`` and
``ArpackNoConvergence`` (2020-22 code caught ``eigen.arpack.ArpackError`` around
``eigsh``). SciPy 1.8 made ``scipy.sparse.linalg.eigen`` a deprecated module and 1.12
dropped its ``arpack``; the names live in ``scipy.sparse.linalg``."""

from __future__ import annotations

from compatfix.patching import provided_submodule, replace_attribute, restore_names
from compatfix.registry import AFTER_IMPORT, PROVIDE, Shim

EIGEN = "scipy.sparse.linalg.eigen"
ARPACK = EIGEN + ".arpack"
ARPACK_NAMES = ("eigs", "eigsh", "svds", "ArpackError", "ArpackNoConvergence")  # its __all__ in SciPy 1.7


def provide_arpack(module) -> None:
    import scipy.sparse.linalg as linalg

    restore_names(module, {name: getattr(linalg, name) for name in ARPACK_NAMES}, ARPACK)


def restore_arpack_attribute(eigen) -> None:
    # eigen is a plain module since SciPy 1.8: without a __path__, `import eigen.arpack`
    # would fail before any finder is asked for the provided module.
    if not hasattr(eigen, "__path__"):
        replace_attribute(eigen, "__path__", [], ARPACK + ".attribute")
    restore_names(eigen, {"arpack": provided_submodule(ARPACK)}, ARPACK + ".attribute")


BROKE = ("SciPy 1.12 (2024-01) dropped scipy.sparse.linalg.eigen.arpack (SciPy 1.8 had moved it to a "
         "private module and deprecated the path)")

SHIMS = (
    Shim(
        ARPACK,
        targets=[ARPACK],
        kind=PROVIDE,
        requires={"scipy": ">=1.12"},
        apply=provide_arpack,
        broke=BROKE,
        summary="provide the module with scipy.sparse.linalg's eigs, eigsh, svds, ArpackError and "
        "ArpackNoConvergence",
        replacement="scipy.sparse.linalg (eigs, eigsh, svds, ArpackError, ArpackNoConvergence)",
        renames={ARPACK: "scipy.sparse.linalg"},
    ),
    Shim(
        ARPACK + ".attribute",
        targets=[EIGEN],
        kind=AFTER_IMPORT,
        requires={"scipy": ">=1.12"},
        apply=restore_arpack_attribute,
        broke=BROKE,
        summary="make scipy.sparse.linalg.eigen.arpack importable and an attribute again (the provided module)",
        replacement="scipy.sparse.linalg",
        renames={ARPACK: "scipy.sparse.linalg"},
    ),
)

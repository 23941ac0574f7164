"""Shims for ``transformers.testing_utils``: the test decorators of 4.x that transformers 4.15
to 4.57 removed (the TensorFlow and Flax ones last, before transformers 5 dropped both
frameworks), still used by research repositories that copied transformers' own test layout.

Each skips exactly when 4.x's skipped: the TensorFlow and Flax ones unless transformers says
the framework is available (never, on transformers 5, where the probes answer False); the
PyTorch/TF and PyTorch/Flax cross tests also unless ``RUN_PT_TF_CROSS_TESTS`` /
``RUN_PT_FLAX_CROSS_TESTS`` is set; the others when their package (``datasets``,
``torch_scatter``) is missing, or, for git-lfs, unless ``RUN_GIT_LFS_TESTS`` is set, as in 4.x.
"""

from __future__ import annotations

import importlib.util
import os
import unittest
from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import Shim


def _has(package: str) -> bool:
    return importlib.util.find_spec(package) is not None


def _flag(variable: str) -> bool:
    """4.x's reading of a yes/no environment variable."""
    return os.environ.get(variable, "").strip().lower() in ("1", "y", "yes", "t", "true", "on")


def _framework(probe: str) -> bool:
    """transformers' own answer (``is_tf_available``, ``is_flax_available``), False where it has
    none: transformers 5 supports neither framework."""
    import transformers

    answer = getattr(transformers, probe, None)
    return bool(answer()) if answer is not None else False


def require_tf(test_case: Any) -> Any:
    """Skip unless transformers can use TensorFlow."""
    return unittest.skipUnless(_framework("is_tf_available"), "test requires TensorFlow")(test_case)


def require_flax(test_case: Any) -> Any:
    """Skip unless transformers can use JAX and Flax."""
    return unittest.skipUnless(_framework("is_flax_available"), "test requires JAX & Flax")(test_case)


def is_pt_tf_cross_test(test_case: Any) -> Any:
    """A PyTorch/TensorFlow equivalence test: skipped unless RUN_PT_TF_CROSS_TESTS is set and
    transformers can use TensorFlow."""
    run = _flag("RUN_PT_TF_CROSS_TESTS") and _framework("is_tf_available")
    return unittest.skipUnless(run, "test is PT+TF test")(test_case)


def is_pt_flax_cross_test(test_case: Any) -> Any:
    """A PyTorch/Flax equivalence test: skipped unless RUN_PT_FLAX_CROSS_TESTS is set and
    transformers can use Flax."""
    run = _flag("RUN_PT_FLAX_CROSS_TESTS") and _framework("is_flax_available")
    return unittest.skipUnless(run, "test is PT+FLAX test")(test_case)


def require_datasets(test_case: Any) -> Any:
    """Skip unless the ``datasets`` package is installed."""
    return unittest.skipUnless(_has("datasets"), "test requires `datasets`")(test_case)


def require_scatter(test_case: Any) -> Any:
    """Skip unless ``torch_scatter`` is installed."""
    return unittest.skipUnless(_has("torch_scatter"), "test requires PyTorch Scatter")(test_case)


def require_git_lfs(test_case: Any) -> Any:
    """Skip unless ``RUN_GIT_LFS_TESTS`` is set to a true value (4.x's flag)."""
    return unittest.skipUnless(_flag("RUN_GIT_LFS_TESTS"), "test of git lfs workflow")(test_case)


DECORATORS = {
    "require_tf": require_tf,
    "require_flax": require_flax,
    "is_pt_tf_cross_test": is_pt_tf_cross_test,
    "is_pt_flax_cross_test": is_pt_flax_cross_test,
    "require_datasets": require_datasets,
    "require_scatter": require_scatter,
    "require_torch_scatter": require_scatter,
    "require_git_lfs": require_git_lfs,
}


def restore_decorators(module) -> None:
    restore_names(module, DECORATORS, "transformers.testing_utils.require_tf")


SHIMS = (
    Shim(
        "transformers.testing_utils.require_tf",
        targets=["transformers.testing_utils"],
        # 4.15 removed require_datasets, 4.25 the scatter ones, 4.28 require_git_lfs, 4.50 the cross-test
        # markers, 4.57 require_tf and require_flax
        requires={"transformers": ">=4.15"},
        apply=restore_decorators,
        restores=list(DECORATORS),
        broke="transformers 4.15 to 4.57 removed the testing_utils decorators require_tf, require_flax, is_pt_tf_cross_test, "
        "is_pt_flax_cross_test, require_datasets, require_scatter / require_torch_scatter and require_git_lfs",
        summary="restore them, skipping when 4.x skipped: TensorFlow and Flax tests unless transformers can use the "
        "framework (never on 5), their cross tests also without RUN_PT_TF/FLAX_CROSS_TESTS; without datasets or "
        "torch_scatter; without RUN_GIT_LFS_TESTS",
        replacement="unittest.skip / unittest.skipUnless (TensorFlow and Flax tests no longer apply)",
        rewrites={"transformers.testing_utils." + name: "unittest.skip / unittest.skipUnless" for name in DECORATORS},
    ),
)

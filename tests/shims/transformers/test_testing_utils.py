"""transformers.testing_utils' 4.x decorators that transformers 4.57.6 and 5.24 lack: each skips
a unittest test exactly when 4.x's did (TensorFlow and Flax tests unless transformers can use
the framework, which neither stack can; their cross tests also without RUN_PT_*_CROSS_TESTS;
datasets and torch_scatter when missing; git-lfs unless RUN_GIT_LFS_TESTS)."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312", "transformers4")

NAMES = ("require_tf", "require_flax", "is_pt_tf_cross_test", "is_pt_flax_cross_test", "require_datasets",
         "require_scatter", "require_torch_scatter", "require_git_lfs")
PRESENT = "import transformers.testing_utils as t\nprint([hasattr(t, n) for n in %r])" % (NAMES,)


def test_decorators_are_missing_without_compatfix():
    for env in (clean_env(compatfix=False), clean_env(COMPATFIX_DISABLE="transformers.testing_utils.require_tf")):
        result = run_python(code=PRESENT, env=env)
        assert result.stdout.strip() == str([False] * len(NAMES)), result.stderr[-2000:]


def test_decorators_skip_as_4x_did():
    result = run_python(
        code="""
        import importlib.util
        import io
        import unittest
        from transformers import testing_utils as t

        class Case(unittest.TestCase):
            pass

        names = %r
        for name in names:
            setattr(Case, "test_" + name, getattr(t, name)(lambda self: None))
        outcome = unittest.TextTestRunner(stream=io.StringIO()).run(unittest.defaultTestLoader.loadTestsFromTestCase(Case))
        skipped = sorted(test.id().rpartition(".test_")[2] for test, _ in outcome.skipped)
        expected = ["is_pt_flax_cross_test", "is_pt_tf_cross_test", "require_flax", "require_git_lfs", "require_tf"]
        if importlib.util.find_spec("datasets") is None:
            expected.append("require_datasets")
        if importlib.util.find_spec("torch_scatter") is None:
            expected += ["require_scatter", "require_torch_scatter"]
        assert skipped == sorted(expected), skipped
        assert not outcome.failures and not outcome.errors
        reasons = dict((test.id().rpartition(".test_")[2], reason) for test, reason in outcome.skipped)
        assert reasons["require_tf"] == "test requires TensorFlow"
        print("ok")
        """ % (NAMES,)
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_git_lfs_tests_run_when_asked():
    result = run_python(
        code="""
        import unittest
        from transformers.testing_utils import require_git_lfs
        test = require_git_lfs(lambda self: None)
        print(getattr(test, "__unittest_skip__", False))
        """,
        env=clean_env(RUN_GIT_LFS_TESTS="yes"),
    )
    assert result.stdout.split() == ["False"], result.stderr[-3000:]


def test_framework_tests_run_where_transformers_has_the_framework():
    # decided by transformers' own probe, not by its version: one that says yes runs the test
    result = run_python(
        code="""
        import sys
        from transformers.testing_utils import is_pt_tf_cross_test, require_flax, require_tf
        # the transformers module now in sys.modules: 4.57's testing_utils re-imports it
        sys.modules["transformers"].is_tf_available = lambda: True
        print([getattr(decorate(lambda self: None), "__unittest_skip__", False)
               for decorate in (require_tf, require_flax, is_pt_tf_cross_test)])
        """,
        env=clean_env(RUN_PT_TF_CROSS_TESTS="1"),
    )
    assert result.stdout.split("\n")[0] == "[False, True, False]", result.stderr[-3000:]

"""Python 3.10's removal of the collections ABC aliases (compatfix.shims.collections),
against this interpreter's real standard library.

Standard-library targets are not start-up triggers: their shims apply once a third-party
target (numpy here, present on every stack) loads the engine, or at once under
``python -m compatfix``.
"""

from __future__ import annotations

import sys

import pytest

from support import run_python

pytestmark = [pytest.mark.stack("modern", "paper", "numpy1", "timm1", "py312", "py313"),
              pytest.mark.usefixtures("needs_python_311")]

ABC_NAMES = ["Iterable", "Mapping", "MutableMapping", "Sequence", "Callable", "Hashable", "Set"]


def test_collections_abc_aliases_fail_without_compatfix():
    result = run_python(code="import numpy\nfrom collections import Mapping", compatfix=False)
    assert "ImportError: cannot import name 'Mapping' from 'collections'" in result.stderr


def test_collections_abc_aliases_are_the_abc_classes():
    result = run_python(
        code="""
        import collections, collections.abc  # imported before the engine: patched by its catch-up
        import numpy
        from collections import Iterable, MutableMapping
        names = %r
        assert all(getattr(collections, n) is getattr(collections.abc, n) for n in names)
        print(isinstance({}, collections.Mapping), isinstance(3, Iterable))
        """ % (ABC_NAMES,)
    )
    assert result.stdout.split() == ["True", "False"], result.stderr


def test_stdlib_shims_wait_for_a_third_party_target():
    # The documented rule: a process that imports no target never loads the engine, so
    # collections stays as Python made it (and start-up stays free).
    result = run_python(code="import collections, sys; print(hasattr(collections, 'Iterable'), 'compatfix._engine' in sys.modules)")
    assert result.stdout.split() == ["False", "False"], result.stderr


def test_stdlib_shims_apply_at_once_under_python_m_compatfix(tmp_path):
    script = tmp_path / "legacy.py"
    script.write_text(
        "import sys, collections, inspect\n"
        "assert 'numpy' not in sys.modules\n"
        "print(collections.Sequence is collections.abc.Sequence, inspect.getargspec(lambda a, b=2: a).defaults)\n"
    )
    result = run_python("-m", "compatfix", str(script))
    assert result.stdout.split() == ["True", "(2,)"], result.stderr



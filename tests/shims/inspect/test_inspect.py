"""Python 3.11's removal of inspect.getargspec (compatfix.shims.inspect), against this
interpreter's real standard library, with inspect imported before and after the engine.
"""

from __future__ import annotations

import sys

import pytest

from support import run_python

pytestmark = [pytest.mark.stack("modern", "paper", "numpy1", "timm1", "py312", "py313"),
              pytest.mark.usefixtures("needs_python_311")]


def test_getargspec_fails_without_compatfix():
    result = run_python(code="import numpy, inspect\ninspect.getargspec(len)", compatfix=False)
    assert "AttributeError: module 'inspect' has no attribute 'getargspec'" in result.stderr


GETARGSPEC_CHECKS = """
import inspect

def f(a, b=1, *rest, **options):
    pass

class C:
    def method(self, x, y=None):
        pass

spec = inspect.getargspec(f)
assert spec == (["a", "b"], "rest", "options", (1,)), spec
assert (spec.args, spec.varargs, spec.keywords, spec.defaults) == (["a", "b"], "rest", "options", (1,))
assert isinstance(spec, inspect.ArgSpec)
assert inspect.getargspec(C.method) == (["self", "x", "y"], None, None, (None,))
assert inspect.getargspec(lambda: 0) == ([], None, None, None)
for bad in ("def g(a, *, b): pass", "def g(a: int): pass"):
    namespace = {}
    exec(bad, namespace)
    try:
        inspect.getargspec(namespace["g"])
    except ValueError as exc:
        assert "keyword-only parameters or annotations" in str(exc)
    else:
        raise AssertionError("no ValueError for " + bad)
print("ok")
"""


def test_getargspec_when_inspect_was_imported_before_the_engine():
    # inspect is patched by the engine's catch-up when numpy loads it.
    result = run_python(code="import inspect, sys\nassert 'numpy' not in sys.modules\nimport numpy\n" + GETARGSPEC_CHECKS)
    assert result.stdout.split() == ["ok"], result.stderr


def test_getargspec_when_inspect_is_imported_after_the_engine():
    # Loading the engine imports inspect itself, so a later import is a fresh module
    # object (here: after dropping the first one); the finder hooks it like any target.
    result = run_python(
        code="import numpy, sys\nold = sys.modules.pop('inspect')\nimport inspect\nassert inspect is not old\n"
        + GETARGSPEC_CHECKS
    )
    assert result.stdout.split() == ["ok"], result.stderr

"""The stdlib modules Python 3.12/3.13 removed, on the interpreters where they really are
gone. compatfix declares their maintained redistributions as dependencies with
environment markers (pyproject.toml), so installing compatfix brings them.

Red: the interpreter's own standard library (``-S``: no site-packages) lacks the module.
Green: in a venv with compatfix installed it imports and behaves as the old stdlib
documented. They run on the py312 and py313 stacks (scripts/setup-stacks.sh py312 py313),
whose requirement files carry compatfix's conditional dependencies because the stacks install
compatfix itself with ``--no-deps``; the second test checks that pyproject.toml declares each
module's distribution."""

from __future__ import annotations

import os
import sys

import pytest

from support import run_python

# Only where the modules are really gone: py312 (imp, distutils) and py313 (all five).
pytestmark = pytest.mark.stack("py312", "py313")

# module -> (first Python without it, code checking its old behaviour)
MODULES = {
    "imp": ((3, 12), "import imp, os, tempfile\n"
                     "d = tempfile.mkdtemp(); p = os.path.join(d, 'cfg.py')\n"
                     "open(p, 'w').write('lr = 0.1\\n')\n"
                     "assert imp.load_source('cfg', p).lr == 0.1"),
    "distutils": ((3, 12), "from distutils.version import LooseVersion\n"
                           "assert LooseVersion('1.10.0') > LooseVersion('1.9')"),
    "imghdr": ((3, 13), "import imghdr\n"
                        "assert imghdr.what(None, h=b'\\x89PNG\\r\\n\\x1a\\n' + bytes(24)) == 'png'"),
    "pipes": ((3, 13), "import pipes\nassert pipes.quote('a b') == \"'a b'\""),
    "cgi": ((3, 13), "import cgi\n"
                     "assert cgi.parse_header('text/html; charset=utf-8') == ('text/html', {'charset': 'utf-8'})"),
}
CASES = [
    pytest.param(module, id=module)
    for module, (gone_in, _) in MODULES.items()
    if sys.version_info[:2] >= gone_in
]


def test_the_stack_runs_the_python_it_is_named_for():
    # A py312/py313 stack made with another interpreter would select fewer cases, silently.
    assert sys.version_info[:2] >= (3, 12) and "py%d%d" % sys.version_info[:2] == os.environ["COMPATFIX_TEST_STACK"]


@pytest.mark.parametrize("module", CASES)
def test_module_is_gone_from_the_stdlib(module):
    result = run_python("-S", code="import %s" % module)
    assert result.returncode != 0 and "No module named '%s'" % module in result.stderr


@pytest.mark.parametrize("module", CASES)
def test_compatfix_brings_a_working_copy(module):
    code = MODULES[module][1] + (
        "\nimport importlib.metadata as m\n"
        "print(any(r.split(';')[0].split('>')[0].strip() in m.packages_distributions().get(%r, [])"
        " for r in m.requires('compatfix')))" % module
    )
    result = run_python(code=code)
    assert result.stdout.split() == ["True"], result.stderr

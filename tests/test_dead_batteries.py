"""The stdlib modules Python 3.12/3.13 removed, on the interpreters where they really are
gone. compatfix declares their maintained redistributions as dependencies with
environment markers (pyproject.toml), so installing compatfix brings them.

Red: the interpreter's own standard library (``-S``: no site-packages) lacks the module.
Green: in a venv with compatfix installed it imports and behaves as the old stdlib
documented. The venvs: ``~/.pyenv/versions/3.12.1/bin/python3.12 -m venv .venvs/py312``
(and 3.13.0 for .venvs/py313), then ``pip install . packaging pytest`` in each."""

from __future__ import annotations

import os

import pytest

from support import REPO_ROOT, run_python

pytestmark = pytest.mark.stack("modern")

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
VENVS = {(3, 12): "py312", (3, 13): "py313"}
CASES = [
    pytest.param(module, version, id="%s-py%d%d" % ((module,) + version))
    for module, (gone_in, _) in MODULES.items()
    for version in VENVS
    if version >= gone_in
]


def interpreter(version):
    python = os.path.join(REPO_ROOT, ".venvs", VENVS[version], "bin", "python")
    if not os.path.exists(python):
        pytest.skip("no .venvs/%s" % VENVS[version])
    return python


@pytest.mark.parametrize("module, version", CASES)
def test_module_is_gone_from_the_stdlib(module, version):
    result = run_python("-S", code="import %s" % module, python=interpreter(version))
    assert result.returncode != 0 and "No module named '%s'" % module in result.stderr


@pytest.mark.parametrize("module, version", CASES)
def test_compatfix_brings_a_working_copy(module, version):
    code = MODULES[module][1] + (
        "\nimport importlib.metadata as m\n"
        "print(any(r.split(';')[0].split('>')[0].strip() in m.packages_distributions().get(%r, [])"
        " for r in m.requires('compatfix')))" % module
    )
    result = run_python(code=code, python=interpreter(version))
    assert result.stdout.split() == ["True"], result.stderr

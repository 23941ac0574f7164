"""Install compatfix as its users do: build the sdist, build the wheel from it (what
``python -m build`` does, through the same build backend hooks), check what their
metadata says, install the wheel into a new, empty venv and run the console script and a
shimmed program there.

The build backend's hooks are called directly (``hatchling.build``), without a build
frontend: the stack has hatchling, and this needs nothing from the network.
"""

from __future__ import annotations

import email.parser
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

import compatfix
from compatfix import _messages
from support import REPO_ROOT, clean_env, run_python

TIMEOUT = 120

# A standard-library shim: no third-party package is needed to see it work.
GETARGSPEC = "import inspect\nprint(inspect.getargspec(lambda a, b=1: 0))\n"


def build(hook: str, source: str, out: str) -> str:
    """Run the build backend's ``hook`` (build_sdist, build_wheel) on ``source``; the path built."""
    result = run_python(
        "-c", "import sys; from hatchling.build import %s as hook; print(hook(sys.argv[1]))" % hook, out,
        cwd=source, env=clean_env(False), timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    return os.path.join(out, result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    """(sdist, wheel built from the unpacked sdist)."""
    out = str(tmp_path_factory.mktemp("dist"))
    sdist = build("build_sdist", REPO_ROOT, out)
    unpacked = str(tmp_path_factory.mktemp("sdist"))
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked)
    source = os.path.join(unpacked, "compatfix-%s" % compatfix.__version__)
    return sdist, build("build_wheel", source, out)


def metadata_of(text: str):
    return email.parser.Parser().parsestr(text)


def check_core_metadata(meta) -> None:
    """What ``twine check`` and an index look at, from the PKG-INFO/METADATA headers."""
    assert meta["Name"] == "compatfix" and meta["Version"] == compatfix.__version__
    assert meta["Metadata-Version"] >= "2.1"
    assert meta["Requires-Python"] == ">=3.8"
    assert meta["Description-Content-Type"] == "text/markdown"
    urls = dict(value.split(", ", 1) for value in meta.get_all("Project-URL"))
    assert urls == {
        "Homepage": "https://github.com/compatfix/compatfix",
        "Documentation": _messages.DOCS_URL,
        "Issues": "https://github.com/compatfix/compatfix/issues",
    }
    with open(os.path.join(REPO_ROOT, "README.md"), encoding="utf-8") as handle:
        assert meta.get_payload().strip() == handle.read().strip()


def test_the_sdist_has_the_sources_and_metadata(dists):
    sdist, _ = dists
    top = "compatfix-%s/" % compatfix.__version__
    with tarfile.open(sdist) as archive:
        names = set(archive.getnames())
        check_core_metadata(metadata_of(archive.extractfile(top + "PKG-INFO").read().decode()))
    for name in ("pyproject.toml", "README.md", "_compatfix_bootstrap.py", "compatfix/compatfix.pth",
                 "compatfix/cli.py", "tests/test_install.py", "examples/legacy_classifier.py"):
        assert top + name in names, name
    assert not [name for name in names if "/.venvs/" in name or "__pycache__" in name]


def test_the_wheel_has_the_activation_files_and_the_console_script(dists):
    _, wheel = dists
    assert os.path.basename(wheel) == "compatfix-%s-py3-none-any.whl" % compatfix.__version__
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = "compatfix-%s.dist-info/" % compatfix.__version__
        check_core_metadata(metadata_of(archive.read(info + "METADATA").decode()))
        entry_points = archive.read(info + "entry_points.txt").decode()
    # The start-up files go to site-packages itself, where the interpreter reads them.
    assert {"compatfix.pth", "compatfix.start", "_compatfix_bootstrap.py", "compatfix/_shim_index.py"} <= names
    assert "compatfix/compatfix.pth" not in names
    assert "[console_scripts]\ncompatfix = compatfix.cli:main" in entry_points


def test_the_wheel_installs_into_a_new_venv_and_runs(dists, tmp_path):
    _, wheel = dists
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=TIMEOUT)
    python = str(venv / "bin" / "python")
    # This stack's pip installs into the new venv (--python): as `pip install compatfix-*.whl` there.
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--disable-pip-version-check", "-q", wheel],
        capture_output=True, text=True, env=clean_env(False), timeout=TIMEOUT)
    assert install.returncode == 0, install.stderr
    console = str(venv / "bin" / "compatfix")
    env = clean_env()

    version = run_python(console, "--version", python=python, env=env)
    assert version.stdout == "compatfix %s\n" % compatfix.__version__, version.stderr
    status = run_python(console, "status", python=python, env=env)
    assert status.returncode == 0 and "(by compatfix.pth, read at start-up)" in status.stdout, status.stderr
    listed = run_python(console, "list", python=python, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "inspect.getargspec" in listed.stdout and "numpy.builtin_aliases" in listed.stdout

    script = tmp_path / "legacy.py"
    script.write_text(GETARGSPEC)
    shimmed = run_python("-m", "compatfix", str(script), python=python, env=env)
    assert shimmed.returncode == 0, shimmed.stderr
    assert shimmed.stdout == "ArgSpec(args=['a', 'b'], varargs=None, keywords=None, defaults=(1,))\n"
    if sys.version_info >= (3, 11):  # where Python removed it: the same script fails without compatfix
        plain = run_python(str(script), python=python, env=clean_env(False))
        assert plain.returncode == 1 and "has no attribute 'getargspec'" in plain.stderr

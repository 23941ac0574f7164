"""compatfix scan --diff / --write, through the installed console script: the permanent
port of the mechanical findings. A hand-written repository (tests/fixtures/port_repo)
fails with compatfix off before the port and runs with it off after, printing what the
original printed with compatfix on; every rename in the records is checked the same way
on a file generated from the record; what is not mechanical stays byte-identical."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys

import pytest

from compatfix import registry
from compatfix.scan import REWRITTEN_STATUSES, scan
from compatfix.scan._index import build_index
from compatfix.scan._status import CHANGED
from support import FIXTURES, clean_env, run_python

pytest.importorskip("libcst")

CONSOLE_SCRIPT = os.path.join(os.path.dirname(sys.executable), "compatfix")
PORT_REPO = os.path.join(FIXTURES, "port_repo")
# Files of port_repo whose every finding is mechanical and broken here: the port rewrites them.
PORTED = ("main.py", "data/loader.py", "utils/compat.py")


def compatfix(*args: str) -> subprocess.CompletedProcess:
    return run_python(*args, python=CONSOLE_SCRIPT)


def copy_of(tmp_path, name: str = "repo") -> str:
    target = str(tmp_path / name)
    shutil.copytree(PORT_REPO, target)
    return target


def run_main(repo: str, compatfix_on: bool) -> subprocess.CompletedProcess:
    return run_python("-W", "ignore", "main.py", cwd=repo, compatfix=compatfix_on)


def same_trees(left: str, right: str) -> bool:
    comparison = filecmp.dircmp(left, right, ignore=["__pycache__"])
    pending = [comparison]
    while pending:
        current = pending.pop()
        if current.left_only or current.right_only:
            return False
        _, mismatch, errors = filecmp.cmpfiles(current.left, current.right, current.common_files, shallow=False)
        if mismatch or errors:
            return False
        pending += current.subdirs.values()
    return True


def test_write_ports_the_repository_so_it_runs_with_compatfix_off(tmp_path):
    repo = copy_of(tmp_path)
    before_off = run_main(repo, compatfix_on=False)
    assert before_off.returncode != 0 and "ImportError" in before_off.stderr
    on = run_main(repo, compatfix_on=True)
    assert on.returncode == 0, on.stderr
    with open(os.path.join(repo, "tools", "metrics.py"), "rb") as handle:
        flagged_before = handle.read()
    untouched = os.stat(os.path.join(repo, "tools", "metrics.py")).st_mtime_ns
    os.chmod(os.path.join(repo, "main.py"), 0o750)

    result = compatfix("scan", "--write", repo)
    assert result.returncode == 0, result.stdout + result.stderr  # nothing left that needs action
    assert "data/loader.py:14: np.float -> float" in result.stdout
    assert "utils/compat.py:12: torch._six.inf -> math.inf" in result.stdout
    assert "rewrote 3 files" in result.stdout
    # listed, never rewritten: replacements that change the code, and a name that works here
    assert "tools/metrics.py:12:12  numpy.asscalar  instead: a.item()" in result.stdout
    assert "configparser.SafeConfigParser  not broken with the versions installed here" in result.stdout

    after_off = run_main(repo, compatfix_on=False)
    assert after_off.returncode == 0, after_off.stderr
    assert after_off.stdout == on.stdout  # what the original printed with compatfix on
    assert json.loads(after_off.stdout)["kinds"] == ["string", "sequence", "iterable", "bounded"]
    with open(os.path.join(repo, "tools", "metrics.py"), "rb") as handle:
        assert handle.read() == flagged_before
    assert os.stat(os.path.join(repo, "tools", "metrics.py")).st_mtime_ns == untouched  # not written at all
    assert os.stat(os.path.join(repo, "main.py")).st_mode & 0o777 == 0o750  # rewritten, permissions kept
    assert not [name for _, _, names in os.walk(repo) for name in names if name.startswith(".compatfix-")]
    # a second port finds nothing more to do
    again = compatfix("scan", "--diff", repo)
    assert again.stdout == "" and "0 changes in 0 files" in again.stderr


def test_write_keeps_comments_and_formatting(tmp_path):
    repo = copy_of(tmp_path)
    compatfix("scan", "--write", repo)
    with open(os.path.join(repo, "utils", "compat.py"), encoding="utf-8") as handle:
        ported = handle.read()
    assert "from collections.abc import Iterable  # collections.abc since Python 3.3\n" in ported
    assert "LIMIT = math.inf  # no bound by default\n" in ported
    assert "from collections import abc as container_abcs\nfrom math import inf\nstring_classes = (str, bytes)\n" in ported
    assert "import torch\n" in ported and "torch._six" not in ported  # torch.tensor is still used
    with open(os.path.join(repo, "data", "loader.py"), encoding="utf-8") as handle:
        loader = handle.read()
    assert '"count": int(np.float64(3.0)),' in loader  # through the alias the code used
    assert "from skimage.color import rgb2gray as rgb2grey\n" in loader
    assert "npfloat = float\n" in loader and "from numpy import" not in loader


def test_diff_applies_with_patch_and_git_apply(tmp_path):
    written, patched, applied = copy_of(tmp_path, "written"), copy_of(tmp_path, "patched"), copy_of(tmp_path, "applied")
    diff = compatfix("scan", "--diff", patched)
    assert diff.returncode == 1  # changes to make, as ruff's --diff
    assert diff.stdout.startswith("--- a/data/loader.py\n+++ b/data/loader.py\n")
    assert "changes in 3 files" in diff.stderr and "numpy.asscalar" in diff.stderr
    compatfix("scan", "--write", written)
    patch = subprocess.run(["patch", "-p1"], input=diff.stdout, text=True, cwd=patched, capture_output=True)
    assert patch.returncode == 0, patch.stdout + patch.stderr
    assert same_trees(written, patched)
    git = subprocess.run(["git", "apply", "-"], input=diff.stdout, text=True, cwd=applied, capture_output=True)
    assert git.returncode == 0, git.stderr
    assert same_trees(written, applied)


def test_a_file_without_a_final_newline(tmp_path):
    (tmp_path / "last.py").write_text("import numpy as np\nx = np.float")
    diff = compatfix("scan", "--diff", str(tmp_path))
    assert diff.stdout.endswith("+x = float\n\\ No newline at end of file\n")
    patch = subprocess.run(["patch", "-p1"], input=diff.stdout, text=True, cwd=str(tmp_path), capture_output=True)
    assert patch.returncode == 0, patch.stderr
    assert (tmp_path / "last.py").read_text() == "import numpy as np\nx = float"


def test_a_local_of_the_same_name_is_not_rewritten(tmp_path):
    source = ("import numpy as np\n\n\ndef f(np):\n    return np.float\n\n\n"
              "def g():\n    float = 3\n    return np.float, float\n")
    (tmp_path / "shadow.py").write_text(source)
    result = compatfix("scan", "--write", str(tmp_path))
    # f's np is a parameter, not numpy; in g, float is a local: the builtin cannot be spelled there
    assert (tmp_path / "shadow.py").read_text() == source
    assert "shadow.py:5:12  numpy.float  not rewritten: the name does not mean the import" in result.stdout
    assert "shadow.py:10:12  numpy.float  not rewritten: float is bound to something else here" in result.stdout


def test_without_libcst_diff_says_how_to_install_it(tmp_path):
    # libcst hidden from the command: a module finder that refuses it
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'libcst':\n"
        "            raise ModuleNotFoundError('No module named %r' % name, name=name)\n"
        "sys.meta_path.insert(0, _Refuse())\n")
    env = clean_env(PYTHONPATH=str(hide))
    result = run_python(CONSOLE_SCRIPT, "scan", "--diff", PORT_REPO, env=env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "compatfix scan: --diff and --write need libcst: pip install 'compatfix[scan]' (or pip install 'libcst>=1')"]
    assert result.stdout == ""
    plain = run_python(CONSOLE_SCRIPT, "scan", "--exit-zero", PORT_REPO, env=env)
    assert plain.returncode == 0 and "numpy.float" in plain.stdout  # the scan itself needs no libcst


# every rename in the records -------------------------------------------------------------------

def _renamed_keys():
    """(key, status) of every mechanical rename of the registry and the inventory."""
    from compatfix.scan._rewrite import mechanical_renames

    result = {}
    index = build_index(registry.builtin_shims(registry.DEVICE_PACKAGES))
    for key in mechanical_renames(index):
        parent, _, name = key.rpartition(".")
        if parent:
            result[key] = (parent, name)
    return result


RUN_ALL = r"""
import json, runpy, sys, warnings
warnings.simplefilter("ignore")
failed = {}
for path in sys.argv[1:]:
    try:
        runpy.run_path(path)
    except BaseException as exc:  # an ImportError, an AttributeError, a SystemExit of a library
        failed[path] = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps(failed))
"""


def _failures(files, compatfix_on: bool) -> dict:
    result = run_python("-c", RUN_ALL, *files, compatfix=compatfix_on, timeout=600)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_every_mechanical_rename_ports_for_good(tmp_path):
    """For each rename key of every record, two files (``import parent`` + ``parent.name``,
    and ``from parent import name``): where the old name is broken here, each fails with
    compatfix off before the port and runs with it off after; a name that works here is
    left byte-identical; a name back with another meaning (np.bool) is ported to the
    builtin the code meant."""
    keys = _renamed_keys()
    files = {}
    for number, (key, (parent, name)) in enumerate(sorted(keys.items())):
        attribute = tmp_path / ("attribute_%03d.py" % number)
        attribute.write_text("import %s\nvalue = %s\n" % (parent, key))
        imported = tmp_path / ("imported_%03d.py" % number)
        imported.write_text("from %s import %s\nvalue = %s\n" % (parent, name, name))
        files[key] = (attribute.name, imported.name)
    findings = scan([str(tmp_path)]).findings
    statuses = {}
    for key, (attribute, imported) in files.items():
        found = {f.status for f in findings if f.mechanical and f.file in (attribute, imported)}
        assert len(found) == 1, (key, found)
        statuses[key] = (found.pop(), str(tmp_path / attribute), str(tmp_path / imported))
    ported = {key: entry for key, entry in statuses.items() if entry[0] in REWRITTEN_STATUSES}
    left = {key: entry for key, entry in statuses.items() if entry[0] not in REWRITTEN_STATUSES}
    broken = [path for status, *paths in ported.values() if status != CHANGED for path in paths]
    before = _failures(broken, compatfix_on=False)
    # numpy's, torch._six's, collections', PIL's, ... on this stack; not np.row_stack, which
    # numpy.numpy2_aliases covers but numpy 2.4 still has (deprecated)
    assert len(before) > 100 and len(before) >= len(broken) - 2, set(broken) - set(before)
    originals = {path: open(path, "rb").read() for _, *paths in left.values() for path in paths}

    result = compatfix("scan", "--write", "--exit-zero", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    every = [path for _, *paths in ported.values() for path in paths]
    assert _failures(every, compatfix_on=False) == {}
    for path in every:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        key = next(k for k, entry in ported.items() if path in entry[1:])
        assert key not in text, (key, text)
    for path, data in originals.items():
        with open(path, "rb") as handle:
            assert handle.read() == data, path


def test_imports_of_a_removed_module_go_with_their_last_use(tmp_path):
    (tmp_path / "six.py").write_text(
        '"""Limits."""\nimport torch._six as six\nimport torch._six\nfrom torch import _six\n\n'
        "LIMITS = six.inf, torch._six.nan, _six.inf\n")
    assert run_python("six.py", cwd=str(tmp_path), compatfix=False).returncode != 0
    result = compatfix("scan", "--write", str(tmp_path))
    assert "six.py:2: import torch._six as six -> (removed: nothing uses it after the rewrite)" in result.stdout
    assert (tmp_path / "six.py").read_text() == '"""Limits."""\nimport math\n\nLIMITS = math.inf, math.nan, math.inf\n'
    ran = run_python("-c", "import runpy; print(runpy.run_path('six.py')['LIMITS'])", cwd=str(tmp_path),
                     compatfix=False)
    assert ran.returncode == 0 and ran.stdout == "(inf, nan, inf)\n", ran.stderr

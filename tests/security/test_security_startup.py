"""Start-up when compatfix's own files are missing or broken, and unknown COMPATFIX
values (issue 13, finding 7): at most one line, never a traceback from ``site``."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from support import clean_env, run_python

INSTALLED_PTH = os.path.join(os.path.dirname(os.path.dirname(__import__("compatfix").__file__)), "compatfix.pth")


def process_site_folder(folder) -> list[str]:
    """Run the site machinery on ``folder`` (holding compatfix.pth) in an interpreter
    that has no compatfix on its path (-S); return what it printed on stderr."""
    shutil.copy(INSTALLED_PTH, folder / "compatfix.pth")
    # Twice, as site does for a venv's lib and its lib64 link: still one line.
    link = folder.parent / (folder.name + "-link")
    link.symlink_to(folder)
    result = run_python("-S", code="import site; site.addsitedir(%r); site.addsitedir(%r); print('went on')"
                        % (str(folder), str(link)))
    assert result.stdout.splitlines() == ["went on"], result.stderr
    return result.stderr.splitlines()


def test_a_missing_bootstrap_file_prints_one_line(tmp_path):
    lines = process_site_folder(tmp_path)
    assert len(lines) == 1, lines
    assert lines[0].startswith("compatfix: its start-up module _compatfix_bootstrap is missing or broken")
    assert "ModuleNotFoundError" in lines[0] and "compatfix is off in this process" in lines[0]


def test_a_broken_bootstrap_file_prints_one_line(tmp_path):
    (tmp_path / "_compatfix_bootstrap.py").write_text("def bootstrap(:\n    pass\n")
    lines = process_site_folder(tmp_path)
    assert len(lines) == 1 and "(SyntaxError: " in lines[0], lines


def test_a_bootstrap_without_its_entry_point_prints_one_line(tmp_path):
    (tmp_path / "_compatfix_bootstrap.py").write_text("raise RuntimeError('half-written\\nsecond line')\n")
    lines = process_site_folder(tmp_path)
    assert len(lines) == 1 and "(RuntimeError: half-written)" in lines[0], lines


@pytest.mark.parametrize("value", ["2", "maybe", "of"])
def test_an_unknown_compatfix_value_gets_one_clear_line(value):
    probe = "import sys, json; print(json.dumps(any(getattr(type(f), 'is_compatfix_finder', False) " \
            "for f in sys.meta_path)))"
    result = run_python(code=probe, env=clean_env(COMPATFIX=value))
    assert json.loads(result.stdout) is True
    assert result.stderr.splitlines() == [
        "compatfix: COMPATFIX=%r is not a known value (on: 1, true, yes, on; off: 0, false, no, off); "
        "compatfix stays on." % value
    ]


@pytest.mark.parametrize("value", ["1", "on", "TRUE", "0", "off"])
def test_known_compatfix_values_say_nothing(value):
    result = run_python(code="pass", env=clean_env(COMPATFIX=value))
    assert result.stderr == ""


def test_an_unknown_compatfix_value_is_told_once_through_the_sitecustomize_folder_too():
    import subprocess
    import sys

    folder = subprocess.run([sys.executable, "-m", "compatfix.cli", "sitecustomize-path"],
                            capture_output=True, text=True).stdout.strip()
    env = clean_env(COMPATFIX="maybe", PYTHONPATH=folder)
    result = run_python(code="pass", env=env)  # the .pth and the sitecustomize folder both run
    assert result.stderr.count("is not a known value") == 1, result.stderr

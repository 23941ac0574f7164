"""``scripts/test.sh`` checks what it needs before it builds anything
(``scripts/setup-stacks.sh --check``): one line for each missing prerequisite, then it
stops with a non-zero status."""

from __future__ import annotations

import os
import subprocess
import sys

from support import REPO_ROOT, clean_env

SETUP = os.path.join(REPO_ROOT, "scripts", "setup-stacks.sh")
TEST = os.path.join(REPO_ROOT, "scripts", "test.sh")


def bash(script, *args, **env):
    return subprocess.run(["bash", script, *args], capture_output=True, text=True, cwd=REPO_ROOT,
                          env=clean_env(**env), stdin=subprocess.DEVNULL, timeout=120)


def missing_lines(result):
    return [line for line in result.stderr.splitlines() if "MISSING:" in line]


def test_each_missing_interpreter_gets_one_line(tmp_path):
    result = bash(SETUP, "--check", "py312", "py313",
                  COMPATFIX_PYTHON_312=str(tmp_path / "no-python"), COMPATFIX_PYTHON_313=sys.executable)
    assert result.returncode == 1
    here = "%d.%d" % sys.version_info[:2]
    assert missing_lines(result) == [
        "[setup-stacks] MISSING: py312: %s does not run; no Python 3.12 (pyenv install 3.12, put python3.12 on "
        "PATH, or set COMPATFIX_PYTHON_312)" % (tmp_path / "no-python"),
        "[setup-stacks] MISSING: py313: %s is Python %s, this stack is made with Python 3.13; no Python 3.13 "
        "(pyenv install 3.13, put python3.13 on PATH, or set COMPATFIX_PYTHON_313)" % (sys.executable, here),
    ]


def test_too_little_disk_is_one_line():
    # --recreate: the stack counts as still to install, so the check asks for the space it needs.
    result = bash(SETUP, "--check", "--recreate", "modern", COMPATFIX_PYTHON=sys.executable,
                  COMPATFIX_MIN_FREE_GB="1000000")
    disk = [line for line in missing_lines(result) if "MISSING: disk:" in line]
    assert result.returncode == 1 and len(disk) == 1, result.stderr
    assert "need about 1000000 GB (COMPATFIX_MIN_FREE_GB)" in disk[0]


def test_test_sh_stops_before_building_anything(tmp_path):
    result = bash(TEST, COMPATFIX_TEST_STACKS="py312", COMPATFIX_PYTHON_312=str(tmp_path / "no-python"))
    assert result.returncode == 1
    assert "MISSING: py312: %s does not run" % (tmp_path / "no-python") in result.stderr
    assert "[test] prerequisites missing (above); nothing was built." in result.stderr
    assert "setting up stacks" not in result.stdout and "creating venv" not in result.stderr

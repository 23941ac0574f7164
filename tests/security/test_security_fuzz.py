"""The differential fuzz test (issue 18): hypothesis-generated pickles through torch's
weights-only unpickler alone and with compatfix's data-only classes, in a child process
with a timeout (scripts/fuzz-checkpoints.py states the invariants; its long run's result
is in docs/checkpoints.md)."""

from __future__ import annotations

import os

import pytest

from support import REPO_ROOT, clean_env, run_python

FUZZER = os.path.join(REPO_ROOT, "scripts", "fuzz-checkpoints.py")


@pytest.mark.stack("modern")
def test_generated_pickles_never_crash_run_code_or_leave_a_foreign_object(tmp_path):
    progress = tmp_path / "case.hex"
    result = run_python(FUZZER, "--hypothesis", "--cases", "400", "--progress", str(progress),
                        env=clean_env(COMPATFIX_TRUST_STORE="off"), timeout=600)
    last = progress.read_text() if progress.exists() else "(none)"
    assert result.returncode == 0, "exit %d on case %s\n%s\n%s" % (
        result.returncode, last, result.stdout[-3000:], result.stderr[-3000:])
    assert result.stdout.strip().endswith("OK 400 hypothesis cases")


@pytest.mark.stack("modern")
def test_the_fuzzer_can_fail(tmp_path):
    # The invariant check itself: a compatfix object in an accepted result is reported.
    code = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("fuzz", sys.argv[1])
fuzz = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fuzz)
from compatfix.checkpoint import unpickler
print(fuzz._foreign_objects({"x": [unpickler._PendingDtype]}, fuzz._allowed_types()))
"""
    result = run_python("-c", code, FUZZER, env=clean_env(COMPATFIX_TRUST_STORE="off"))
    assert "a compatfix object" in result.stdout, result.stdout + result.stderr

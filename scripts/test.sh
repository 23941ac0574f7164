#!/usr/bin/env bash
# Run the test suite on every test stack:
#
#   scripts/test.sh [pytest args]
#
# First checks every prerequisite (setup-stacks.sh --check: the Python 3.11, 3.12 and 3.13
# interpreters, free disk, the package registry), one line for each missing one, and
# stops before building anything if one is. A first run installs the stacks: about 40
# minutes and 10 GB (keep 20 GB free); later runs reuse them.
#
# Sets up (idempotently) the venvs via scripts/setup-stacks.sh, then runs
#   COMPATFIX_TEST_STACK=<stack> .venvs/<stack>/bin/python -P -m pytest tests <args>
# for modern, paper, numpy1, timm1, mmold, py312, py313 in that order, going on after a failing stack.
# Exits non-zero if any stack failed; pytest's exit 5 (no tests collected /
# all deselected) counts as success. Ends with one summary line per stack and
# a "total: N passed, N failed, N skipped" line.
#
# `python -P` keeps the repo root off sys.path, so `import compatfix` gets the
# wheel installed into the venv (data files included), not the source tree.
#
# Each stack's run uses pytest-xdist with COMPATFIX_TEST_WORKERS processes (default 2):
# most tests spend their time in subprocesses (interpreters, launchers, ranks).
#
# Environment: COMPATFIX_TEST_STACKS  space-separated subset/order of stacks
#              (default "modern paper numpy1 timm1 mmold py312 transformers4 transformers50 py313"; for local iteration only).
#              COMPATFIX_TEST_WORKERS  pytest-xdist workers per stack (default 2; 0 = serial)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

read -r -a STACKS <<< "${COMPATFIX_TEST_STACKS:-modern paper numpy1 timm1 mmold py312 transformers4 transformers50 py313}"

echo "[test] checking prerequisites"
if ! bash "$ROOT/scripts/setup-stacks.sh" --check lint "${STACKS[@]}"; then
    echo "[test] prerequisites missing (above); nothing was built. See README.md, \"The two commands\"." >&2
    exit 1
fi
echo "[test] setting up stacks: ${STACKS[*]}"
bash "$ROOT/scripts/setup-stacks.sh" "${STACKS[@]}"

REPORTS=$(mktemp -d "${TMPDIR:-/tmp}/compatfix-test.XXXXXX")
trap 'rm -rf -- "$REPORTS"' EXIT

# "P passed, F failed, S skipped" from a pytest junit-xml report (F counts errors).
counts() {
    python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print("? passed, ? failed, ? skipped")
    sys.exit()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
n = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
failed = n["failures"] + n["errors"]
print(f"{n['tests'] - failed - n['skipped']} passed, {failed} failed, {n['skipped']} skipped")
PY
}

declare -A RC
status=0
echo
echo "[test] ===== lint and type check ====="
lint="ok"
bash "$ROOT/scripts/lint.sh" || { lint="FAILED"; status=1; }
for stack in "${STACKS[@]}"; do
    echo
    echo "[test] ===== stack: $stack ====="
    rc=0
    COMPATFIX_TEST_STACK=$stack "$ROOT/.venvs/$stack/bin/python" -P -m pytest tests \
        -n "${COMPATFIX_TEST_WORKERS:-2}" --junitxml="$REPORTS/$stack.xml" "$@" || rc=$?
    RC[$stack]=$rc
    if [[ $rc != 0 && $rc != 5 ]]; then status=1; fi
done

echo
echo "[test] ===== summary ====="
echo "[test] lint: $lint"
tp=0 tf=0 ts=0 known=1
for stack in "${STACKS[@]}"; do
    rc=${RC[$stack]}
    case $rc in
        0) verdict="ok" ;;
        5) verdict="ok (no tests selected)" ;;
        *) verdict="FAILED" ;;
    esac
    c=$(counts "$REPORTS/$stack.xml")
    echo "[test] $stack: $verdict, pytest exit $rc: $c"
    read -r p _ f _ s _ <<< "${c//,/}"
    if [[ $p =~ ^[0-9]+$ ]]; then
        # A failed run with no failed test (usage/internal error, crash) still
        # counts as a failure in the total line.
        if [[ $verdict == FAILED ]] && (( f == 0 )); then f=1; fi
        tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
    else
        known=0
    fi
done
if (( known )); then
    echo "total: $tp passed, $tf failed, $ts skipped"
fi
exit "$status"

#!/usr/bin/env bash
# Create/update the test virtualenvs under .venvs/<stack> (repo root).
#
#   scripts/setup-stacks.sh [--recreate] STACK...     (STACK: modern paper numpy1 timm1 mmold py312 py313)
#   scripts/setup-stacks.sh --check [--recreate] STACK...   (the prerequisites only; builds nothing)
#
# --check prints one line for each missing prerequisite of the named stacks and exits 1
# if there is any: each stack's interpreter (Python 3.11 as python3 / COMPATFIX_PYTHON;
# py312 and py313 as below), free disk for the stacks still to install
# (COMPATFIX_MIN_FREE_GB, default 20: the venvs take about 10 GB, pip's download cache
# and build folders the rest), and, when something is still to install, that pip can
# download from the package registry. With --recreate, every stack counts as still to install.
#
# Each stack's requirements live in requirements/<stack>.txt; a stack that also
# has requirements/<stack>-mmcv.txt gets a second pass that builds mmcv 1.x from
# its sdist as the lite build (MMCV_WITH_OPS=0) with --no-build-isolation
# (mmcv's setup.py imports pkg_resources and torch, hence setuptools<70 and torch
# installed first).
#
# Disk: the stacks pin one torch, a CUDA build of about 5.5 GB with its nvidia libraries.
# Before pip runs, scripts/share-torch.py hard-links it (and its dependencies) from a sibling
# venv that has it, so the seven stacks take about 9.5 GB instead of 30 (the nvidia libraries
# are shared with py312 too; torch itself is built per Python version).
#
# Idempotent: .venvs/<stack>/.compatfix-stamp holds a hash of the stack's
# requirement files + this script + the interpreter version; when it matches,
# the dependency install is skipped. The project itself is ALWAYS re-installed
# (non-editable, --no-deps --force-reinstall --no-build-isolation), so the
# tests run against the built wheel, data files included.
#
# Environment: COMPATFIX_PYTHON  interpreter used to create venvs (default python3)
#
# A stack named pyXY (py312, py313) is made with Python X.Y instead: pyenv's newest X.Y
# ($PYENV_ROOT/versions/X.Y.*), else pythonX.Y on PATH (override: COMPATFIX_PYTHON_XY).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF="$ROOT/scripts/setup-stacks.sh"
REQ="$ROOT/requirements"
VENVS="$ROOT/.venvs"
PYTHON=${COMPATFIX_PYTHON:-python3}
STAMP_NAME=.compatfix-stamp

# The interpreter a stack's venv is made with; nothing (and status 1) if there is none.
find_stack_python() {
    local stack=$1 minor override found
    if [[ $stack =~ ^py3([0-9]+)$ ]]; then
        minor=${BASH_REMATCH[1]}
        override=COMPATFIX_PYTHON_3$minor
        if [[ -n ${!override:-} ]]; then echo "${!override}"; return; fi
        found=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3."$minor".*/bin/python3."$minor" 2>/dev/null \
                | sort -V | tail -n 1)
        [[ -n $found ]] || found=$(command -v "python3.$minor" || true)
        [[ -n $found ]] || return 1
        echo "$found"
    else
        command -v "$PYTHON" >/dev/null || return 1
        echo "$PYTHON"
    fi
}

# What to say when a stack has no interpreter.
python_missing() {
    if [[ $1 =~ ^py3([0-9]+)$ ]]; then
        echo "$1: no Python 3.${BASH_REMATCH[1]} (pyenv install 3.${BASH_REMATCH[1]}, put python3.${BASH_REMATCH[1]} on PATH, or set COMPATFIX_PYTHON_3${BASH_REMATCH[1]})"
    else
        echo "$1: no $PYTHON (a Python 3.11 interpreter; set COMPATFIX_PYTHON)"
    fi
}

stack_python() {
    find_stack_python "$1" || die "$(python_missing "$1")"
}

# The stacks' prerequisites, one line per missing one; status 1 if any is missing.
check_prerequisites() {
    local stack py version want missing=0 pending=() free_kb need_gb=${COMPATFIX_MIN_FREE_GB:-20} probe out
    for stack in "$@"; do
        if ! py=$(find_stack_python "$stack"); then
            log "MISSING: $(python_missing "$stack")"; missing=1; continue
        fi
        if ! version=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null); then
            log "MISSING: $stack: $py does not run; $(python_missing "$stack" | cut -d' ' -f2-)"
            missing=1; continue
        fi
        want=3.11
        [[ $stack =~ ^py3([0-9]+)$ ]] && want=3.${BASH_REMATCH[1]}
        if [[ $version != "$want" ]]; then
            log "MISSING: $stack: $py is Python $version, this stack is made with Python $want; $(python_missing "$stack" | cut -d' ' -f2-)"
            missing=1; continue
        fi
        if ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
            log "MISSING: $stack: $py cannot make venvs (no venv/ensurepip module; on Debian: apt-get install python3-venv)"
            missing=1; continue
        fi
        if [[ $RECREATE == 1 || ! -f $VENVS/$stack/$STAMP_NAME \
              || $(<"$VENVS/$stack/$STAMP_NAME") != "$(stack_hash "$stack")" ]]; then
            pending+=("$stack")
        fi
    done
    for probe in sha256sum df; do
        command -v "$probe" >/dev/null || { log "MISSING: the command $probe"; missing=1; }
    done
    if (( ${#pending[@]} )); then
        mkdir -p "$VENVS"
        free_kb=$(df -Pk "$VENVS" | awk 'NR == 2 {print $4}')
        if (( free_kb < need_gb * 1024 * 1024 )); then
            log "MISSING: disk: $((free_kb / 1024 / 1024)) GB free under $VENVS, the stacks still to install (${pending[*]}) need about $need_gb GB (COMPATFIX_MIN_FREE_GB)"
            missing=1
        fi
        # One small package that the stacks install, downloaded as pip would for them.
        py=$(find_stack_python "${pending[0]}") || py=$PYTHON
        probe=$(mktemp -d "${TMPDIR:-/tmp}/compatfix-registry.XXXXXX")
        if ! out=$("$py" -m pip download --disable-pip-version-check --no-deps --no-cache-dir -q \
                   --timeout 20 --retries 1 -d "$probe" yacs 2>&1); then
            log "MISSING: the package registry: pip could not download yacs ($(printf '%s\n' "$out" | grep -v 'is ignored' | tail -n 1)); the stacks still to install (${pending[*]}) come from it"
            missing=1
        fi
        rm -rf -- "$probe"
    fi
    return "$missing"
}

log() { printf '[setup-stacks] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

usage() {
    echo "usage: $0 [--recreate | --check] STACK...   (stacks: $(cd "$REQ" && ls -- *.txt | grep -v -- '-mmcv\.txt$' | sed 's/\.txt$//' | paste -sd' '))" >&2
    exit 2
}

# Run the venv's pip quietly. The local-index pip config here makes pip warn
# "Location 'file:///opt/.../simple/<pkg>/' is ignored" for every package the
# local index lacks; drop only that line, keep every other warning/error.
pip_q() {
    local rc
    set +e
    { "$VPY" -m pip --disable-pip-version-check -q "$@" 2>&1 1>&3 3>&- \
        | grep -v -e "is ignored: it is neither a file nor a directory" >&2 3>&-
      rc=${PIPESTATUS[0]}
    } 3>&1
    set -e
    return "$rc"
}

stack_hash() {
    local stack=$1 f
    {
        for f in "$REQ/$stack.txt" "$REQ/$stack-mmcv.txt"; do
            if [[ -f $f ]]; then echo "== ${f##*/}"; cat "$f"; fi
        done
        f="$REQ/$stack-nodeps.txt"; if [[ -f $f ]]; then echo "== ${f##*/}"; cat "$f"; fi
        echo "== setup-stacks.sh"; cat "$SELF"
        echo "== python"; "$(stack_python "$stack")" -c 'import sys; print(sys.version)'
    } | sha256sum | cut -d' ' -f1
}

# Check the installed distributions against every requirement line of the
# stack's files (exact pins and ranges), and print the key versions.
verify_stack() {
    local stack=$1 files=("$REQ/$stack.txt")
    [[ -f "$REQ/$stack-mmcv.txt" ]] && files+=("$REQ/$stack-mmcv.txt")
    [[ -f "$REQ/$stack-nodeps.txt" ]] && files+=("$REQ/$stack-nodeps.txt")
    "$VPY" - "$stack" "${files[@]}" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
from pip._vendor.packaging.requirements import Requirement

stack, files = sys.argv[1], sys.argv[2:]
bad = []
for path in files:
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        req = Requirement(line)
        try:
            have = version(req.name)
        except PackageNotFoundError:
            bad.append(f"{req.name}: not installed (wanted {line})")
            continue
        if req.specifier and not req.specifier.contains(have, prereleases=True):
            bad.append(f"{req.name}: {have} installed, wanted {line}")

def v(*names):
    for n in names:
        try:
            return f"{n}={version(n)}"
        except PackageNotFoundError:
            pass
    return f"{names[0]}=-"

print(f"[setup-stacks] {stack}: " + " ".join(v(*n) for n in [
    ("torch",), ("torchvision",), ("numpy",), ("mmcv", "mmcv-full"),
    ("mmsegmentation",), ("timm",), ("yacs",),
    ("opencv-python-headless", "opencv-python"), ("yapf",)]), file=sys.stderr)
if bad:
    print(f"[setup-stacks] ERROR: {stack}: requirement check failed:\n  " + "\n  ".join(bad),
          file=sys.stderr)
    sys.exit(1)
PY
}

install_deps() {
    local stack=$1 files=("$REQ/$stack.txt")
    [[ -f "$REQ/$stack-mmcv.txt" ]] && files+=("$REQ/$stack-mmcv.txt")
    [[ -f "$REQ/$stack-nodeps.txt" ]] && files+=("$REQ/$stack-nodeps.txt")
    # The stacks pin one torch (a CUDA build, ~5.5 GB with its nvidia libraries): a venv
    # made after the first hard-links it from a sibling instead of a copy per stack.
    "$VPY" "$ROOT/scripts/share-torch.py" "$VENVS" "${files[@]}" \
        || log "$stack: sharing torch from a sibling venv failed; pip installs it"
    pip_q install -r "$REQ/$stack.txt"
    if [[ -f "$REQ/$stack-mmcv.txt" ]]; then
        # Second pass, together with the base file so its pins (numpy 2, torch)
        # hold while mmcv's runtime deps are resolved.
        MMCV_WITH_OPS=0 pip_q install --no-build-isolation \
            -r "$REQ/$stack.txt" -r "$REQ/$stack-mmcv.txt"
    fi
    if [[ -f "$REQ/$stack-nodeps.txt" ]]; then
        # Third pass: packages whose declared dependencies no longer install (their
        # replacements are in the stack's base file), without dependencies.
        pip_q install --no-deps -r "$REQ/$stack-nodeps.txt"
    fi
}

install_project() {
    if [[ ! -f "$ROOT/pyproject.toml" ]]; then
        log "WARNING: $ROOT/pyproject.toml missing; compatfix NOT installed into $1"
        return 0
    fi
    pip_q install --no-deps --force-reinstall --no-build-isolation "$ROOT"
}

setup_stack() {
    local stack=$1 venv="$VENVS/$1" start=$SECONDS want have=""
    [[ -f "$REQ/$stack.txt" ]] || die "unknown stack '$stack' (no requirements/$stack.txt)"
    VPY="$venv/bin/python"

    if [[ $RECREATE == 1 && -d $venv ]]; then
        log "$stack: --recreate: removing $venv"
        rm -rf -- "$venv"
    fi
    if [[ ! -x $VPY ]] || ! "$VPY" -c 'import pip' 2>/dev/null; then
        log "$stack: creating venv $venv"
        rm -rf -- "$venv"
        mkdir -p "$VENVS"
        "$(stack_python "$stack")" -m venv "$venv"
    fi

    want=$(stack_hash "$stack")
    [[ -f "$venv/$STAMP_NAME" ]] && have=$(<"$venv/$STAMP_NAME")
    if [[ $want == "$have" ]]; then
        log "$stack: dependencies up to date (stamp matches), skipping install"
    else
        log "$stack: installing dependencies (requirements/$stack*.txt)"
        rm -f -- "$venv/$STAMP_NAME"
        install_deps "$stack"
        verify_stack "$stack"
        echo "$want" > "$venv/$STAMP_NAME"
    fi

    log "$stack: installing compatfix (non-editable, --no-deps)"
    install_project "$stack"
    log "$stack: ready in $((SECONDS - start))s"
}

RECREATE=0
CHECK=0
stacks=()
for arg in "$@"; do
    case $arg in
        --recreate) RECREATE=1 ;;
        --check) CHECK=1 ;;
        -h|--help) usage ;;
        -*) echo "unknown option: $arg" >&2; usage ;;
        *) stacks+=("$arg") ;;
    esac
done
(( ${#stacks[@]} )) || usage

# Reject unknown stacks before spending minutes on the first one.
for s in "${stacks[@]}"; do
    [[ -f "$REQ/$s.txt" && $s != *-mmcv ]] || die "unknown stack '$s' (no requirements/$s.txt)"
done
if (( CHECK )); then
    check_prerequisites "${stacks[@]}" || exit 1
    log "prerequisites of ${stacks[*]}: ok"
    exit 0
fi
for s in "${stacks[@]}"; do
    setup_stack "$s"
done

#!/usr/bin/env bash
# Create/update the test virtualenvs under .venvs/<stack> (repo root).
#
#   scripts/setup-stacks.sh [--recreate] STACK...     (STACK: modern paper numpy1 timm1 mmold py312 py313)
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

# The interpreter a stack's venv is made with.
stack_python() {
    local stack=$1 minor override found
    if [[ $stack =~ ^py3([0-9]+)$ ]]; then
        minor=${BASH_REMATCH[1]}
        override=COMPATFIX_PYTHON_3$minor
        if [[ -n ${!override:-} ]]; then echo "${!override}"; return; fi
        found=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3."$minor".*/bin/python3."$minor" 2>/dev/null \
                | sort -V | tail -n 1)
        [[ -n $found ]] || found=$(command -v "python3.$minor" || true)
        [[ -n $found ]] || die "$stack: no Python 3.$minor (pyenv install 3.$minor, or set $override)"
        echo "$found"
    else
        echo "$PYTHON"
    fi
}

log() { printf '[setup-stacks] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

usage() {
    echo "usage: $0 [--recreate] STACK...   (stacks: $(cd "$REQ" && ls -- *.txt | grep -v -- '-mmcv\.txt$' | sed 's/\.txt$//' | paste -sd' '))" >&2
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
stacks=()
for arg in "$@"; do
    case $arg in
        --recreate) RECREATE=1 ;;
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
for s in "${stacks[@]}"; do
    setup_stack "$s"
done

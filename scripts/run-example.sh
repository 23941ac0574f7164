#!/usr/bin/env bash
# The README's main job: run the unmodified 2021-style training script
# examples/legacy_classifier.py on today's stack through compatfix.
#
#   scripts/run-example.sh [legacy_classifier.py args ...]
#
# Works from any directory. Sets up (idempotently) the "modern" venv with
# scripts/setup-stacks.sh, then runs
#   .venvs/modern/bin/python -m compatfix examples/legacy_classifier.py <args>
# When no --output_dir is given, checkpoints go to a fresh temporary folder
# (printed, and kept). Exits with the script's exit status; on success its last
# line reads "DONE train_loss=... acc=...".
#
# Environment: COMPATFIX_OPTIONS  extra options for `python -m compatfix`
#              (e.g. "--report /tmp/report.json"); SKIP_SETUP=1 skips the setup.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY="$ROOT/.venvs/modern/bin/python"

if [[ ${SKIP_SETUP:-0} != 1 ]]; then
    bash "$ROOT/scripts/setup-stacks.sh" modern
fi
[[ -x $PY ]] || { echo "run-example: $PY missing (run scripts/setup-stacks.sh modern)" >&2; exit 1; }

args=("$@")
has_output=0
for arg in "${args[@]}"; do
    case $arg in --output_dir|--output_dir=*) has_output=1 ;; esac
done
if (( ! has_output )); then
    out=$(mktemp -d "${TMPDIR:-/tmp}/compatfix-example.XXXXXX")
    echo "[run-example] output: $out" >&2
    args+=(--output_dir "$out")
fi

read -r -a options <<< "${COMPATFIX_OPTIONS:-}"
# torch 2.x warns that timm 0.3.2's torch.jit.script decorators are deprecated;
# that is noise here, not a compatibility problem.
export PYTHONWARNINGS=${PYTHONWARNINGS:-ignore::FutureWarning}
echo "[run-example] $PY -m compatfix ${options[*]} examples/legacy_classifier.py ${args[*]}" >&2
exec "$PY" -m compatfix "${options[@]}" "$ROOT/examples/legacy_classifier.py" "${args[@]}"

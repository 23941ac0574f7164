#!/usr/bin/env bash
# The README's main job: run the unmodified 2021-style training script
# examples/legacy_classifier.py on today's stack through compatfix.
#
#   scripts/run-example.sh [legacy_classifier.py args ...]
#
# Works from any directory. Sets up (idempotently) the "example" venv, .venvs/example,
# with scripts/setup-stacks.sh: only what the example needs (requirements/example.txt:
# torch 2.14.1 with its CUDA libraries, torchvision, numpy 2.x, timm 0.3.2), about 3 GB
# to download and 5.5 GB on disk the first time (a test stack's torch is hard-linked
# instead, when there is one). Then runs
#   .venvs/example/bin/python -m compatfix --report REPORT examples/legacy_classifier.py <args>
# and ends with a summary of that report: the shims applied, and each legacy name the
# program used, with its file:line. When no --output_dir is given, checkpoints go to a
# fresh temporary folder (printed, and kept). Exits with the script's exit status; on
# success the program's last line reads "DONE train_loss=... acc=...".
#
# Environment: COMPATFIX_OPTIONS  extra options for `python -m compatfix`
#              (e.g. "--report /tmp/report.json", which is then the report summarised);
#              SKIP_SETUP=1 skips the setup.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STACK=example
PY="$ROOT/.venvs/$STACK/bin/python"

if [[ ${SKIP_SETUP:-0} != 1 ]]; then
    bash "$ROOT/scripts/setup-stacks.sh" --check "$STACK"
    if [[ ! -f $ROOT/.venvs/$STACK/.compatfix-stamp ]]; then
        echo "[run-example] first run: installing .venvs/$STACK (torch 2.14.1 with its CUDA libraries," \
             "torchvision, numpy 2.x, timm 0.3.2): about 3 GB to download, 5.5 GB on disk; a few minutes" >&2
    fi
    bash "$ROOT/scripts/setup-stacks.sh" "$STACK"
fi
[[ -x $PY ]] || { echo "run-example: $PY missing (run scripts/setup-stacks.sh $STACK)" >&2; exit 1; }

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
report=""
for (( i = 0; i < ${#options[@]}; i++ )); do
    case ${options[i]} in
        --report) report=${options[i + 1]:-} ;;
        --report=*) report=${options[i]#--report=} ;;
    esac
done
if [[ -z $report ]]; then
    report=$(mktemp "${TMPDIR:-/tmp}/compatfix-example-report.XXXXXX.json")
    options+=(--report "$report")
fi
# torch 2.x warns that timm 0.3.2's torch.jit.script decorators are deprecated;
# that is noise here, not a compatibility problem.
export PYTHONWARNINGS=${PYTHONWARNINGS:-ignore::FutureWarning}
echo "[run-example] $PY -m compatfix ${options[*]} examples/legacy_classifier.py ${args[*]}" >&2
status=0
"$PY" -m compatfix "${options[@]}" "$ROOT/examples/legacy_classifier.py" "${args[@]}" || status=$?

# What compatfix did, from its report: each shim applied, each legacy name used (file:line).
"$PY" - "$report" "$ROOT" <<'PY' >&2 || true
import json, os, sys

path, root = sys.argv[1], sys.argv[2]
try:
    with open(path, encoding="utf-8") as handle:
        processes = json.load(handle)["processes"]
except (OSError, ValueError, KeyError) as exc:
    print("[run-example] no compatfix report to summarise (%s)" % exc)
    sys.exit()
applied = sorted({(entry["shim"], entry["module"]) for p in processes for entry in p["applied"]})
failed = sorted({(entry["shim"], entry.get("module", "")) for p in processes for entry in p["failed"]})
uses = {}
for process in processes:
    for use in process["deprecated_uses"]:
        where = os.path.relpath(use["file"], root) if use["file"].startswith(root + os.sep) else use["file"]
        key = (where, use["line"], use["name"])
        uses[key] = uses.get(key, 0) + use["count"]
print("[run-example] compatfix report (%s), %d process%s:" % (path, len(processes), "" if len(processes) == 1 else "es"))
print("[run-example]   shims applied: %d" % len(applied))
for shim, module in applied:
    print("[run-example]     %-34s on %s" % (shim, module))
print("[run-example]   legacy names used: %d" % len(uses))
for (where, line, name), count in sorted(uses.items()):
    print("[run-example]     %-34s at %s:%d%s" % (name, where, line, " (%d times)" % count if count > 1 else ""))
if failed:
    print("[run-example]   shims that FAILED: " + ", ".join("%s on %s" % item for item in failed))
PY
exit "$status"

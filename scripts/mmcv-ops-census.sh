#!/usr/bin/env bash
# The census of compiled mmcv ops that the model zoo calls (see the header of
# scripts/mmcv-ops-census.py): in .venvs/modern (mmcv 1.7.2 lite, mmseg 0.30.0, mmdet
# 2.28.2) under compatfix in CPU mode, one config per model family folder of mmseg's and
# mmdet's shipped configs, each built, trained one step and tested on one image in its
# own process.
#
#   bash scripts/mmcv-ops-census.sh [ARGS...]    (ARGS go to the .py: --only fcn/ psanet/,
#                                                 --all, --timeout S, --library mmseg)
#   bash scripts/mmcv-ops-census.sh --doc        (only regenerate docs/mmcv-ops.md)
#
# Output: acceptance/results/mmcv-ops-census/{mmseg,mmdet}.json and docs/mmcv-ops.md;
# one log per config in a scratch folder (printed at the end). Nothing is downloaded.
# Time: 30-50 minutes for the ~140 configs on 2 busy CPU cores (5-30 s each, most of it
# the R-101 models' steps, plus ~15 s of imports once); --timeout bounds each config. Build .venvs/modern first with
# `bash scripts/setup-stacks.sh modern` (it installs this checkout's compatfix).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY="$ROOT/.venvs/modern/bin/python"
RESULTS="$ROOT/acceptance/results/mmcv-ops-census"
[[ -x $PY ]] || { echo "[census] ERROR: .venvs/modern missing: bash scripts/setup-stacks.sh modern" >&2; exit 1; }

doc() {
    "$PY" -P "$ROOT/scripts/mmcv-ops-census.py" --out "$RESULTS" --doc "$ROOT/docs/mmcv-ops.md"
    echo "[census] wrote docs/mmcv-ops.md" >&2
}

if [[ ${1:-} == --doc ]]; then doc; exit 0; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/mmcv-ops-census.XXXXXX")
(cd "$work" && COMPATFIX_DEVICE=cpu "$PY" -P -W ignore "$ROOT/scripts/mmcv-ops-census.py" \
    --out "$RESULTS" --logs "$work/logs" "$@")
doc
echo "[census] logs: $work/logs" >&2

#!/usr/bin/env bash
# The mmcv 1.x lite matrix: one venv per mmcv release line, each with an mmseg 0.x and an
# mmdet 2.x release that pair with it, and scripts/mmcv-matrix.py run in each under
# compatfix (CPU mode): import mmseg.models / mmdet.models, build models from configs,
# train, validate and test on tiny generated data (COCO for mmdet, a two-class
# segmentation folder for mmseg).
#
#   bash scripts/mmcv-matrix.sh [ROW...]      (rows: see ROWS below; default: all)
#   bash scripts/mmcv-matrix.sh --table       (only regenerate docs/openmmlab-matrix.md)
#
# Pairs follow the packages' own import-time checks (mmseg's MMCV_MIN/MMCV_MAX, mmdet's
# mmcv_minimum_version/mmcv_maximum_version), which are OpenMMLab's compatibility tables
# in code; the driver reads them back from each installed package and records them.
#
# Disk: the venvs share one torch. Each row's venv is a hard-linked copy of
# .venvs/modern (cp -al: torch, torchvision, numpy and the rest cost no new space), from
# which mmcv/mmseg/mmdet are uninstalled (unlinking, never writing into a shared file)
# and the row's releases installed; mmcv from its sdist as the lite build
# (MMCV_WITH_OPS=0, --no-build-isolation, as scripts/setup-stacks.sh does). A row costs
# some tens of MB. Build once .venvs/modern with `bash scripts/setup-stacks.sh modern`.
#
# Output: acceptance/results/mmcv-matrix/<row>.json and docs/openmmlab-matrix.md.
# Needs the package index (pip) for the mm releases; nothing else is downloaded.
# Time: about 2-4 minutes per row on 2 CPU cores, most of it the mmcv build and the
# R-50 models' steps.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE="$ROOT/.venvs/modern"
MATRIX="$ROOT/.venvs/matrix"
RESULTS="$ROOT/acceptance/results/mmcv-matrix"

# row      mmcv    mmsegmentation  mmdet
ROWS=(
    "mmcv12  1.2.7   0.11.0          2.10.0"
    "mmcv13  1.3.0   0.11.0          2.11.0"
    "mmcv14  1.4.8   0.22.1          2.22.0"
    "mmcv16  1.6.2   0.27.0          2.25.3"
    "mmcv17  1.7.2   0.30.0          2.28.2"
)

log() { printf '[mmcv-matrix] %s\n' "$*" >&2; }

# The venv's pip, quietly, without the local-index "is ignored" noise; keeps pip's status.
pip_q() {
    local rc
    set +e
    "$VPY" -m pip --disable-pip-version-check -q "$@" 2>&1 | grep -v -e "is ignored: it is neither"
    rc=${PIPESTATUS[0]}
    set -e
    return "$rc"
}

# mmdet 2.0-2.11 require mmpycocotools, OpenMMLab's fork of pycocotools under the same
# import name (pycocotools), whose sdist no longer builds (its C source is missing from
# the release). Today's pycocotools provides that API: install mmdet without its
# dependencies and each of them, with pycocotools for mmpycocotools.
install_mmdet() {
    local spec=$1 deps
    pip_q install --no-deps "$spec"
    deps=$("$VPY" - <<'PY'
from importlib.metadata import requires
from pip._vendor.packaging.requirements import Requirement
names = []
for line in requires("mmdet") or []:
    req = Requirement(line)
    if req.marker and not req.marker.evaluate({"extra": ""}):
        continue
    names.append("pycocotools" if req.name == "mmpycocotools" else str(req))
print(" ".join(names))
PY
)
    [[ -z $deps ]] || pip_q install -c "$venv/.matrix-constraints" $deps
}

table() {
    python3 "$ROOT/scripts/mmcv-matrix.py" --table "$RESULTS" > "$ROOT/docs/openmmlab-matrix.md"
    log "wrote docs/openmmlab-matrix.md"
}

if [[ ${1:-} == --table ]]; then table; exit 0; fi
[[ -x $BASE/bin/python ]] || { log "ERROR: $BASE missing: bash scripts/setup-stacks.sh modern"; exit 1; }

wanted=("$@")
mkdir -p "$MATRIX" "$RESULTS"
status=0
for row in "${ROWS[@]}"; do
    read -r name mmcv mmseg mmdet <<< "$row"
    if (( ${#wanted[@]} )) && [[ " ${wanted[*]} " != *" $name "* ]]; then continue; fi
    venv="$MATRIX/$name"
    VPY="$venv/bin/python"
    start=$SECONDS
    stamp="mmcv==$mmcv mmsegmentation==$mmseg mmdet==$mmdet"
    if [[ ! -f $venv/.matrix-stamp || $(<"$venv/.matrix-stamp") != "$stamp" ]]; then
        log "$name: hard-linked copy of .venvs/modern"
        rm -rf -- "$venv"
        cp -al "$BASE" "$venv"
        rm -f -- "$venv/.compatfix-stamp"
        # Console scripts name .venvs/modern's python in their first line: use python -m pip.
        pip_q uninstall -y mmcv mmcv-full mmsegmentation mmdet mmcls compatfix 2>&1 | grep -v WARNING || true
        log "$name: installing $stamp (mmcv lite build)"
        # The constraint keeps torch/numpy as they are: only new files are written.
        "$VPY" -m pip freeze | grep -i -E '^(torch|torchvision|numpy)==' > "$venv/.matrix-constraints"
        MMCV_WITH_OPS=0 pip_q install --no-build-isolation -c "$venv/.matrix-constraints" \
            "mmcv==$mmcv" "mmsegmentation==$mmseg"
        install_mmdet "mmdet==$mmdet"
        echo "$stamp" > "$venv/.matrix-stamp"
    fi
    pip_q install --no-deps --force-reinstall --no-build-isolation "$ROOT"
    log "$name: running scripts/mmcv-matrix.py"
    work=$(mktemp -d "${TMPDIR:-/tmp}/mmcv-matrix-$name.XXXXXX")
    if ! (cd "$work" && COMPATFIX_DEVICE=cpu "$VPY" -P "$ROOT/scripts/mmcv-matrix.py" \
            --row "$name" --out "$RESULTS/$name.json" --work "$work"); then
        status=1
    fi
    log "$name: done in $((SECONDS - start))s (scratch: $work)"
done
table
exit $status

"""Doctor check: the apex that is installed (none, PyPI's unrelated one, NVIDIA's without amp)."""

from __future__ import annotations

import os

from compatfix.doctor._finding import Finding
from compatfix.doctor._packages import _distribution, _package_dir


# --- apex -------------------------------------------------------------------------------

# Subpackages of NVIDIA apex. Its master dropped amp and parallel on 2025-05-08 (NVIDIA/apex
# cb65b8ed, "remove old features: amp, ddp, and rnn"); the others are still there. The PyPI
# package named "apex" (a Pyramid web toolkit, 0.9.x) has none of them.
_NVIDIA_APEX_PARTS = (
    "amp", "parallel", "optimizers", "normalization", "contrib", "fused_dense", "mlp",
    "multi_tensor_apply",
)
_REMOVED_APEX_PARTS = ("amp", "parallel")


def check_apex(path: list[str] | None = None) -> list[Finding]:
    """Is ``apex`` NVIDIA apex, the PyPI impostor, a trimmed-down apex, or absent?"""
    apex_dir = _package_dir("apex", path)
    if apex_dir is None:
        return [Finding(
            "apex", "info",
            "apex is not installed: code that imports apex gets compatfix's torch-native "
            "stand-in for apex's API",
            "Nothing to do. Build NVIDIA apex from source (https://github.com/NVIDIA/apex) "
            "only if the code needs its fused CUDA kernels; never `pip install apex`, "
            "which installs an unrelated web toolkit.",
        )]
    parts = [p for p in _NVIDIA_APEX_PARTS if os.path.isdir(os.path.join(apex_dir, p))]
    if not parts:
        dist = _distribution("apex", apex_dir)
        described = ""
        if dist is not None:
            text = " ".join((dist.metadata.get("Summary") or "",
                             " ".join(dist.requires or ())))
            if "pyramid" in text.lower():
                described = (" but the unrelated PyPI package 'apex' %s, a Pyramid web "
                             "toolkit" % dist.version)
        return [Finding(
            "apex", "error",
            "`apex` at %s is not NVIDIA apex%s (it has none of amp, optimizers, "
            "normalization, parallel, contrib)" % (apex_dir, described),
            "Uninstall it: `pip uninstall apex`. It shadows compatfix's torch-native "
            "stand-in for NVIDIA apex's API, which code that imports apex then gets. If "
            "the code needs NVIDIA's fused CUDA kernels, build NVIDIA apex from source "
            "(https://github.com/NVIDIA/apex); `pip install apex` is never NVIDIA's.",
        )]
    missing = [p for p in _REMOVED_APEX_PARTS if p not in parts]
    if missing:
        return [Finding(
            "apex", "warning",
            "NVIDIA apex at %s has no %s: apex master removed them on 2025-05-08, so "
            "2020-22 code doing `from apex import amp` or using "
            "`apex.parallel.DistributedDataParallel` fails to import"
            % (apex_dir, " or ".join("apex." + p for p in missing)),
            "If the code only needs amp/parallel, uninstall apex (`pip uninstall apex`) so "
            "that compatfix's torch-native stand-in answers `import apex`. If it also "
            "needs apex's fused kernels, build NVIDIA apex from a commit before the "
            "removal (`git checkout cb65b8ed~1` in a clone of "
            "https://github.com/NVIDIA/apex).",
        )]
    return []



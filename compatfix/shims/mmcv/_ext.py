"""Shim for ``mmcv._ext``: mmcv 1.x's compiled ops, provided by a torch/torchvision
stand-in (``compatfix.mmcv_standin.ext``, where the kernels and their notes live) when no
real compiled ``mmcv._ext`` can be found. A real one always wins: this is a ``provide`` shim.
"""

from __future__ import annotations

from compatfix.mmcv_standin import ext
from compatfix.registry import PROVIDE, RISK_BEHAVIOUR, Shim


def provide_ext(module) -> None:
    ext.fill(module)


SHIMS = (
    Shim(
        "mmcv._ext",
        targets=["mmcv._ext"],
        kind=PROVIDE,
        # mmcv 1.0 (2020-07) brought the ops over from mmdet with one compiled _ext that
        # every mmcv/ops/*.py loads through ext_loader.load_ext; 2.x is another API.
        requires={"mmcv": ">=1.0,<2"},
        apply=provide_ext,
        risk=RISK_BEHAVIOUR,
        broke="mmcv 1.x ops live in the compiled mmcv._ext, which no mmcv build for "
        "torch 2.x/Python 3.11 has (mmcv-full wheels stop at torch 1.13; mmcv lite has none): "
        "import mmcv.ops, mmseg.models and mmdet.models fail",
        # The stand-in's own list of fallbacks (its modules import torch only when called).
        summary="provide mmcv._ext: torch/torchvision fallbacks for %s; other ops raise a "
        "clear error when called" % ext.fallback_names(),
        replacement="torchvision.ops (nms, roi_align, roi_pool, deform_conv2d) and torch code for the other ops, "
        "or an mmcv-full build compiled for this torch",
        rewrites={
            "mmcv.ops": "torchvision.ops where it has the op (nms, roi_align, roi_pool, deform_conv2d, "
            "sigmoid_focal_loss), or an mmcv-full build compiled for this torch",
            "mmcv._ext": "an mmcv-full build compiled for this torch",
            "mmcv.ops.nms": "torchvision.ops.nms(boxes, scores, iou_threshold) (returns the kept indices only)",
            "mmcv.ops.roi_align": "torchvision.ops.roi_align (aligned=True for mmcv's default)",
            "mmcv.ops.RoIAlign": "torchvision.ops.RoIAlign (aligned=True for mmcv's default)",
            "mmcv.ops.roi_pool": "torchvision.ops.roi_pool",
            "mmcv.ops.DeformConv2d": "torchvision.ops.DeformConv2d (offsets in torchvision's layout)",
            "mmcv.ops.sigmoid_focal_loss": "torchvision.ops.sigmoid_focal_loss (takes one-hot targets)",
        },
    ),
)

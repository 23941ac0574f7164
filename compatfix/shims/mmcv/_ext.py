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
    ),
)

"""Shims for ``pycocotools`` (see ``compatfix.openmmlab.cocoapi``)."""

from __future__ import annotations

from compatfix.registry import BEFORE_CONSUMER, RISK_ALIAS, Shim


def add_fork_api(module):
    from compatfix.openmmlab import cocoapi

    return cocoapi.add_fork_api(module)


SHIMS = (
    Shim(
        "pycocotools.mmpycocotools_api",
        targets=["pycocotools"],
        consumers=["mmdet.datasets.coco"],
        # 2.3 (2020-08) moved onto the fork's API; 2.12 (2021-04) wrapped official pycocotools.
        requires={"mmdet": ">=2.3,<2.12"},
        kind=BEFORE_CONSUMER,
        apply=add_fork_api,
        risk=RISK_ALIAS,
        broke="mmdet 2.3-2.11 need mmpycocotools (OpenMMLab's pycocotools fork: snake_case "
        "COCO API, __version__ 12.0.x), whose sdist no longer builds; with official pycocotools "
        "`import mmdet.apis` fails (AttributeError: module 'pycocotools' has no attribute "
        "'__version__'), or CocoDataset does (Incompatible version of pycocotools)",
        summary="add the fork's snake_case COCO aliases to pycocotools.coco.COCO; "
        "mmdet.datasets.coco reads pycocotools.__version__ as 12.0.3",
        replacement="mmdet >= 2.12 (official pycocotools), or the COCO API's camelCase names (getAnnIds, loadImgs, ...)",
    ),
)

"""Shims for mmcv 1.x and the OpenMMLab 0.x/2.x libraries built on it (mmseg, mmdet)."""

from compatfix.openmmlab import version_assert
from compatfix.registry import BEFORE_CONSUMER, RISK_BEHAVIOUR, Shim

SHIMS = (
    Shim(
        version_assert.SHIM_NAME,
        targets=["mmcv"],
        consumers=version_assert.CONSUMERS,
        requires={"mmcv": ">=1.0,<2.0"},
        kind=BEFORE_CONSUMER,
        apply=version_assert.serve_version_to_consumers,
        risk=RISK_BEHAVIOUR,
        default=False,
        broke="every mmseg/mmdet release asserts its tested mmcv range at import (AssertionError: "
        "MMCV==1.7.2 is used but incompatible. Please install mmcv>=1.1.4, <=1.3.0.), so code "
        "vendoring an old mmseg fails with the newer mmcv 1.x that still installs",
        summary="opt-in: the import-time assert of mmseg/mmdet sees an mmcv version inside its "
        "own range (1.x only), with a warning; everything else sees the installed version",
        replacement="install the mmcv release the mmseg/mmdet version asks for, or vendor a newer mmseg/mmdet",
    ),
)

"""Shims for ``skimage.morphology``: watershed, which moved to skimage.segmentation."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim


def restore_watershed(morphology) -> None:
    from skimage.segmentation import watershed

    restore_names(morphology, {"watershed": watershed}, "skimage.morphology.watershed")


SHIMS = (
    Shim(
        "skimage.morphology.watershed",
        targets=["skimage.morphology"],
        requires={"skimage": ">=0.19"},
        apply=restore_watershed,
        restores=["watershed"],
        broke="scikit-image 0.19 (2021-12) removed skimage.morphology.watershed (moved to "
        "skimage.segmentation.watershed in 0.17), used by instance-segmentation post-processing",
        summary="restore it as skimage.segmentation.watershed",
        replacement="skimage.segmentation.watershed",
        renames={"skimage.morphology.watershed": "skimage.segmentation.watershed"},
    ),
)

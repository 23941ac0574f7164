"""Shims for ``skimage.color``: the grey-spelled conversions."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim


def restore_grey_names(color) -> None:
    restore_names(color, {"rgb2grey": color.rgb2gray, "grey2rgb": color.gray2rgb}, "skimage.color.grey_names")


SHIMS = (
    Shim(
        "skimage.color.grey_names",
        targets=["skimage.color"],
        requires={"skimage": ">=0.21"},
        apply=restore_grey_names,
        restores=["rgb2grey", "grey2rgb"],
        broke="scikit-image 0.21 (2023-06) removed skimage.color.rgb2grey and grey2rgb (deprecated in 0.19 "
        "for rgb2gray and gray2rgb)",
        summary="restore rgb2grey and grey2rgb as aliases of rgb2gray and gray2rgb",
        replacement="skimage.color.rgb2gray and gray2rgb",
        renames={"skimage.color.rgb2grey": "skimage.color.rgb2gray", "skimage.color.grey2rgb": "skimage.color.gray2rgb"},
    ),
)

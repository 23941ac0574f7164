"""Shims for ``skimage.metrics``: structural_similarity's old ``data_range`` default for
floating-point images, which scikit-image 0.20 turned into an error. Opt-in: the old default
(2, the width of [-1, 1]) is twice the range of most float images, so the values it gives are
those of the old papers, not correct ones."""

from __future__ import annotations

from compatfix.patching import wrap
from compatfix.registry import RISK_BEHAVIOUR, Shim


def _old_default_range(function):
    def structural_similarity(im1, im2, *args, **kwargs):
        import numpy as np
        from skimage.util.dtype import dtype_range

        if kwargs.get("data_range") is None:
            im1 = np.asarray(im1)
            low, high = dtype_range[im1.dtype.type]
            kwargs["data_range"] = high - low
        return function(im1, im2, *args, **kwargs)

    return structural_similarity


def restore_default_range(metrics) -> None:
    wrap(metrics, "structural_similarity", _old_default_range, "skimage.metrics.ssim_data_range")


SHIMS = (
    Shim(
        "skimage.metrics.ssim_data_range",
        targets=["skimage.metrics"],
        requires={"skimage": ">=0.20"},
        apply=restore_default_range,
        broke="scikit-image 0.20 (2023-02) made structural_similarity raise for floating-point images "
        "without data_range, where it used the dtype's range (2 for floats)",
        summary="use the old default data_range (the dtype's range) again (opt-in: it reproduces old "
        "papers' SSIM values, which are not correct ones for images in [0, 1])",
        risk=RISK_BEHAVIOUR,
        default=False,
        replacement="data_range=2 for float images in [-1, 1] (the old default), or the images' real range",
        rewrites={"skimage.metrics.structural_similarity(-data_range)": "structural_similarity(..., data_range=...)"},
    ),
)

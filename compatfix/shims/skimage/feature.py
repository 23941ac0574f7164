"""Shims for ``skimage.feature``: the grey-spelled GLCM functions and register_translation."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim


def register_translation(src_image, target_image, upsample_factor=1, space="real", return_error=True):
    """scikit-image 0.16's register_translation: phase_cross_correlation under its old name and
    positional arguments; ``return_error=False`` gives the shifts alone."""
    from skimage.registration import phase_cross_correlation

    shifts, error, phasediff = phase_cross_correlation(src_image, target_image, upsample_factor=upsample_factor,
                                                       space=space)
    return (shifts, error, phasediff) if return_error else shifts


def restore_grey_names(feature) -> None:
    restore_names(feature, {"greycomatrix": feature.graycomatrix, "greycoprops": feature.graycoprops},
                  "skimage.feature.grey_names")


def restore_register_translation(feature) -> None:
    restore_names(feature, {"register_translation": register_translation}, "skimage.feature.register_translation")


SHIMS = (
    Shim(
        "skimage.feature.grey_names",
        targets=["skimage.feature"],
        requires={"skimage": ">=0.21"},
        apply=restore_grey_names,
        restores=["greycomatrix", "greycoprops"],
        broke="scikit-image 0.21 (2023-06) removed skimage.feature.greycomatrix and greycoprops (renamed "
        "graycomatrix and graycoprops in 0.19), used for GLCM texture features",
        summary="restore greycomatrix and greycoprops as aliases of graycomatrix and graycoprops",
        replacement="skimage.feature.graycomatrix and graycoprops",
        renames={"skimage.feature.greycomatrix": "skimage.feature.graycomatrix",
                 "skimage.feature.greycoprops": "skimage.feature.graycoprops"},
    ),
    Shim(
        "skimage.feature.register_translation",
        targets=["skimage.feature"],
        requires={"skimage": ">=0.19"},
        apply=restore_register_translation,
        restores=["register_translation"],
        broke="scikit-image 0.19 (2021-12) removed skimage.feature.register_translation (moved to "
        "skimage.registration.phase_cross_correlation in 0.17)",
        summary="restore it on phase_cross_correlation with its positional arguments and return_error",
        replacement="skimage.registration.phase_cross_correlation",
        rewrites={"skimage.feature.register_translation": "skimage.registration.phase_cross_correlation "
                  "(return_error and the keyword names differ)"},
    ),
)

"""Shims for ``skimage.measure``: the ``compare_*`` metrics scikit-image 0.18 removed."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim


def _old_data_range(image, other):
    """scikit-image <= 0.19's default ``data_range``: the width of the dtype's range
    (``skimage.util.dtype.dtype_range``: 255 for uint8, 2 for floats in [-1, 1])."""
    import warnings

    from skimage.util.dtype import dtype_range

    if image.dtype != other.dtype:
        warnings.warn("Inputs have mismatched dtype.  Setting data_range based on X.dtype.", stacklevel=3)
    low, high = dtype_range[image.dtype.type]
    return high - low


def compare_ssim(X, Y, win_size=None, gradient=False, data_range=None, multichannel=False,
                 gaussian_weights=False, full=False, **kwargs):
    """scikit-image 0.17's ``compare_ssim``: ``structural_similarity`` with positional
    arguments, ``multichannel`` (the last axis is the channel) and, without
    ``data_range``, the dtype's range as the dynamic range."""
    import numpy as np
    from skimage.metrics import structural_similarity

    X, Y = np.asarray(X), np.asarray(Y)
    if data_range is None:
        data_range = _old_data_range(X, Y)
    return structural_similarity(X, Y, win_size=win_size, gradient=gradient, data_range=data_range,
                                 channel_axis=-1 if multichannel else None,
                                 gaussian_weights=gaussian_weights, full=full, **kwargs)


def compare_psnr(im_true, im_test, data_range=None):
    """scikit-image 0.17's ``compare_psnr``: ``peak_signal_noise_ratio`` with positional
    arguments (its ``data_range`` default is still the old dtype rule)."""
    from skimage.metrics import peak_signal_noise_ratio

    return peak_signal_noise_ratio(im_true, im_test, data_range=data_range)


def compare_mse(im1, im2):
    """scikit-image 0.17's ``compare_mse``: ``mean_squared_error``."""
    from skimage.metrics import mean_squared_error

    return mean_squared_error(im1, im2)


def compare_nrmse(im_true, im_test, norm_type="euclidean"):
    """scikit-image 0.17's ``compare_nrmse``: ``normalized_root_mse`` with ``norm_type``
    ('Euclidean', 'min-max' or 'mean', any case) as ``normalization``."""
    from skimage.metrics import normalized_root_mse

    return normalized_root_mse(im_true, im_test, normalization=norm_type)


def marching_cubes_lewiner(volume, level=None, spacing=(1.0, 1.0, 1.0), gradient_direction="descent",
                           step_size=1, allow_degenerate=True, use_classic=False, mask=None):
    """scikit-image 0.18's marching_cubes_lewiner: marching_cubes(method='lewiner') with positional
    arguments (``use_classic`` was already ignored with a warning)."""
    from skimage.measure import marching_cubes

    return marching_cubes(volume, level, spacing=spacing, gradient_direction=gradient_direction,
                          step_size=step_size, allow_degenerate=allow_degenerate, method="lewiner", mask=mask)


def marching_cubes_classic(volume, level=None, spacing=(1.0, 1.0, 1.0), gradient_direction="descent"):
    """scikit-image 0.18's marching_cubes_classic: Lorensen's algorithm, returning (verts, faces)."""
    from skimage.measure import marching_cubes

    verts, faces, _, _ = marching_cubes(volume, level, spacing=spacing, gradient_direction=gradient_direction,
                                        method="lorensen")
    return verts, faces


def restore_marching_cubes(measure) -> None:
    restore_names(measure, {"marching_cubes_lewiner": marching_cubes_lewiner,
                            "marching_cubes_classic": marching_cubes_classic}, "skimage.measure.marching_cubes")


def restore_compare_metrics(measure) -> None:
    names = {"compare_ssim": compare_ssim, "compare_psnr": compare_psnr, "compare_mse": compare_mse,
             "compare_nrmse": compare_nrmse}
    restore_names(measure, names, "skimage.measure.compare_metrics")


SHIMS = (
    Shim(
        "skimage.measure.compare_metrics",
        targets=["skimage.measure"],
        requires={"skimage": ">=0.18"},
        apply=restore_compare_metrics,
        restores=["compare_ssim", "compare_psnr", "compare_mse", "compare_nrmse"],
        broke="scikit-image 0.18 (2020-12) removed skimage.measure.compare_ssim, compare_psnr, compare_mse and "
        "compare_nrmse (renamed into skimage.metrics in 0.16), the metrics of 2018-20 restoration and GAN code",
        summary="restore them over skimage.metrics with their old positional signatures, multichannel and "
        "compare_ssim's old data_range default (the dtype's range)",
        replacement="skimage.metrics.structural_similarity, peak_signal_noise_ratio, mean_squared_error, "
        "normalized_root_mse",
        renames={"skimage.measure.compare_mse": "skimage.metrics.mean_squared_error"},
        rewrites={
            "skimage.measure.compare_ssim": "skimage.metrics.structural_similarity (pass data_range; "
            "channel_axis for multichannel)",
            "skimage.measure.compare_psnr": "skimage.metrics.peak_signal_noise_ratio (pass data_range)",
            "skimage.measure.compare_nrmse": "skimage.metrics.normalized_root_mse (norm_type became normalization)",
        },
    ),
    Shim(
        "skimage.measure.marching_cubes",
        targets=["skimage.measure"],
        requires={"skimage": ">=0.19"},
        apply=restore_marching_cubes,
        restores=["marching_cubes_lewiner", "marching_cubes_classic"],
        broke="scikit-image 0.19 (2021-12) removed skimage.measure.marching_cubes_lewiner and "
        "marching_cubes_classic (merged into marching_cubes(method=...) in 0.17), used to mesh SDF volumes",
        summary="restore them on marching_cubes with method='lewiner' / 'lorensen' and their old returns",
        replacement="skimage.measure.marching_cubes(volume, method='lewiner' or 'lorensen')",
        rewrites={"skimage.measure.marching_cubes_lewiner": "skimage.measure.marching_cubes(volume, method='lewiner')",
                  "skimage.measure.marching_cubes_classic": "skimage.measure.marching_cubes(volume, method='lorensen') "
                  "(returns normals and values too)"},
    ),
)

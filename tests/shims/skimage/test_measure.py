"""skimage.measure.compare_metrics (compare_ssim, compare_psnr, compare_mse, compare_nrmse)
against the real scikit-image 0.26: missing with compatfix off; with it on they give scikit-image 0.17's values, computed here from the documented
formulas: MSE, NRMSE (Euclidean: ||x - y|| / ||x||), PSNR = 10 log10(range^2 / MSE) and
SSIM (Wang et al. 2004, 7x7 uniform window, sample covariance, K1 = 0.01, K2 = 0.03) with
the old default dynamic range, the dtype's (255 for uint8, 2 for floats)."""

from __future__ import annotations

import textwrap

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")

SSIM_BY_HAND = """
import numpy as np

def ssim_by_hand(x, y, data_range, win=7):
    x, y = x.astype(np.float64), y.astype(np.float64)
    h, w = x.shape
    n = win * win
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2
    values = []
    pad = win // 2
    for i in range(pad, h - pad):
        for j in range(pad, w - pad):
            a = x[i - pad:i + pad + 1, j - pad:j + pad + 1].ravel()
            b = y[i - pad:i + pad + 1, j - pad:j + pad + 1].ravel()
            ma, mb = a.mean(), b.mean()
            va = ((a - ma) ** 2).sum() / (n - 1)
            vb = ((b - mb) ** 2).sum() / (n - 1)
            cov = ((a - ma) * (b - mb)).sum() / (n - 1)
            values.append((2 * ma * mb + c1) * (2 * cov + c2) / ((ma ** 2 + mb ** 2 + c1) * (va + vb + c2)))
    return float(np.mean(values))  # the mean over windows that lie inside the image
"""


def test_compare_metrics_are_missing_without_compatfix():
    result = run_python(code="from skimage.measure import compare_ssim", compatfix=False)
    assert "cannot import name 'compare_ssim' from 'skimage.measure'" in result.stderr


def test_old_values():
    result = run_python(
        code=SSIM_BY_HAND + textwrap.dedent("""
        from skimage.measure import compare_mse, compare_nrmse, compare_psnr, compare_ssim
        rng = np.random.default_rng(0)
        x8 = rng.integers(0, 256, (16, 18), dtype=np.uint8)
        y8 = np.clip(x8.astype(int) + rng.integers(-20, 21, x8.shape), 0, 255).astype(np.uint8)
        d = x8.astype(float) - y8.astype(float)
        mse = (d ** 2).mean()
        assert np.isclose(compare_mse(x8, y8), mse)
        assert np.isclose(compare_nrmse(x8, y8), np.sqrt(mse) / np.sqrt((x8.astype(float) ** 2).mean()))
        assert np.isclose(compare_nrmse(x8, y8, "min-max"), np.sqrt(mse) / (x8.max() - x8.min()))
        assert np.isclose(compare_nrmse(x8, y8, norm_type="Euclidean"), compare_nrmse(x8, y8))
        assert np.isclose(compare_psnr(x8, y8), 10 * np.log10(255.0 ** 2 / mse))
        assert np.isclose(compare_psnr(x8, y8, 100), 10 * np.log10(100.0 ** 2 / mse))  # positional data_range
        # SSIM: uint8 (range 255) and float in [0, 1] without data_range (old default: 2).
        assert np.isclose(compare_ssim(x8, y8), ssim_by_hand(x8, y8, 255.0))
        xf, yf = x8 / 255.0, y8 / 255.0
        assert np.isclose(compare_ssim(xf, yf), ssim_by_hand(xf, yf, 2.0))
        assert np.isclose(compare_ssim(xf, yf, data_range=1), ssim_by_hand(xf, yf, 1.0))
        # multichannel=True: the mean over the channels of the last axis.
        rgb_x, rgb_y = np.stack([xf, yf, xf[::-1]], -1), np.stack([yf, xf, yf[::-1]], -1)
        per_channel = [ssim_by_hand(rgb_x[..., c], rgb_y[..., c], 2.0) for c in range(3)]
        assert np.isclose(compare_ssim(rgb_x, rgb_y, multichannel=True), np.mean(per_channel))
        value, full = compare_ssim(xf, yf, full=True)
        assert full.shape == xf.shape and np.isclose(value, ssim_by_hand(xf, yf, 2.0))
        print("ok")
        """)
    )
    assert result.stdout.split() == ["ok"], result.stderr


def test_marching_cubes_lewiner_and_classic_are_missing_without_compatfix():
    result = run_python(code="from skimage.measure import marching_cubes_lewiner", compatfix=False)
    assert "cannot import name 'marching_cubes_lewiner'" in result.stderr


def test_skimage_measure_marching_cubes_old_functions():
    """skimage.measure.marching_cubes: marching_cubes_lewiner and marching_cubes_classic."""
    # A 4x4x4 cube of ones in zeros, level 0.5: every vertex is the midpoint of a grid edge
    # from a 1-voxel to a 0-voxel, so one coordinate is 1.5 or 5.5 and the two others are
    # integers in 2..5 (linear interpolation along the edge, by definition).
    result = run_python(
        code="""
        import numpy as np
        from skimage.measure import marching_cubes_classic, marching_cubes_lewiner
        volume = np.zeros((8, 8, 8))
        volume[2:6, 2:6, 2:6] = 1
        verts, faces, normals, values = marching_cubes_lewiner(volume, 0.5)
        classic_verts, classic_faces = marching_cubes_classic(volume, 0.5)
        for points in (verts, classic_verts):
            half = np.isin(points, (1.5, 5.5))
            whole = np.isin(points, (2, 3, 4, 5))
            assert len(points) and (half.sum(1) == 1).all() and (half | whole).all()
        assert faces.shape[1] == 3 and classic_faces.shape[1] == 3 and len(normals) == len(verts) == len(values)
        scaled = marching_cubes_lewiner(volume, 0.5, (2.0, 1.0, 1.0))[0]  # spacing, positionally
        assert np.allclose(scaled[:, 0], 2 * verts[:, 0]) and np.allclose(scaled[:, 1:], verts[:, 1:])
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr

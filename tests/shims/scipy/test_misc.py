"""scipy.misc.imresize and friends against the real SciPy 1.17 (whose scipy.misc is an
empty module): missing with compatfix off; with it on they follow SciPy 1.1's documented
byte-scaling, (rows, columns) sizes and array results, computed here by hand."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")


def test_image_functions_are_missing_without_compatfix():
    result = run_python(
        code="from scipy.misc import imresize",
        compatfix=False,
    )
    assert result.returncode != 0 and "cannot import name 'imresize'" in result.stderr


def test_imresize_byte_scales_and_resizes(tmp_path):
    result = run_python(
        code="""
        import warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        import numpy as np
        from scipy.misc import imresize, imread, imsave, bytescale
        data = np.array([[0.0, 0.5], [1.0, 0.25]])
        # bytescale: (data - min) * 255 / (max - min), rounded half up to uint8.
        scaled = np.floor((data - data.min()) * 255.0 / (data.max() - data.min()) + 0.5).astype(np.uint8)
        out = imresize(data, (4, 6), interp="nearest")
        assert out.dtype == np.uint8 and out.shape == (4, 6)
        assert (out == np.repeat(np.repeat(scaled, 2, axis=0), 3, axis=1)).all(), out
        assert imresize(data, 200, interp="nearest").shape == (4, 4)
        assert imresize(data, 0.5, interp="nearest").shape == (1, 1)
        rgb = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3) * 10
        assert (imresize(rgb, (2, 3), interp="nearest") == rgb).all()  # uint8: not rescaled
        path = %r
        imsave(path, rgb)
        assert (imread(path) == rgb).all()
        grey = imread(path, flatten=True)
        f = rgb.astype(float)
        luminance = f[..., 0] * 299 / 1000 + f[..., 1] * 587 / 1000 + f[..., 2] * 114 / 1000
        assert grey.dtype == np.float32 and np.allclose(grey, luminance, atol=0.01)
        assert (bytescale(rgb) == rgb).all()
        print("ok")
        """ % str(tmp_path / "x.png")
    )
    assert result.stdout.split() == ["ok"], result.stderr

"""skimage.color.grey_names against the real scikit-image 0.26: rgb2grey and grey2rgb are missing
with compatfix off; with it on they give the documented luminance Y = 0.2125 R + 0.7154 G +
0.0721 B and the grey image repeated in three channels."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")


def test_grey_names_are_missing_without_compatfix():
    result = run_python(code="from skimage.color import rgb2grey", compatfix=False)
    assert "cannot import name 'rgb2grey'" in result.stderr


def test_grey_names_convert_as_documented():
    result = run_python(
        code="""
        import numpy as np
        from skimage.color import grey2rgb, rgb2grey
        rgb = np.random.default_rng(0).random((4, 5, 3))
        expected = 0.2125 * rgb[..., 0] + 0.7154 * rgb[..., 1] + 0.0721 * rgb[..., 2]
        assert np.allclose(rgb2grey(rgb), expected)
        grey = rgb[..., 0]
        assert np.array_equal(grey2rgb(grey), np.stack([grey] * 3, -1))
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr

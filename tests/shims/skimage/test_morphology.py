"""skimage.morphology.watershed against the real scikit-image 0.26: missing with compatfix off;
with it on, flooding a two-basin profile from two markers splits it at the ridge, worked out
here by hand."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")


def test_watershed_is_missing_without_compatfix():
    result = run_python(code="from skimage.morphology import watershed", compatfix=False)
    assert "cannot import name 'watershed'" in result.stderr


def test_watershed_floods_from_the_markers():
    result = run_python(
        code="""
        import numpy as np
        from skimage.morphology import watershed
        heights = np.array([[0, 1, 2, 5, 2, 1, 0]] * 3, dtype=float)  # two basins, ridge at column 3
        markers = np.zeros(heights.shape, dtype=int)
        markers[1, 0], markers[1, 6] = 1, 2
        labels = watershed(heights, markers)
        # Each basin floods from its marker; the ridge column goes to one of them.
        assert (labels[:, :3] == 1).all() and (labels[:, 4:] == 2).all()
        assert set(labels[:, 3]) <= {1, 2}
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr

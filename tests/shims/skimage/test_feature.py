"""skimage.feature.grey_names and skimage.feature.register_translation against the real
scikit-image 0.26: missing with compatfix off; with it on, greycomatrix counts the pixel pairs
as a grey-level co-occurrence matrix does (counted here by hand) and register_translation
returns the shift that registers the moved image (checked by rolling it back)."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")


def test_names_are_missing_without_compatfix():
    result = run_python(code="from skimage.feature import greycomatrix", compatfix=False)
    assert "cannot import name 'greycomatrix'" in result.stderr
    result = run_python(code="from skimage.feature import register_translation", compatfix=False)
    assert "cannot import name 'register_translation'" in result.stderr


def test_old_results():
    result = run_python(
        code="""
        import numpy as np
        from skimage.feature import greycomatrix, greycoprops, register_translation
        image = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [0, 2, 2, 2], [2, 2, 3, 3]], dtype=np.uint8)
        glcm = greycomatrix(image, [1], [0], levels=4)
        by_hand = np.zeros((4, 4), dtype=int)
        for row in image:
            for left, right in zip(row[:-1], row[1:]):  # distance 1, angle 0: the right neighbour
                by_hand[left, right] += 1
        assert glcm.shape == (4, 4, 1, 1) and (glcm[:, :, 0, 0] == by_hand).all()
        p = by_hand / by_hand.sum()
        i, j = np.indices((4, 4))
        assert np.isclose(greycoprops(glcm, "contrast")[0, 0], (p * (i - j) ** 2).sum())
        rng = np.random.default_rng(0)
        src = rng.random((32, 32))
        moved = np.roll(src, (3, -2), axis=(0, 1))
        shifts, error, phasediff = register_translation(src, moved)
        assert np.allclose(np.roll(moved, shifts.astype(int), axis=(0, 1)), src)
        assert np.array_equal(register_translation(src, moved, 1, "real", False), shifts)  # old positionals
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr

"""skimage.multichannel against the real scikit-image 0.26: ``multichannel=True`` is a
TypeError with compatfix off; with it on it means what 0.19's deprecation said, the last axis
as the channel axis, so the result equals the channel_axis=-1 call (and each channel by hand).
skimage.selem: ``selem=`` is refused the same way, and with compatfix it is the footprint."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")


def test_multichannel_is_refused_without_compatfix():
    result = run_python(
        code="import numpy as np\nfrom skimage.transform import rescale\nrescale(np.zeros((8, 8, 3)), 0.5, multichannel=True)",
        compatfix=False,
    )
    assert "unexpected keyword argument 'multichannel'" in result.stderr


def test_multichannel_means_the_last_axis():
    result = run_python(
        code="""
        import numpy as np
        from skimage.filters import gaussian
        from skimage.transform import rescale
        from skimage.feature import hog
        from skimage.metrics import structural_similarity
        rng = np.random.default_rng(0)
        image = rng.random((16, 20, 3))
        # Per channel by hand: each channel on its own is a 2-D image.
        by_hand = np.stack([rescale(image[..., c], 0.5) for c in range(3)], -1)
        assert np.allclose(rescale(image, 0.5, multichannel=True), by_hand)
        assert rescale(image, 0.5, multichannel=False).shape == (8, 10, 2)  # all three axes scaled
        blurred = np.stack([gaussian(image[..., c], sigma=1) for c in range(3)], -1)
        assert np.allclose(gaussian(image, sigma=1, multichannel=True), blurred)
        large = rng.random((32, 32, 3))
        assert np.allclose(hog(large, multichannel=True), hog(large, channel_axis=-1))
        other = rng.random((16, 20, 3))
        mean = np.mean([structural_similarity(image[..., c], other[..., c], data_range=1) for c in range(3)])
        assert np.isclose(structural_similarity(image, other, multichannel=True, data_range=1), mean)
        try:
            gaussian(image, multichannel=True, channel_axis=-1)
        except ValueError as exc:
            assert "mutually exclusive" in str(exc)
        else:
            raise AssertionError("multichannel and channel_axis together were accepted")
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr


def test_selem_is_refused_without_compatfix():
    result = run_python(
        code="import numpy as np\nfrom skimage.morphology import binary_erosion, disk\n"
        "binary_erosion(np.ones((5, 5), bool), selem=disk(1))",
        compatfix=False,
    )
    assert "unexpected keyword argument 'selem'" in result.stderr


def test_skimage_selem_is_the_footprint():
    # Erosion by the 3x3 cross, by hand: a pixel stays where it and its four neighbours are set.
    result = run_python(
        code="""
        import numpy as np
        from skimage.filters import median, rank
        from skimage.morphology import binary_erosion, disk, erosion
        image = np.zeros((9, 9), bool)
        image[1:8, 2:7] = True
        padded = np.pad(image, 1)
        by_hand = (padded[1:-1, 1:-1] & padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:])
        assert np.array_equal(binary_erosion(image, selem=disk(1)), by_hand)
        grey = (np.arange(81).reshape(9, 9) % 7).astype(np.uint8)
        assert np.array_equal(erosion(grey, selem=disk(1)), erosion(grey, footprint=disk(1)))
        assert np.array_equal(median(grey, selem=disk(1)), median(grey, footprint=disk(1)))
        assert np.array_equal(rank.maximum(grey, selem=disk(1)), rank.maximum(grey, footprint=disk(1)))
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr

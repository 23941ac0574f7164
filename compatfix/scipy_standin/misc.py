"""SciPy < 1.2's ``scipy.misc`` image functions (imresize, imread, imsave, bytescale,
toimage, fromimage) on Pillow, as SciPy 1.1 documented them: non-uint8 data is
byte-scaled to 0..255 before it becomes an image, and images come back as numpy arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

_INTERPOLATIONS = {"nearest": 0, "lanczos": 1, "bilinear": 2, "bicubic": 3, "cubic": 3}


def bytescale(data: Any, cmin: float | None = None, cmax: float | None = None, high: int = 255, low: int = 0) -> np.ndarray:
    """Scale ``data`` linearly from [cmin, cmax] (default: its range) to [low, high] as
    uint8; uint8 data is returned unchanged."""
    data = np.asarray(data)
    if data.dtype == np.uint8:
        return data
    if high > 255 or low < 0 or high < low:
        raise ValueError("need 0 <= low <= high <= 255")
    cmin = data.min() if cmin is None else cmin
    cmax = data.max() if cmax is None else cmax
    span = cmax - cmin
    if span < 0:
        raise ValueError("`cmax` should be larger than `cmin`.")
    if span == 0:
        span = 1
    scaled = (data - cmin) * (float(high - low) / span) + low
    return (scaled.clip(low, high) + 0.5).astype(np.uint8)


def toimage(arr: Any, high: int = 255, low: int = 0, cmin: float | None = None, cmax: float | None = None, mode: str | None = None):
    """A PIL image of a 2-D (grey) or 3-D (RGB/RGBA, channels last) array, byte-scaled."""
    from PIL import Image

    data = np.asarray(arr)
    if mode == "F" and data.ndim == 2:
        return Image.fromarray(data.astype(np.float32), mode="F")
    if data.ndim == 2 or (data.ndim == 3 and data.shape[-1] in (3, 4)):
        image = Image.fromarray(np.ascontiguousarray(bytescale(data, cmin, cmax, high, low)))
        return image.convert(mode) if mode not in (None, image.mode) else image
    raise ValueError("'arr' does not have a suitable array shape for any mode.")


def fromimage(im, flatten: bool = False, mode: str | None = None) -> np.ndarray:
    """The array of a PIL image; ``flatten`` gives one float32 luminance layer; palette
    images become RGB (RGBA where they have transparency)."""
    if flatten:
        im = im.convert("F")
    elif mode is not None:
        im = im.convert(mode)
    elif im.mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    return np.array(im)


def imread(name, flatten: bool = False, mode: str | None = None) -> np.ndarray:
    """Read an image file into an array."""
    from PIL import Image

    with Image.open(name) as image:
        return fromimage(image, flatten=flatten, mode=mode)


def imsave(name, arr: Any, format: str | None = None) -> None:  # noqa: A002 - SciPy's name
    """Save an array as an image, byte-scaled."""
    toimage(arr).save(name, format)


def imresize(arr: Any, size: Any, interp: str = "bilinear", mode: str | None = None) -> np.ndarray:
    """Resize an image array: ``size`` is an int (percent), a float (fraction) or
    (rows, columns); the result is the byte-scaled uint8 image resized by ``interp``."""
    image = toimage(arr, mode=mode)
    if isinstance(size, (int, np.integer)):
        percent = size / 100.0
        size = tuple((np.array(image.size) * percent).astype(int))[::-1]
    elif isinstance(size, (float, np.floating)):
        size = tuple((np.array(image.size) * size).astype(int))[::-1]
    else:
        size = (size[0], size[1])
    resized = image.resize((size[1], size[0]), resample=_INTERPOLATIONS[interp])
    return fromimage(resized)

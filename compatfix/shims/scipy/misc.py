"""Shims for ``scipy.misc``: the image functions SciPy 1.2 removed."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim

NAMES = ("imresize", "imread", "imsave", "bytescale", "toimage", "fromimage")


def restore_image_functions(module) -> None:
    from compatfix.scipy_standin import misc

    restore_names(module, {name: getattr(misc, name) for name in NAMES}, "scipy.misc.imresize")


SHIMS = (
    Shim(
        "scipy.misc.imresize",
        targets=["scipy.misc"],
        requires={"scipy": ">=1.2", "pillow": ">=6"},
        apply=restore_image_functions,
        restores=NAMES,
        broke="SciPy 1.2 (2018-12) removed scipy.misc.imresize, imread, imsave, bytescale, toimage and "
        "fromimage (deprecated in 1.0), still called by 2017-20 super-resolution and GAN code",
        summary="restore them on Pillow with SciPy 1.1's uint8 byte-scaling and array results",
        replacement="PIL.Image (resize, open, save, fromarray) and numpy; imageio.imread / imwrite",
        rewrites={
            "scipy.misc.imresize": "np.array(Image.fromarray(arr).resize((width, height), Image.BILINEAR)) "
            "(imresize byte-scaled to uint8 first and took (height, width) or a fraction)",
            "scipy.misc.imread": "imageio.v2.imread or np.asarray(Image.open(path))",
            "scipy.misc.imsave": "imageio.imwrite or Image.fromarray(arr).save(path) (imsave byte-scaled floats)",
            "scipy.misc.bytescale": "((a - a.min()) * 255 / (a.max() - a.min())).astype(np.uint8)",
            "scipy.misc.toimage": "Image.fromarray(arr) (toimage byte-scaled floats)",
            "scipy.misc.fromimage": "np.asarray(image)",
        },
    ),
)

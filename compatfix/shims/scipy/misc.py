"""Shims for ``scipy.misc``: the image functions SciPy 1.2 removed, and the special
functions SciPy 1.3 stopped re-exporting from there (``logsumexp``, ``comb``, ...)."""

from __future__ import annotations

import functools

from compatfix.patching import Lazy, restore_names
from compatfix.registry import Shim

NAMES = ("imresize", "imread", "imsave", "bytescale", "toimage", "fromimage")


# What scipy.misc re-exported until SciPy 1.3, and the module that still has each.
MOVED_FUNCTIONS = {
    "logsumexp": "scipy.special",
    "comb": "scipy.special",
    "factorial": "scipy.special",
    "factorial2": "scipy.special",
    "factorialk": "scipy.special",
    "pade": "scipy.interpolate",
}


def restore_moved_functions(module) -> None:
    # Lazy: scipy.interpolate costs more to import than the one function a program uses.
    names = {name: Lazy(functools.partial(_function_of, home, name)) for name, home in MOVED_FUNCTIONS.items()}
    restore_names(module, names, "scipy.misc.logsumexp")


def _function_of(module_name: str, name: str):
    import importlib

    return getattr(importlib.import_module(module_name), name)


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
    Shim(
        "scipy.misc.logsumexp",
        targets=["scipy.misc"],
        requires={"scipy": ">=1.3"},
        apply=restore_moved_functions,
        restores=list(MOVED_FUNCTIONS),
        broke="SciPy 1.3 (2019-05) removed scipy.misc.logsumexp, comb, factorial, factorial2, factorialk and "
        "pade (deprecated in 1.0; they live in scipy.special and scipy.interpolate), still imported by "
        "2019-22 code (from scipy.misc import logsumexp / comb)",
        summary="restore them as the scipy.special and scipy.interpolate functions",
        replacement="scipy.special.logsumexp, comb, factorial, factorial2, factorialk; scipy.interpolate.pade",
        renames={"scipy.misc." + name: home + "." + name for name, home in MOVED_FUNCTIONS.items()},
    ),
)

"""Shims for scikit-image. ``skimage.multichannel`` and ``skimage.selem`` are here because they
fix several submodules; a single submodule's shims live beside this file (``measure.py``,
``metrics.py``, ``feature.py``, ...)."""

from __future__ import annotations

from compatfix.patching import wrap
from compatfix.registry import Shim

# The functions that took ``multichannel`` in scikit-image 0.18 and take ``channel_axis`` today
# (0.19 deprecated the one for the other; 0.21 removed ``multichannel``), by module.
MULTICHANNEL = {
    "skimage.exposure": ("match_histograms",),
    "skimage.feature": ("hog", "multiscale_basic_features"),
    "skimage.filters": ("gaussian", "unsharp_mask", "difference_of_gaussians"),
    "skimage.metrics": ("structural_similarity",),
    "skimage.restoration": ("cycle_spin", "denoise_bilateral", "denoise_nl_means", "denoise_tv_bregman",
                            "denoise_tv_chambolle", "denoise_wavelet", "estimate_sigma", "inpaint_biharmonic"),
    "skimage.segmentation": ("felzenszwalb", "random_walker", "slic"),
    "skimage.transform": ("pyramid_expand", "pyramid_gaussian", "pyramid_laplacian", "pyramid_reduce",
                          "rescale", "warp_polar"),
    "skimage.util": ("montage", "apply_parallel"),
    "skimage.draw": ("random_shapes",),
}
_MISSING = object()


def _accept_multichannel(function):
    def with_multichannel(*args, **kwargs):
        multichannel = kwargs.pop("multichannel", _MISSING)
        if multichannel is not _MISSING:
            if kwargs.get("channel_axis") is not None:
                raise ValueError("multichannel and channel_axis are mutually exclusive")
            # 0.19's deprecation rule: multichannel=True is channel_axis=-1, False is None.
            kwargs["channel_axis"] = -1 if multichannel else None
        return function(*args, **kwargs)

    return with_multichannel


def _take_old_keyword(module, names, new: str, old: str, make_wrapper, shim: str) -> str | None:
    """Wrap each function of ``names`` on ``module`` whose signature has ``new`` and no
    longer ``old`` (decided by signature, so a fork that still takes ``old`` is left alone)."""
    import inspect

    done = []
    for name in names:
        function = getattr(module, name, None)
        if not callable(function):
            continue
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):
            continue
        if new in parameters and old not in parameters:
            wrap(module, name, make_wrapper, shim)
            done.append(name)
    return None if done else "these functions still take %s here" % old


def accept_multichannel(module) -> str | None:
    return _take_old_keyword(module, MULTICHANNEL.get(module.__name__, ()), "channel_axis", "multichannel",
                             _accept_multichannel, "skimage.multichannel")


# The functions that took ``selem`` in scikit-image 0.18 and take ``footprint`` today (0.19
# renamed it; the old keyword went with 0.21's removals), by module; skimage.filters.rank: all
# of its filters.
SELEM = {
    "skimage.morphology": ("binary_erosion", "binary_dilation", "binary_opening", "binary_closing", "erosion",
                           "dilation", "opening", "closing", "white_tophat", "black_tophat", "reconstruction",
                           "h_maxima", "h_minima", "local_maxima", "local_minima", "flood", "flood_fill"),
    "skimage.filters": ("median",),
    "skimage.filters.rank": None,
}


def _accept_selem(function):
    def with_selem(*args, **kwargs):
        if "selem" in kwargs:
            if kwargs.get("footprint") is not None:
                raise TypeError("selem and footprint are the same argument; give one")
            kwargs["footprint"] = kwargs.pop("selem")
        return function(*args, **kwargs)

    return with_selem


def accept_selem(module) -> str | None:
    names = SELEM.get(module.__name__) or tuple(getattr(module, "__all__", ()))
    return _take_old_keyword(module, names, "footprint", "selem", _accept_selem, "skimage.selem")


SHIMS = (
    Shim(
        "skimage.multichannel",
        targets=sorted(MULTICHANNEL),
        requires={"skimage": ">=0.21"},
        apply=accept_multichannel,
        broke="scikit-image 0.21 (2023-06) removed the multichannel argument (deprecated in 0.19 for "
        "channel_axis) of gaussian, rescale, hog, slic, structural_similarity, the denoisers and others",
        summary="accept multichannel=True/False again as channel_axis=-1/None",
        replacement="channel_axis=-1 for multichannel=True, channel_axis=None for multichannel=False",
        rewrites={"%s.%s(+multichannel)" % (module, function): "channel_axis=-1 (True) or None (False)"
                  for module, functions in MULTICHANNEL.items() for function in functions},
    ),
    Shim(
        "skimage.selem",
        targets=sorted(SELEM),
        requires={"skimage": ">=0.21"},
        apply=accept_selem,
        broke="scikit-image 0.21 (2023-06) removed the selem argument (renamed footprint in 0.19) of the "
        "morphology operators, filters.median and the rank filters",
        summary="accept selem= again as footprint=",
        replacement="footprint= for selem=",
        rewrites={("%s.%s(+selem)" % (module, function)): "footprint="
                  for module, functions in SELEM.items() for function in functions or ("*",)},
    ),
)

"""Shims for albumentations 2.x: the keywords its transforms dropped (``always_apply``,
``ImageCompression``'s ``quality_lower``/``quality_upper``, ``RandomResizedCrop``'s
``height``/``width``) and the transforms it removed that today's transforms still compute
(``JpegCompression``, ``RandomBrightness``, ``RandomContrast``, ``Flip``).

albumentations 2.x does not fail on a keyword it no longer knows: it warns and ignores
it, so ``HorizontalFlip(always_apply=True)`` flips half the time and
``ImageCompression(quality_lower=20)`` compresses at quality 99-100. The wrappers give the
old keywords their old meaning and show them in ``inspect.signature``; a call without them
is passed on unchanged. A 1.x custom transform's ``super().__init__(always_apply, p)``
(1.x's positional order) is read as such. ``albumentations.augmentations.transforms`` (the
0.5/1.x module path) is provided beside this file.
"""

from __future__ import annotations

from typing import Any, Callable

from compatfix.patching import Lazy, restore_names, wrap
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

# Where 1.x defined the restored transforms: their pickles and serialized names say so.
OLD_MODULE = "albumentations.augmentations.transforms"

# What albumentations.augmentations.transforms exported in albumentations 0.5.2 and 1.3.1
# (their __all__, together): the transforms 2020-22 code used.
OLD_NAMES = (
    "Blur", "CLAHE", "CenterCrop", "ChannelDropout", "ChannelShuffle", "CoarseDropout", "ColorJitter", "Crop",
    "CropNonEmptyMaskIfExists", "Cutout", "Downscale", "ElasticTransform", "Emboss", "Equalize", "FancyPCA",
    "Flip", "FromFloat", "GaussNoise", "GaussianBlur", "GlassBlur", "GridDistortion", "GridDropout",
    "HorizontalFlip", "HueSaturationValue", "ISONoise", "ImageCompression", "InvertImg", "JpegCompression",
    "Lambda", "LongestMaxSize", "MaskDropout", "MedianBlur", "MotionBlur", "MultiplicativeNoise", "Normalize",
    "OpticalDistortion", "PadIfNeeded", "PixelDropout", "Posterize", "RGBShift", "RandomBrightness",
    "RandomBrightnessContrast", "RandomContrast", "RandomCrop", "RandomCropNearBBox", "RandomFog",
    "RandomGamma", "RandomGravel", "RandomGridShuffle", "RandomRain", "RandomResizedCrop", "RandomRotate90",
    "RandomScale", "RandomShadow", "RandomSizedBBoxSafeCrop", "RandomSizedCrop", "RandomSnow",
    "RandomSunFlare", "RandomToneCurve", "Resize", "RingingOvershoot", "Rotate", "Sharpen", "ShiftScaleRotate",
    "SmallestMaxSize", "Solarize", "Spatter", "Superpixels", "TemplateTransform", "ToFloat", "ToGray", "ToRGB",
    "ToSepia", "Transpose", "UnsharpMask", "VerticalFlip",
)
# Those that today's albumentations has, or compatfix restores: each took always_apply.
ALWAYS_APPLY_CLASSES = tuple(name for name in OLD_NAMES if name not in ("Cutout", "TemplateTransform"))


def _signature_with_keywords(init: Callable[..., Any], keywords: dict[str, Any]) -> Any:
    """``init``'s signature with ``keywords`` (name -> default) added as keyword-only
    parameters, before a ``**kwargs`` if it has one."""
    import inspect

    signature = inspect.signature(init)
    parameters = list(signature.parameters.values())
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
             for name, default in keywords.items() if name not in signature.parameters]
    cut = len(parameters) - (1 if parameters and parameters[-1].kind == inspect.Parameter.VAR_KEYWORD else 0)
    return signature.replace(parameters=parameters[:cut] + added + parameters[cut:])


def _wrap_init(cls: type, make_init: Callable[[Any], Any], keywords: dict[str, Any], shim: str) -> None:
    """Wrap ``cls.__init__`` (its own, not an inherited one) and make its signature show
    the old ``keywords`` (``wrap`` copies the wrapped function's ``__signature__``)."""
    if "__init__" in vars(cls) and wrap(cls, "__init__", make_init, shim):
        vars(cls)["__init__"].__signature__ = _signature_with_keywords(vars(cls)["__init__"].__wrapped__, keywords)


def _transform_classes(albumentations) -> list[type]:
    """Every transform class albumentations has defined: BasicTransform and its subclasses."""
    base = albumentations.BasicTransform
    found, pending = [base], [base]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                pending.append(sub)
    return found


# --- always_apply ----------------------------------------------------------------------

def _accepting_always_apply(init: Callable[..., Any]) -> Callable[..., Any]:
    def __init__(self, *args: Any, always_apply: bool | None = None, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if always_apply:  # 1.x applied it whatever p said; 1.4 set p = 1 for it
            self.p = 1.0

    return __init__


def accept_always_apply(albumentations) -> None:
    for cls in _transform_classes(albumentations):
        _wrap_init(cls, _accepting_always_apply, {"always_apply": None}, "albumentations.always_apply")


# --- BasicTransform(always_apply, p) by position -----------------------------------------

def _accepting_positional_always_apply(init: Callable[..., Any]) -> Callable[..., Any]:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # 1.x's base was (always_apply=False, p=0.5), today's is (p=0.5, *, always_apply=None):
        # a 1.x transform's super().__init__(always_apply, p) makes today's p the bool, so
        # False (the usual value) gives p=0 and the transform never runs. A bool is never a
        # probability a 2.x caller meant, so a bool first argument is read as 1.x's layout.
        if args and isinstance(args[0], bool) and "always_apply" not in kwargs:
            kwargs["always_apply"], args = args[0], args[1:]
            if args and "p" not in kwargs:
                kwargs["p"], args = args[0], args[1:]
        init(self, *args, **kwargs)

    return __init__


def accept_positional_always_apply(albumentations) -> str | None:
    import inspect

    # decided by the signature, not the version: a build that kept 1.x's order needs nothing
    parameters = list(inspect.signature(albumentations.BasicTransform.__init__).parameters)
    if parameters[1:2] != ["p"]:
        return "BasicTransform.__init__ does not take p first here"
    wrap(albumentations.BasicTransform, "__init__", _accepting_positional_always_apply,
         "albumentations.BasicTransform.positional_always_apply")
    return None


# --- ImageCompression(quality_lower=, quality_upper=) -----------------------------------

def _accepting_quality_bounds(init: Callable[..., Any]) -> Callable[..., Any]:
    def __init__(self, *args: Any, quality_lower: int | None = None, quality_upper: int | None = None,
                 **kwargs: Any) -> None:
        if quality_lower is not None or quality_upper is not None:
            # 1.x's defaults were 99 and 100, today's quality_range's too
            kwargs["quality_range"] = (99 if quality_lower is None else quality_lower,
                                       100 if quality_upper is None else quality_upper)
        init(self, *args, **kwargs)

    return __init__


def accept_quality_bounds(albumentations) -> None:
    _wrap_init(albumentations.ImageCompression, _accepting_quality_bounds,
               {"quality_lower": None, "quality_upper": None}, "albumentations.ImageCompression.quality_lower")


# --- RandomResizedCrop(height, width, ...) ----------------------------------------------

def _accepting_height_width(init: Callable[..., Any]) -> Callable[..., Any]:
    def __init__(self, *args: Any, height: int | None = None, width: int | None = None, **kwargs: Any) -> None:
        if len(args) >= 2 and all(isinstance(a, int) and not isinstance(a, bool) for a in args[:2]):
            # 1.x's positional layout: height, width, scale, ratio, interpolation,
            # always_apply, p (today's second positional, scale, is a pair of floats)
            height, width, rest = args[0], args[1], args[2:]
            args = rest[:3]
            if len(rest) > 4:
                kwargs["p"] = rest[4]
            if len(rest) > 3 and rest[3]:
                kwargs["p"] = 1.0
        if height is not None or width is not None:
            if height is None or width is None:
                raise TypeError("RandomResizedCrop needs both height and width (or size=(height, width))")
            args = ((height, width), *args)
        init(self, *args, **kwargs)

    return __init__


def accept_height_width(albumentations) -> None:
    _wrap_init(albumentations.RandomResizedCrop, _accepting_height_width, {"height": None, "width": None},
               "albumentations.RandomResizedCrop.height_width")


# --- the removed transforms -------------------------------------------------------------

def _make_jpeg_compression() -> type:
    import albumentations

    class JpegCompression(albumentations.ImageCompression):
        """albumentations < 1.4's ``JpegCompression``: ``ImageCompression`` with JPEG and
        a quality drawn from [quality_lower, quality_upper]."""

        __module__ = OLD_MODULE
        __qualname__ = "JpegCompression"  # pickled by reference, as 1.x's class was

        def __init__(self, quality_lower: int = 99, quality_upper: int = 100, always_apply: bool = False,
                     p: float = 0.5) -> None:
            super().__init__(compression_type="jpeg", quality_range=(quality_lower, quality_upper), p=p)
            if always_apply:
                self.p = 1.0

        def get_transform_init_args(self) -> dict[str, Any]:
            return {"quality_lower": self.quality_range[0], "quality_upper": self.quality_range[1]}

    return JpegCompression


def _make_brightness_or_contrast(which: str) -> type:
    """albumentations < 1.4's ``RandomBrightness`` / ``RandomContrast``: as in 1.x, the
    subclass of ``RandomBrightnessContrast`` with the other limit 0."""
    import albumentations

    def __init__(self, limit: Any = 0.2, always_apply: bool = False, p: float = 0.5) -> None:
        limits = {"brightness_limit": 0, "contrast_limit": 0, which + "_limit": limit}
        albumentations.RandomBrightnessContrast.__init__(self, **limits, p=p)
        if always_apply:
            self.p = 1.0

    def get_transform_init_args(self) -> dict[str, Any]:
        return {"limit": getattr(self, which + "_limit")}

    name = "RandomBrightness" if which == "brightness" else "RandomContrast"
    return type(albumentations.RandomBrightnessContrast)(name, (albumentations.RandomBrightnessContrast,), {
        "__module__": OLD_MODULE, "__qualname__": name, "__init__": __init__,
        "get_transform_init_args": get_transform_init_args,
        "__doc__": "albumentations < 1.4's %s(limit=0.2, p=0.5): RandomBrightnessContrast with %s_limit=limit "
        "and the other limit 0." % (name, which),
    })


def _make_flip() -> type:
    import albumentations

    class Flip(albumentations.DualTransform):
        """albumentations < 1.4.24's ``Flip``: a vertical flip, a horizontal flip or both
        (a 180-degree turn), each with probability 1/3, as 1.x's ``d = randint(-1, 1)``
        chose; today's ``HorizontalFlip`` and ``VerticalFlip`` do each flip."""

        __module__ = OLD_MODULE
        __qualname__ = "Flip"  # pickled by reference, as 1.x's class was
        _targets = albumentations.HorizontalFlip._targets

        def __init__(self, always_apply: bool = False, p: float = 0.5) -> None:
            super().__init__(p=p)
            if always_apply:
                self.p = 1.0
            horizontal, vertical = albumentations.HorizontalFlip(p=1.0), albumentations.VerticalFlip(p=1.0)
            # 1.x's cv2.flip codes: 0 vertical, 1 horizontal, -1 both
            self._flips = {0: (vertical,), 1: (horizontal,), -1: (horizontal, vertical)}

        def get_params(self) -> dict[str, int]:
            return {"d": self.py_random.randint(-1, 1)}

        def _through(self, method: str, data: Any, d: int, params: dict[str, Any]) -> Any:
            for flip in self._flips[d]:
                data = getattr(flip, method)(data, **params)
            return data

        def apply(self, img: Any, d: int = 0, **params: Any) -> Any:
            return self._through("apply", img, d, params)

        def apply_to_bboxes(self, bboxes: Any, d: int = 0, **params: Any) -> Any:
            return self._through("apply_to_bboxes", bboxes, d, params)

        def apply_to_keypoints(self, keypoints: Any, d: int = 0, **params: Any) -> Any:
            return self._through("apply_to_keypoints", keypoints, d, params)

        def get_transform_init_args_names(self) -> tuple[()]:
            return ()

    return Flip


REMOVED_TRANSFORMS: dict[str, Callable[[], type]] = {
    "JpegCompression": _make_jpeg_compression,
    "RandomBrightness": lambda: _make_brightness_or_contrast("brightness"),
    "RandomContrast": lambda: _make_brightness_or_contrast("contrast"),
}


def restore_removed_transforms(albumentations) -> None:
    # Lazy: a class is made (and registered for deserialization) at its first use only.
    names = {name: Lazy(make) for name, make in REMOVED_TRANSFORMS.items()}
    restore_names(albumentations, names, "albumentations.JpegCompression")


def restore_flip(albumentations) -> None:
    restore_names(albumentations, {"Flip": Lazy(_make_flip)}, "albumentations.Flip")


SHIMS = (
    Shim(
        "albumentations.always_apply",
        targets=["albumentations"],
        kind=AFTER_IMPORT,
        requires={"albumentations": ">=2.0"},
        apply=accept_always_apply,
        risk=RISK_BEHAVIOUR,
        broke="albumentations 2.0 (2025-01) removed every transform's always_apply keyword (deprecated in "
        "1.4); 2.x warns and ignores it, so an always_apply=True transform with a p below 1 runs only "
        "sometimes",
        summary="accept always_apply on every transform: always_apply=True sets p=1.0 (1.x applied it "
        "whatever p said)",
        replacement="p=1.0",
        rewrites={"albumentations.%s(+always_apply)" % name: "p=1.0 instead of always_apply=True"
                  for name in ALWAYS_APPLY_CLASSES},
    ),
    Shim(
        # after albumentations.always_apply, so its wrapper sees always_apply as a keyword
        "albumentations.BasicTransform.positional_always_apply",
        targets=["albumentations"],
        kind=AFTER_IMPORT,
        requires={"albumentations": ">=1.4.11"},
        apply=accept_positional_always_apply,
        risk=RISK_BEHAVIOUR,
        broke="albumentations 1.4.11 (2024-07) moved p first in BasicTransform.__init__ (1.x: always_apply, "
        "p); a 1.x custom transform's super().__init__(always_apply, p) now sets p=always_apply, so "
        "with always_apply=False the transform silently never runs",
        summary="read a bool first positional argument of BasicTransform.__init__ as 1.x's always_apply, "
        "and the next one as p",
        replacement="super().__init__(p=p)",
    ),
    Shim(
        "albumentations.ImageCompression.quality_lower",
        targets=["albumentations"],
        kind=AFTER_IMPORT,
        requires={"albumentations": ">=2.0"},
        apply=accept_quality_bounds,
        risk=RISK_BEHAVIOUR,
        broke="albumentations 2.0 (2025-01) removed ImageCompression's quality_lower and quality_upper "
        "(replaced by quality_range in 1.4); 2.x warns and compresses at quality 99-100 instead",
        summary="accept quality_lower/quality_upper as quality_range=(quality_lower, quality_upper), with "
        "1.x's defaults 99 and 100",
        replacement="ImageCompression(quality_range=(lower, upper))",
        rewrites={"albumentations.ImageCompression(+quality_lower)": "quality_range=(lower, upper)",
                  "albumentations.ImageCompression(+quality_upper)": "quality_range=(lower, upper)"},
    ),
    Shim(
        "albumentations.RandomResizedCrop.height_width",
        targets=["albumentations"],
        kind=AFTER_IMPORT,
        requires={"albumentations": ">=2.0"},
        apply=accept_height_width,
        broke="albumentations 2.0 (2025-01) removed RandomResizedCrop's height and width (replaced by "
        "size=(height, width) in 1.4): RandomResizedCrop(height=224, width=224) or (224, 224) fails "
        "validation",
        summary="accept height=, width= and 1.x's positional (height, width, scale, ratio, interpolation, "
        "always_apply, p) as size=(height, width)",
        replacement="RandomResizedCrop(size=(height, width))",
        rewrites={"albumentations.RandomResizedCrop(+height)": "size=(height, width)",
                  "albumentations.RandomResizedCrop(+width)": "size=(height, width)"},
    ),
    Shim(
        "albumentations.JpegCompression",
        targets=["albumentations"],
        kind=AFTER_IMPORT,
        requires={"albumentations": ">=1.4"},
        apply=restore_removed_transforms,
        restores=list(REMOVED_TRANSFORMS),
        broke="albumentations 1.4 (2024-01) removed JpegCompression, RandomBrightness and RandomContrast "
        "(deprecated since 0.4), still in 2020-22 augmentation pipelines",
        summary="restore them as 1.x defined them: ImageCompression with JPEG, and RandomBrightnessContrast "
        "with the other limit 0",
        replacement="ImageCompression(compression_type='jpeg', quality_range=...); "
        "RandomBrightnessContrast(brightness_limit=limit, contrast_limit=0) (or the reverse)",
        rewrites={"albumentations.JpegCompression": "ImageCompression(compression_type='jpeg', "
                  "quality_range=(quality_lower, quality_upper))",
                  "albumentations.RandomBrightness": "RandomBrightnessContrast(brightness_limit=limit, "
                  "contrast_limit=0)",
                  "albumentations.RandomContrast": "RandomBrightnessContrast(brightness_limit=0, "
                  "contrast_limit=limit)"},
    ),
    Shim(
        "albumentations.Flip",
        targets=["albumentations"],
        kind=AFTER_IMPORT,
        requires={"albumentations": ">=1.4.24"},
        apply=restore_flip,
        restores=["Flip"],
        broke="albumentations 1.4.24 (2024-12) removed Flip (a random vertical, horizontal or double flip)",
        summary="restore Flip on today's HorizontalFlip and VerticalFlip, each of the three flips with "
        "probability 1/3",
        replacement="OneOf([HorizontalFlip(p=1), VerticalFlip(p=1), Compose([HorizontalFlip(p=1), "
        "VerticalFlip(p=1)])]), or D4 / SquareSymmetry for all eight symmetries",
        rewrites={"albumentations.Flip": "HorizontalFlip / VerticalFlip (Flip chose one of them or both)"},
    ),
)

"""Shims for ``torchvision.transforms``: the ``resample=`` and ``fillcolor=`` keywords of
``RandomAffine``, ``RandomRotation``, ``functional.affine`` and ``functional.rotate``,
which torchvision 0.9 renamed ``interpolation`` and ``fill`` and later dropped."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from compatfix.patching import wrap
from compatfix.registry import Shim

SHIM_NAME = "torchvision.transforms.resample_fillcolor"

# Where each old keyword was accepted, by module: the callables and the keywords they took.
OLD_KEYWORDS = {
    "torchvision.transforms.transforms": {"RandomAffine": ("resample", "fillcolor"), "RandomRotation": ("resample",)},
    "torchvision.transforms.functional": {"affine": ("resample", "fillcolor"), "rotate": ("resample",)},
}


def _with_keywords(signature: inspect.Signature, keywords: tuple[str, ...]) -> inspect.Signature:
    """Today's signature with the old keywords back, keyword-only, defaulting to None."""
    parameters = list(signature.parameters.values())
    at = next((i for i, p in enumerate(parameters) if p.kind == p.VAR_KEYWORD), len(parameters))
    for offset, keyword in enumerate(keywords):
        parameters.insert(at + offset, inspect.Parameter(keyword, inspect.Parameter.KEYWORD_ONLY, default=None))
    return signature.replace(parameters=parameters)


def _accepting_old_keywords(from_int: Callable[[int], Any], signature: inspect.Signature):
    def make(function):
        def with_old_keywords(*args, resample=None, fillcolor=None, **kwargs):
            # torchvision 0.9-0.12: resample (a PIL filter number) became the interpolation
            # mode it names, and fillcolor became fill; each won over the new keyword.
            if resample is not None:
                kwargs["interpolation"] = from_int(resample)
            if fillcolor is not None:
                kwargs["fill"] = fillcolor
            return function(*args, **kwargs)

        with_old_keywords.__signature__ = signature  # type: ignore[attr-defined]
        return with_old_keywords

    return make


def accept_resample_fillcolor(module) -> str | None:
    from torchvision.transforms.functional import _interpolation_modes_from_int

    wrapped = []
    for name, keywords in OLD_KEYWORDS[module.__name__].items():
        owner = getattr(module, name)
        target_owner, attribute = (owner, "__init__") if isinstance(owner, type) else (module, name)
        today = inspect.signature(getattr(target_owner, attribute))
        if any(keyword in today.parameters for keyword in keywords):
            continue
        make = _accepting_old_keywords(_interpolation_modes_from_int, _with_keywords(today, keywords))
        if wrap(target_owner, attribute, make, SHIM_NAME):
            wrapped.append(name)
    return None if wrapped else "these still take resample and fillcolor"


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=list(OLD_KEYWORDS),
        requires={"torchvision": ">=0.14"},
        apply=accept_resample_fillcolor,
        broke="torchvision 0.9 (2021-03) renamed the resample and fillcolor keywords of RandomAffine, "
        "RandomRotation, functional.affine and functional.rotate to interpolation and fill and kept the old "
        "names deprecated (0.12's warning named 0.14 for their removal); today's have neither: "
        "RandomAffine(10, resample=Image.BILINEAR, fillcolor=0) raises TypeError",
        summary="accept resample= (a PIL filter number, as the interpolation mode it names) and fillcolor= "
        "(as fill) again, as torchvision 0.9-0.12 mapped them; calls without them are unchanged",
        replacement="interpolation=InterpolationMode.BILINEAR (or the int) and fill=",
        rewrites={
            "torchvision.transforms.RandomAffine(+resample)": "interpolation=",
            "torchvision.transforms.RandomAffine(+fillcolor)": "fill=",
            "torchvision.transforms.RandomRotation(+resample)": "interpolation=",
            "torchvision.transforms.functional.affine(+resample)": "interpolation=",
            "torchvision.transforms.functional.affine(+fillcolor)": "fill=",
            "torchvision.transforms.functional.rotate(+resample)": "interpolation=",
        },
    ),
)

"""Shims for timm: what 2021 classification code (DeiT, Swin, MAE and their forks, written
against timm 0.3-0.4) meets on timm 0.5 to 1.x.

None of them does anything on timm 0.3.2: each is gated to the versions that removed or
changed the name, and the signature patches also check that the installed class really
lacks the old parameter.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any, Callable

from compatfix.patching import replace_attribute, restore_names
from compatfix.registry import AFTER_IMPORT, PROVIDE, RISK_BEHAVIOUR, Shim

# --- timm.data.transforms._pil_interp ------------------------------------------------------


def _pil_interp_for(module) -> Callable[[str], Any]:
    to_pil = module.str_to_pil_interp

    def _pil_interp(method: str) -> Any:
        """Removed in timm 0.5: the PIL filter named ``method``; as in timm 0.3-0.4, any
        name other than bicubic, lanczos and hamming means bilinear."""
        return to_pil(method if method in ("bicubic", "lanczos", "hamming") else "bilinear")

    return _pil_interp


def restore_pil_interp(module) -> None:
    restore_names(module, {"_pil_interp": _pil_interp_for(module)}, "timm.pil_interp")


# --- timm.models.layers.<submodule> ---------------------------------------------------------

# The submodules of timm 0.3-0.8's timm.models.layers that timm.layers still has under the
# same name. timm 0.9 moved them; timm.models.layers is now one module re-exporting names.
LAYERS_SUBMODULES = (
    "activations", "activations_me", "adaptive_avgmax_pool", "blur_pool", "cbam", "classifier",
    "cond_conv2d", "config", "conv2d_same", "conv_bn_act", "create_act", "create_attn",
    "create_conv2d", "create_norm_act", "drop", "eca", "evo_norm", "helpers", "inplace_abn",
    "linear", "median_pool", "mixed_conv2d", "norm_act", "padding", "pool2d_same",
    "selective_kernel", "separable_conv", "space_to_depth", "split_attn", "split_batchnorm",
    "test_time_pool", "weight_init",
)


def provide_layers_submodule(module) -> None:
    new_home = importlib.import_module("timm.layers." + module.__name__.rpartition(".")[2])
    names = {name: value for name, value in vars(new_home).items() if not name.startswith("__")}
    restore_names(module, names, "timm.layers_submodules")
    if hasattr(new_home, "__all__"):
        module.__all__ = list(new_home.__all__)


# --- pretrained_cfg & co. passed to user-registered models -----------------------------------

# Keywords that timm's create_model passes to every model entrypoint since timm 0.6 (None
# when the caller did not set them). Entrypoints written for timm 0.3-0.5 do not take them.
INJECTED_KEYWORDS = ("pretrained_cfg", "pretrained_cfg_overlay", "cache_dir")
_UNEXPECTED = re.compile(r"unexpected keyword argument '(%s)'" % "|".join(INJECTED_KEYWORDS))


def _tolerate_injected_keywords(entrypoint: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(entrypoint)
    def call_entrypoint(*args: Any, **kwargs: Any) -> Any:
        try:
            return entrypoint(*args, **kwargs)
        except TypeError as exc:
            unset = [name for name in INJECTED_KEYWORDS if name in kwargs and kwargs[name] is None]
            match = _UNEXPECTED.search(str(exc))
            if match is None or match.group(1) not in unset:
                raise
        # The model (or a class it builds) predates these keywords and the caller did not
        # set them: build it the way timm 0.3-0.5 did, without them. Python rejects an
        # unexpected keyword before the callee's body runs, so the failed call built nothing
        # unless the entrypoint ran code of its own before building its model class.
        for name in unset:
            del kwargs[name]
        return entrypoint(*args, **kwargs)

    return call_entrypoint


def tolerate_injected_keywords(factory) -> None:
    if getattr(getattr(factory, "create_model", None), "__module__", None) != factory.__name__:
        return  # a module that only re-exports create_model: its defining module is patched
    find_entrypoint = factory.model_entrypoint

    @functools.wraps(find_entrypoint)
    def model_entrypoint(*args: Any, **kwargs: Any) -> Callable[..., Any]:
        return _tolerate_injected_keywords(find_entrypoint(*args, **kwargs))

    replace_attribute(factory, "model_entrypoint", model_entrypoint, "timm.entrypoint_kwargs")


# --- ViT Block / Attention: qk_scale, drop ----------------------------------------------------


def _parameters(function: Callable[..., Any]) -> set[str]:
    import inspect

    return set(inspect.signature(function).parameters)


def _set_attention_scale(attention, qk_scale: float) -> None:
    attention.scale = qk_scale
    # PyTorch's fused attention always scales by head_dim ** -0.5: use timm's own path.
    if hasattr(attention, "fused_attn"):
        attention.fused_attn = False


def _accept_legacy_vit_arguments(
    cls: type, scale_owner: Callable[[Any], Any], had_drop: bool, shim: str
) -> None:
    original = cls.__init__
    accepted = _parameters(original)
    takes_qk_scale = "qk_scale" in accepted
    renames_drop = had_drop and "drop" not in accepted and "proj_drop" in accepted
    if takes_qk_scale and not renames_drop:
        return

    @functools.wraps(original)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        qk_scale = None if takes_qk_scale else kwargs.pop("qk_scale", None)
        if renames_drop and "drop" in kwargs and "proj_drop" not in kwargs:
            kwargs["proj_drop"] = kwargs.pop("drop")
        original(self, *args, **kwargs)
        if qk_scale is not None:
            _set_attention_scale(scale_owner(self), qk_scale)

    replace_attribute(cls, "__init__", __init__, shim)


def accept_qk_scale(module) -> None:
    """``Block(..., qk_scale=…, drop=…)`` and ``Attention(..., qk_scale=…)`` as in timm 0.3.

    By keyword, as MAE and its forks pass them. Old positional calls are left alone:
    after ``qkv_bias`` the parameters of both classes are in another order today.
    """
    _accept_legacy_vit_arguments(module.Block, lambda block: block.attn, True, "timm.vit_qk_scale")
    _accept_legacy_vit_arguments(module.Attention, lambda attention: attention, False, "timm.vit_qk_scale")


SHIMS = (
    Shim(
        "timm.pil_interp",
        targets=["timm.data.transforms"],
        requires={"timm": ">=0.5"},
        apply=restore_pil_interp,
        restores=["_pil_interp"],
        broke="timm 0.5 (2022-01) removed timm.data.transforms._pil_interp (imported by the "
        "Swin/DeiT-lineage build_transform); its replacement str_to_pil_interp has no fallback",
        summary="restore timm.data.transforms._pil_interp (name -> PIL filter, bilinear for "
        "unknown names as before)",
        replacement="timm.data.transforms.str_to_pil_interp (raises for unknown names)",
        rewrites={"timm.data.transforms._pil_interp": "timm.data.transforms.str_to_pil_interp (no bilinear fallback)"},
    ),
    Shim(
        "timm.layers_submodules",
        targets=["timm.models.layers." + name for name in LAYERS_SUBMODULES],
        kind=PROVIDE,
        requires={"timm": ">=0.9"},
        apply=provide_layers_submodule,
        broke="timm 0.9 (2023-05) moved timm.models.layers to timm.layers; timm.models.layers "
        "still re-exports names, but its submodules (helpers, drop, weight_init, ...) are gone",
        summary="provide timm.models.layers.<submodule> as the timm.layers module of that name",
        replacement="timm.layers.<submodule>, or the names from timm.layers",
        renames={"timm.models.layers." + name: "timm.layers." + name for name in LAYERS_SUBMODULES},
    ),
    Shim(
        "timm.entrypoint_kwargs",
        targets=["timm.models._factory", "timm.models.factory"],
        kind=AFTER_IMPORT,
        requires={"timm": ">=0.6"},
        apply=tolerate_injected_keywords,
        risk=RISK_BEHAVIOUR,
        broke="timm 0.6 (2022-07) create_model passes pretrained_cfg (later also "
        "pretrained_cfg_overlay, cache_dir) to every registered model: models registered with "
        "@register_model by 2021 code fail with TypeError: ... unexpected keyword argument "
        "'pretrained_cfg'",
        summary="create_model builds such a model again without those keywords when the caller "
        "did not set them and the model rejected them",
        replacement="model functions that take **kwargs and pass on only what the model accepts "
        "(drop pretrained_cfg, pretrained_cfg_overlay, cache_dir)",
        rewrites={"timm.models.register_model": "a model function that drops pretrained_cfg and the other "
                  "factory keywords before building the model",
                  "timm.models.registry.register_model": "a model function that drops pretrained_cfg and the "
                  "other factory keywords before building the model"},
    ),
    Shim(
        "timm.vit_qk_scale",
        targets=["timm.models.vision_transformer"],
        requires={"timm": ">=0.4"},
        apply=accept_qk_scale,
        risk=RISK_BEHAVIOUR,
        broke="timm 0.4 (2021) removed qk_scale from the ViT Block and Attention (MAE and its "
        "forks pass qk_scale=None); timm 0.9 (2023-05) renamed Block's drop to proj_drop",
        summary="accept qk_scale (a value sets the attention scale and turns off fused "
        "attention) and drop= (as proj_drop) in the ViT Block and Attention",
        replacement="no qk_scale (set the attention's scale after building it) and proj_drop= for drop=",
        rewrites={"timm.models.vision_transformer.Block(+qk_scale)": "Block(...) without qk_scale; set block.attn.scale",
                  "timm.models.vision_transformer.Attention(+qk_scale)": "Attention(...) without qk_scale; set attn.scale",
                  "timm.models.vision_transformer.Block(+drop)": "Block(..., proj_drop=...)"},
    ),
)

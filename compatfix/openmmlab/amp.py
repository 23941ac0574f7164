"""apex AMP set-up for configs run through stock ``train_segmentor``/``train_detector``.

``mmseg.apex_amp_before_wrappers``
    The Swin/BEiT-era segmentation and detection repositories train in mixed precision
    with apex: their configs say ``optimizer_config = dict(type='DistOptimizerHook',
    use_fp16=True, ...)``, and that hook (the repo's ``mmcv_custom``) runs the backward
    pass as ``with apex.amp.scale_loss(loss, runner.optimizer) as scaled:
    scaled.backward()``. The repo's own copy of ``train_segmentor``/``train_detector``
    calls ``amp.initialize(model, optimizer, opt_level='O1')`` on the unwrapped model and
    sets ``fp16_enabled`` on the modules that have it, before wrapping the model for
    (distributed) data parallelism. Stock mmseg ``train_segmentor`` (0.11-0.30) and mmdet
    ``train_detector`` (2.x) do none of that: run with such a config (the official
    ``tools/train.py``, or a repo that dropped its copy when upgrading), the first
    iteration fails with apex's ``RuntimeError: Invoked 'with amp.scale_loss', but
    internal Amp state has not been initialized. model, optimizer =
    amp.initialize(model, optimizer, opt_level=...) must be called before 'with
    amp.scale_loss'.`` Initialising later is no way out: apex refuses a model that is
    already wrapped ("Parallel wrappers should only be applied to the model(s) AFTER the
    model(s) have been returned from amp.initialize"), and the stock functions wrap the
    model *before* they build the optimizer.

    The fix, when one of them is called with a config whose ``optimizer_config`` has
    ``use_fp16=True`` and apex's AMP is not initialised yet:
    1. build the optimizer from ``cfg.optimizer`` with the ``build_optimizer`` that the
       train function itself uses, on the unwrapped model (moved to the GPU first, as
       apex requires, when there is one);
    2. ``model, optimizer = apex.amp.initialize(model, optimizer, opt_level=...)`` with
       the config's ``opt_level`` (in ``optimizer_config`` or at the top level of the
       config), else ``'O1'`` as those repositories hard-code, and set
       ``fp16_enabled = True`` on every module that has the attribute;
    3. run the stock train function with that model; while it runs, its call
       ``build_optimizer(<wrapped model>, cfg.optimizer)`` gets that same optimizer back,
       so the runner, the hook and apex share one optimizer. (mmdet's ``auto_scale_lr``,
       off by default, rescales ``cfg.optimizer.lr`` in between: the optimizer's rates
       are scaled alike.)
    ``amp.initialize`` thus runs once, before any ``MMDataParallel``/
    ``MMDistributedDataParallel`` (or ``build_dp``/``build_ddp``) wrapper exists and
    before training. One difference from the stock functions: the optimizer is built on
    the unwrapped model, so parameter names seen by an optimizer constructor lack the
    ``module.`` prefix, as in the repositories' own copies.

    Left alone: configs without ``use_fp16=True``, programs that already called
    ``amp.initialize`` (apex's state has ``opt_properties``), and programs where
    ``import apex`` fails (nothing to initialise; stock behaviour). Works against real
    apex and compatfix's apex stand-in alike: only apex's public ``amp.initialize`` and
    its ``amp._amp_state.opt_properties`` marker are used.
"""

from __future__ import annotations

import copy
from types import ModuleType
from typing import Any, Callable

from compatfix import patching

# What the two records (compatfix/shims/mmseg/apis.py, compatfix/shims/mmdet/apis.py) share.
REQUIRES = {"mmcv": ">=1.0,<2.0"}  # mmseg 0.x and mmdet 2.x; their 1.x/3.x need mmcv 2
BROKE = (
    "stock mmseg train_segmentor (0.11-0.30) and mmdet train_detector (2.x) never call "
    "apex.amp.initialize and wrap the model before building the optimizer, so configs with "
    "optimizer_config use_fp16=True (Swin/BEiT DistOptimizerHook) fail at the first `with "
    "amp.scale_loss`: Invoked 'with amp.scale_loss', but internal Amp state has not been "
    "initialized"
)
SUMMARY = (
    "for use_fp16 configs, build the optimizer and call amp.initialize on the unwrapped model "
    "(opt_level from the config or O1, fp16_enabled set) before the train function wraps it, "
    "and hand it that optimizer; left alone when amp is already initialised"
)

# The train function each library's shim wraps, by module, and the shim's name.
SHIMS_BY_MODULE = {"mmseg.apis.train": "mmseg.apex_amp_before_wrappers",
                   "mmdet.apis.train": "mmdet.apex_amp_before_wrappers"}
DEFAULT_OPT_LEVEL = "O1"  # what the Swin/BEiT repositories' train_segmentor passes


def wants_apex_fp16(cfg: Any) -> bool:
    """Whether the config asks its optimizer hook for apex mixed precision."""
    optimizer_config = cfg.get("optimizer_config") or {}
    return bool(optimizer_config.get("use_fp16", False))


def opt_level_of(cfg: Any) -> str:
    optimizer_config = cfg.get("optimizer_config") or {}
    return optimizer_config.get("opt_level") or cfg.get("opt_level") or DEFAULT_OPT_LEVEL


def amp_is_initialized(amp: ModuleType) -> bool:
    """apex (and its stand-in) set ``_amp_state.opt_properties`` in ``initialize``."""
    return hasattr(getattr(amp, "_amp_state", None), "opt_properties")


def _unwrapped(model):
    return getattr(model, "module", model)


def initialize_amp(model: Any, cfg: Any, build_optimizer: Callable, caller: str) -> tuple[Any, Any]:
    """``amp.initialize`` the unwrapped ``model`` with an optimizer built from ``cfg``;
    returns ``(model, optimizer)`` as apex does."""
    import torch
    from apex import amp

    if torch.cuda.is_available():
        model = model.cuda()  # apex wants the parameters on the GPU before initialize
    optimizer = build_optimizer(model, cfg.optimizer)
    opt_level = opt_level_of(cfg)
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    for module in model.modules():
        if hasattr(module, "fp16_enabled"):
            module.fp16_enabled = True
    what = "%s: amp.initialize(opt_level=%r) before wrapping" % (caller, opt_level)
    _tell(
        caller,
        what,
        "the config asks for apex mixed precision (optimizer_config use_fp16=True), which "
        "this %s never initialises (apex would fail at the first `with amp.scale_loss`): "
        "called amp.initialize(model, optimizer, opt_level=%r) on the unwrapped model before "
        "%s wraps it, as the Swin/BEiT training code does, and set fp16_enabled on the "
        "modules that have it." % (caller, opt_level, caller),
    )
    return model, optimizer


def _tell(caller: str, key: str, text: str) -> None:
    from compatfix import _messages

    shim = SHIMS_BY_MODULE["mmdet.apis.train" if caller == "train_detector" else "mmseg.apis.train"]
    patching.record_redirect(shim, key)
    _messages.say(text, key=key)


def _follow_lr_change(optimizer, built_from: Any, asked_for: Any, caller: str) -> None:
    """mmdet's auto_scale_lr rescales ``cfg.optimizer.lr`` inside train_detector, after
    the optimizer was built here: scale its groups' rates alike (the only change that
    train function makes to ``cfg.optimizer``)."""
    old, new = built_from.get("lr"), asked_for.get("lr")
    if old and new and old != new:
        for group in optimizer.param_groups:
            group["lr"] = group["lr"] * new / old
    if {**built_from, "lr": None} != {**asked_for, "lr": None}:
        _tell(
            caller,
            "%s: cfg.optimizer changed after amp.initialize" % caller,
            "%s changed cfg.optimizer after compatfix built the optimizer for amp.initialize "
            "(from %s to %s); training goes on with the optimizer amp was initialised with."
            % (caller, dict(built_from), dict(asked_for)),
        )


def _make_train_function(original, train_module: ModuleType):
    import inspect  # here, not at module level: it costs ~5 ms of every engine load

    signature = inspect.signature(original)
    caller = original.__name__

    def train_function(*args, **kwargs):
        call = signature.bind(*args, **kwargs)
        cfg = call.arguments["cfg"]
        if not wants_apex_fp16(cfg):
            return original(*args, **kwargs)
        try:
            from apex import amp
        except ImportError:
            return original(*args, **kwargs)
        if amp_is_initialized(amp):
            return original(*args, **kwargs)
        stock_build_optimizer = train_module.build_optimizer
        built_from = copy.deepcopy(dict(cfg.optimizer))
        model, optimizer = initialize_amp(call.arguments["model"], cfg, stock_build_optimizer, caller)
        call.arguments["model"] = model

        def build_optimizer(model_to_optimize, optimizer_cfg, *more, **options):
            # The train function asks for the optimizer of the model it has just wrapped.
            if _unwrapped(model_to_optimize) is not model:
                return stock_build_optimizer(model_to_optimize, optimizer_cfg, *more, **options)
            if dict(optimizer_cfg) != built_from:
                _follow_lr_change(optimizer, built_from, dict(optimizer_cfg), caller)
            return optimizer

        train_module.build_optimizer = build_optimizer
        try:
            return original(*call.args, **call.kwargs)
        finally:
            train_module.build_optimizer = stock_build_optimizer

    return train_function


# The stock train functions this shim wraps, by module.
TRAIN_FUNCTIONS = {"mmseg.apis.train": "train_segmentor", "mmdet.apis.train": "train_detector"}


def patch_train_function(module: ModuleType) -> None:
    """Wrap the train function that ``module`` (mmseg's or mmdet's apis.train) defines."""
    patching.wrap(module, TRAIN_FUNCTIONS[module.__name__],
                  lambda current: _make_train_function(current, module), SHIMS_BY_MODULE[module.__name__])

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
    ``use_fp16=True`` and apex's AMP is not initialised yet, decides by what the train
    function does, not by its name (forks and vendored copies are also named
    ``mmseg.apis.train``). While it runs, the names it looks up in its own module for the
    parallel wrapper (``MMDataParallel``, ``MMDistributedDataParallel``, ``build_dp``,
    ``build_ddp``) and for ``build_optimizer`` are watched, and the first of them to be
    called decides:

    - **the wrapper, with apex still uninitialised** (the stock order: wrap, then build
      the optimizer): just before wrapping,
      1. build the optimizer from ``cfg.optimizer`` with the train function's own
         ``build_optimizer`` on the model about to be wrapped (moved to the GPU first,
         as apex requires, when there is one);
      2. ``model, optimizer = apex.amp.initialize(model, optimizer, opt_level=...)`` with
         the config's ``opt_level`` (in ``optimizer_config`` or at the top level of the
         config), else ``'O1'`` as those repositories hard-code, and set
         ``fp16_enabled = True`` on every module that has the attribute;
      3. wrap that model; the train function's later ``build_optimizer(<wrapped
         model>, cfg.optimizer)`` gets that same optimizer back, so the runner, the hook
         and apex share one optimizer. (mmdet's ``auto_scale_lr``, off by default,
         rescales ``cfg.optimizer.lr`` in between: the optimizer's rates are scaled
         alike.)
    - **the wrapper, after apex was initialised during the call**, or
      **build_optimizer on a model not wrapped yet**: this is the repositories' own
      order (build the optimizer on the unwrapped model, ``amp.initialize`` it, then
      wrap). The shim steps aside for the rest of the call: it builds nothing, calls
      nothing of apex, and says nothing. Had it initialised first, such a copy would
      pass the same optimizer through ``amp.initialize`` a second time, which real apex
      refuses ("A given optimizer should only be passed through amp.initialize once").

    One difference from the stock functions in the first case: the optimizer is built on
    the unwrapped model, so parameter names seen by an optimizer constructor lack the
    ``module.`` prefix, as in the repositories' own copies.

    Left alone as well: configs without ``use_fp16=True``, programs that called
    ``amp.initialize`` before the train function (apex's state has
    ``opt_properties``), programs where ``import apex`` fails (nothing to initialise;
    stock behaviour), and train functions that wrap the model through some other name
    (nothing is watched there, so they run as without compatfix). Works against real
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
    "and hand it that optimizer; steps aside when amp was initialised before the wrapper or the "
    "function builds its optimizer before wrapping (vendored copies that initialise amp themselves)"
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
        "the config asks for apex mixed precision (optimizer_config use_fp16=True), and this "
        "%s was about to wrap the model without amp.initialize having run (apex would fail "
        "at the first `with amp.scale_loss`): built the optimizer from cfg.optimizer and "
        "called amp.initialize(model, optimizer, opt_level=%r) on the unwrapped model just "
        "before %s wraps it, as the Swin/BEiT training code does, set fp16_enabled on the "
        "modules that have it, and hand %s that optimizer when it builds its own."
        % (caller, opt_level, caller, caller),
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
            "(from %s to %s); training goes on with the optimizer amp was initialised with%s, "
            "its other settings unchanged."
            % (caller, dict(built_from), dict(asked_for),
               ", its learning rates scaled by the lr change" if old and new and old != new else ""),
        )


# The names under which the train functions of mmseg 0.x / mmdet 2.x look up their
# parallel wrapper (mmcv's classes before mmseg 0.27 / mmdet 2.25, build_dp/build_ddp after).
WRAPPER_NAMES = ("MMDataParallel", "MMDistributedDataParallel", "build_dp", "build_ddp")


class _Decision:
    """What one call of a train function turned out to do (see the module docstring)."""

    def __init__(self) -> None:
        self.outcome: str | None = None  # None until decided; then "initialised" or "aside"
        self.model: Any = None
        self.optimizer: Any = None
        self.built_from: Any = None


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
        decision = _Decision()

        def watch_wrapper(stock_wrapper):
            def wrapper(*wrapper_args, **wrapper_kwargs):
                if decision.outcome is None:
                    if amp_is_initialized(amp):  # the train function initialised apex itself
                        decision.outcome = "aside"
                    else:
                        decision.outcome = "initialised"
                        wrapper_args, wrapper_kwargs = _initialise_before_wrapping(
                            wrapper_args, wrapper_kwargs, cfg, stock_build_optimizer, caller, decision)
                return stock_wrapper(*wrapper_args, **wrapper_kwargs)

            return wrapper

        def build_optimizer(model_to_optimize, optimizer_cfg, *more, **options):
            if decision.outcome is None:
                # Built before any wrapper: the order of the repositories' own copies,
                # which initialise apex themselves next.
                decision.outcome = "aside"
            if decision.outcome == "aside" or _unwrapped(model_to_optimize) is not decision.model:
                return stock_build_optimizer(model_to_optimize, optimizer_cfg, *more, **options)
            if dict(optimizer_cfg) != decision.built_from:
                _follow_lr_change(decision.optimizer, decision.built_from, dict(optimizer_cfg), caller)
            return decision.optimizer

        stock_names = {"build_optimizer": stock_build_optimizer}
        watched = {"build_optimizer": build_optimizer}
        for name in WRAPPER_NAMES:
            if name in vars(train_module):
                stock_names[name] = vars(train_module)[name]
                watched[name] = watch_wrapper(stock_names[name])
        # For this call only, then put back: the train function looks these names up in
        # its module's globals.
        for name, value in watched.items():
            setattr(train_module, name, value)
        try:
            return original(*args, **kwargs)
        finally:
            for name, value in stock_names.items():
                setattr(train_module, name, value)

    return train_function


def _initialise_before_wrapping(args, kwargs, cfg, build_optimizer, caller, decision):
    """``amp.initialize`` the model a wrapper is about to get; returns the wrapper's
    arguments with the model apex handed back."""
    args = list(args)
    if args:
        model = args[0]
    else:
        key = "module" if "module" in kwargs else "model"
        model = kwargs[key]
    decision.built_from = copy.deepcopy(dict(cfg.optimizer))
    model, decision.optimizer = initialize_amp(model, cfg, build_optimizer, caller)
    decision.model = model
    if args:
        args[0] = model
    else:
        kwargs = {**kwargs, key: model}
    return tuple(args), kwargs


# The stock train functions this shim wraps, by module.
TRAIN_FUNCTIONS = {"mmseg.apis.train": "train_segmentor", "mmdet.apis.train": "train_detector"}


def patch_train_function(module: ModuleType) -> None:
    """Wrap the train function that ``module`` (mmseg's or mmdet's apis.train) defines."""
    patching.wrap(module, TRAIN_FUNCTIONS[module.__name__],
                  lambda current: _make_train_function(current, module), SHIMS_BY_MODULE[module.__name__])

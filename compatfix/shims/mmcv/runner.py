"""Shims for mmcv 1.x's runner and the evaluation hooks of mmseg/mmdet built on it.

``mmcv.eval_hook_iter_runner``
    mmseg's ``train_segmentor`` (0.11 to 0.30, and mmdet's ``train_detector`` alike) sets
    ``eval_cfg['by_epoch'] = cfg.runner['type'] != 'IterBasedRunner'``: it compares the
    runner's *registered name*. A subclass of ``IterBasedRunner`` registered under its
    own name (``IterBasedRunnerAmp`` in the BEiT/Swin/SegFormer-era segmentation code)
    gets ``by_epoch=True``; an ``IterBasedRunner`` never calls ``after_train_epoch``, so
    validation silently never runs. The fix decides from the runner the hook actually
    runs under: in the hook's ``before_run``, an evaluation hook with ``by_epoch=True``
    under an ``IterBasedRunner`` instance (subclasses included) is switched to
    ``by_epoch=False`` (evaluate every ``interval`` iterations), once, with a message.
    An ``EpochBasedRunner`` (or any other runner) is never touched, nor is a hook that
    is already iteration-based.

``mmcv.eval_hook_after_timer``
    mmcv PR #1193 (July 2021) moved ``IterTimerHook`` from priority NORMAL to LOW.
    Training code written before that registers its evaluation hook at NORMAL (mmseg
    0.11-0.16's ``runner.register_hook(eval_hook(...))``, mmdet < 2.16), which now runs
    *before* the timer: the evaluation clears the log buffer, the timer then adds only
    ``time``, and ``TextLoggerHook`` fails after the first validation with
    ``KeyError: 'data_time'`` (mmseg#758, mmcv#1261; upstream fixed it by registering
    at LOW, mmseg#766, mmdet#5882). The fix: whenever a hook is registered, an
    evaluation hook that sits before the ``IterTimerHook`` of an ``IterBasedRunner``
    (or an iteration-based evaluation hook under any runner) is moved to right after
    the timer and given its priority, as upstream now does.

An "evaluation hook" is an instance of a class named ``EvalHook`` or ``DistEvalHook``
(or a subclass of one): mmcv's, mmseg 0.11's own (not mmcv-based), mmseg 0.30's and
mmdet's. Nothing here imports mmcv at module level.
"""

from __future__ import annotations


from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_BY_EPOCH = "mmcv.eval_hook_iter_runner"
SHIM_ORDER = "mmcv.eval_hook_after_timer"

EVAL_HOOK_NAMES = ("EvalHook", "DistEvalHook")


def is_eval_hook(hook) -> bool:
    return any(cls.__name__ in EVAL_HOOK_NAMES for cls in type(hook).__mro__)


def _tell(shim: str, key: str, text: str) -> None:
    """Say ``text`` once per process and count it in the compatfix report."""
    from compatfix import _messages

    _messages.say(text, key=key)
    patching.record_redirect(shim, key)


# --- A: by_epoch from the runner the hook runs under --------------------------------------


def switch_to_iterations(hook, runner) -> bool:
    """Make an epoch-based evaluation hook iteration-based under an IterBasedRunner."""
    from mmcv.runner import IterBasedRunner

    if not isinstance(runner, IterBasedRunner) or getattr(hook, "by_epoch", False) is not True:
        return False
    hook.by_epoch = False
    runner_name = type(runner).__name__
    _tell(
        SHIM_BY_EPOCH,
        "%s(by_epoch=True) under %s -> by_epoch=False" % (type(hook).__name__, runner_name),
        "%s has by_epoch=True but runs under %s, an IterBasedRunner, which never ends an "
        "epoch for its hooks, so it would never evaluate: it now evaluates every %s "
        "iterations. (train_segmentor/train_detector set by_epoch from the runner's "
        "registered name, cfg.runner['type'] != 'IterBasedRunner'.)"
        % (type(hook).__name__, runner_name, getattr(hook, "interval", "?")),
    )
    return True


def _make_before_run(original):
    def before_run(self, runner):
        switch_to_iterations(self, runner)
        return original(self, runner)

    return before_run


def patch_eval_hooks(module) -> None:
    """Wrap ``before_run`` of the evaluation hook classes that ``module`` defines."""
    for name in EVAL_HOOK_NAMES:
        cls = vars(module).get(name)
        if isinstance(cls, type) and cls.__module__ == module.__name__:
            patching.wrap(cls, "before_run", _make_before_run, SHIM_BY_EPOCH)


# --- B: evaluation after the iteration timer ----------------------------------------------


def order_eval_after_timer(runner) -> bool:
    """Move evaluation hooks that precede the runner's IterTimerHook to right after it."""
    from mmcv.runner import IterBasedRunner
    from mmcv.runner.hooks import IterTimerHook

    hooks = runner._hooks
    timers = [hook for hook in hooks if isinstance(hook, IterTimerHook)]
    if not timers:
        return False
    timer = timers[-1]
    position = hooks.index(timer)
    iter_runner = isinstance(runner, IterBasedRunner)
    early = [
        hook for hook in hooks[:position]
        if is_eval_hook(hook) and (iter_runner or getattr(hook, "by_epoch", True) is False)
    ]
    if not early:
        return False
    for hook in early:
        hooks.remove(hook)
    position = hooks.index(timer) + 1
    for offset, hook in enumerate(early):
        hooks.insert(position + offset, hook)
        hook.priority = timer.priority
    names = ", ".join(type(hook).__name__ for hook in early)
    _tell(
        SHIM_ORDER,
        "%s before IterTimerHook -> after it" % names,
        "%s was registered at a higher priority than IterTimerHook (which mmcv releases since "
        "mid-2021 register at LOW), so it would run before the timer and make TextLoggerHook fail "
        "with KeyError: 'data_time' after the first validation: it now runs right after "
        "the timer, as mmseg >= 0.17 registers it." % names,
    )
    return True


def _make_register_hook(original):
    def register_hook(self, hook, *args, **kwargs):
        result = original(self, hook, *args, **kwargs)
        order_eval_after_timer(self)
        return result

    return register_hook


def patch_register_hook(module) -> None:
    patching.wrap(module.BaseRunner, "register_hook", _make_register_hook, SHIM_ORDER)


SHIMS = (
    Shim(
        SHIM_BY_EPOCH,
        targets=["mmcv.runner.hooks.evaluation", "mmseg.core.evaluation.eval_hooks"],
        requires={"mmcv": ">=1.0,<2.0"},
        kind=AFTER_IMPORT,
        apply=patch_eval_hooks,
        risk=RISK_BEHAVIOUR,
        broke="mmseg's train_segmentor (0.11-0.30; mmdet's train_detector alike) sets the "
        "eval hook's by_epoch from cfg.runner['type'] != 'IterBasedRunner', so an "
        "IterBasedRunner subclass registered under its own name (IterBasedRunnerAmp) gets "
        "by_epoch=True and validation never runs",
        summary="an EvalHook/DistEvalHook with by_epoch=True running under an IterBasedRunner "
        "(subclasses included) evaluates every `interval` iterations instead; "
        "epoch-based runners are untouched",
        replacement="evaluation={'by_epoch': False} for iteration-based runners, or a train function that "
        "reads the runner's class instead of its registered name",
    ),
    Shim(
        SHIM_ORDER,
        targets=["mmcv.runner.base_runner"],
        requires={"mmcv": ">=1.0,<2.0"},
        kind=AFTER_IMPORT,
        apply=patch_register_hook,
        risk=RISK_BEHAVIOUR,
        broke="mmcv PR #1193 (merged 2021-07-12; 1.7.2 has it) moved IterTimerHook from NORMAL to LOW; an "
        "EvalHook registered at NORMAL (mmseg 0.11-0.16, mmdet < 2.16 and code copied from "
        "them) then runs before the timer and TextLoggerHook fails with KeyError: "
        "'data_time' after the first validation",
        summary="keep evaluation hooks after IterTimerHook (moved there, at the timer's "
        "priority, when registered before it)",
        replacement="register the evaluation hook with priority='LOW' (after IterTimerHook)",
    ),
)

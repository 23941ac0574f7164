"""Shims for ``torch.optim.lr_scheduler``: the ``verbose`` argument that every scheduler
took until torch 2.7, with the lines it printed, and ``SAVE_STATE_WARNING`` (torch 1.4-1.7),
which transformers 3.x-4.x imports to filter the warning it named."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from compatfix.patching import replace_attribute, restore_names, wrap
from compatfix.registry import RISK_BEHAVIOUR, Shim

VERBOSE_SHIM = "torch.optim.lr_scheduler.verbose"

# The schedulers whose __init__ took ``verbose`` (torch 1.7-2.6), always as its last
# positional parameter: torch 1.10's ReduceLROnPlateau(optimizer, ..., eps, verbose),
# StepLR(optimizer, step_size, gamma, last_epoch, verbose), _LRScheduler(optimizer,
# last_epoch, verbose), which subclasses call as super().__init__(optimizer, last_epoch,
# verbose). _LRScheduler inherits LRScheduler's __init__ since torch 2.0.
VERBOSE_SCHEDULERS = (
    "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "SequentialLR", "PolynomialLR", "CosineAnnealingLR", "ReduceLROnPlateau", "CyclicLR",
    "CosineAnnealingWarmRestarts", "OneCycleLR",
)
# The steps that printed each group's new rate (the others delegate to these, or, as
# SequentialLR's, never printed); ReduceLROnPlateau printed in _reduce_lr.
PRINTING_STEPS = ("LRScheduler", "CosineAnnealingWarmRestarts")

# torch 1.4-1.7's message for a scheduler saved without its optimizer.
SAVE_STATE_WARNING = "Please also save or load the state of the optimizer when saving or loading the scheduler."

_ABSENT = object()


def _epoch_text(epoch: Any) -> str:
    return ("%.2f" if isinstance(epoch, float) else "%.5d") % epoch


def print_lr(self, is_verbose, group, lr, epoch=None) -> None:
    """torch < 2.7: print the rate just set for param group ``group`` when ``is_verbose``."""
    if is_verbose:
        if epoch is None:
            print("Adjusting learning rate of group {} to {:.4e}.".format(group, lr))
        else:
            print("Epoch {}: adjusting learning rate of group {} to {:.4e}.".format(_epoch_text(epoch), group, lr))


def _verbose_flag(verbose: Any) -> Any:
    # torch 2.2-2.6's default, which subclasses written for them pass on: it meant off.
    return False if isinstance(verbose, str) and verbose == "deprecated" else verbose


def _with_verbose(signature: inspect.Signature) -> inspect.Signature | None:
    """``signature`` with ``verbose=False`` after its last positional parameter, where it
    was; None where that cannot be said (``*args``, ``**kwargs`` or a ``verbose`` already)."""
    parameters = list(signature.parameters.values())
    kinds = {parameter.kind for parameter in parameters}
    if "verbose" in signature.parameters or kinds & {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}:
        return None
    at = sum(parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD) for parameter in parameters)
    parameters.insert(at, inspect.Parameter("verbose", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=False))
    return signature.replace(parameters=parameters)


def _accepting_verbose(positional: int, old_signature: inspect.Signature) -> Callable[[Any], Any]:
    """``positional``: today's positional parameters after ``self``; ``verbose`` came next."""

    def make(init):
        def __init__(self, *args, **kwargs):
            verbose = kwargs.pop("verbose", _ABSENT)
            if verbose is _ABSENT and len(args) == positional + 1:
                args, verbose = args[:-1], args[-1]
            if verbose is not _ABSENT:
                # Before today's __init__, so that its initial step prints as torch 1.x's
                # did; a call without verbose sets nothing (its state_dict is unchanged).
                self.verbose = _verbose_flag(verbose)
            init(self, *args, **kwargs)

        # inspect.signature (and so the corpus scan, IDEs) shows the old parameter.
        __init__.__signature__ = old_signature  # type: ignore[attr-defined]
        return __init__

    return make


def _printing_step(epoch_of_step: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    def make(step):
        def step_and_print(self, *args, **kwargs):
            result = step(self, *args, **kwargs)
            verbose = vars(self).get("verbose", False)
            # A subclass's own print_lr was called every step with self.verbose (loggers
            # overrode it); torch's only printed when verbose was on.
            if verbose or getattr(type(self), "print_lr", print_lr) is not print_lr:
                epoch = epoch_of_step(self, args[0] if args else kwargs.get("epoch"))
                for group_index, group in enumerate(self.optimizer.param_groups):
                    self.print_lr(verbose, group_index, group["lr"], epoch)
            return result

        return step_and_print

    return make


def _reduce_lr_and_print(reduce_lr):
    def reduce_lr_printing(self, epoch, *args, **kwargs):
        if not vars(self).get("verbose", False):
            return reduce_lr(self, epoch, *args, **kwargs)
        before = [float(group["lr"]) for group in self.optimizer.param_groups]
        result = reduce_lr(self, epoch, *args, **kwargs)
        for group_index, (group, old_lr) in enumerate(zip(self.optimizer.param_groups, before)):
            if float(group["lr"]) != old_lr:
                print("Epoch {}: reducing learning rate of group {} to {:.4e}.".format(
                    _epoch_text(epoch), group_index, float(group["lr"])))
        return result

    return reduce_lr_printing


def accept_verbose(module) -> str | None:
    base = getattr(module, "LRScheduler", None)
    if base is None:
        return "this torch has no LRScheduler base class"
    if "verbose" in inspect.signature(base.__init__).parameters:
        return "this torch's schedulers still take verbose"
    for name in VERBOSE_SCHEDULERS:
        scheduler = getattr(module, name, None)
        if not isinstance(scheduler, type) or "__init__" not in vars(scheduler):
            continue
        today = inspect.signature(scheduler.__init__)
        old = _with_verbose(today)
        if old is None:
            continue
        positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in today.parameters.values()) - 1
        wrap(scheduler, "__init__", _accepting_verbose(positional, old), VERBOSE_SHIM)
    # Old subclasses read self.verbose and call self.print_lr(self.verbose, ...) themselves.
    if not hasattr(base, "verbose"):
        replace_attribute(base, "verbose", False, VERBOSE_SHIM)
    if not hasattr(base, "print_lr"):
        replace_attribute(base, "print_lr", print_lr, VERBOSE_SHIM)
    epoch_rules = {
        # LRScheduler.step(epoch): the epoch given, or none.
        "LRScheduler": lambda self, given: given,
        # CosineAnnealingWarmRestarts.step printed the epoch it resolved (given, or the next).
        "CosineAnnealingWarmRestarts": lambda self, given: self.last_epoch if given is None else given,
    }
    for name in PRINTING_STEPS:
        scheduler = getattr(module, name, None)
        if isinstance(scheduler, type) and "step" in vars(scheduler):
            wrap(scheduler, "step", _printing_step(epoch_rules[name]), VERBOSE_SHIM)
    plateau = getattr(module, "ReduceLROnPlateau", None)
    if plateau is not None and "_reduce_lr" in vars(plateau):
        wrap(plateau, "_reduce_lr", _reduce_lr_and_print, VERBOSE_SHIM)
    return None


def restore_save_state_warning(module) -> None:
    restore_names(module, {"SAVE_STATE_WARNING": SAVE_STATE_WARNING}, "torch.optim.lr_scheduler.save_state_warning")


SHIMS = (
    Shim(
        VERBOSE_SHIM,
        targets=["torch.optim.lr_scheduler"],
        requires={"torch": ">=2.7"},
        apply=accept_verbose,
        risk=RISK_BEHAVIOUR,
        broke="torch 2.7 (2025-04, pytorch/pytorch#147301; deprecated in 2.2) removed the schedulers' verbose "
        "argument and print_lr: ReduceLROnPlateau(optimizer, 'min', verbose=True) and a subclass's "
        "super().__init__(optimizer, last_epoch, verbose) raise TypeError",
        summary="every scheduler that took verbose takes it again, by keyword or in its old last position, "
        "and with verbose=True prints each new rate as torch 1.x did ('Epoch 00005: reducing learning rate of "
        "group 0 to 1.0000e-02.'); print_lr and self.verbose are back; a call without verbose is unchanged",
        replacement="drop verbose and print scheduler.get_last_lr() where the rate should be shown",
        rewrites={
            "torch.optim.lr_scheduler.ReduceLROnPlateau(+verbose)": "drop verbose=; print scheduler.get_last_lr()",
            "torch.optim.lr_scheduler.LRScheduler.print_lr": "print(scheduler.get_last_lr())",
        },
    ),
    Shim(
        "torch.optim.lr_scheduler.save_state_warning",
        targets=["torch.optim.lr_scheduler"],
        requires={"torch": ">=1.8"},
        apply=restore_save_state_warning,
        restores=["SAVE_STATE_WARNING"],
        broke="torch 1.8 (2021-03) removed lr_scheduler.SAVE_STATE_WARNING, which transformers 3.x-4.x's "
        "trainer_pt_utils imports to filter the warning torch 1.4-1.7 gave when a scheduler was saved",
        summary="restore SAVE_STATE_WARNING as torch 1.7's message",
        replacement="nothing: torch >= 1.8 gives no such warning",
        rewrites={"torch.optim.lr_scheduler.SAVE_STATE_WARNING": "'' (torch >= 1.8 no longer warns when a "
                  "scheduler is saved)"},
    ),
)

"""The schedulers' verbose argument (removed in torch 2.7) and SAVE_STATE_WARNING (removed
in torch 1.8), against the real torch 2.14 of the stacks."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern", "paper", "timm1")

VERBOSE = "torch.optim.lr_scheduler.verbose"

# The 2020-22 calls: verbose by keyword, a _LRScheduler subclass passing it positionally
# (super().__init__(optimizer, last_epoch, verbose)) and a CosineAnnealingLR subclass
# passing five positional arguments.
OLD_CALLS = """
import torch
from torch.optim import SGD, lr_scheduler

def optimizer():
    return SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)

opt = optimizer()
plateau = lr_scheduler.ReduceLROnPlateau(opt, "min", factor=0.1, patience=0, verbose=True)
for loss in (1.0, 2.0, 3.0):
    plateau.step(loss)
print("plateau", opt.param_groups[0]["lr"])

opt = optimizer()
exponential = lr_scheduler.ExponentialLR(opt, gamma=0.5, verbose=True)
opt.step()
exponential.step()

class Warmup(lr_scheduler._LRScheduler):
    def __init__(self, optimizer, last_epoch=-1, verbose=False):
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        return [base * (self.last_epoch + 1) / 4 for base in self.base_lrs]

opt = optimizer()
warmup = Warmup(opt)
opt.step()
warmup.step()
print("warmup", opt.param_groups[0]["lr"], warmup.verbose)

class Cosine(lr_scheduler.CosineAnnealingLR):
    def __init__(self, optimizer, T_max, eta_min=0, last_epoch=-1, verbose=False):
        super().__init__(optimizer, T_max, eta_min, last_epoch, verbose)

opt = optimizer()
Cosine(opt, 10, 0.0, -1, True)
print("quiet", "verbose" in lr_scheduler.StepLR(optimizer(), 1).state_dict())
"""


def test_verbose_is_refused_without_the_shim():
    for env in (clean_env(False), clean_env(COMPATFIX_DISABLE=VERBOSE)):
        result = run_python(code=OLD_CALLS, env=env)
        assert result.returncode != 0 and "unexpected keyword argument 'verbose'" in result.stderr, \
            result.stderr[-2000:]


def test_old_calls_run_and_print_as_torch_1_did():
    result = run_python(code=OLD_CALLS)
    assert result.returncode == 0, result.stderr[-2000:]
    # Computed by hand from torch 1.10's rules: ReduceLROnPlateau with patience 0 cuts the
    # rate by 10 at each worse epoch (2 and 3, numbered from 1); the other schedulers print
    # each group's new rate at construction (their initial step) and at every step.
    assert result.stdout.splitlines() == [
        "Epoch 00002: reducing learning rate of group 0 to 1.0000e-02.",
        "Epoch 00003: reducing learning rate of group 0 to 1.0000e-03.",
        "plateau 0.0010000000000000002",
        "Adjusting learning rate of group 0 to 1.0000e-01.",
        "Adjusting learning rate of group 0 to 5.0000e-02.",
        "warmup 0.05 False",
        "Adjusting learning rate of group 0 to 1.0000e-01.",
        "quiet False",
    ]


def test_signatures_show_verbose_where_it_was():
    result = run_python(code="""
        import inspect
        from torch.optim import lr_scheduler
        for name in ("ReduceLROnPlateau", "StepLR", "_LRScheduler"):
            parameters = list(inspect.signature(getattr(lr_scheduler, name)).parameters)
            print(name, parameters[-1], len(parameters))
        print(list(inspect.signature(lr_scheduler.LambdaLR.__init__, follow_wrapped=False).parameters))
        """)
    # torch 1.10: ReduceLROnPlateau(optimizer, mode, factor, patience, threshold,
    # threshold_mode, cooldown, min_lr, eps, verbose), StepLR(optimizer, step_size, gamma,
    # last_epoch, verbose), _LRScheduler(optimizer, last_epoch, verbose)
    assert result.stdout.splitlines() == [
        "ReduceLROnPlateau verbose 10",
        "StepLR verbose 5",
        "_LRScheduler verbose 3",
        "['self', 'optimizer', 'lr_lambda', 'last_epoch', 'verbose']",
    ], result.stderr[-2000:]


def test_warm_restarts_print_the_epoch_and_old_subclasses_call_print_lr():
    result = run_python(code="""
        import torch
        from torch.optim import SGD, lr_scheduler
        opt = SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
        restarts = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, verbose=True)
        opt.step()
        restarts.step()
        restarts.step(1.5)

        class Logged(lr_scheduler.StepLR):
            def print_lr(self, is_verbose, group, lr, epoch=None):
                print("logged", is_verbose, group, round(lr, 6), epoch)

        opt = SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
        logged = Logged(opt, step_size=1, gamma=0.5)
        opt.step()
        logged.step()
        """)
    # SGDR: lr = 0.1 * (1 + cos(pi * T_cur / 2)) / 2: T_cur 0 -> 0.1, 1 -> 0.05,
    # 1.5 -> 0.05 * (1 + cos(0.75 pi)) = 0.014645
    assert result.stdout.splitlines() == [
        "Epoch 00000: adjusting learning rate of group 0 to 1.0000e-01.",
        "Epoch 00001: adjusting learning rate of group 0 to 5.0000e-02.",
        "Epoch 1.50: adjusting learning rate of group 0 to 1.4645e-02.",
        "logged False 0 0.1 None",
        "logged False 0 0.05 None",
    ], result.stderr[-2000:]


SAVE_STATE = """
from torch.optim.lr_scheduler import SAVE_STATE_WARNING
print(SAVE_STATE_WARNING)
"""


def test_save_state_warning_is_missing_without_compatfix():
    for env in (clean_env(False), clean_env(COMPATFIX_DISABLE="torch.optim.lr_scheduler.save_state_warning")):
        result = run_python(code=SAVE_STATE, env=env)
        assert "cannot import name 'SAVE_STATE_WARNING'" in result.stderr


def test_save_state_warning_is_torch_1_7s_message():
    result = run_python(code=SAVE_STATE)
    assert result.stdout.strip() == ("Please also save or load the state of the optimizer when saving or "
                                     "loading the scheduler."), result.stderr

"""What 1.x's loops did that 2.x's no longer do, as 2.x callbacks: for three removed
``Trainer`` keywords (``terminate_on_nan``, ``track_grad_norm``, ``stochastic_weight_avg``),
which ``_trainer_keywords.translate`` adds, and the removed ``*_epoch_end(outputs)`` hooks,
which ``pytorch_lightning.trainer.epoch_end_hooks`` adds. The classes subclass Lightning's, so they are made at their
first use (this module is imported by the shim index generator, where Lightning may be
absent)."""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _classes() -> dict[str, type]:
    import torch
    from pytorch_lightning import Callback
    from pytorch_lightning.callbacks import StochasticWeightAveraging
    from pytorch_lightning.utilities import grad_norm

    class TerminateOnNan(Callback):
        """1.5's ``terminate_on_nan=True``: the training step's loss must be finite
        (``check_finite_loss``, before backward), and so must every parameter after backward
        (``detect_nan_parameters``); otherwise ValueError, with 1.x's messages."""

        def on_before_backward(self, trainer: Any, pl_module: Any, loss: Any) -> None:
            if loss is not None and not torch.isfinite(loss).all():
                raise ValueError(f"The loss returned in `training_step` is {loss}.")

        def on_after_backward(self, trainer: Any, pl_module: Any) -> None:
            for name, param in pl_module.named_parameters():
                if not torch.isfinite(param).all():
                    raise ValueError(f"Detected nan and/or inf values in `{name}`."
                                     " Check your forward pass for numerically unstable operations.")

    class TrackGradNorm(Callback):
        """1.5's ``track_grad_norm=p``: before each optimizer step, the p-norm of each
        parameter's gradient and their total, logged on step and epoch as
        ``grad_{p}_norm_{name}`` / ``grad_{p}_norm_total`` (1.x's ``log_grad_norm``)."""

        def __init__(self, norm_type: Any) -> None:
            self.norm_type = norm_type

        def on_before_optimizer_step(self, trainer: Any, pl_module: Any, optimizer: Any) -> None:
            norms = grad_norm(pl_module, self.norm_type, group_separator="_")
            if norms:
                pl_module.log_dict(norms, on_step=True, on_epoch=True, prog_bar=False, logger=True)

    class SWAAtOptimizerLrs(StochasticWeightAveraging):
        """1.5's ``stochastic_weight_avg=True``: ``StochasticWeightAveraging()`` with 1.x's
        defaults, whose ``swa_lrs=None`` (2.x requires a value) took the optimizer's
        learning rates when averaging starts."""

        def __init__(self) -> None:
            super().__init__(swa_lrs=1.0)  # a placeholder, replaced before it is read
            self._lrs_from_optimizer = True

        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            if self._lrs_from_optimizer and self.swa_start <= trainer.current_epoch <= self.swa_end:
                self._swa_lrs = [group["lr"] for group in trainer.optimizers[0].param_groups]
                self._lrs_from_optimizer = False
            super().on_train_epoch_start(trainer, pl_module)

    class EpochEndOutputs(Callback):
        """1.x's ``training_epoch_end`` / ``validation_epoch_end`` / ``test_epoch_end``
        (removed in 2.0), for a module that defines them: the step outputs of the epoch are
        kept and given to the hook at the epoch's end, before any other callback's epoch-end
        hook (1.5 ran it before ``on_*_epoch_end``). The shapes are 1.5's: the training hook
        gets one dict per batch (``{"loss": the detached loss, **the other keys}``, the
        batches whose step returned nothing left out) and is not called for an epoch without
        one; an evaluation hook gets the list of its step's returns (``None`` left out), one
        list per dataloader where there are several."""

        def __init__(self) -> None:
            self.train: list[Any] = []
            self.evaluation: dict[int, list[Any]] = {}

        @staticmethod
        def _defines(pl_module: Any, hook: str) -> bool:
            return callable(getattr(pl_module, hook, None))

        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            self.train = []

        def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
            if outputs and self._defines(pl_module, "training_epoch_end"):
                self.train.append(outputs)

        def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            outputs, self.train = self.train, []
            if outputs and self._defines(pl_module, "training_epoch_end"):
                self._call(pl_module, "training_epoch_end", outputs)

        def _evaluation_start(self, *args: Any) -> None:
            self.evaluation = {}

        def _evaluation_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int,
                                  dataloader_idx: int = 0) -> None:
            if outputs is not None:
                self.evaluation.setdefault(dataloader_idx, []).append(outputs)

        def _evaluation_end(self, trainer: Any, pl_module: Any, hook: str, dataloaders: int) -> None:
            collected, self.evaluation = self.evaluation, {}
            if self._defines(pl_module, hook):
                outputs = [collected.get(index, []) for index in range(dataloaders)]
                self._call(pl_module, hook, outputs[0] if dataloaders == 1 else outputs)

        on_validation_epoch_start = on_test_epoch_start = _evaluation_start
        on_validation_batch_end = on_test_batch_end = _evaluation_batch_end

        def on_validation_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            batches = trainer.num_sanity_val_batches if trainer.sanity_checking else trainer.num_val_batches
            self._evaluation_end(trainer, pl_module, "validation_epoch_end", len(batches))

        def on_test_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            self._evaluation_end(trainer, pl_module, "test_epoch_end", len(trainer.num_test_batches))

        @staticmethod
        def _call(pl_module: Any, hook: str, outputs: Any) -> None:
            if getattr(pl_module, hook)(outputs) is not None:
                from pytorch_lightning.utilities.exceptions import MisconfigurationException

                raise MisconfigurationException(  # as 1.5 did for training_epoch_end
                    "`%s` expects a return of None. HINT: remove the return statement in `%s`." % (hook, hook))

    return {"TerminateOnNan": TerminateOnNan, "TrackGradNorm": TrackGradNorm, "SWAAtOptimizerLrs": SWAAtOptimizerLrs,
            "EpochEndOutputs": EpochEndOutputs}


def terminate_on_nan() -> Any:
    return _classes()["TerminateOnNan"]()


def track_grad_norm(norm_type: Any) -> Any:
    return _classes()["TrackGradNorm"](norm_type)


def swa_at_optimizer_lrs() -> Any:
    return _classes()["SWAAtOptimizerLrs"]()


def epoch_end_outputs_type() -> type:
    return _classes()["EpochEndOutputs"]

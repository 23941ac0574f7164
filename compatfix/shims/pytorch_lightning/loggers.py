"""Shims for ``pytorch_lightning.loggers``: ``LoggerCollection``, the logger 1.x built from
``Trainer(logger=[a, b])`` and code built itself, which 1.6 deprecated (for
``trainer.loggers``, a list) and 1.8 removed. It is 1.5's class again (loggers/base.py): a
logger whose every call goes to each of its loggers, its ``experiment`` the list of theirs,
its ``name`` and ``version`` theirs joined with ``_``.

``TestTubeLogger`` (``loggers`` and 0.x's ``pytorch_lightning.logging``) is not restored:
it drove the ``test_tube`` package, unmaintained since 2020 and not installable on today's
Python."""

from __future__ import annotations

import functools
from typing import Any

from compatfix.patching import Lazy, restore_names
from compatfix.registry import AFTER_IMPORT, Shim

SHIM_NAME = "pytorch_lightning.loggers.LoggerCollection"


@functools.cache
def logger_collection() -> type:
    from pytorch_lightning.loggers import Logger

    class LoggerCollection(Logger):
        """1.5's ``LoggerCollection(logger_iterable)``."""

        def __init__(self, logger_iterable: Any) -> None:
            super().__init__()
            self._logger_iterable = logger_iterable

        def __getitem__(self, index: int) -> Any:
            return list(self._logger_iterable)[index]

        def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
            for logger in self._logger_iterable:
                logger.after_save_checkpoint(checkpoint_callback)

        @property
        def experiment(self) -> list[Any]:
            return [logger.experiment for logger in self._logger_iterable]

        def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
            for logger in self._logger_iterable:
                logger.log_metrics(metrics=metrics, step=step)

        def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
            for logger in self._logger_iterable:
                logger.log_hyperparams(params, *args, **kwargs)

        def log_graph(self, model: Any, input_array: Any = None) -> None:
            for logger in self._logger_iterable:
                logger.log_graph(model, input_array)

        def save(self) -> None:
            for logger in self._logger_iterable:
                logger.save()

        def finalize(self, status: str) -> None:
            for logger in self._logger_iterable:
                logger.finalize(status)

        @property
        def save_dir(self) -> None:
            return None  # 1.5: a collection has no single directory

        @property
        def name(self) -> str:
            return "_".join(str(logger.name) for logger in self._logger_iterable)

        @property
        def version(self) -> str:
            return "_".join(str(logger.version) for logger in self._logger_iterable)

    LoggerCollection.__module__ = "pytorch_lightning.loggers"
    LoggerCollection.__qualname__ = "LoggerCollection"
    return LoggerCollection


def restore_logger_collection(module) -> None:
    restore_names(module, {"LoggerCollection": Lazy(logger_collection)}, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["pytorch_lightning.loggers"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=1.8"},
        apply=restore_logger_collection,
        restores=["LoggerCollection"],
        broke="pytorch-lightning 1.8 (2022-11) removed pytorch_lightning.loggers.LoggerCollection (deprecated in "
        "1.6 for trainer.loggers)",
        summary="restore 1.5's LoggerCollection: a logger forwarding every call to each of its loggers, with "
        "their experiments as a list and their names and versions joined by '_'",
        replacement="Trainer(logger=[a, b]) and trainer.loggers",
        rewrites={"pytorch_lightning.loggers.LoggerCollection": "a list of loggers: Trainer(logger=[a, b]), "
                  "trainer.loggers"},
    ),
)

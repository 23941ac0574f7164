"""Shims for ``transformers.trainer_utils``: ``EvaluationStrategy``, 4.x's enum of
evaluation schedules (``no``, ``steps``, ``epoch``) that 4.x renamed ``IntervalStrategy``,
and ``default_hp_space``, 4.x's table of the default search space of each
hyper-parameter search backend, both removed in transformers 5."""

from __future__ import annotations

from compatfix.patching import Lazy, restore_names
from compatfix.registry import Shim


def default_hp_spaces() -> dict:
    """4.x's ``default_hp_space``: backend -> its ``default_hp_space_<backend>`` function,
    for the backends transformers 5 still has."""
    import transformers.trainer_utils as trainer_utils

    return {backend: getattr(trainer_utils, "default_hp_space_" + backend.value)
            for backend in trainer_utils.HPSearchBackend
            if hasattr(trainer_utils, "default_hp_space_" + backend.value)}


def interval_strategy():
    import transformers.trainer_utils as trainer_utils

    return trainer_utils.IntervalStrategy


NAMES = {"EvaluationStrategy": Lazy(interval_strategy), "default_hp_space": Lazy(default_hp_spaces)}


def restore_trainer_utils(module) -> None:
    restore_names(module, NAMES, "transformers.trainer_utils.EvaluationStrategy")


SHIMS = (
    Shim(
        "transformers.trainer_utils.EvaluationStrategy",
        targets=["transformers.trainer_utils"],
        # 4.31 removed default_hp_space, 5.0 EvaluationStrategy
        requires={"transformers": ">=4.31"},
        apply=restore_trainer_utils,
        restores=list(NAMES),
        broke="transformers 5 removed trainer_utils.EvaluationStrategy (IntervalStrategy since 4.x), and 4.31 "
        "trainer_utils.default_hp_space",
        summary="restore EvaluationStrategy as IntervalStrategy (the same no/steps/epoch values) and "
        "default_hp_space as the backend -> default_hp_space_<backend> table",
        replacement="IntervalStrategy; default_hp_space_optuna / _ray / _wandb",
        renames={"transformers.trainer_utils.EvaluationStrategy": "transformers.trainer_utils.IntervalStrategy"},
        rewrites={"transformers.trainer_utils.default_hp_space": "the default_hp_space_<backend> functions"},
    ),
)

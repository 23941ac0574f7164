"""Shims for ``transformers.integrations``: ``default_hp_search_backend``, which 4.31 moved to
``transformers.hyperparameter_search`` with another contract. 4.x's answered the name of the
first installed backend among Optuna and Ray Tune (and SigOpt, whose support transformers 5
removed, so it is not offered) and None where none is; today's also offers Weights & Biases
and raises where none is installed. ``is_fairscale_available``, which 4.35 removed with the
Trainer's fairscale support, answers as 4.x did: whether fairscale can be imported."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim


def default_hp_search_backend() -> str | None:
    """transformers 4.x: "optuna" or "ray", whichever is installed first in that order, else None."""
    from transformers.integrations import is_optuna_available, is_ray_tune_available

    if is_optuna_available():
        return "optuna"
    if is_ray_tune_available():
        return "ray"
    return None


default_hp_search_backend.__module__ = "transformers.integrations"


def is_fairscale_available() -> bool:
    """transformers 4.x: whether the fairscale package is installed."""
    import importlib.util

    return importlib.util.find_spec("fairscale") is not None


is_fairscale_available.__module__ = "transformers.integrations"


def restore_fairscale_probe(module) -> None:
    restore_names(module, {"is_fairscale_available": is_fairscale_available},
                  "transformers.integrations.is_fairscale_available")


def restore_default_backend(module) -> None:
    restore_names(module, {"default_hp_search_backend": default_hp_search_backend},
                  "transformers.integrations.default_hp_search_backend")


SHIMS = (
    Shim(
        "transformers.integrations.default_hp_search_backend",
        targets=["transformers.integrations"],
        requires={"transformers": ">=4.31"},
        apply=restore_default_backend,
        restores=["default_hp_search_backend"],
        broke="transformers 4.31 moved default_hp_search_backend from transformers.integrations to "
        "transformers.hyperparameter_search, where it raises instead of answering None when no backend is installed",
        summary="restore 4.x's: 'optuna' or 'ray' by what is installed, else None",
        replacement="transformers.hyperparameter_search.default_hp_search_backend() (raises RuntimeError when "
        "no backend is installed)",
        rewrites={"transformers.integrations.default_hp_search_backend":
                  "transformers.hyperparameter_search.default_hp_search_backend (raises where 4.x gave None)"},
    ),
    Shim(
        "transformers.integrations.is_fairscale_available",
        targets=["transformers.integrations"],
        requires={"transformers": ">=4.35"},
        apply=restore_fairscale_probe,
        restores=["is_fairscale_available"],
        broke="transformers 4.35 removed the Trainer's fairscale support (sharded_ddp) and "
        "transformers.integrations.is_fairscale_available, which 2020-22 scripts ask before using fairscale",
        summary="restore 4.x's probe: whether fairscale can be imported (what the script does with it is its "
        "own; the Trainer no longer shards through it)",
        replacement="importlib.util.find_spec('fairscale') is not None; torch's FSDP replaces fairscale",
        rewrites={"transformers.integrations.is_fairscale_available": "importlib.util.find_spec('fairscale') is not None"},
    ),
)

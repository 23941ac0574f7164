"""Shims for ``transformers.deepspeed``, the module 4.x kept, after moving its DeepSpeed
integration to ``transformers.integrations.deepspeed`` (4.35), as a re-export of the names below,
and that a later release removed. Provided with those very objects."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim

# what 4.x's transformers/deepspeed.py re-exported from transformers.integrations.deepspeed
NAMES = ("HfDeepSpeedConfig", "HfTrainerDeepSpeedConfig", "deepspeed_config", "deepspeed_init",
         "deepspeed_load_checkpoint", "deepspeed_optim_sched", "is_deepspeed_available", "is_deepspeed_zero3_enabled",
         "set_hf_deepspeed_config", "unset_hf_deepspeed_config")


def provide_deepspeed(module) -> None:
    import transformers.integrations.deepspeed as integration

    restore_names(module, {name: getattr(integration, name) for name in NAMES if hasattr(integration, name)},
                  "transformers.deepspeed")


SHIMS = (
    Shim(
        "transformers.deepspeed",
        targets=["transformers.deepspeed"],
        kind=PROVIDE,
        requires={"transformers": ">=4.46"},
        apply=provide_deepspeed,
        broke="transformers removed transformers.deepspeed, 4.x's module of the DeepSpeed integration "
        "(HfDeepSpeedConfig, deepspeed_init, is_deepspeed_zero3_enabled ...), a re-export of "
        "transformers.integrations.deepspeed since 4.35",
        summary="provide it with transformers.integrations.deepspeed's objects",
        replacement="transformers.integrations.deepspeed",
        renames={"transformers.deepspeed": "transformers.integrations.deepspeed"},
    ),
)

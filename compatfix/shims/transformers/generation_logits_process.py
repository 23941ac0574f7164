"""Shims for ``transformers.generation_logits_process``, the 4.x module whose contents moved to
``transformers.generation.logits_process`` late in 4.x: provided with the very objects that module
has today."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim
from compatfix.shims.transformers.generation_utils import MOVED, public_names


def provide_logits_process(module) -> None:
    restore_names(module, public_names("transformers.generation.logits_process"), "transformers.generation_logits_process")


SHIMS = (
    Shim(
        "transformers.generation_logits_process",
        targets=["transformers.generation_logits_process"],
        kind=PROVIDE,
        requires={"transformers": ">=4.25"},
        apply=provide_logits_process,
        broke=MOVED + "removed the old transformers.generation_logits_process module with it",
        summary="provide it with transformers.generation.logits_process's objects",
        replacement="transformers.generation.logits_process",
        renames={"transformers.generation_logits_process": "transformers.generation.logits_process"},
    ),
)

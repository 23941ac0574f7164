"""Shims for ``transformers.generation_stopping_criteria``, the 4.x module whose contents moved to
``transformers.generation.stopping_criteria`` late in 4.x: provided with the very objects that module
has today."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim
from compatfix.shims.transformers.generation_utils import MOVED, public_names


def provide_stopping_criteria(module) -> None:
    restore_names(module, public_names("transformers.generation.stopping_criteria"), "transformers.generation_stopping_criteria")


SHIMS = (
    Shim(
        "transformers.generation_stopping_criteria",
        targets=["transformers.generation_stopping_criteria"],
        kind=PROVIDE,
        requires={"transformers": ">=4.25"},
        apply=provide_stopping_criteria,
        broke=MOVED + "removed the old transformers.generation_stopping_criteria module with it",
        summary="provide it with transformers.generation.stopping_criteria's objects",
        replacement="transformers.generation.stopping_criteria",
        renames={"transformers.generation_stopping_criteria": "transformers.generation.stopping_criteria"},
    ),
)

"""Shims for ``transformers.generation_beam_search``, the 4.x module of the beam-search scorers
(``BeamSearchScorer``, ``BeamHypotheses``, ...), whose contents moved to
``transformers.generation.beam_search`` in 4.25: provided with the very objects that module has.
transformers 5 deleted the scorers, so nothing is provided there."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim
from compatfix.shims.transformers.generation_utils import MOVED, public_names


def provide_beam_search(module) -> None:
    restore_names(module, public_names("transformers.generation.beam_search"), "transformers.generation_beam_search")


SHIMS = (
    Shim(
        "transformers.generation_beam_search",
        targets=["transformers.generation_beam_search"],
        kind=PROVIDE,
        requires={"transformers": ">=4.25,<5.0"},
        apply=provide_beam_search,
        broke=MOVED + "removed the old transformers.generation_beam_search module with it",
        summary="provide it with transformers.generation.beam_search's objects",
        replacement="transformers.generation.beam_search",
        renames={"transformers.generation_beam_search": "transformers.generation.beam_search"},
    ),
)

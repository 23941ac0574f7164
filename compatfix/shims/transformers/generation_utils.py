"""Shims for the 4.x generation modules transformers 5 removed, whose contents moved into
the ``transformers.generation`` package late in 4.x: ``transformers.generation_utils``,
``generation_logits_process`` and ``generation_stopping_criteria`` (next to this file) are provided as
modules holding the very objects ``transformers.generation`` has today.

4.x's per-strategy output classes (``GreedySearchDecoderOnlyOutput``, ...) were merged
into ``GenerateDecoderOnlyOutput`` and its kin in 4.39, with the old names kept as
aliases of them; those aliases are given back. ``top_k_top_p_filtering`` (removed in 4.39)
is rebuilt as 4.x built it: ``TopKLogitsWarper`` then ``TopPLogitsWarper``.
"""

from __future__ import annotations

from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim

MOVED = "transformers 4.25 moved its generation code into the transformers.generation package (late 2022) and "

# 4.x output class -> the transformers.generation class it is an alias of (4.39+).
OUTPUT_ALIASES = {
    "GreedySearchDecoderOnlyOutput": "GenerateDecoderOnlyOutput",
    "SampleDecoderOnlyOutput": "GenerateDecoderOnlyOutput",
    "ContrastiveSearchDecoderOnlyOutput": "GenerateDecoderOnlyOutput",
    "GreedySearchEncoderDecoderOutput": "GenerateEncoderDecoderOutput",
    "SampleEncoderDecoderOutput": "GenerateEncoderDecoderOutput",
    "ContrastiveSearchEncoderDecoderOutput": "GenerateEncoderDecoderOutput",
    "BeamSearchDecoderOnlyOutput": "GenerateBeamDecoderOnlyOutput",
    "BeamSampleDecoderOnlyOutput": "GenerateBeamDecoderOnlyOutput",
    "BeamSearchEncoderDecoderOutput": "GenerateBeamEncoderDecoderOutput",
    "BeamSampleEncoderDecoderOutput": "GenerateBeamEncoderDecoderOutput",
}


def top_k_top_p_filtering(
    logits: Any,
    top_k: int = 0,
    top_p: float = 1.0,
    filter_value: float = -float("Inf"),
    min_tokens_to_keep: int = 1,
) -> Any:
    """transformers 4.x's top-k / nucleus filter of a ``(batch, vocab)`` logits tensor:
    ``top_k > 0`` keeps the k highest, ``top_p < 1`` the smallest set whose probability
    reaches ``top_p``; the others become ``filter_value``."""
    from transformers.generation import TopKLogitsWarper, TopPLogitsWarper

    if top_k > 0:
        logits = TopKLogitsWarper(top_k=top_k, filter_value=filter_value,
                                  min_tokens_to_keep=min_tokens_to_keep)(None, logits)
    if 0 <= top_p <= 1.0:
        logits = TopPLogitsWarper(top_p=top_p, filter_value=filter_value,
                                  min_tokens_to_keep=min_tokens_to_keep)(None, logits)
    return logits


def public_names(module_name: str) -> dict[str, Any]:
    import importlib

    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return {name: getattr(module, name) for name in names if hasattr(module, name)}


def provide_generation_utils(module) -> None:
    import transformers.generation as generation
    import transformers.generation.utils as utils

    names = public_names("transformers.generation.utils")
    names.update({old: getattr(generation, new) for old, new in OUTPUT_ALIASES.items() if hasattr(generation, new)})
    names["GenerationMixin"] = utils.GenerationMixin
    names["top_k_top_p_filtering"] = top_k_top_p_filtering
    restore_names(module, names, "transformers.generation_utils")


SHIMS = (
    Shim(
        "transformers.generation_utils",
        targets=["transformers.generation_utils"],
        kind=PROVIDE,
        requires={"transformers": ">=4.40"},
        apply=provide_generation_utils,
        broke=MOVED + "4.40 removed the old transformers.generation_utils module",
        summary="provide it with transformers.generation.utils' objects, 4.x's output class names as aliases "
        "of today's, and top_k_top_p_filtering as TopKLogitsWarper then TopPLogitsWarper",
        replacement="transformers.generation (GenerationMixin, GenerateDecoderOnlyOutput, ...)",
        renames={"transformers.generation_utils.GenerationMixin": "transformers.generation.GenerationMixin"},
        rewrites={"transformers.generation_utils": "transformers.generation",
                  "transformers.generation_utils.top_k_top_p_filtering": "TopKLogitsWarper then TopPLogitsWarper"},
    ),
)

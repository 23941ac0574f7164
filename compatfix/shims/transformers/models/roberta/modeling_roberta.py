"""Shims for ``transformers.models.roberta.modeling_roberta``: the module-level
``create_position_ids_from_input_ids`` of 4.x, which 2020-22 RoBERTa-style models import to
number their positions. transformers 5 made it a static method of ``RobertaEmbeddings`` and
renamed its ``past_key_values_length`` to ``cache_length``; the restored function calls it.
"""

from __future__ import annotations

from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import Shim


def create_position_ids_from_input_ids(input_ids: Any, padding_idx: int, past_key_values_length: int = 0) -> Any:
    """transformers 4.x: non-padding tokens numbered from ``padding_idx + 1`` (after
    ``past_key_values_length`` earlier positions), padding tokens at ``padding_idx``."""
    from transformers.models.roberta.modeling_roberta import RobertaEmbeddings

    return RobertaEmbeddings.create_position_ids_from_input_ids(input_ids, padding_idx,
                                                               cache_length=past_key_values_length)


create_position_ids_from_input_ids.__module__ = "transformers.models.roberta.modeling_roberta"


def restore_position_ids(module) -> None:
    restore_names(module, {"create_position_ids_from_input_ids": create_position_ids_from_input_ids},
                  "transformers.models.roberta.modeling_roberta.create_position_ids_from_input_ids")


SHIMS = (
    Shim(
        "transformers.models.roberta.modeling_roberta.create_position_ids_from_input_ids",
        targets=["transformers.models.roberta.modeling_roberta"],
        requires={"transformers": ">=5.0"},
        apply=restore_position_ids,
        restores=["create_position_ids_from_input_ids"],
        broke="transformers 5 made RoBERTa's create_position_ids_from_input_ids a static method of RobertaEmbeddings "
        "(its past_key_values_length now cache_length) and removed the module-level function",
        summary="restore the function, on RobertaEmbeddings.create_position_ids_from_input_ids",
        replacement="RobertaEmbeddings.create_position_ids_from_input_ids(input_ids, padding_idx, cache_length=...)",
        rewrites={"transformers.models.roberta.modeling_roberta.create_position_ids_from_input_ids":
                  "RobertaEmbeddings.create_position_ids_from_input_ids(input_ids, padding_idx, cache_length=...)"},
    ),
)

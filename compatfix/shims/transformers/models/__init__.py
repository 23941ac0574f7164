"""Shims for ``transformers.models``: each model module's shims in the file that mirrors it.

This file holds the one kind of shim that several model modules share: the frozen checkpoint
lists ``<MODEL>_PRETRAINED_MODEL_ARCHIVE_LIST`` that 4.x's ``modeling_<model>`` modules defined
and transformers 4.41 removed, restored at the module paths 2020-22 code imports them from as
the very objects the top-level ``transformers.archive_maps`` shim restores (4.30.2's data).
"""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim
from compatfix.shims.transformers import ARCHIVE_REPLACEMENT, archive_values

# modeling module -> the models whose archive list it defined (those 2020-22 code imports from there)
MODEL_LISTS_BY_MODULE = {
    "transformers.models.albert.modeling_albert": ("ALBERT",),
    "transformers.models.bert.modeling_bert": ("BERT",),
    "transformers.models.convbert.modeling_convbert": ("CONVBERT",),
    "transformers.models.deberta.modeling_deberta": ("DEBERTA",),
    "transformers.models.deberta_v2.modeling_deberta_v2": ("DEBERTA_V2",),
    "transformers.models.dpr.modeling_dpr": ("DPR_CONTEXT_ENCODER", "DPR_QUESTION_ENCODER", "DPR_READER"),
    "transformers.models.electra.modeling_electra": ("ELECTRA",),
    "transformers.models.flaubert.modeling_flaubert": ("FLAUBERT",),
    "transformers.models.gpt2.modeling_gpt2": ("GPT2",),
    "transformers.models.lxmert.modeling_lxmert": ("LXMERT",),
    "transformers.models.roberta.modeling_roberta": ("ROBERTA",),
    "transformers.models.t5.modeling_t5": ("T5",),
    "transformers.models.tapas.modeling_tapas": ("TAPAS",),
    "transformers.models.xlm.modeling_xlm": ("XLM",),
    "transformers.models.xlnet.modeling_xlnet": ("XLNET",),
}


def _archive_list_shim(module_name: str, models: tuple[str, ...]) -> Shim:
    names = tuple(model + "_PRETRAINED_MODEL_ARCHIVE_LIST" for model in models)
    shim_name = module_name + "." + names[0]

    def restore_archive_lists(module) -> None:
        restore_names(module, archive_values(names), shim_name)

    return Shim(
        shim_name,
        targets=[module_name],
        requires={"transformers": ">=4.41"},
        apply=restore_archive_lists,
        restores=names,
        broke="transformers 4.41 removed %s from %s" % (", ".join(names), module_name),
        summary="restore 4.30.2's checkpoint list%s, the object the top-level name is" % ("s" * (len(names) > 1)),
        replacement=ARCHIVE_REPLACEMENT,
        rewrites={module_name + "." + name: ARCHIVE_REPLACEMENT for name in names},
    )


SHIMS = tuple(_archive_list_shim(module_name, models) for module_name, models in MODEL_LISTS_BY_MODULE.items())

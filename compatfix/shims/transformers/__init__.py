"""Shims for transformers: the 4.x API that 2020-22 PyTorch code uses and transformers 5
removed. Each submodule's shims live in the file that mirrors it (``optimization.py`` for
``transformers.optimization``, ``models/auto/modeling_auto.py`` for the auto classes);
this file gives the top-level ``transformers`` namespace back the names 4.x exported
from there, as the very objects the submodule shims restore.

The availability probes answer what is true today: transformers 5 runs on PyTorch only,
so TensorFlow and Flax are never available to it, and a TPU is torch_xla's.
"""

from __future__ import annotations

import functools

from compatfix.patching import Lazy, restore_names
from compatfix.registry import Shim


def is_tf_available() -> bool:
    """transformers 4.x's probe for TensorFlow models: transformers 5 has none, so False."""
    return False


def is_flax_available() -> bool:
    """transformers 4.x's probe for Flax/JAX models: transformers 5 has none, so False."""
    return False


def is_torch_tpu_available(check_device: bool = True) -> bool:
    """transformers 4.x's TPU probe: whether torch_xla is usable (with ``check_device``,
    on a TPU), as today's ``is_torch_xla_available`` answers it."""
    from transformers.utils import is_torch_xla_available

    return is_torch_xla_available(check_is_tpu=check_device)


def tpu_probe():
    """The TPU probe transformers.utils still has, else the one above."""
    import transformers.utils

    return getattr(transformers.utils, "is_torch_tpu_available", is_torch_tpu_available)


PROBES = {"is_tf_available": is_tf_available, "is_flax_available": is_flax_available,
          "is_torch_tpu_available": Lazy(tpu_probe)}


def _shim_attribute(module_name: str, attribute: str):
    import importlib

    return getattr(importlib.import_module(module_name), attribute)


# Top-level names of 4.x and the compatfix function that makes each (the shim of the
# submodule 4.x defined it in restores the same object there).
MADE = {
    "AdamW": ("compatfix.shims.transformers.optimization", "adamw_class"),
    "AutoModelWithLMHead": ("compatfix.shims.transformers.models.auto.modeling_auto", "auto_model_with_lm_head"),
    "MODEL_WITH_LM_HEAD_MAPPING": ("compatfix.shims.transformers.models.auto.modeling_auto", "lm_head_mapping"),
    "MODEL_NAMES_MAPPING": ("compatfix.shims.transformers.models.auto.configuration_auto", "model_names_mapping"),
    **{name: ("compatfix.shims.transformers.data.datasets", "dataset_class", name)
       for name in ("TextDataset", "LineByLineTextDataset", "LineByLineWithRefDataset", "GlueDataset",
                    "GlueDataTrainingArguments")},
}
# ... and those that are plain attributes of a compatfix module.
MOVED = {
    "top_k_top_p_filtering": ("compatfix.shims.transformers.generation_utils", "top_k_top_p_filtering"),
    "cached_path": ("compatfix.shims.transformers._download_cache", "cached_path"),
    "InputExample": ("compatfix.shims.transformers.data.processors.utils", "InputExample"),
    "InputFeatures": ("compatfix.shims.transformers.data.processors.utils", "InputFeatures"),
    "DataProcessor": ("compatfix.shims.transformers.data.processors.utils", "DataProcessor"),
    "SingleSentenceClassificationProcessor": ("compatfix.shims.transformers.data.processors.utils",
                                              "SingleSentenceClassificationProcessor"),
    "glue_tasks_num_labels": ("compatfix.shims.transformers.data.processors", "GLUE_TASKS_NUM_LABELS"),
    "glue_output_modes": ("compatfix.shims.transformers.data.processors", "GLUE_OUTPUT_MODES"),
    "xnli_output_modes": ("compatfix.shims.transformers.data.processors", "XNLI_OUTPUT_MODES"),
    "xnli_processors": ("compatfix.shims.transformers.data.processors.xnli", "XNLI_PROCESSORS"),
    "glue_compute_metrics": ("compatfix.shims.transformers.data.metrics", "glue_compute_metrics"),
    "glue_processors": ("compatfix.shims.transformers.data.processors.glue", "GLUE_PROCESSORS"),
    "glue_convert_examples_to_features": ("compatfix.shims.transformers.data.processors.glue",
                                          "glue_convert_examples_to_features"),
    "xnli_compute_metrics": ("compatfix.shims.transformers.data.metrics", "xnli_compute_metrics"),
}


def _made_by(module_name: str, factory: str, *arguments: str):
    return _shim_attribute(module_name, factory)(*arguments)


def restore_probes(module) -> None:
    restore_names(module, PROBES, "transformers.is_tf_available")


def restore_moved(module) -> None:
    # Lazy: the first use of one name must not import torch-heavy modules for the others.
    names = {name: Lazy(functools.partial(_made_by, *where)) for name, where in MADE.items()}
    names.update({name: Lazy(functools.partial(_shim_attribute, *where)) for name, where in MOVED.items()})
    restore_names(module, names, "transformers.AdamW")


# The models whose <MODEL>_PRETRAINED_CONFIG_ARCHIVE_MAP and <MODEL>_PRETRAINED_MODEL_ARCHIVE_LIST
# transformers 4.30.2 exported from the top level (its PyTorch exports; 4.41 removed them all). Only
# the names are here; the data is in _archive_maps, imported at the first use of one of them.
CONFIG_MAP_MODELS = """
    ALBERT ALIGN ALTCLIP AUDIO_SPECTROGRAM_TRANSFORMER AUTOFORMER BEIT BERT BIGBIRD_PEGASUS BIG_BIRD BIOGPT
    BIT BLENDERBOT BLENDERBOT_SMALL BLIP BLIP_2 BLOOM BRIDGETOWER CAMEMBERT CANINE CHINESE_CLIP CLIP CLIPSEG
    CODEGEN CONDITIONAL_DETR CONVBERT CONVNEXT CONVNEXTV2 CPMANT CTRL CVT DATA2VEC_TEXT DATA2VEC_VISION
    DEBERTA DEBERTA_V2 DECISION_TRANSFORMER DEFORMABLE_DETR DEIT DETA DETR DINAT DISTILBERT DONUT_SWIN DPR
    DPT EFFICIENTFORMER EFFICIENTNET ELECTRA ERNIE ERNIE_M ESM FLAUBERT FLAVA FNET FOCALNET FSMT FUNNEL GIT
    GLPN GPT2 GPTJ GPTSAN_JAPANESE GPT_BIGCODE GPT_NEO GPT_NEOX GPT_NEOX_JAPANESE GRAPHORMER GROUPVIT HUBERT
    IBERT IMAGEGPT INFORMER JUKEBOX LAYOUTLM LAYOUTLMV2 LAYOUTLMV3 LED LEVIT LILT LLAMA LONGFORMER LONGT5
    LUKE LXMERT M2M_100 MARKUPLM MASK2FORMER MASKFORMER MCTCT MEGA MEGATRON_BERT MGP_STR MOBILEBERT
    MOBILENET_V1 MOBILENET_V2 MOBILEVIT MOBILEVITV2 MPNET NAT NEZHA NLLB_MOE NYSTROMFORMER ONEFORMER
    OPENAI_GPT OPEN_LLAMA OWLVIT PEGASUS PEGASUS_X PERCEIVER PIX2STRUCT PLBART POOLFORMER PROPHETNET QDQBERT
    REALM REFORMER REGNET REMBERT RESNET RETRIBERT ROBERTA ROBERTA_PRELAYERNORM ROC_BERT ROFORMER RWKV SAM
    SEGFORMER SEW SEW_D SPEECHT5 SPEECH_TO_TEXT SPEECH_TO_TEXT_2 SPLINTER SQUEEZEBERT SWIFTFORMER SWIN
    SWIN2SR SWINV2 SWITCH_TRANSFORMERS T5 TABLE_TRANSFORMER TAPAS TIMESFORMER TIME_SERIES_TRANSFORMER
    TRAJECTORY_TRANSFORMER TRANSFO_XL TROCR TVLT UNISPEECH UNISPEECH_SAT VAN VIDEOMAE VILT VISUAL_BERT VIT
    VIT_HYBRID VIT_MAE VIT_MSN WAV2VEC2_CONFORMER WAVLM WAV_2_VEC_2 WHISPER XCLIP XGLM XLM XLM_PROPHETNET
    XLM_ROBERTA XLM_ROBERTA_XL XLNET XMOD YOLOS YOSO
""".split()
MODEL_LIST_MODELS = """
    ALBERT ALIGN ALTCLIP AUDIO_SPECTROGRAM_TRANSFORMER AUTOFORMER BART BEIT BERT BIGBIRD_PEGASUS BIG_BIRD
    BIOGPT BIT BLENDERBOT BLENDERBOT_SMALL BLIP BLIP_2 BLOOM BRIDGETOWER CAMEMBERT CANINE CHINESE_CLIP CLAP
    CLIP CLIPSEG CODEGEN CONDITIONAL_DETR CONVBERT CONVNEXT CONVNEXTV2 CPMANT CTRL CVT DATA2VEC_AUDIO
    DATA2VEC_TEXT DATA2VEC_VISION DEBERTA DEBERTA_V2 DECISION_TRANSFORMER DEFORMABLE_DETR DEIT DETA DETR
    DINAT DISTILBERT DONUT_SWIN DPR_CONTEXT_ENCODER DPR_QUESTION_ENCODER DPR_READER DPT EFFICIENTFORMER
    EFFICIENTNET ELECTRA ERNIE ERNIE_M ESM FLAUBERT FLAVA FNET FOCALNET FUNNEL GIT GLPN GPT2 GPTJ
    GPTSAN_JAPANESE GPT_BIGCODE GPT_NEO GPT_NEOX GPT_NEOX_JAPANESE GRAPHORMER GROUPVIT HUBERT IBERT IMAGEGPT
    INFORMER JUKEBOX LAYOUTLM LAYOUTLMV2 LAYOUTLMV3 LED LEVIT LILT LONGFORMER LONGT5 LUKE M2M_100 MARKUPLM
    MASK2FORMER MASKFORMER MCTCT MEGA MEGATRON_BERT MGP_STR MOBILEBERT MOBILENET_V1 MOBILENET_V2 MOBILEVIT
    MOBILEVITV2 MPNET MVP NAT NEZHA NLLB_MOE NYSTROMFORMER ONEFORMER OPENAI_GPT OPT OWLVIT PEGASUS_X
    PERCEIVER PIX2STRUCT PLBART POOLFORMER PROPHETNET QDQBERT REALM REFORMER REGNET REMBERT RESNET RETRIBERT
    ROBERTA ROBERTA_PRELAYERNORM ROC_BERT ROFORMER RWKV SAM SEGFORMER SEW SEW_D SPEECHT5 SPEECH_TO_TEXT
    SPLINTER SQUEEZEBERT SWIFTFORMER SWIN SWIN2SR SWINV2 SWITCH_TRANSFORMERS T5 TABLE_TRANSFORMER TAPAS
    TIMESFORMER TIME_SERIES_TRANSFORMER TRAJECTORY_TRANSFORMER TRANSFO_XL TROCR TVLT UNISPEECH UNISPEECH_SAT
    VAN VIDEOMAE VILT VISUAL_BERT VIT VIT_HYBRID VIT_MAE VIT_MSN WAV2VEC2_CONFORMER WAVLM WAV_2_VEC_2
    WHISPER XCLIP XGLM XLM XLM_PROPHETNET XLM_ROBERTA XLM_ROBERTA_XL XLNET XMOD YOLOS YOSO
""".split()
ARCHIVE_NAMES = ("ALL_PRETRAINED_CONFIG_ARCHIVE_MAP",
                 *(model + "_PRETRAINED_CONFIG_ARCHIVE_MAP" for model in CONFIG_MAP_MODELS),
                 *(model + "_PRETRAINED_MODEL_ARCHIVE_LIST" for model in MODEL_LIST_MODELS))
ARCHIVE_REPLACEMENT = "the checkpoint names you need, written out; the Hub lists them now (huggingface_hub.list_models)"


def archive_value(name: str):
    """The 4.30.2 value of one of the archive maps or lists, by its name."""
    from compatfix.shims.transformers import _archive_maps

    return _archive_maps.value_of(name)


def archive_values(names: tuple[str, ...]) -> dict[str, Lazy]:
    """Each name's value, made at its first use."""
    return {name: Lazy(functools.partial(archive_value, name)) for name in names}


def restore_archive_maps(module) -> None:
    restore_names(module, archive_values(ARCHIVE_NAMES), "transformers.archive_maps")


SHIMS = (
    Shim(
        "transformers.is_tf_available",
        targets=["transformers"],
        # 4.51 removed the top-level is_torch_tpu_available, 5.0 the other two
        requires={"transformers": ">=4.51"},
        apply=restore_probes,
        restores=list(PROBES),
        broke="transformers 4.51 removed the top-level is_torch_tpu_available, and transformers 5 dropped "
        "TensorFlow and Flax and removed is_tf_available and is_flax_available, which 2020-22 code asks before choosing a framework",
        summary="restore them: TensorFlow and Flax are never available to transformers 5 (False); the TPU "
        "probe is transformers.utils' (torch_xla)",
        replacement="drop the TensorFlow/Flax branches; transformers.utils.is_torch_xla_available",
        rewrites={"transformers.is_tf_available": "False (transformers 5 has no TensorFlow models)",
                  "transformers.is_flax_available": "False (transformers 5 has no Flax models)",
                  "transformers.is_torch_tpu_available": "transformers.utils.is_torch_xla_available(check_is_tpu=True)"},
    ),
    Shim(
        "transformers.AdamW",
        targets=["transformers"],
        # 4.22 removed cached_path, 4.39 top_k_top_p_filtering, 4.50 AdamW, 5.0 the rest; only
        # the names missing from the installed release are restored
        requires={"transformers": ">=4.22"},
        apply=restore_moved,
        restores=[*MADE, *MOVED],
        broke="transformers 4.22 removed the top-level cached_path, 4.39 top_k_top_p_filtering, 4.50 AdamW, "
        "and 5 AutoModelWithLMHead, MODEL_WITH_LM_HEAD_MAPPING, "
        "MODEL_NAMES_MAPPING, "
        "the language-modeling datasets (TextDataset, LineByLineTextDataset, "
        "LineByLineWithRefDataset), GlueDataset with GlueDataTrainingArguments, and the GLUE helpers (InputExample, "
        "InputFeatures, DataProcessor, "
        "SingleSentenceClassificationProcessor, "
        "glue_compute_metrics, glue_output_modes, glue_tasks_num_labels, glue_processors, "
        "glue_convert_examples_to_features, xnli_compute_metrics, xnli_output_modes, xnli_processors)",
        summary="restore them as the objects the shims of the modules 4.x defined them in restore (4.x's AdamW, "
        "the LM-head auto class and mapping, the model-name table, the top-k/top-p filter, the language-modeling datasets, the GLUE data "
        "classes, tables and metrics)",
        replacement="torch.optim.AdamW; AutoModelForMaskedLM / AutoModelForCausalLM / AutoModelForSeq2SeqLM; "
        "TopKLogitsWarper and TopPLogitsWarper",
        rewrites={"transformers.AdamW": "torch.optim.AdamW (decay order, eps and correct_bias differ)",
                  "transformers.AutoModelWithLMHead": "AutoModelForMaskedLM, AutoModelForCausalLM or "
                  "AutoModelForSeq2SeqLM, by model type",
                  "transformers.MODEL_WITH_LM_HEAD_MAPPING": "MODEL_FOR_MASKED_LM_MAPPING / "
                  "MODEL_FOR_CAUSAL_LM_MAPPING / MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING",
                  "transformers.top_k_top_p_filtering": "TopKLogitsWarper then TopPLogitsWarper",
                  "transformers.cached_path": "huggingface_hub.hf_hub_download",
                  "transformers.MODEL_NAMES_MAPPING": "your own {model_type: name} table (transformers 5 has none)",
                  **{"transformers." + name: "datasets.load_dataset('text', data_files=...).map(tokenize)"
                     for name in ("TextDataset", "LineByLineTextDataset", "LineByLineWithRefDataset")},
                  **{"transformers." + name: "datasets.load_dataset('glue', task) with tokenizer(...) in .map, as "
                     "examples/pytorch/text-classification/run_glue.py does"
                     for name in ("GlueDataset", "GlueDataTrainingArguments")},
                  **{"transformers." + name: "your own code, or the datasets and evaluate libraries"
                     for name in MOVED if name not in ("top_k_top_p_filtering", "cached_path")}},
    ),
    Shim(
        "transformers.archive_maps",
        targets=["transformers"],
        requires={"transformers": ">=4.41"},
        apply=restore_archive_maps,
        restores=ARCHIVE_NAMES,
        broke="transformers 4.41 removed the frozen lists of Hub checkpoints, <MODEL>_PRETRAINED_CONFIG_ARCHIVE_MAP "
        "(checkpoint -> config URL), <MODEL>_PRETRAINED_MODEL_ARCHIVE_LIST and ALL_PRETRAINED_CONFIG_ARCHIVE_MAP, "
        "which 2020-22 scripts use to list or check model names (choices=list(BERT_PRETRAINED_CONFIG_ARCHIVE_MAP))",
        summary="restore them as data: 4.30.2's maps and lists, built at the first use of each",
        replacement=ARCHIVE_REPLACEMENT,
        rewrites={"transformers." + name: ARCHIVE_REPLACEMENT for name in ARCHIVE_NAMES},
    ),
)


def accept_old_keywords(owner: type, renamed: dict[str, str], kept: dict[str, object], shim: str,
                        after: object = None) -> bool:
    """Let ``owner(...)`` take the keywords 4.x's ``__init__`` had: each of ``renamed`` is
    passed on under today's name (both at once is an error, as for any repeated argument),
    each of ``kept`` (name -> 4.x default) is taken out of the call and handed, with those
    the call did not pass at their defaults, to ``after(instance, values)`` once
    ``__init__`` returns. A call that uses none of them runs unchanged. The signature that
    ``inspect.signature`` shows has the old keywords, keyword-only, at the end."""
    import inspect

    from compatfix.patching import wrap

    def make_wrapper(init):
        signature = inspect.signature(init)
        parameters = list(signature.parameters.values())
        variadic = [p for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD]
        plain = [p for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD]
        old = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
               for name in renamed if name not in signature.parameters]
        old += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
                for name, default in kept.items() if name not in signature.parameters]

        def __init__(self, *args, **kwargs):
            for name, new in renamed.items():
                if name in kwargs and name not in signature.parameters:
                    value = kwargs.pop(name)
                    if new in kwargs:
                        raise TypeError("%s() got both %r and its new name %r" % (owner.__name__, name, new))
                    if value is not None:
                        kwargs[new] = value
            values = {name: kwargs.pop(name, default) for name, default in kept.items()
                      if name not in signature.parameters}
            init(self, *args, **kwargs)
            if after is not None and values:
                after(self, values)

        __init__.__signature__ = signature.replace(parameters=plain + old + variadic)
        return __init__

    return wrap(owner, "__init__", make_wrapper, shim)

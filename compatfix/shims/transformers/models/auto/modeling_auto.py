"""Shims for ``transformers.models.auto.modeling_auto``: ``AutoModelWithLMHead`` and its
``MODEL_WITH_LM_HEAD_MAPPING``, which transformers 5 removed (deprecated since 3.x in
favour of the masked, causal and seq2seq LM auto classes).

4.x's class chose, by the config's model type, the one model its mapping named: a masked
LM for BERT-like models, a causal LM for GPT-like ones, the conditional-generation model
for encoder-decoders. The mapping below is 4.x's, model type to class name; entries whose
model or class transformers 5 no longer has are left out, so the class never names what
cannot be loaded.
"""

from __future__ import annotations

from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import Shim

# transformers 4.x's MODEL_WITH_LM_HEAD_MAPPING_NAMES (modeling_auto.py), in its order.
LM_HEAD_MODEL_NAMES = (
    ("albert", "AlbertForMaskedLM"),
    ("bart", "BartForConditionalGeneration"),
    ("bert", "BertForMaskedLM"),
    ("big_bird", "BigBirdForMaskedLM"),
    ("bigbird_pegasus", "BigBirdPegasusForConditionalGeneration"),
    ("blenderbot-small", "BlenderbotSmallForConditionalGeneration"),
    ("bloom", "BloomForCausalLM"),
    ("camembert", "CamembertForMaskedLM"),
    ("codegen", "CodeGenForCausalLM"),
    ("convbert", "ConvBertForMaskedLM"),
    ("cpmant", "CpmAntForCausalLM"),
    ("ctrl", "CTRLLMHeadModel"),
    ("data2vec-text", "Data2VecTextForMaskedLM"),
    ("deberta", "DebertaForMaskedLM"),
    ("deberta-v2", "DebertaV2ForMaskedLM"),
    ("distilbert", "DistilBertForMaskedLM"),
    ("electra", "ElectraForMaskedLM"),
    ("encoder-decoder", "EncoderDecoderModel"),
    ("ernie", "ErnieForMaskedLM"),
    ("esm", "EsmForMaskedLM"),
    ("flaubert", "FlaubertWithLMHeadModel"),
    ("fnet", "FNetForMaskedLM"),
    ("fsmt", "FSMTForConditionalGeneration"),
    ("funnel", "FunnelForMaskedLM"),
    ("git", "GitForCausalLM"),
    ("gpt-sw3", "GPT2LMHeadModel"),
    ("gpt2", "GPT2LMHeadModel"),
    ("gpt_bigcode", "GPTBigCodeForCausalLM"),
    ("gpt_neo", "GPTNeoForCausalLM"),
    ("gpt_neox", "GPTNeoXForCausalLM"),
    ("gpt_neox_japanese", "GPTNeoXJapaneseForCausalLM"),
    ("gptj", "GPTJForCausalLM"),
    ("ibert", "IBertForMaskedLM"),
    ("layoutlm", "LayoutLMForMaskedLM"),
    ("led", "LEDForConditionalGeneration"),
    ("longformer", "LongformerForMaskedLM"),
    ("longt5", "LongT5ForConditionalGeneration"),
    ("luke", "LukeForMaskedLM"),
    ("m2m_100", "M2M100ForConditionalGeneration"),
    ("mamba", "MambaForCausalLM"),
    ("marian", "MarianMTModel"),
    ("megatron-bert", "MegatronBertForCausalLM"),
    ("mobilebert", "MobileBertForMaskedLM"),
    ("mpnet", "MPNetForMaskedLM"),
    ("mpt", "MptForCausalLM"),
    ("mra", "MraForMaskedLM"),
    ("mvp", "MvpForConditionalGeneration"),
    ("nllb-moe", "NllbMoeForConditionalGeneration"),
    ("nystromformer", "NystromformerForMaskedLM"),
    ("openai-gpt", "OpenAIGPTLMHeadModel"),
    ("pegasus_x", "PegasusXForConditionalGeneration"),
    ("plbart", "PLBartForConditionalGeneration"),
    ("pop2piano", "Pop2PianoForConditionalGeneration"),
    ("reformer", "ReformerModelWithLMHead"),
    ("rembert", "RemBertForMaskedLM"),
    ("roberta", "RobertaForMaskedLM"),
    ("roberta-prelayernorm", "RobertaPreLayerNormForMaskedLM"),
    ("roc_bert", "RoCBertForMaskedLM"),
    ("roformer", "RoFormerForMaskedLM"),
    ("rwkv", "RwkvForCausalLM"),
    ("speech_to_text", "Speech2TextForConditionalGeneration"),
    ("squeezebert", "SqueezeBertForMaskedLM"),
    ("switch_transformers", "SwitchTransformersForConditionalGeneration"),
    ("t5", "T5ForConditionalGeneration"),
    ("tapas", "TapasForMaskedLM"),
    ("wav2vec2", "Wav2Vec2ForMaskedLM"),
    ("whisper", "WhisperForConditionalGeneration"),
    ("xlm", "XLMWithLMHeadModel"),
    ("xlm-roberta", "XLMRobertaForMaskedLM"),
    ("xlm-roberta-xl", "XLMRobertaXLForMaskedLM"),
    ("xlnet", "XLNetLMHeadModel"),
    ("xmod", "XmodForMaskedLM"),
    ("yoso", "YosoForMaskedLM"),
)

_made: dict[str, Any] = {}


def lm_head_mapping() -> Any:
    """4.x's MODEL_WITH_LM_HEAD_MAPPING (config class -> model class, loaded lazily, as
    today's mappings are), over the models and classes transformers 5 still has."""
    if "mapping" not in _made:
        from collections import OrderedDict

        import transformers
        from transformers.models.auto.auto_factory import _LazyAutoMapping
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

        exported = set(dir(transformers))  # the lazy module lists every class it can load
        names = OrderedDict((model_type, name) for model_type, name in LM_HEAD_MODEL_NAMES
                            if model_type in CONFIG_MAPPING_NAMES and name in exported)
        _made["mapping"] = _LazyAutoMapping(CONFIG_MAPPING_NAMES, names)
    return _made["mapping"]


def auto_model_with_lm_head() -> type:
    """4.x's AutoModelWithLMHead: an auto class over ``lm_head_mapping()``."""
    if "class" not in _made:
        from transformers.models.auto.auto_factory import _BaseAutoModelClass, auto_class_update

        class AutoModelWithLMHead(_BaseAutoModelClass):
            _model_mapping = lm_head_mapping()

        AutoModelWithLMHead.__module__ = "transformers.models.auto.modeling_auto"
        AutoModelWithLMHead.__qualname__ = "AutoModelWithLMHead"
        _made["class"] = auto_class_update(AutoModelWithLMHead, head_doc="language modeling")
    return _made["class"]


def restore_lm_head(module) -> None:
    restore_names(module, {"AutoModelWithLMHead": auto_model_with_lm_head(),
                           "MODEL_WITH_LM_HEAD_MAPPING": lm_head_mapping()},
                  "transformers.models.auto.modeling_auto.AutoModelWithLMHead")


SHIMS = (
    Shim(
        "transformers.models.auto.modeling_auto.AutoModelWithLMHead",
        targets=["transformers.models.auto.modeling_auto"],
        requires={"transformers": ">=5.0"},
        apply=restore_lm_head,
        restores=["AutoModelWithLMHead", "MODEL_WITH_LM_HEAD_MAPPING"],
        broke="transformers 5 removed AutoModelWithLMHead and MODEL_WITH_LM_HEAD_MAPPING (deprecated since 3.x), "
        "with which 2020-22 language-model fine-tuning loads its model",
        summary="restore them with 4.x's model-type-to-class mapping: masked LM for BERT-like, causal LM for "
        "GPT-like, conditional generation for encoder-decoder models",
        replacement="AutoModelForMaskedLM, AutoModelForCausalLM or AutoModelForSeq2SeqLM, by model type",
        rewrites={"transformers.models.auto.modeling_auto.AutoModelWithLMHead":
                  "AutoModelForMaskedLM / AutoModelForCausalLM / AutoModelForSeq2SeqLM",
                  "transformers.models.auto.modeling_auto.MODEL_WITH_LM_HEAD_MAPPING":
                  "MODEL_FOR_MASKED_LM_MAPPING / MODEL_FOR_CAUSAL_LM_MAPPING / MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING"},
    ),
)

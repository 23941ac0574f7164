"""AutoModelWithLMHead and MODEL_WITH_LM_HEAD_MAPPING (removed in transformers 5) against
the real transformers 5.24, on tiny models built from configs: missing with compatfix off;
with it on, the model 4.x's mapping named for each model type (BERT: masked LM, GPT-2:
causal LM head, T5 and BART: conditional generation, RoBERTa and DistilBERT: masked LM)."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

PRESENT = """
import transformers.models.auto.modeling_auto as auto
print([hasattr(auto, n) for n in ("AutoModelWithLMHead", "MODEL_WITH_LM_HEAD_MAPPING")])
"""


def test_lm_head_class_is_missing_without_compatfix():
    result = run_python(code=PRESENT, compatfix=False)
    assert result.stdout.strip() == "[False, False]", result.stderr[-2000:]
    result = run_python(
        code=PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.models.auto.modeling_auto.AutoModelWithLMHead")
    )
    assert result.stdout.strip() == "[False, False]", result.stderr[-2000:]


def test_lm_head_class_picks_4x_model_for_each_type(tmp_path):
    result = run_python(
        code="""
        import warnings
        warnings.simplefilter("ignore")
        import transformers
        from transformers import (AutoModelWithLMHead, BartConfig, BertConfig, DistilBertConfig, GPT2Config,
                                  RobertaConfig, T5Config, MODEL_WITH_LM_HEAD_MAPPING)
        from transformers.models.auto.modeling_auto import AutoModelWithLMHead as same
        assert same is AutoModelWithLMHead
        tiny = dict(vocab_size=99)
        expected = [
            (BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37, **tiny),
             "BertForMaskedLM"),
            (RobertaConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37, **tiny),
             "RobertaForMaskedLM"),
            (DistilBertConfig(dim=32, n_layers=1, n_heads=2, hidden_dim=37, **tiny), "DistilBertForMaskedLM"),
            (GPT2Config(n_embd=32, n_layer=1, n_head=2, bos_token_id=0, eos_token_id=0, **tiny), "GPT2LMHeadModel"),
            (T5Config(d_model=32, num_layers=1, num_heads=2, d_ff=37, d_kv=16, **tiny), "T5ForConditionalGeneration"),
            (BartConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=37, decoder_ffn_dim=37, **tiny),
             "BartForConditionalGeneration"),
        ]
        for config, name in expected:
            model = AutoModelWithLMHead.from_config(config)
            assert type(model).__name__ == name, (type(config).__name__, type(model).__name__)
            assert MODEL_WITH_LM_HEAD_MAPPING[type(config)] is getattr(transformers, name)
        # from_pretrained loads a saved model back into the same class
        model = AutoModelWithLMHead.from_config(expected[0][0])
        model.save_pretrained(%r)
        assert type(AutoModelWithLMHead.from_pretrained(%r)).__name__ == "BertForMaskedLM"
        # the mapping names only what transformers 5 can load
        assert len(MODEL_WITH_LM_HEAD_MAPPING) > 40
        assert all(isinstance(model_class, type) for model_class in MODEL_WITH_LM_HEAD_MAPPING.values())
        print("ok")
        """ % (str(tmp_path), str(tmp_path))
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

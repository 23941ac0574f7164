"""transformers 4.x's frozen checkpoint lists (<MODEL>_PRETRAINED_CONFIG_ARCHIVE_MAP,
<MODEL>_PRETRAINED_MODEL_ARCHIVE_LIST, ALL_PRETRAINED_CONFIG_ARCHIVE_MAP), which 4.41 removed,
against the real transformers 4.57.6 (the last 4.x) and 5.24: missing with compatfix off; with it on, 4.x's data at the top
level and at the modeling-module paths 2020-22 code imports them from. The expected checkpoints
are written out here from 4.x's model documentation (BERT's, GPT-2's, T5's ... release names)."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312", "transformers4")

TOP = ("BERT_PRETRAINED_CONFIG_ARCHIVE_MAP", "GPT2_PRETRAINED_CONFIG_ARCHIVE_MAP", "BERT_PRETRAINED_MODEL_ARCHIVE_LIST",
       "WAV_2_VEC_2_PRETRAINED_MODEL_ARCHIVE_LIST", "ALL_PRETRAINED_CONFIG_ARCHIVE_MAP")
TOP_PRESENT = "import transformers\nprint([hasattr(transformers, n) for n in %r])" % (TOP,)

# Each module-path shim, by name (the module and the list it restores), with the first
# checkpoint of its 4.x list.
MODULE_LISTS = {
    "transformers.models.albert.modeling_albert.ALBERT_PRETRAINED_MODEL_ARCHIVE_LIST": "albert-base-v1",
    "transformers.models.bert.modeling_bert.BERT_PRETRAINED_MODEL_ARCHIVE_LIST": "bert-base-uncased",
    "transformers.models.convbert.modeling_convbert.CONVBERT_PRETRAINED_MODEL_ARCHIVE_LIST": "YituTech/conv-bert-base",
    "transformers.models.deberta.modeling_deberta.DEBERTA_PRETRAINED_MODEL_ARCHIVE_LIST": "microsoft/deberta-base",
    "transformers.models.deberta_v2.modeling_deberta_v2.DEBERTA_V2_PRETRAINED_MODEL_ARCHIVE_LIST":
        "microsoft/deberta-v2-xlarge",
    "transformers.models.dpr.modeling_dpr.DPR_CONTEXT_ENCODER_PRETRAINED_MODEL_ARCHIVE_LIST":
        "facebook/dpr-ctx_encoder-single-nq-base",
    "transformers.models.electra.modeling_electra.ELECTRA_PRETRAINED_MODEL_ARCHIVE_LIST": "google/electra-small-generator",
    "transformers.models.flaubert.modeling_flaubert.FLAUBERT_PRETRAINED_MODEL_ARCHIVE_LIST":
        "flaubert/flaubert_small_cased",
    "transformers.models.gpt2.modeling_gpt2.GPT2_PRETRAINED_MODEL_ARCHIVE_LIST": "gpt2",
    "transformers.models.lxmert.modeling_lxmert.LXMERT_PRETRAINED_MODEL_ARCHIVE_LIST": "unc-nlp/lxmert-base-uncased",
    "transformers.models.roberta.modeling_roberta.ROBERTA_PRETRAINED_MODEL_ARCHIVE_LIST": "roberta-base",
    "transformers.models.t5.modeling_t5.T5_PRETRAINED_MODEL_ARCHIVE_LIST": "t5-small",
    "transformers.models.tapas.modeling_tapas.TAPAS_PRETRAINED_MODEL_ARCHIVE_LIST": "google/tapas-large",
    "transformers.models.xlm.modeling_xlm.XLM_PRETRAINED_MODEL_ARCHIVE_LIST": "xlm-mlm-en-2048",
    "transformers.models.xlnet.modeling_xlnet.XLNET_PRETRAINED_MODEL_ARCHIVE_LIST": "xlnet-base-cased",
}
# the dpr module's other two lists (its shim is named after the first)
DPR_OTHERS = {"DPR_QUESTION_ENCODER_PRETRAINED_MODEL_ARCHIVE_LIST": "facebook/dpr-question_encoder-single-nq-base",
              "DPR_READER_PRETRAINED_MODEL_ARCHIVE_LIST": "facebook/dpr-reader-single-nq-base"}

MODULES_PRESENT = """
import importlib
found = []
for dotted in %r:
    module_name, _, name = dotted.rpartition(".")
    found.append(hasattr(importlib.import_module(module_name), name))
print(found)
""" % (list(MODULE_LISTS),)


def test_archive_maps_are_missing_without_compatfix():
    for env in (clean_env(compatfix=False), clean_env(COMPATFIX_DISABLE="transformers.archive_maps")):
        result = run_python(code=TOP_PRESENT, env=env)
        assert result.stdout.strip() == str([False] * len(TOP)), result.stderr[-2000:]
    result = run_python(code=MODULES_PRESENT, compatfix=False)
    assert result.stdout.strip() == str([False] * len(MODULE_LISTS)), result.stderr[-2000:]
    # each module-path shim turns off alone
    disabled = "transformers.models.bert.modeling_bert.BERT_PRETRAINED_MODEL_ARCHIVE_LIST"
    result = run_python(code=MODULES_PRESENT, env=clean_env(COMPATFIX_DISABLE=disabled))
    assert result.stdout.strip() == str([name != disabled for name in MODULE_LISTS]), result.stderr[-2000:]


def test_archive_maps_are_4x_data_at_the_top_level():
    result = run_python(
        code="""
        import sys
        import transformers
        transformers.is_tf_available  # another restored name: the data is not loaded for it
        assert "compatfix.shims.transformers._archive_maps" not in sys.modules
        from transformers import (ALL_PRETRAINED_CONFIG_ARCHIVE_MAP, BERT_PRETRAINED_CONFIG_ARCHIVE_MAP,
                                  BERT_PRETRAINED_MODEL_ARCHIVE_LIST, GPT2_PRETRAINED_CONFIG_ARCHIVE_MAP,
                                  GPT2_PRETRAINED_MODEL_ARCHIVE_LIST, T5_PRETRAINED_CONFIG_ARCHIVE_MAP,
                                  XLNET_PRETRAINED_CONFIG_ARCHIVE_MAP, WAV_2_VEC_2_PRETRAINED_MODEL_ARCHIVE_LIST)
        assert "compatfix.shims.transformers._archive_maps" in sys.modules
        url = "https://huggingface.co/%s/resolve/main/config.json"
        assert BERT_PRETRAINED_CONFIG_ARCHIVE_MAP["bert-base-uncased"] == url % "bert-base-uncased"
        assert list(BERT_PRETRAINED_CONFIG_ARCHIVE_MAP)[:4] == ["bert-base-uncased", "bert-large-uncased",
                                                             "bert-base-cased", "bert-large-cased"]
        assert BERT_PRETRAINED_MODEL_ARCHIVE_LIST == list(BERT_PRETRAINED_CONFIG_ARCHIVE_MAP)
        assert list(GPT2_PRETRAINED_CONFIG_ARCHIVE_MAP.keys()) == ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl",
                                                                  "distilgpt2"]
        assert GPT2_PRETRAINED_MODEL_ARCHIVE_LIST == ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "distilgpt2"]
        assert list(T5_PRETRAINED_CONFIG_ARCHIVE_MAP) == ["t5-small", "t5-base", "t5-large", "t5-3b", "t5-11b"]
        assert XLNET_PRETRAINED_CONFIG_ARCHIVE_MAP == {"xlnet-base-cased": url % "xlnet-base-cased",
                                                       "xlnet-large-cased": url % "xlnet-large-cased"}
        assert WAV_2_VEC_2_PRETRAINED_MODEL_ARCHIVE_LIST[0] == "facebook/wav2vec2-base-960h"
        # the union of the config maps
        assert ALL_PRETRAINED_CONFIG_ARCHIVE_MAP["gpt2"] == url % "gpt2"
        assert ALL_PRETRAINED_CONFIG_ARCHIVE_MAP["t5-small"] == url % "t5-small"
        # a scripts' 4.x idiom: every checkpoint name of some models
        choices = sum((list(m.keys()) for m in (BERT_PRETRAINED_CONFIG_ARCHIVE_MAP, XLNET_PRETRAINED_CONFIG_ARCHIVE_MAP)), [])
        assert "xlnet-large-cased" in choices and "bert-base-chinese" in choices
        # one object each, as 4.x's module attributes were
        assert transformers.GPT2_PRETRAINED_MODEL_ARCHIVE_LIST is GPT2_PRETRAINED_MODEL_ARCHIVE_LIST
        # names 4.x never had stay missing
        assert not hasattr(transformers, "NOSUCH_PRETRAINED_CONFIG_ARCHIVE_MAP")
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_archive_lists_at_their_module_paths():
    result = run_python(
        code="""
        import importlib
        import transformers
        expected = %r
        for dotted, first in expected.items():
            module_name, _, name = dotted.rpartition(".")
            value = getattr(importlib.import_module(module_name), name)
            assert isinstance(value, list) and value[0] == first, (dotted, value)
            if name == "LXMERT_PRETRAINED_MODEL_ARCHIVE_LIST":  # 4.x never exported this one from the top
                assert not hasattr(transformers, name)
            else:
                assert value is getattr(transformers, name), dotted
        from transformers.models.dpr import modeling_dpr
        for name, first in %r.items():
            assert getattr(modeling_dpr, name)[0] == first, name
        from transformers.models.t5.modeling_t5 import T5_PRETRAINED_MODEL_ARCHIVE_LIST
        assert T5_PRETRAINED_MODEL_ARCHIVE_LIST == ["t5-small", "t5-base", "t5-large", "t5-3b", "t5-11b"]
        print("ok")
        """ % (MODULE_LISTS, DPR_OTHERS)
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

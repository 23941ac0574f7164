"""MODEL_NAMES_MAPPING (model type -> model name), removed in transformers 5, against the real
5.24: missing with compatfix off; with it on, 4.x's table at the top level and in
configuration_auto, one object, which code extends with its own model types."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

PRESENT = """
import transformers
import transformers.models.auto.configuration_auto as configuration_auto
print([hasattr(transformers, "MODEL_NAMES_MAPPING"), hasattr(configuration_auto, "MODEL_NAMES_MAPPING")])
"""


def test_model_names_mapping_is_missing_without_compatfix():
    result = run_python(code=PRESENT, compatfix=False)
    assert result.stdout.strip() == "[False, False]", result.stderr[-2000:]
    result = run_python(
        code=PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.models.auto.configuration_auto.MODEL_NAMES_MAPPING"))
    assert result.stdout.strip() == "[True, False]", result.stderr[-2000:]


def test_model_names_mapping_is_4x_table():
    result = run_python(
        code="""
        from collections import OrderedDict
        import transformers
        from transformers import CONFIG_MAPPING, MODEL_NAMES_MAPPING
        from transformers.models.auto import configuration_auto
        assert MODEL_NAMES_MAPPING is configuration_auto.MODEL_NAMES_MAPPING
        assert isinstance(MODEL_NAMES_MAPPING, OrderedDict)
        assert MODEL_NAMES_MAPPING["bert"] == "BERT" and MODEL_NAMES_MAPPING["gpt2"] == "OpenAI GPT-2"
        assert MODEL_NAMES_MAPPING["roberta"] == "RoBERTa" and MODEL_NAMES_MAPPING["t5"] == "T5"
        # a config's model type names its model
        assert MODEL_NAMES_MAPPING[transformers.BertConfig().model_type] == "BERT"
        # 2020-22 code registers its own model next to CONFIG_MAPPING
        MODEL_NAMES_MAPPING.update({"my-model": "MyModel"})
        assert transformers.MODEL_NAMES_MAPPING["my-model"] == "MyModel"
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

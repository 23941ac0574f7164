"""4.x names of the BERT, ALBERT and RoBERTa modeling modules that transformers 5.24 removed:
the START/INPUTS docstring constants 2020-22 models built on them decorate their classes with,
and RoBERTa's module-level create_position_ids_from_input_ids. Missing with compatfix off; with
it on, docstrings that name 4.x's arguments and take the input shape, and 4.x's position
numbering, worked out here by hand."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

DOCSTRING_SHIMS = ("transformers.models.albert.modeling_albert.ALBERT_START_DOCSTRING",
                   "transformers.models.bert.modeling_bert.BERT_START_DOCSTRING",
                   "transformers.models.roberta.modeling_roberta.ROBERTA_START_DOCSTRING")
POSITIONS_SHIM = "transformers.models.roberta.modeling_roberta.create_position_ids_from_input_ids"
PRESENT = """
import importlib
found = []
for dotted in %r:
    module_name, _, name = dotted.rpartition(".")
    module = importlib.import_module(module_name)
    found.append(hasattr(module, name))
    if name.endswith("_START_DOCSTRING"):
        found.append(hasattr(module, name.replace("_START_", "_INPUTS_")))
print(found)
""" % (DOCSTRING_SHIMS + (POSITIONS_SHIM,),)


def test_model_module_names_are_missing_without_compatfix():
    result = run_python(code=PRESENT, compatfix=False)
    assert result.stdout.strip() == str([False] * 7), result.stderr[-2000:]
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE=DOCSTRING_SHIMS[1]))
    assert result.stdout.strip() == str([True, True, False, False, True, True, True]), result.stderr[-2000:]
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE=POSITIONS_SHIM))
    assert result.stdout.strip() == str([True] * 6 + [False]), result.stderr[-2000:]


@pytest.mark.stack("py312", "transformers4")  # both ends: 4.57.6 and 5.24
def test_docstrings_decorate_a_model_as_in_4x():
    result = run_python(
        code="""
        from torch import nn
        from transformers.utils import add_start_docstrings
        from transformers.models.albert.modeling_albert import ALBERT_INPUTS_DOCSTRING, ALBERT_START_DOCSTRING
        from transformers.models.bert.modeling_bert import BERT_INPUTS_DOCSTRING, BERT_START_DOCSTRING
        from transformers.models.roberta.modeling_roberta import ROBERTA_INPUTS_DOCSTRING, ROBERTA_START_DOCSTRING
        for start in (ALBERT_START_DOCSTRING, BERT_START_DOCSTRING, ROBERTA_START_DOCSTRING):
            assert "This model inherits from [`PreTrainedModel`]" in start and "config ([`" in start
        for inputs in (ALBERT_INPUTS_DOCSTRING, BERT_INPUTS_DOCSTRING, ROBERTA_INPUTS_DOCSTRING):
            assert "input_ids (`torch.LongTensor` of shape `({0})`)" in inputs and "attention_mask" in inputs

        @add_start_docstrings("A BERT model with a custom head.", BERT_START_DOCSTRING)
        class MyBert(nn.Module):
            @add_start_docstrings(BERT_INPUTS_DOCSTRING.format("batch_size, sequence_length"))
            def forward(self, input_ids=None):
                return input_ids

        assert MyBert.__doc__.startswith("A BERT model with a custom head.")
        assert "of shape `(batch_size, sequence_length)`" in MyBert.forward.__doc__
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_roberta_positions_are_4x_numbering():
    result = run_python(
        code="""
        import torch
        from transformers.models.roberta.modeling_roberta import create_position_ids_from_input_ids
        ids = torch.tensor([[0, 5, 6, 1, 1], [0, 7, 1, 1, 1]])  # padding_idx 1
        # tokens numbered from padding_idx + 1 = 2, padding at 1
        assert create_position_ids_from_input_ids(ids, padding_idx=1).tolist() == [[2, 3, 4, 1, 1], [2, 3, 1, 1, 1]]
        # after 2 cached positions
        assert create_position_ids_from_input_ids(ids, 1, past_key_values_length=2).tolist() == [[4, 5, 6, 1, 1],
                                                                                                 [4, 5, 1, 1, 1]]
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

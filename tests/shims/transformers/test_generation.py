"""The 4.x generation modules transformers 5.24 lacks (generation_utils,
generation_logits_process, generation_stopping_criteria): provided with the objects of
transformers.generation; top_k_top_p_filtering keeps 4.x's results, worked out by hand."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312", "transformers4")

MODULES = ("transformers.generation_utils", "transformers.generation_logits_process",
           "transformers.generation_stopping_criteria")
IMPORTS = """
import importlib
found = []
for name in %r:
    try:
        importlib.import_module(name)
        found.append(True)
    except ImportError:
        found.append(False)
print(found)
""" % (MODULES,)


def test_generation_modules_are_missing_without_compatfix():
    result = run_python(code=IMPORTS, compatfix=False)
    assert result.stdout.strip() == "[False, False, False]", result.stderr[-2000:]
    for index, name in enumerate(MODULES):
        result = run_python(code=IMPORTS, env=clean_env(COMPATFIX_DISABLE=name))
        expected = [i != index for i in range(3)]
        assert result.stdout.strip() == str(expected), result.stderr[-2000:]


def test_generation_modules_hold_todays_objects():
    result = run_python(
        code="""
        import torch
        import transformers.generation as generation
        from transformers.generation_utils import (BeamSearchEncoderDecoderOutput, GenerationMixin,
                                                   GreedySearchDecoderOnlyOutput, SampleEncoderDecoderOutput,
                                                   top_k_top_p_filtering)
        from transformers.generation_logits_process import (LogitsProcessorList, NoRepeatNGramLogitsProcessor,
                                                            TopKLogitsWarper)
        from transformers.generation_stopping_criteria import MaxLengthCriteria, StoppingCriteriaList
        assert GenerationMixin is generation.GenerationMixin and LogitsProcessorList is generation.LogitsProcessorList
        assert TopKLogitsWarper is generation.TopKLogitsWarper and MaxLengthCriteria is generation.MaxLengthCriteria
        assert NoRepeatNGramLogitsProcessor is generation.NoRepeatNGramLogitsProcessor
        assert StoppingCriteriaList is generation.StoppingCriteriaList
        assert GreedySearchDecoderOnlyOutput is generation.GenerateDecoderOnlyOutput
        assert SampleEncoderDecoderOutput is generation.GenerateEncoderDecoderOutput
        assert BeamSearchEncoderDecoderOutput is generation.GenerateBeamEncoderDecoderOutput
        inf = -float("inf")
        logits = torch.tensor([[1.0, 4.0, 2.0, 3.0]])
        # top_k=2 keeps the two largest logits
        assert top_k_top_p_filtering(logits.clone(), top_k=2).tolist() == [[inf, 4.0, inf, 3.0]]
        # top_p=0.7: softmax of (4, 3, 2, 1) is about (0.64, 0.24, 0.09, 0.03); the smallest set reaching
        # 0.7 is {4, 3}
        assert top_k_top_p_filtering(logits.clone(), top_p=0.7).tolist() == [[inf, 4.0, inf, 3.0]]
        # top_p=0.5: the top token alone passes 0.5
        assert top_k_top_p_filtering(logits.clone(), top_p=0.5).tolist() == [[inf, 4.0, inf, inf]]
        assert top_k_top_p_filtering(logits.clone(), top_p=0.5, min_tokens_to_keep=3).tolist() == [[inf, 4.0, 2.0, 3.0]]
        assert top_k_top_p_filtering(logits.clone(), top_k=0, top_p=1.0).tolist() == logits.tolist()
        assert top_k_top_p_filtering(logits.clone(), top_k=3, filter_value=-100.0).tolist() == [[-100.0, 4.0, 2.0, 3.0]]
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


BEAM_SEARCH = """
try:
    from transformers.generation_beam_search import BeamHypotheses, BeamSearchScorer
    import transformers.generation.beam_search as beam_search
    print(BeamSearchScorer is beam_search.BeamSearchScorer and BeamHypotheses is beam_search.BeamHypotheses)
except ImportError:
    print("missing")
"""


@pytest.mark.stack("transformers4")
def test_the_beam_search_module_holds_the_scorers_on_4x():
    # 4.25 moved the scorers to transformers.generation.beam_search, where 4.57 still has them
    result = run_python(code=BEAM_SEARCH, compatfix=False)
    assert result.stdout.split() == ["missing"], result.stderr[-2000:]
    result = run_python(code=BEAM_SEARCH)
    assert result.stdout.split() == ["True"], result.stderr[-2000:]


@pytest.mark.stack("py312")
def test_the_beam_search_module_is_not_provided_where_5x_deleted_the_scorers():
    result = run_python(code=BEAM_SEARCH)
    assert result.stdout.split() == ["missing"] and "compatfix" not in result.stderr, result.stderr[-2000:]

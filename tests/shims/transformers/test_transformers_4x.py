"""The lower end of the top-level names shim (transformers.AdamW, from 4.39): on transformers
4.57.6, the last 4.x, the two names 4.x itself removed (top_k_top_p_filtering in 4.39, AdamW in
4.50) are missing with compatfix off and restored with it on, while the names 4.57 still has
(TextDataset, AutoModelWithLMHead, ...) stay its own objects. The filter's expected values are
worked out by hand, as in test_generation.py."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("transformers4")

NAMES = ("AdamW", "top_k_top_p_filtering", "AutoModelWithLMHead", "TextDataset", "glue_processors")
PRESENT = "import transformers\nprint([hasattr(transformers, n) for n in %r])" % (NAMES,)


def test_the_names_4x_removed_are_missing_without_compatfix():
    result = run_python(code=PRESENT, compatfix=False)
    assert result.stdout.strip() == "[False, False, True, True, True]", result.stderr[-2000:]
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.AdamW"))
    assert result.stdout.strip() == "[False, False, True, True, True]", result.stderr[-2000:]


def test_the_names_4x_removed_come_back_and_the_others_stay_its_own():
    result = run_python(
        code="""
        import warnings
        warnings.simplefilter("ignore")  # 4.57's own deprecation warnings of TextDataset and the GLUE helpers
        import torch
        import transformers
        from transformers import AdamW, top_k_top_p_filtering
        assert AdamW is transformers.optimization.AdamW
        # 4.57's own objects, which the shim must not replace
        import transformers.data.datasets.language_modeling as language_modeling
        import transformers.models.auto.modeling_auto as modeling_auto
        assert transformers.TextDataset is language_modeling.TextDataset
        assert transformers.AutoModelWithLMHead is modeling_auto.AutoModelWithLMHead
        inf = -float("inf")
        logits = torch.tensor([[1.0, 4.0, 2.0, 3.0]])
        assert top_k_top_p_filtering(logits.clone(), top_k=2).tolist() == [[inf, 4.0, inf, 3.0]]
        # softmax of (4, 3, 2, 1) is about (0.64, 0.24, 0.09, 0.03): the smallest set reaching 0.7 is {4, 3}
        assert top_k_top_p_filtering(logits.clone(), top_p=0.7).tolist() == [[inf, 4.0, inf, 3.0]]
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


# Each shim regated to the 4.x release that removed its first name, at transformers 4.57.6: the
# names 4.57 lacks, missing with compatfix off (and with the shim disabled), present with it on;
# the names 4.57 still has are its own (the shims restore only what is missing).
LOWER_ENDS = {
    # shim: (module, names 4.57 lacks, names 4.57 still has)
    "transformers.is_tf_available": ("transformers", ("is_torch_tpu_available",), ("is_tf_available", "is_flax_available")),
    "transformers.file_utils.cached_property": (
        "transformers.file_utils", ("cached_property", "torch_required", "is_torch_tpu_available"),
        ("is_tf_available", "is_flax_available", "is_offline_mode")),
    "transformers.modeling_utils.prune_linear_layer": (
        "transformers.modeling_utils", ("prune_linear_layer", "find_pruneable_heads_and_indices",
                                        "apply_chunking_to_forward", "prune_conv1d_layer", "prune_layer", "Conv1D",
                                        "SequenceSummary"), ("TF_WEIGHTS_NAME", "TF2_WEIGHTS_NAME")),
    "transformers.trainer_utils.EvaluationStrategy": (
        "transformers.trainer_utils", ("default_hp_space",), ("EvaluationStrategy",)),
    "transformers.models.bert.modeling_bert.BERT_START_DOCSTRING": (
        "transformers.models.bert.modeling_bert", ("BERT_START_DOCSTRING", "BERT_INPUTS_DOCSTRING"), ()),
}
LOOKUP = """
import importlib, json, warnings
warnings.simplefilter("ignore")
module = importlib.import_module(%r)
print(json.dumps({n: hasattr(module, n) for n in %r}))
"""


@pytest.mark.parametrize("shim", sorted(LOWER_ENDS))
def test_the_names_4x_removed_are_restored_and_the_rest_left_alone(shim):
    import json

    module, lacking, kept = LOWER_ENDS[shim]
    code = LOOKUP % (module, lacking + kept)
    off = json.loads(run_python(code=code, compatfix=False).stdout)
    disabled = json.loads(run_python(code=code, env=clean_env(COMPATFIX_DISABLE=shim)).stdout)
    on = json.loads(run_python(code=code).stdout)
    for answers in (off, disabled):
        assert [n for n in lacking if answers[n]] == [], (shim, answers)
        assert [n for n in kept if not answers[n]] == [], (shim, answers)
    # present with compatfix on; that what 4.57 has stays its own object is checked below
    assert all(on.values()), (shim, on)


def test_what_457_has_stays_its_own_and_the_restored_names_work():
    result = run_python(
        code="""
        import warnings
        warnings.simplefilter("ignore")
        import importlib.util
        import torch
        import transformers
        import transformers.utils.import_utils as import_utils
        from transformers import is_torch_tpu_available, is_tf_available
        assert is_tf_available is import_utils.is_tf_available  # 4.57's own probe
        assert importlib.util.find_spec("torch_xla") is None and is_torch_tpu_available() is False
        from transformers.trainer_utils import EvaluationStrategy, HPSearchBackend, default_hp_space
        assert EvaluationStrategy.__module__ == "transformers.trainer_utils"  # 4.57's own enum
        from transformers.trainer_utils import default_hp_space_optuna
        assert default_hp_space[HPSearchBackend.OPTUNA] is default_hp_space_optuna
        import transformers.pytorch_utils as pytorch_utils
        from transformers.modeling_utils import Conv1D, TF_WEIGHTS_NAME, prune_linear_layer
        assert Conv1D is pytorch_utils.Conv1D and prune_linear_layer is pytorch_utils.prune_linear_layer
        assert TF_WEIGHTS_NAME == "model.ckpt"
        from transformers.models.bert.modeling_bert import BERT_INPUTS_DOCSTRING, BERT_START_DOCSTRING
        assert "{0}" in BERT_INPUTS_DOCSTRING and "BertConfig" in BERT_START_DOCSTRING
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


ARGUMENTS = """
import warnings
warnings.simplefilter("ignore")
from transformers import Seq2SeqTrainingArguments, TrainingArguments
for cls in (TrainingArguments, Seq2SeqTrainingArguments):
    try:
        args = cls(output_dir="out", evaluation_strategy="steps", eval_steps=5)
        print(args.eval_strategy, args.no_cuda)
    except TypeError:
        print("refused")
"""


def test_evaluation_strategy_is_eval_strategy_again():
    # 4.51 removed evaluation_strategy=; 4.57 still has no_cuda= (not wrapped: its own field)
    result = run_python(code=ARGUMENTS, compatfix=False)
    assert result.stdout.split("\n")[:2] == ["refused", "refused"], result.stderr[-2000:]
    result = run_python(code=ARGUMENTS)
    assert result.stdout.split("\n")[:2] == ["IntervalStrategy.STEPS False", "IntervalStrategy.STEPS False"], \
        result.stderr[-2000:]

"""transformers.data.processors (utils, the GLUE tables) and transformers.data.metrics,
removed in transformers 5, against the real transformers 5.24: missing with compatfix off;
with it on, 4.x's data classes (SingleSentenceClassificationProcessor's features worked out from a
vocabulary written here) and the GLUE metrics, whose values are worked out here by
hand (F1 = 2TP / (2TP + FP + FN); MCC = (TP*TN - FP*FN) / sqrt(...) for two classes)."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

MODULES = ("transformers.data.processors", "transformers.data.processors.utils", "transformers.data.metrics")
IMPORTS = """
import importlib
import transformers
found = []
for name in %r:
    try:
        importlib.import_module(name)
        found.append(True)
    except ImportError:
        found.append(False)
print(found, hasattr(transformers, "InputExample"), hasattr(transformers, "glue_compute_metrics"),
      hasattr(transformers, "SingleSentenceClassificationProcessor"))
""" % (MODULES,)


def test_data_modules_are_missing_without_compatfix():
    result = run_python(code=IMPORTS, compatfix=False)
    assert result.stdout.strip() == "[False, False, False] False False False", result.stderr[-2000:]
    result = run_python(code=IMPORTS, env=clean_env(COMPATFIX_DISABLE="transformers.data.metrics"))
    assert result.stdout.strip() == "[True, True, False] True True True", result.stderr[-2000:]
    result = run_python(code=IMPORTS, env=clean_env(COMPATFIX_DISABLE="transformers.data.processors.utils"))
    assert result.stdout.strip() == "[True, False, True] True True True", result.stderr[-2000:]
    result = run_python(code=IMPORTS, env=clean_env(COMPATFIX_DISABLE="transformers.data.processors"))
    assert result.stdout.strip() == "[False, False, True] True True True", result.stderr[-2000:]


def test_data_classes_are_4x(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("\ufeffsentence\tlabel\nit is good\t1\n", encoding="utf-8")
    result = run_python(
        code="""
        import dataclasses
        import json
        import transformers
        from transformers import DataProcessor, InputExample, InputFeatures, glue_output_modes, glue_tasks_num_labels
        from transformers.data.processors.utils import InputExample as same
        from transformers.data.processors import glue_output_modes as modes
        assert same is InputExample and modes is glue_output_modes
        example = InputExample(guid="train-1", text_a="it is good", label="1")
        assert example.text_b is None
        assert json.loads(example.to_json_string()) == {"guid": "train-1", "text_a": "it is good", "text_b": None,
                                                        "label": "1"}
        assert example.to_json_string().endswith("\\n") and "\\n  " in example.to_json_string()  # indented
        features = InputFeatures(input_ids=[101, 102], attention_mask=[1, 1], label=1)
        assert features.token_type_ids is None and features.to_json_string().count("\\n") == 1
        try:
            features.label = 0
        except dataclasses.FrozenInstanceError:
            pass
        else:
            raise AssertionError("InputFeatures is frozen in 4.x")

        class Sst2(DataProcessor):
            def get_labels(self):
                return ["0", "1"]

        # _read_tsv: tab-separated, the byte-order mark dropped
        assert Sst2._read_tsv(%r) == [["sentence", "label"], ["it is good", "1"]]
        assert Sst2().tfds_map(InputExample(guid="g", text_a="a", label=1)).label == "1"
        try:
            DataProcessor().get_train_examples("x")
        except NotImplementedError:
            pass
        assert glue_tasks_num_labels["mnli"] == 3 and glue_tasks_num_labels["sts-b"] == 1
        assert glue_output_modes["sts-b"] == "regression" and glue_output_modes["mnli-mm"] == "classification"
        assert transformers.xnli_output_modes == {"xnli": "classification"}
        print("ok")
        """ % str(path)
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_glue_metrics_are_4x():
    result = run_python(
        code="""
        import math
        import numpy as np
        from transformers import glue_compute_metrics, xnli_compute_metrics
        from transformers.data.metrics import acc_and_f1, simple_accuracy
        preds = np.array([1, 0, 1, 1, 0, 1, 0, 0])
        labels = np.array([1, 0, 0, 1, 1, 1, 0, 1])
        # TP = 3, TN = 2, FP = 1, FN = 2
        tp, tn, fp, fn = 3, 2, 1, 2
        accuracy = (tp + tn) / 8
        f1 = 2 * tp / (2 * tp + fp + fn)
        mcc = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        assert simple_accuracy(preds, labels) == accuracy
        mrpc = glue_compute_metrics("mrpc", preds, labels)
        assert mrpc["acc"] == accuracy and abs(mrpc["f1"] - f1) < 1e-12
        assert abs(mrpc["acc_and_f1"] - (accuracy + f1) / 2) < 1e-12
        assert abs(glue_compute_metrics("cola", preds, labels)["mcc"] - mcc) < 1e-12
        assert glue_compute_metrics("cola", np.ones(4), np.ones(4))["mcc"] == 0.0  # undefined: 0, as sklearn
        assert glue_compute_metrics("mnli", preds, labels) == {"mnli/acc": accuracy}
        assert glue_compute_metrics("sst-2", preds, labels) == {"acc": accuracy}
        assert xnli_compute_metrics("xnli", preds, labels) == {"acc": accuracy}
        # STS-B: (1, 3, 2) against (1, 2, 3): deviations (-1, 1, 0), (-1, 0, 1), so Pearson = 1 / 2; the ranks
        # are the values, so Spearman is 0.5 too
        stsb = glue_compute_metrics("sts-b", np.array([1.0, 3.0, 2.0]), np.array([1.0, 2.0, 3.0]))
        assert abs(stsb["spearmanr"] - 0.5) < 1e-12 and abs(stsb["pearson"] - 0.5) < 1e-12
        assert abs(stsb["corr"] - 0.5) < 1e-12
        # three classes: sklearn's multiclass MCC, from the confusion counts
        three = glue_compute_metrics("cola", np.array([0, 1, 2, 2]), np.array([0, 1, 1, 2]))["mcc"]
        c, s, p, t = 3, 4, np.array([1, 1, 2]), np.array([1, 2, 1])
        assert abs(three - (c * s - p @ t) / math.sqrt((s * s - p @ p) * (s * s - t @ t))) < 1e-12
        for call in (lambda: glue_compute_metrics("squad", preds, labels), lambda: xnli_compute_metrics("mnli", preds, labels)):
            try:
                call()
            except KeyError:
                pass
            else:
                raise AssertionError("an unknown task was accepted")
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_single_sentence_processor_is_4x(tmp_path):
    path = tmp_path / "reviews.tsv"
    path.write_text("label\ttext\npos\thello unaffable\nneg\tun\n", encoding="utf-8")
    vocab = tmp_path / "vocab.txt"  # ids: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, un 5, ##aff 6, ##able 7, hello 8
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "hello"]))
    result = run_python(
        code="""
        import torch
        import transformers
        from transformers import BertTokenizer, InputExample, SingleSentenceClassificationProcessor
        from transformers.data.processors.utils import SingleSentenceClassificationProcessor as same
        assert same is SingleSentenceClassificationProcessor
        processor = SingleSentenceClassificationProcessor.create_from_csv(%r, split_name="train", skip_first_row=True)
        assert len(processor) == 2 and sorted(processor.labels) == ["neg", "pos"]
        assert processor[0] == InputExample(guid="train-0", text_a="hello unaffable", text_b=None, label="pos")
        assert len(processor[0:1]) == 1
        processor.labels = ["neg", "pos"]  # fix the label ids: 4.x made them from a set
        tokenizer = BertTokenizer(%r)
        features = processor.get_features(tokenizer, max_length=5)
        # [CLS] hello un ##aff ##able [SEP] cut to 5 ids; [CLS] un [SEP] padded to the longest, 5
        assert [f.input_ids for f in features] == [[2, 8, 5, 6, 3], [2, 5, 3, 0, 0]]
        assert [f.attention_mask for f in features] == [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]
        assert [f.label for f in features] == [1, 0]
        left = processor.get_features(tokenizer, max_length=5, pad_on_left=True, mask_padding_with_zero=False)
        assert left[1].input_ids == [0, 0, 2, 5, 3] and left[1].attention_mask == [1, 1, 0, 0, 0]
        ids, masks, labels = processor.get_features(tokenizer, max_length=5, return_tensors="pt").tensors
        assert ids.tolist() == [[2, 8, 5, 6, 3], [2, 5, 3, 0, 0]] and labels.dtype == torch.long
        from_list = SingleSentenceClassificationProcessor.create_from_examples([("hello", "pos"), ("un", "neg")])
        assert [e.text_a for e in from_list.examples] == ["hello", "un"] and set(from_list.labels) == {"pos", "neg"}
        print("ok")
        """ % (str(path), str(vocab))
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


XNLI_PRESENT = """
import transformers
found = [hasattr(transformers, "xnli_processors")]
try:
    from transformers.data.processors.xnli import XnliProcessor
    found.append(True)
except ImportError:
    found.append(False)
print(found)
"""


def test_xnli_processor_is_missing_without_compatfix():
    result = run_python(code=XNLI_PRESENT, compatfix=False)
    assert result.stdout.strip() == "[False, False]", result.stderr[-2000:]
    # the provided module alone; the top-level name is the transformers.AdamW shim's
    result = run_python(code=XNLI_PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.data.processors.xnli"))
    assert result.stdout.strip() == "[True, False]", result.stderr[-2000:]


def test_xnli_processor_reads_the_xnli_files(tmp_path):
    train = tmp_path / "XNLI-MT-1.0" / "multinli"
    train.mkdir(parents=True)
    (train / "multinli.train.de.tsv").write_text("premise\thypo\tlabel\nEin Hund\tEin Tier\tentailment\n"
                                                 "Es regnet\tEs ist trocken\tcontradictory\n", encoding="utf-8")
    test = tmp_path / "XNLI-1.0"
    test.mkdir()
    header = "\t".join(["language", "gold_label"] + ["x"] * 4 + ["sentence1", "sentence2"])
    rows = ["\t".join(["de", "neutral"] + ["x"] * 4 + ["Er geht", "Er rennt"]),
            "\t".join(["fr", "entailment"] + ["x"] * 4 + ["Il va", "Il bouge"])]
    (test / "xnli.test.tsv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    result = run_python(
        code="""
        import transformers
        from transformers import InputExample, xnli_processors
        from transformers.data.processors import xnli_tasks_num_labels
        from transformers.data.processors.xnli import XnliProcessor
        assert xnli_processors == {"xnli": XnliProcessor} and xnli_tasks_num_labels == {"xnli": 3}
        processor = xnli_processors["xnli"](language="de")
        assert processor.get_labels() == ["contradiction", "entailment", "neutral"]
        # the header skipped; MultiNLI's "contradictory" read as "contradiction"
        assert processor.get_train_examples(%r) == [
            InputExample(guid="train-1", text_a="Ein Hund", text_b="Ein Tier", label="entailment"),
            InputExample(guid="train-2", text_a="Es regnet", text_b="Es ist trocken", label="contradiction")]
        # only the processor's language
        assert processor.get_test_examples(%r) == [
            InputExample(guid="test-1", text_a="Er geht", text_b="Er rennt", label="neutral")]
        print("ok")
        """ % (str(tmp_path), str(tmp_path))
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

"""transformers.data.processors.glue (removed in transformers 5) against the real
transformers 5.24: missing with compatfix off; with it on, each task reads the GLUE
distribution's files with 4.x's column layout, and glue_convert_examples_to_features gives
the token ids a tiny vocabulary spells out here by hand."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

IMPORTS = """
import transformers
try:
    from transformers.data.processors.glue import glue_processors
    print("module")
except ImportError:
    print("missing")
print(hasattr(transformers, "glue_processors"), hasattr(transformers, "glue_convert_examples_to_features"))
"""


def test_glue_is_missing_without_compatfix():
    result = run_python(code=IMPORTS, compatfix=False)
    assert result.stdout.split() == ["missing", "False", "False"], result.stderr[-2000:]
    result = run_python(code=IMPORTS, env=clean_env(COMPATFIX_DISABLE="transformers.data.processors.glue"))
    assert result.stdout.split() == ["missing", "True", "True"], result.stderr[-2000:]


def _write(folder, name, rows):
    (folder / name).write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")


def test_glue_processors_read_4x_layout(tmp_path):
    _write(tmp_path, "train.tsv", [["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                                   ["1", "11", "12", "it is good", "good"], ["0", "13", "14", "it is", "bad"]])
    cola = tmp_path / "cola"
    cola.mkdir()
    _write(cola, "train.tsv", [["gj04", "1", "", "it is good"], ["gj04", "0", "*", "good it is"]])
    _write(cola, "test.tsv", [["index", "sentence"], ["0", "it is bad"]])
    qqp = tmp_path / "qqp"
    qqp.mkdir()
    _write(qqp, "dev.tsv", [["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
                            ["7", "1", "2", "is it", "it is", "1"], ["8", "3"]])
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nit\nis\ngood\nbad\n", encoding="utf-8")
    result = run_python(
        code="""
        from transformers import BertTokenizer, glue_convert_examples_to_features, glue_processors
        from transformers.data.processors.glue import MrpcProcessor, glue_processors as same
        from transformers.data.processors.utils import InputExample, InputFeatures
        assert same is glue_processors and glue_processors["mrpc"] is MrpcProcessor
        assert sorted(glue_processors) == ["cola", "mnli", "mnli-mm", "mrpc", "qnli", "qqp", "rte", "sst-2", "sts-b",
                                           "wnli"]
        folder = %r
        mrpc = MrpcProcessor().get_train_examples(folder)
        assert mrpc == [InputExample("train-1", "it is good", "good", "1"), InputExample("train-2", "it is", "bad", "0")]
        cola = glue_processors["cola"]()
        assert cola.get_train_examples(folder + "/cola") == [InputExample("train-0", "it is good", None, "1"),
                                                            InputExample("train-1", "good it is", None, "0")]
        assert cola.get_test_examples(folder + "/cola") == [InputExample("test-0", "it is bad", None, None)]
        # QQP: the id column names the example; 4.x skipped a short row
        assert glue_processors["qqp"]().get_dev_examples(folder + "/qqp") == [InputExample("dev-7", "is it", "it is", "1")]
        assert glue_processors["mnli"]().get_labels() == ["contradiction", "entailment", "neutral"]
        assert glue_processors["mnli-mm"].dev_file == "dev_mismatched.tsv"
        assert glue_processors["sts-b"]().get_labels() == [None]

        tokenizer = BertTokenizer(vocab=folder + "/vocab.txt")
        # [CLS]=2 it=4 is=5 good=6 [SEP]=3 good=6 [SEP]=3, then [PAD]=0; type ids 0 for the first text
        features = glue_convert_examples_to_features(mrpc, tokenizer, max_length=9, task="mrpc")
        assert features[0] == InputFeatures(input_ids=[2, 4, 5, 6, 3, 6, 3, 0, 0],
                                            attention_mask=[1, 1, 1, 1, 1, 1, 1, 0, 0],
                                            token_type_ids=[0, 0, 0, 0, 0, 1, 1, 0, 0], label=1)
        assert features[1].label == 0
        single = glue_convert_examples_to_features(cola.get_train_examples(folder + "/cola"), tokenizer, max_length=4,
                                                   label_list=["0", "1"], output_mode="classification")
        assert single[0].input_ids == [2, 4, 5, 3] and single[1].label == 0  # truncated to 4
        regression = glue_convert_examples_to_features([InputExample("g", "it", label="3.5")], tokenizer, max_length=4,
                                                       task="sts-b")
        assert regression[0].label == 3.5
        print("ok")
        """ % str(tmp_path)
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


GLUE_DATASET = """
import transformers
try:
    from transformers import GlueDataset, GlueDataTrainingArguments
    from transformers.data.datasets import GlueDataset as same
    print(GlueDataset is same)
except ImportError:
    print("missing")
"""


def test_glue_dataset_is_missing_without_compatfix():
    assert run_python(code=GLUE_DATASET, compatfix=False).stdout.split() == ["missing"]
    assert run_python(code=GLUE_DATASET).stdout.split() == ["True"]


def test_glue_dataset_encodes_a_split_as_4x(tmp_path):
    mrpc = tmp_path / "MRPC"
    mrpc.mkdir()
    _write(mrpc, "dev.tsv", [["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                             ["1", "11", "12", "it is good", "good"], ["0", "13", "14", "it is", "bad"],
                             ["1", "15", "16", "good", "it is good"]])
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nit\nis\ngood\nbad\n", encoding="utf-8")
    result = run_python(
        code="""
        import warnings
        from transformers import BertTokenizer, GlueDataset, GlueDataTrainingArguments, HfArgumentParser
        from transformers.data.processors.utils import InputFeatures
        folder = %r
        # 2020-22 run_glue.py: the arguments from the command line, the task name lower-cased
        (args,) = HfArgumentParser(GlueDataTrainingArguments).parse_args_into_dataclasses(
            ["--task_name", "MRPC", "--data_dir", folder + "/MRPC", "--max_seq_length", "7"])
        assert args.task_name == "mrpc" and args.max_seq_length == 7 and args.overwrite_cache is False
        tokenizer = BertTokenizer(vocab=folder + "/vocab.txt")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dev = GlueDataset(args, tokenizer, mode="dev")
        assert any(issubclass(w.category, FutureWarning) for w in caught)
        assert len(dev) == 3 and dev.get_labels() == ["0", "1"] and dev.output_mode == "classification"
        # [CLS]=2 it=4 is=5 good=6 [SEP]=3 good=6 [SEP]=3, truncated to 7
        assert dev[0] == InputFeatures(input_ids=[2, 4, 5, 6, 3, 6, 3], attention_mask=[1] * 7,
                                       token_type_ids=[0, 0, 0, 0, 0, 1, 1], label=1)
        assert [f.label for f in dev] == [1, 0, 1]
        assert len(GlueDataset(args, tokenizer, mode="dev", limit_length=2)) == 2
        try:
            GlueDataset(args, tokenizer, mode="validation")
        except KeyError as error:
            assert "mode is not a valid split name" in str(error)
        else:
            raise AssertionError("an unknown split must be a KeyError, as in 4.x")
        print("ok")
        """ % str(tmp_path)
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

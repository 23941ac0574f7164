"""Shims for ``transformers.data.processors.glue``: 4.x's GLUE processors (one per task,
reading the GLUE distribution's ``.tsv`` files with its column layout), the
``glue_processors`` table and ``glue_convert_examples_to_features``, which transformers 5
removed with the rest of ``transformers.data.processors``.

``glue_convert_examples_to_features`` returns 4.x's ``InputFeatures`` list (PyTorch side;
the TensorFlow dataset form is gone with TensorFlow). It encodes example by example:
transformers 5's tokenizers are the tokenizers-library ones, which refuse the
``(text, None)`` pairs 4.x passed as a batch for single-sentence tasks.
"""

from __future__ import annotations

import os
from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim
from compatfix.shims.transformers.data.processors import GLUE_OUTPUT_MODES, GLUE_TASKS_NUM_LABELS
from compatfix.shims.transformers.data.processors.utils import DataProcessor, InputExample, InputFeatures


class _GlueProcessor(DataProcessor):
    """A GLUE task's files (``train.tsv``, ``dev.tsv``, ``test.tsv`` unless named otherwise)
    and columns: ``text_a``/``text_b``/``label`` indices, ``guid_column`` (None: the row
    number), whether the file has a header row and whether its test file differs."""

    labels: list[Any] = []
    dev_file, test_file = "dev.tsv", "test.tsv"
    text_a, text_b, label, guid_column = 0, None, -1, None
    test_text_a, test_text_b = None, None  # where the test file's columns differ
    header = True
    skip_short_rows = False

    def get_train_examples(self, data_dir: str) -> list[InputExample]:
        return self._create_examples(self._read_tsv(os.path.join(data_dir, "train.tsv")), "train")

    def get_dev_examples(self, data_dir: str) -> list[InputExample]:
        return self._create_examples(self._read_tsv(os.path.join(data_dir, self.dev_file)), "dev")

    def get_test_examples(self, data_dir: str) -> list[InputExample]:
        return self._create_examples(self._read_tsv(os.path.join(data_dir, self.test_file)), "test")

    def get_labels(self) -> list[Any]:
        return list(self.labels)

    def _create_examples(self, lines: list[list[str]], set_type: str) -> list[InputExample]:
        test = set_type == "test"
        text_a = self.test_text_a if test and self.test_text_a is not None else self.text_a
        text_b = self.test_text_b if test and self.test_text_b is not None else self.text_b
        examples = []
        for i, line in enumerate(lines):
            if i == 0 and (self.header or test):
                continue
            # CoLA's test rows, read past a header the others lack, count from 0 in 4.x
            number = i - 1 if test and not self.header else i
            guid = "%s-%s" % (set_type, number if self.guid_column is None else line[self.guid_column])
            try:
                examples.append(InputExample(guid=guid, text_a=line[text_a],
                                             text_b=None if text_b is None else line[text_b],
                                             label=None if test else line[self.label]))
            except IndexError:
                if not self.skip_short_rows:
                    raise
        return examples


class MrpcProcessor(_GlueProcessor):
    """MRPC: quality, #1 ID, #2 ID, #1 string, #2 string."""
    labels, text_a, text_b, label = ["0", "1"], 3, 4, 0


class MnliProcessor(_GlueProcessor):
    """MultiNLI (matched dev and test sets)."""
    labels = ["contradiction", "entailment", "neutral"]
    dev_file, test_file = "dev_matched.tsv", "test_matched.tsv"
    text_a, text_b, guid_column = 8, 9, 0


class MnliMismatchedProcessor(MnliProcessor):
    """MultiNLI (mismatched dev and test sets)."""
    dev_file, test_file = "dev_mismatched.tsv", "test_mismatched.tsv"


class ColaProcessor(_GlueProcessor):
    """CoLA: no header row in train and dev (source, label, mark, sentence); the test file has one."""
    labels, text_a, label, header, test_text_a = ["0", "1"], 3, 1, False, 1


class Sst2Processor(_GlueProcessor):
    """SST-2: sentence, label (test: index, sentence)."""
    labels, text_a, label, test_text_a = ["0", "1"], 0, 1, 1


class StsbProcessor(_GlueProcessor):
    """STS-B: a regression task (its one label is None)."""
    labels, text_a, text_b, guid_column = [None], 7, 8, 0


class QqpProcessor(_GlueProcessor):
    """QQP: id, qid1, qid2, question1, question2, is_duplicate (test: id, question1, question2)."""
    labels, text_a, text_b, label, guid_column = ["0", "1"], 3, 4, 5, 0
    test_text_a, test_text_b = 1, 2
    skip_short_rows = True  # 4.x skipped QQP's malformed rows


class QnliProcessor(_GlueProcessor):
    """QNLI: index, question, sentence, label."""
    labels, text_a, text_b, guid_column = ["entailment", "not_entailment"], 1, 2, 0


class RteProcessor(QnliProcessor):
    """RTE: index, sentence1, sentence2, label."""


class WnliProcessor(QnliProcessor):
    """WNLI: index, sentence1, sentence2, label."""
    labels = ["0", "1"]


GLUE_PROCESSORS = {
    "cola": ColaProcessor, "mnli": MnliProcessor, "mnli-mm": MnliMismatchedProcessor, "mrpc": MrpcProcessor,
    "sst-2": Sst2Processor, "sts-b": StsbProcessor, "qqp": QqpProcessor, "qnli": QnliProcessor,
    "rte": RteProcessor, "wnli": WnliProcessor,
}


def glue_convert_examples_to_features(
    examples: list[InputExample],
    tokenizer: Any,
    max_length: int | None = None,
    task: str | None = None,
    label_list: list[Any] | None = None,
    output_mode: str | None = None,
) -> list[InputFeatures]:
    """transformers 4.x: each example as ``InputFeatures``, its texts encoded to
    ``max_length`` (padded and truncated), its label the index in ``label_list``
    (classification) or a float (regression); ``task`` gives their defaults."""
    if max_length is None:
        max_length = tokenizer.model_max_length
    if task is not None:
        if label_list is None:
            label_list = GLUE_PROCESSORS[task]().get_labels()
        if output_mode is None:
            output_mode = GLUE_OUTPUT_MODES[task]
    label_map = {label: i for i, label in enumerate(label_list or [])}

    def label_from_example(example: InputExample) -> int | float | None:
        if example.label is None:
            return None
        if output_mode == "classification":
            return label_map[example.label]
        if output_mode == "regression":
            return float(example.label)
        raise KeyError(output_mode)

    features = []
    for example in examples:
        inputs = tokenizer(example.text_a, example.text_b, max_length=max_length, padding="max_length",
                           truncation=True)
        features.append(InputFeatures(**dict(inputs), label=label_from_example(example)))
    return features


NAMES = {"glue_processors": GLUE_PROCESSORS, "glue_convert_examples_to_features": glue_convert_examples_to_features,
         "glue_output_modes": GLUE_OUTPUT_MODES, "glue_tasks_num_labels": GLUE_TASKS_NUM_LABELS,
         **{cls.__name__: cls for cls in GLUE_PROCESSORS.values()}}


def provide_glue(module) -> None:
    restore_names(module, NAMES, "transformers.data.processors.glue")


SHIMS = (
    Shim(
        "transformers.data.processors.glue",
        targets=["transformers.data.processors.glue"],
        kind=PROVIDE,
        requires={"transformers": ">=5.0"},
        apply=provide_glue,
        broke="transformers 5 removed transformers.data.processors.glue, the GLUE task readers of 2019-22 "
        "fine-tuning scripts (run_glue.py and its descendants)",
        summary="provide 4.x's GLUE processors (files and column layout per task), glue_processors and "
        "glue_convert_examples_to_features (PyTorch features, encoded example by example)",
        replacement="the datasets library's glue configurations and tokenizer(...) on their columns",
        rewrites={"transformers.data.processors.glue": "datasets.load_dataset('glue', task) and the tokenizer"},
    ),
)

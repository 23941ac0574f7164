"""Shims for ``transformers.data.processors.xnli``: 4.x's XNLI processor (removed with the rest
of ``transformers.data.processors`` in transformers 5), which reads the XNLI release's files:
the machine-translated MultiNLI training set ``XNLI-MT-1.0/multinli/multinli.train.<lang>.tsv``
and the test set ``XNLI-1.0/xnli.test.tsv``, filtered to one language. As 4.x wrote it, with its
tables ``xnli_processors``, ``xnli_output_modes`` and ``xnli_tasks_num_labels``.
"""

from __future__ import annotations

import os

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim
from compatfix.shims.transformers.data.processors import XNLI_OUTPUT_MODES
from compatfix.shims.transformers.data.processors.utils import DataProcessor, InputExample


def _checked(guid: str, text_a: object, text_b: object, label: object) -> InputExample:
    for value, what in ((text_a, "input"), (text_b, "input"), (label, "label")):
        if not isinstance(value, str):
            raise ValueError(f"Training {what} {value} is not a string")
    return InputExample(guid=guid, text_a=text_a, text_b=text_b, label=label)


class XnliProcessor(DataProcessor):
    """Processor for the XNLI data set (one language; training on ``train_language`` if given)."""

    def __init__(self, language: str, train_language: str | None = None) -> None:
        self.language = language
        self.train_language = train_language

    def get_train_examples(self, data_dir: str) -> list[InputExample]:
        language = self.language if self.train_language is None else self.train_language
        lines = self._read_tsv(os.path.join(data_dir, f"XNLI-MT-1.0/multinli/multinli.train.{language}.tsv"))
        # the first line is the header; MultiNLI's "contradictory" is XNLI's "contradiction"
        return [_checked(f"train-{i}", line[0], line[1], "contradiction" if line[2] == "contradictory" else line[2])
                for i, line in enumerate(lines) if i > 0]

    def get_test_examples(self, data_dir: str) -> list[InputExample]:
        lines = self._read_tsv(os.path.join(data_dir, "XNLI-1.0/xnli.test.tsv"))
        return [_checked(f"test-{i}", line[6], line[7], line[1])
                for i, line in enumerate(lines) if i > 0 and line[0] == self.language]

    def get_labels(self) -> list[str]:
        return ["contradiction", "entailment", "neutral"]


XnliProcessor.__module__ = "transformers.data.processors.xnli"

XNLI_PROCESSORS = {"xnli": XnliProcessor}
XNLI_TASKS_NUM_LABELS = {"xnli": 3}
NAMES = {"XnliProcessor": XnliProcessor, "xnli_processors": XNLI_PROCESSORS, "xnli_output_modes": XNLI_OUTPUT_MODES,
         "xnli_tasks_num_labels": XNLI_TASKS_NUM_LABELS}


def provide_xnli(module) -> None:
    restore_names(module, NAMES, "transformers.data.processors.xnli")


SHIMS = (
    Shim(
        "transformers.data.processors.xnli",
        targets=["transformers.data.processors.xnli"],
        kind=PROVIDE,
        requires={"transformers": ">=5.0"},
        apply=provide_xnli,
        broke="transformers 5 removed transformers.data.processors, whose XnliProcessor and xnli_processors 2019-22 "
        "cross-lingual classification scripts read XNLI with",
        summary="provide it with 4.x's XnliProcessor (the XNLI release's train and test files) and its tables",
        replacement="datasets.load_dataset('xnli', language)",
        rewrites={"transformers.data.processors.xnli": "datasets.load_dataset('xnli', language)"},
    ),
)

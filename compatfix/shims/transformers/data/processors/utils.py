"""Shims for ``transformers.data.processors.utils``: ``InputExample``, ``InputFeatures``
and ``DataProcessor``, the data classes of 2019-22 GLUE-style fine-tuning scripts, which
transformers 5 removed with the rest of ``transformers.data.processors``.

They are transformers 4.x's own: the two dataclasses with its fields, defaults and JSON
form, and the processor base class with ``_read_tsv`` (tab-separated, ``utf-8-sig``)
and ``tfds_map``.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim


@dataclass
class InputExample:
    """One example for sequence classification: an id, one or two texts and a label."""

    guid: str
    text_a: str
    text_b: str | None = None
    label: str | None = None

    def to_json_string(self) -> str:
        """The example as a JSON object, indented, with a newline."""
        return json.dumps(dataclasses.asdict(self), indent=2) + "\n"


@dataclass(frozen=True)
class InputFeatures:
    """One example's model inputs: token ids, attention mask, token type ids and label."""

    input_ids: list[int]
    attention_mask: list[int] | None = None
    token_type_ids: list[int] | None = None
    label: int | float | None = None

    def to_json_string(self) -> str:
        """The features as a JSON object on one line, with a newline."""
        return json.dumps(dataclasses.asdict(self)) + "\n"


class DataProcessor:
    """Base class of the data converters of sequence classification data sets."""

    def get_example_from_tensor_dict(self, tensor_dict: dict) -> InputExample:
        """An ``InputExample`` from a dict of tensorflow-datasets tensors."""
        raise NotImplementedError()

    def get_train_examples(self, data_dir: str) -> list[InputExample]:
        """The ``InputExample``s of the train set."""
        raise NotImplementedError()

    def get_dev_examples(self, data_dir: str) -> list[InputExample]:
        """The ``InputExample``s of the dev set."""
        raise NotImplementedError()

    def get_test_examples(self, data_dir: str) -> list[InputExample]:
        """The ``InputExample``s of the test set."""
        raise NotImplementedError()

    def get_labels(self) -> list[str]:
        """The labels of this data set."""
        raise NotImplementedError()

    def tfds_map(self, example: Any) -> Any:
        """Turn a tensorflow-datasets label index into this data set's label."""
        if len(self.get_labels()) > 1:
            example.label = self.get_labels()[int(example.label)]
        return example

    @classmethod
    def _read_tsv(cls, input_file: str, quotechar: str | None = None) -> list[list[str]]:
        """The rows of a tab-separated file."""
        with open(input_file, encoding="utf-8-sig") as f:
            return list(csv.reader(f, delimiter="\t", quotechar=quotechar))


NAMES = {"InputExample": InputExample, "InputFeatures": InputFeatures, "DataProcessor": DataProcessor}


def provide_processor_utils(module) -> None:
    restore_names(module, NAMES, "transformers.data.processors.utils")


SHIMS = (
    Shim(
        "transformers.data.processors.utils",
        targets=["transformers.data.processors.utils"],
        kind=PROVIDE,
        requires={"transformers": ">=5.0"},
        apply=provide_processor_utils,
        broke="transformers 5 removed transformers.data.processors, whose InputExample, InputFeatures and "
        "DataProcessor 2019-22 GLUE-style fine-tuning scripts build their data with",
        summary="provide it with 4.x's InputExample and InputFeatures dataclasses and DataProcessor base class",
        replacement="your own dataclasses, or the datasets library",
        rewrites={"transformers.data.processors.utils": "your own dataclasses, or the datasets library"},
    ),
)

"""Shims for ``transformers.data.processors.utils``: ``InputExample``, ``InputFeatures``,
``DataProcessor`` and ``SingleSentenceClassificationProcessor``, the data classes of 2019-22
GLUE-style fine-tuning scripts, which transformers 5 removed with the rest of
``transformers.data.processors``.

They are transformers 4.x's own: the two dataclasses with its fields, defaults and JSON
form, the processor base class with ``_read_tsv`` (tab-separated, ``utf-8-sig``)
and ``tfds_map``, and the generic single-sentence processor (examples from a TSV file or a
list, features padded to the longest example). Its ``get_features`` read ``tokenizer.max_len``,
which 4.x's tokenizers renamed ``model_max_length``; that is what it reads here.
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


class SingleSentenceClassificationProcessor(DataProcessor):
    """Generic processor for a single sentence classification data set."""

    def __init__(self, labels: list | None = None, examples: list | None = None, mode: str = "classification",
                 verbose: bool = False) -> None:
        self.labels = [] if labels is None else labels
        self.examples = [] if examples is None else examples
        self.mode = mode
        self.verbose = verbose

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return SingleSentenceClassificationProcessor(labels=self.labels, examples=self.examples[idx])
        return self.examples[idx]

    @classmethod
    def create_from_csv(cls, file_name: str, split_name: str = "", column_label: int = 0, column_text: int = 1,
                        column_id: int | None = None, skip_first_row: bool = False,
                        **kwargs: Any) -> SingleSentenceClassificationProcessor:
        processor = cls(**kwargs)
        processor.add_examples_from_csv(file_name, split_name=split_name, column_label=column_label,
                                        column_text=column_text, column_id=column_id, skip_first_row=skip_first_row,
                                        overwrite_labels=True, overwrite_examples=True)
        return processor

    @classmethod
    def create_from_examples(cls, texts_or_text_and_labels: list, labels: list | None = None,
                             **kwargs: Any) -> SingleSentenceClassificationProcessor:
        processor = cls(**kwargs)
        processor.add_examples(texts_or_text_and_labels, labels=labels)
        return processor

    def add_examples_from_csv(self, file_name: str, split_name: str = "", column_label: int = 0,
                              column_text: int = 1, column_id: int | None = None, skip_first_row: bool = False,
                              overwrite_labels: bool = False, overwrite_examples: bool = False) -> list[InputExample]:
        lines = self._read_tsv(file_name)  # tab-separated, as 4.x read its "csv"
        if skip_first_row:
            lines = lines[1:]
        texts, labels, ids = [], [], []
        for i, line in enumerate(lines):
            texts.append(line[column_text])
            labels.append(line[column_label])
            if column_id is not None:
                ids.append(line[column_id])
            else:
                ids.append(f"{split_name}-{i}" if split_name else str(i))
        return self.add_examples(texts, labels, ids, overwrite_labels=overwrite_labels,
                                 overwrite_examples=overwrite_examples)

    def add_examples(self, texts_or_text_and_labels: list, labels: list | None = None, ids: list | None = None,
                     overwrite_labels: bool = False, overwrite_examples: bool = False) -> list[InputExample]:
        if labels is not None and len(texts_or_text_and_labels) != len(labels):
            raise ValueError(f"Text and labels have mismatched lengths {len(texts_or_text_and_labels)} and {len(labels)}")
        if ids is not None and len(texts_or_text_and_labels) != len(ids):
            raise ValueError(f"Text and ids have mismatched lengths {len(texts_or_text_and_labels)} and {len(ids)}")
        if ids is None:
            ids = [None] * len(texts_or_text_and_labels)
        if labels is None:
            labels = [None] * len(texts_or_text_and_labels)
        examples = []
        added_labels = set()
        for text_or_text_and_label, label, guid in zip(texts_or_text_and_labels, labels, ids):
            if isinstance(text_or_text_and_label, (tuple, list)) and label is None:
                text, label = text_or_text_and_label
            else:
                text = text_or_text_and_label
            added_labels.add(label)
            examples.append(InputExample(guid=guid, text_a=text, text_b=None, label=label))
        if overwrite_examples:
            self.examples = examples
        else:
            self.examples.extend(examples)
        if overwrite_labels:
            self.labels = list(added_labels)
        else:
            self.labels = list(set(self.labels).union(added_labels))
        return self.examples

    def get_features(self, tokenizer: Any, max_length: int | None = None, pad_on_left: bool = False,
                     pad_token: int = 0, mask_padding_with_zero: bool = True, return_tensors: str | None = None) -> Any:
        """The examples as ``InputFeatures`` (``return_tensors="pt"``: a ``TensorDataset`` of
        input ids, attention masks and labels), each encoded with special tokens, cut to
        ``max_length`` and padded with ``pad_token`` to the longest example."""
        model_max_length = tokenizer.model_max_length
        if max_length is None:
            max_length = model_max_length
        label_map = {label: i for i, label in enumerate(self.labels)}
        # 4.x truncated to max_length (its default strategy when none was asked for)
        all_input_ids = [tokenizer.encode(example.text_a, add_special_tokens=True, truncation=True,
                                          max_length=min(max_length, model_max_length))
                         for example in self.examples]
        batch_length = max(len(input_ids) for input_ids in all_input_ids)
        real, padded = (1, 0) if mask_padding_with_zero else (0, 1)
        features = []
        for input_ids, example in zip(all_input_ids, self.examples):
            padding = batch_length - len(input_ids)
            if pad_on_left:
                input_ids = [pad_token] * padding + input_ids
                attention_mask = [padded] * padding + [real] * (batch_length - padding)
            else:
                input_ids = input_ids + [pad_token] * padding
                attention_mask = [real] * (batch_length - padding) + [padded] * padding
            if self.mode == "classification":
                label = label_map[example.label]
            elif self.mode == "regression":
                label = float(example.label)
            else:
                raise ValueError(self.mode)
            features.append(InputFeatures(input_ids=input_ids, attention_mask=attention_mask, label=label))
        if return_tensors is None:
            return features
        if return_tensors == "tf":
            raise RuntimeError("return_tensors set to 'tf' but TensorFlow 2.0 can't be imported")
        if return_tensors == "pt":
            import torch
            from torch.utils.data import TensorDataset

            label_type = torch.long if self.mode == "classification" else torch.float
            return TensorDataset(torch.tensor([f.input_ids for f in features], dtype=torch.long),
                                 torch.tensor([f.attention_mask for f in features], dtype=torch.long),
                                 torch.tensor([f.label for f in features], dtype=label_type))
        raise ValueError("return_tensors should be one of 'tf' or 'pt'")


SingleSentenceClassificationProcessor.__module__ = "transformers.data.processors.utils"

NAMES = {"InputExample": InputExample, "InputFeatures": InputFeatures, "DataProcessor": DataProcessor,
         "SingleSentenceClassificationProcessor": SingleSentenceClassificationProcessor}


def provide_processor_utils(module) -> None:
    restore_names(module, NAMES, "transformers.data.processors.utils")


SHIMS = (
    Shim(
        "transformers.data.processors.utils",
        targets=["transformers.data.processors.utils"],
        kind=PROVIDE,
        requires={"transformers": ">=5.0"},
        apply=provide_processor_utils,
        broke="transformers 5 removed transformers.data.processors, whose InputExample, InputFeatures, "
        "DataProcessor and SingleSentenceClassificationProcessor 2019-22 GLUE-style fine-tuning scripts build their "
        "data with",
        summary="provide it with 4.x's InputExample and InputFeatures dataclasses, DataProcessor base class and "
        "SingleSentenceClassificationProcessor",
        replacement="your own dataclasses, or the datasets library",
        rewrites={"transformers.data.processors.utils": "your own dataclasses, or the datasets library"},
    ),
)

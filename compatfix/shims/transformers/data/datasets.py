"""Shims for ``transformers.data.datasets``, 4.x's torch datasets over a tokenizer, which
transformers 5 removed (deprecated in 4.x for the datasets library): the language-modeling ones
2020-22 fine-tuning scripts build, ``TextDataset``, ``LineByLineTextDataset`` and
``LineByLineWithRefDataset``, as 4.x wrote them, and the GLUE one, ``GlueDataset`` with its
``GlueDataTrainingArguments``.

- ``TextDataset``: the file's text tokenized as one sequence, cut into blocks of
  ``block_size`` tokens with the model's special tokens around each (the last, shorter block
  is dropped), each item a ``LongTensor``.
- ``LineByLineTextDataset``: one example per non-blank line, encoded with special tokens and
  truncated to ``block_size``, each item ``{"input_ids": LongTensor}``.
- ``LineByLineWithRefDataset``: the same, with each line's whole-word reference positions
  (one JSON list per line of ``ref_path``) as ``"chinese_ref"``.
- ``GlueDataset(args, tokenizer, limit_length=None, mode="train")``: the task's split read by
  its GLUE processor and encoded by ``glue_convert_examples_to_features``, each item an
  ``InputFeatures``.

4.x kept ``TextDataset``'s and ``GlueDataset``'s examples in a pickle beside the data (``cached_lm_...``) and loaded
it on the next run; these do not: a pickle read from disk runs whatever it holds, and tokenizing
again gives the same examples. ``overwrite_cache`` and ``cache_dir`` are accepted and unused.
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from typing import Any, Callable

from compatfix.patching import Lazy, restore_names
from compatfix.registry import PROVIDE, Shim

DEPRECATION = ("This dataset was removed from transformers (compatfix restores 4.x's); preprocessing is the datasets "
               "library's now: see examples/pytorch/language-modeling/run_mlm.py")
NAMES = ("TextDataset", "LineByLineTextDataset", "LineByLineWithRefDataset", "GlueDataset", "GlueDataTrainingArguments")

_made: dict[str, type] = {}


def _non_blank_lines(path: str) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        return [line for line in handle.read().splitlines() if line and not line.isspace()]


def _special_tokens_around(tokenizer: Any) -> Callable[[list[int]], list[int]]:
    """``ids -> ids`` with the special tokens the tokenizer puts around one sequence: its
    ``build_inputs_with_special_tokens`` (4.x's tokenizers, today's Python ones), or, for
    today's tokenizers-library ones, which lack it, those it adds around an encoded word ([CLS]
    ... [SEP] for BERT, <s> ... </s> for RoBERTa, none for GPT-2)."""
    build = getattr(tokenizer, "build_inputs_with_special_tokens", None)
    if build is not None:
        return build
    with_special = tokenizer("a", add_special_tokens=True)["input_ids"]
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    starts = [i for i in range(len(with_special) - len(plain) + 1) if with_special[i:i + len(plain)] == plain]
    if not plain or not starts:
        raise ValueError("cannot tell the special tokens %s puts around a sequence" % type(tokenizer).__name__)
    prefix, suffix = with_special[:starts[0]], with_special[starts[0] + len(plain):]
    return lambda ids: prefix + list(ids) + suffix


def dataset_classes() -> dict[str, type]:
    """4.x's three language-modeling datasets, ``torch.utils.data.Dataset`` subclasses (made
    on first use: torch is imported then)."""
    if not _made:
        import torch
        from torch.utils.data import Dataset

        class TextDataset(Dataset):
            """The file's tokens in blocks of ``block_size`` (special tokens included)."""

            def __init__(self, tokenizer: Any, file_path: str, block_size: int, overwrite_cache: bool = False,
                         cache_dir: str | None = None) -> None:
                warnings.warn(DEPRECATION, FutureWarning, stacklevel=2)
                if not os.path.isfile(file_path):
                    raise ValueError(f"Input file path {file_path} not found")
                block_size = block_size - tokenizer.num_special_tokens_to_add(pair=False)
                with open(file_path, encoding="utf-8") as handle:
                    text = handle.read()
                ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
                with_special_tokens = _special_tokens_around(tokenizer)
                # whole blocks only: the last, shorter one is dropped, as in 4.x
                self.examples = [with_special_tokens(ids[i:i + block_size])
                                 for i in range(0, len(ids) - block_size + 1, block_size)]

            def __len__(self) -> int:
                return len(self.examples)

            def __getitem__(self, i: int) -> Any:
                return torch.tensor(self.examples[i], dtype=torch.long)

        class LineByLineTextDataset(Dataset):
            """One example per non-blank line, truncated to ``block_size`` tokens."""

            def __init__(self, tokenizer: Any, file_path: str, block_size: int) -> None:
                warnings.warn(DEPRECATION, FutureWarning, stacklevel=2)
                if not os.path.isfile(file_path):
                    raise ValueError(f"Input file path {file_path} not found")
                encoding = tokenizer(_non_blank_lines(file_path), add_special_tokens=True, truncation=True,
                                     max_length=block_size)
                self.examples = [{"input_ids": torch.tensor(ids, dtype=torch.long)} for ids in encoding["input_ids"]]

            def __len__(self) -> int:
                return len(self.examples)

            def __getitem__(self, i: int) -> dict[str, Any]:
                return self.examples[i]

        class LineByLineWithRefDataset(Dataset):
            """``LineByLineTextDataset`` with each line's reference positions as ``chinese_ref``."""

            def __init__(self, tokenizer: Any, file_path: str, block_size: int, ref_path: str) -> None:
                warnings.warn(DEPRECATION, FutureWarning, stacklevel=2)
                if not os.path.isfile(file_path):
                    raise ValueError(f"Input file path {file_path} not found")
                if not os.path.isfile(ref_path):
                    raise ValueError(f"Ref file path {ref_path} not found")
                with open(file_path, encoding="utf-8") as handle:
                    # readlines, not splitlines: a line may hold U+2029, which splitlines would split at
                    data = [line.strip() for line in handle.readlines() if line and not line.isspace()]
                ref = [json.loads(line) for line in _non_blank_lines(ref_path)]
                if len(data) != len(ref):
                    raise ValueError(f"Length of Input file should be equal to Ref file. But the length of {file_path} "
                                     f"is {len(data)} while length of {ref_path} is {len(ref)}")
                encoding = tokenizer(data, add_special_tokens=True, truncation=True, max_length=block_size)
                self.examples = [{"input_ids": torch.tensor(ids, dtype=torch.long),
                                  "chinese_ref": torch.tensor(positions, dtype=torch.long)}
                                 for ids, positions in zip(encoding["input_ids"], ref)]

            def __len__(self) -> int:
                return len(self.examples)

            def __getitem__(self, i: int) -> dict[str, Any]:
                return self.examples[i]

        for cls in (TextDataset, LineByLineTextDataset, LineByLineWithRefDataset):
            cls.__module__ = "transformers.data.datasets.language_modeling"
            _made[cls.__name__] = cls
        _made.update(_glue_classes(Dataset))
    return _made


# 4.x swapped MNLI's two non-entailment labels for the tokenizers of models trained on the
# other order (their checkpoints' heads expect it)
_MNLI_SWAPPED_LABELS = ("RobertaTokenizer", "RobertaTokenizerFast", "XLMRobertaTokenizer", "BartTokenizer",
                        "BartTokenizerFast")


def _glue_classes(dataset_base: type) -> dict[str, type]:
    """4.x's ``GlueDataTrainingArguments``, ``Split`` and ``GlueDataset``: a GLUE task's split
    read by its processor and encoded by ``glue_convert_examples_to_features``."""
    import enum
    from dataclasses import dataclass, field

    from compatfix.shims.transformers.data.processors import GLUE_OUTPUT_MODES
    from compatfix.shims.transformers.data.processors.glue import GLUE_PROCESSORS, glue_convert_examples_to_features

    @dataclass
    class GlueDataTrainingArguments:
        task_name: str = field(metadata={"help": "The name of the task to train on: " + ", ".join(GLUE_PROCESSORS)})
        data_dir: str = field(metadata={"help": "The input data dir. Should contain the .tsv files (or other data "
                                                "files) for the task."})
        max_seq_length: int = field(default=128, metadata={
            "help": "The maximum total input sequence length after tokenization. Sequences longer than this will "
                    "be truncated, sequences shorter will be padded."})
        overwrite_cache: bool = field(default=False, metadata={
            "help": "Overwrite the cached training and evaluation sets"})

        def __post_init__(self) -> None:
            self.task_name = self.task_name.lower()

    class Split(enum.Enum):
        train = "train"
        dev = "dev"
        test = "test"

    class GlueDataset(dataset_base):  # type: ignore[misc, valid-type]
        """A GLUE split's ``InputFeatures``, encoded as 4.x encoded them (no pickle cache: see
        the module's docstring)."""

        def __init__(self, args: Any, tokenizer: Any, limit_length: int | None = None, mode: Any = Split.train,
                     cache_dir: str | None = None) -> None:
            warnings.warn(DEPRECATION, FutureWarning, stacklevel=2)
            self.args = args
            self.processor = GLUE_PROCESSORS[args.task_name]()
            self.output_mode = GLUE_OUTPUT_MODES[args.task_name]
            if isinstance(mode, str):
                try:
                    mode = Split[mode]
                except KeyError:
                    raise KeyError("mode is not a valid split name") from None
            label_list = self.processor.get_labels()
            if args.task_name in ("mnli", "mnli-mm") and type(tokenizer).__name__ in _MNLI_SWAPPED_LABELS:
                label_list[1], label_list[2] = label_list[2], label_list[1]
            self.label_list = label_list
            read = {Split.train: self.processor.get_train_examples, Split.dev: self.processor.get_dev_examples,
                    Split.test: self.processor.get_test_examples}[mode]
            examples = read(args.data_dir)
            if limit_length is not None:
                examples = examples[:limit_length]
            self.features = glue_convert_examples_to_features(examples, tokenizer, max_length=args.max_seq_length,
                                                              label_list=label_list, output_mode=self.output_mode)

        def __len__(self) -> int:
            return len(self.features)

        def __getitem__(self, i: int) -> Any:
            return self.features[i]

        def get_labels(self) -> list[str]:
            return self.label_list

    for cls in (GlueDataTrainingArguments, Split, GlueDataset):
        cls.__module__ = "transformers.data.datasets.glue"
    return {"GlueDataTrainingArguments": GlueDataTrainingArguments, "Split": Split, "GlueDataset": GlueDataset}


def dataset_class(name: str) -> type:
    return dataset_classes()[name]


def provide_datasets(module) -> None:
    restore_names(module, {name: Lazy(functools.partial(dataset_class, name)) for name in NAMES},
                  "transformers.data.datasets")


SHIMS = (
    Shim(
        "transformers.data.datasets",
        targets=["transformers.data.datasets"],
        kind=PROVIDE,
        requires={"transformers": ">=5.0"},
        apply=provide_datasets,
        broke="transformers 5 removed transformers.data.datasets (deprecated in 4.x), whose TextDataset and "
        "LineByLineTextDataset 2020-22 language-model fine-tuning scripts build",
        summary="provide it with 4.x's TextDataset, LineByLineTextDataset and LineByLineWithRefDataset (their "
        "examples as 4.x made them; TextDataset's pickle cache is neither written nor read)",
        replacement="datasets.load_dataset('text', ...) with tokenizer(...) in .map, as examples/pytorch/"
        "language-modeling/run_mlm.py and run_clm.py do",
        rewrites={"transformers.data.datasets": "datasets.load_dataset('text', data_files=...).map(tokenize)"},
    ),
)

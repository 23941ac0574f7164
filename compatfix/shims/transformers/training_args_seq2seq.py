"""Shims for ``transformers.training_args_seq2seq``: ``Seq2SeqTrainingArguments`` takes
the same 4.x keywords as ``TrainingArguments`` (see ``training_args.py``); being a
dataclass, it has an ``__init__`` of its own."""

from __future__ import annotations

from compatfix.registry import RISK_BEHAVIOUR, Shim
from compatfix.shims.transformers.training_args import BROKE, SUMMARY, accept_old_arguments


def accept_in_seq2seq_arguments(module) -> None:
    accept_old_arguments(module.Seq2SeqTrainingArguments, "transformers.training_args_seq2seq.no_cuda")


SHIMS = (
    Shim(
        "transformers.training_args_seq2seq.no_cuda",
        targets=["transformers.training_args_seq2seq"],
        requires={"transformers": ">=4.51"},
        apply=accept_in_seq2seq_arguments,
        risk=RISK_BEHAVIOUR,
        broke=BROKE.replace("TrainingArguments'", "Seq2SeqTrainingArguments'"),
        summary=SUMMARY,
        replacement="Seq2SeqTrainingArguments(use_cpu=..., eval_strategy=...); TENSORBOARD_LOGGING_DIR",
        rewrites={"transformers.Seq2SeqTrainingArguments(+evaluation_strategy)": "eval_strategy=",
                  "transformers.Seq2SeqTrainingArguments(+no_cuda)": "use_cpu="},
    ),
)

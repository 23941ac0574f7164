"""Shims for ``transformers.trainer_seq2seq``: ``Seq2SeqTrainer(tokenizer=...)``, which
has its own ``__init__`` (so the ``Trainer`` shim does not reach it)."""

from __future__ import annotations

from compatfix.registry import RISK_BEHAVIOUR, Shim
from compatfix.shims.transformers import accept_old_keywords


def accept_tokenizer(module) -> None:
    accept_old_keywords(module.Seq2SeqTrainer, {"tokenizer": "processing_class"}, {},
                        "transformers.trainer_seq2seq.tokenizer")


SHIMS = (
    Shim(
        "transformers.trainer_seq2seq.tokenizer",
        targets=["transformers.trainer_seq2seq"],
        requires={"transformers": ">=5.0"},
        apply=accept_tokenizer,
        risk=RISK_BEHAVIOUR,
        broke="transformers 5 removed Seq2SeqTrainer's tokenizer= keyword (processing_class since 4.46)",
        summary="accept tokenizer= as processing_class=; a call without it is unchanged",
        replacement="Seq2SeqTrainer(processing_class=tokenizer)",
        rewrites={"transformers.Seq2SeqTrainer(+tokenizer)": "Seq2SeqTrainer(processing_class=...)"},
    ),
)

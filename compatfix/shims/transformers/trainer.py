"""Shims for ``transformers.trainer``: ``Trainer(tokenizer=...)``, the keyword that
transformers 4.46 renamed to ``processing_class`` and transformers 5 removed."""

from __future__ import annotations

from compatfix.registry import RISK_BEHAVIOUR, Shim
from compatfix.shims.transformers import accept_old_keywords


def accept_tokenizer(module) -> None:
    accept_old_keywords(module.Trainer, {"tokenizer": "processing_class"}, {}, "transformers.trainer.tokenizer")


SHIMS = (
    Shim(
        "transformers.trainer.tokenizer",
        targets=["transformers.trainer"],
        requires={"transformers": ">=5.0"},
        apply=accept_tokenizer,
        risk=RISK_BEHAVIOUR,
        broke="transformers 5 removed Trainer's tokenizer= keyword (processing_class since 4.46), which every "
        "2020-22 Trainer call passes",
        summary="accept tokenizer= as processing_class=; a call without it is unchanged",
        replacement="Trainer(processing_class=tokenizer)",
        rewrites={"transformers.Trainer(+tokenizer)": "Trainer(processing_class=...)",
                  "transformers.trainer.Trainer(+tokenizer)": "Trainer(processing_class=...)"},
    ),
)

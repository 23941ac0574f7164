"""Shims for ``transformers.models.bert.tokenization_bert``: the pure-Python pieces of
BERT's tokenizer that 2019-22 code imports from there (``BasicTokenizer``,
``WordpieceTokenizer``, ``whitespace_tokenize`` and the character tests ``_is_control``,
``_is_punctuation``, ``_is_whitespace``). transformers 5 made ``BertTokenizer`` the
tokenizers-library one and moved these into ``tokenization_bert_legacy`` and
``tokenization_python``; they are those modules' very objects.
"""

from __future__ import annotations

import functools

from compatfix.patching import Lazy, restore_names
from compatfix.registry import Shim

# name -> the transformers 5 module that has it
HOMES = {
    "BasicTokenizer": "transformers.models.bert.tokenization_bert_legacy",
    "WordpieceTokenizer": "transformers.models.bert.tokenization_bert_legacy",
    "whitespace_tokenize": "transformers.models.bert.tokenization_bert_legacy",
    "load_vocab": "transformers.models.bert.tokenization_bert_legacy",
    "_is_control": "transformers.tokenization_python",
    "_is_punctuation": "transformers.tokenization_python",
    "_is_whitespace": "transformers.tokenization_python",
}


def _attribute(module_name: str, name: str):
    import importlib

    return getattr(importlib.import_module(module_name), name)


def restore_bert_pieces(module) -> None:
    names = {name: Lazy(functools.partial(_attribute, home, name)) for name, home in HOMES.items()}
    restore_names(module, names, "transformers.models.bert.tokenization_bert.BasicTokenizer")


SHIMS = (
    Shim(
        "transformers.models.bert.tokenization_bert.BasicTokenizer",
        targets=["transformers.models.bert.tokenization_bert"],
        requires={"transformers": ">=5.0"},
        apply=restore_bert_pieces,
        restores=list(HOMES),
        broke="transformers 5 moved BasicTokenizer, WordpieceTokenizer, whitespace_tokenize, load_vocab and the "
        "_is_control/_is_punctuation/_is_whitespace tests out of transformers.models.bert.tokenization_bert",
        summary="restore them as the objects of tokenization_bert_legacy and tokenization_python",
        replacement="transformers.models.bert.tokenization_bert_legacy; transformers.tokenization_python",
        renames={"transformers.models.bert.tokenization_bert." + name: home + "." + name
                 for name, home in HOMES.items()},
    ),
)

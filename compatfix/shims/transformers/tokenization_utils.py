"""Shims for ``transformers.tokenization_utils``, 4.x's module of the slow tokenizer base class.
transformers 5 serves that path as an alias of ``tokenization_utils_sentencepiece`` (through a
finder of its own), which lacks the names 2020-22 code imported from it: what 4.x re-exported
from ``tokenization_utils_base`` (``BatchEncoding``, ``TruncationStrategy``, the input type
aliases, ``SPECIAL_TOKENS_MAP_FILE`` ...) and what it defined itself and 5 moved to
``tokenization_python`` (``Trie`` and the character tests ``_is_control``, ``_is_punctuation``,
``_is_whitespace``). They are those modules' very objects.

Before 5.24 (checked on 5.0-5.20) the alias is a module that transformers' ``__init__`` puts
into ``sys.modules`` itself, with a ``__getattr__`` that forwards to the sentencepiece module:
importing the path then runs no import at all, so the same names are restored on that alias
once ``transformers`` has loaded.
"""

from __future__ import annotations

import functools
import sys

from compatfix.patching import Lazy, restore_names
from compatfix.registry import Shim

BASE = "transformers.tokenization_utils_base"
PYTHON = "transformers.tokenization_python"
# name -> the transformers 5 module that has it
HOMES = {
    **{name: BASE for name in ("BatchEncoding", "TruncationStrategy", "PreTrainedTokenizerBase", "EncodedInput",
                               "EncodedInputPair", "PreTokenizedInput", "PreTokenizedInputPair", "TextInput",
                               "TextInputPair", "SPECIAL_TOKENS_MAP_FILE", "ADDED_TOKENS_FILE",
                               "TOKENIZER_CONFIG_FILE")},
    **{name: PYTHON for name in ("Trie", "_is_control", "_is_punctuation", "_is_whitespace", "_is_end_of_word",
                                 "_is_start_of_word")},
    "PaddingStrategy": "transformers.utils",
    "TensorType": "transformers.utils",
}


def _attribute(module_name: str, name: str):
    import importlib

    return getattr(importlib.import_module(module_name), name)


def restore_tokenization_utils(module, shim: str = "transformers.tokenization_utils.BatchEncoding") -> None:
    names = {name: Lazy(functools.partial(_attribute, home, name)) for name, home in HOMES.items()}
    restore_names(module, names, shim)


def restore_on_the_alias_module(transformers) -> None:
    alias = sys.modules.get("transformers.tokenization_utils")
    # transformers' own alias: made in its __init__, no file, and the package's attribute
    if alias is not None and "__file__" not in vars(alias) and \
            vars(transformers).get("tokenization_utils") is alias:
        restore_tokenization_utils(alias, "transformers.tokenization_utils.alias_module")


SHIMS = (
    Shim(
        "transformers.tokenization_utils.BatchEncoding",
        targets=["transformers.tokenization_utils"],
        requires={"transformers": ">=5.0"},
        apply=restore_tokenization_utils,
        restores=list(HOMES),
        broke="transformers 5 made transformers.tokenization_utils an alias of tokenization_utils_sentencepiece, "
        "without the names 4.x's module had (BatchEncoding, TruncationStrategy, SPECIAL_TOKENS_MAP_FILE, Trie, "
        "_is_control, _is_punctuation, _is_whitespace ...)",
        summary="restore them as the objects of tokenization_utils_base, tokenization_python and transformers.utils",
        replacement="transformers.tokenization_utils_base; transformers.tokenization_python",
        renames={"transformers.tokenization_utils." + name: home + "." + name for name, home in HOMES.items()},
    ),
    Shim(
        "transformers.tokenization_utils.alias_module",
        targets=["transformers"],
        requires={"transformers": ">=5.0"},
        apply=restore_on_the_alias_module,
        broke="transformers 5.0-5.2x put transformers.tokenization_utils into sys.modules as an alias module of "
        "their own, so importing it runs no import and the BatchEncoding shim never applied: "
        "ImportError: cannot import name 'BatchEncoding' from 'transformers.tokenization_utils'",
        summary="restore the same names on that alias module once transformers has loaded; "
        "nothing to do where the path is a module that is imported (5.24)",
        replacement="transformers.tokenization_utils_base; transformers.tokenization_python",
    ),
)

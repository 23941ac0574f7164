"""BERT's pure-Python tokenizer pieces in transformers.models.bert.tokenization_bert,
which transformers 5.24 moved out: missing with compatfix off; with it on, they split text
as BERT's basic and WordPiece tokenizers always did (examples worked out by hand)."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

NAMES = ("BasicTokenizer", "WordpieceTokenizer", "whitespace_tokenize", "_is_control", "_is_punctuation",
         "_is_whitespace")
PRESENT = "import transformers.models.bert.tokenization_bert as t\nprint([hasattr(t, n) for n in %r])" % (NAMES,)


def test_bert_pieces_are_missing_without_compatfix():
    for env in (clean_env(compatfix=False),
                clean_env(COMPATFIX_DISABLE="transformers.models.bert.tokenization_bert.BasicTokenizer")):
        result = run_python(code=PRESENT, env=env)
        assert result.stdout.strip() == str([False] * len(NAMES)), result.stderr[-2000:]


def test_bert_pieces_tokenize_as_bert():
    result = run_python(
        code="""
        from transformers.models.bert.tokenization_bert import (BasicTokenizer, WordpieceTokenizer, _is_control,
                                                                _is_punctuation, _is_whitespace, whitespace_tokenize)
        # lower-cased, accents stripped, punctuation split off
        assert BasicTokenizer(do_lower_case=True).tokenize("Héllo, World!") == ["hello", ",", "world", "!"]
        assert BasicTokenizer(do_lower_case=False).tokenize("Héllo, World!") == ["Héllo", ",", "World", "!"]
        # greedy longest match first, "##" for the pieces after the first
        vocab = {"un": 0, "##aff": 1, "##able": 2, "[UNK]": 3}
        wordpiece = WordpieceTokenizer(vocab=vocab, unk_token="[UNK]")
        assert wordpiece.tokenize("unaffable") == ["un", "##aff", "##able"]
        assert wordpiece.tokenize("xyz") == ["[UNK]"]
        assert whitespace_tokenize("  a  b\\tc ") == ["a", "b", "c"]
        assert _is_whitespace(" ") and _is_whitespace("\\t") and not _is_whitespace("a")
        assert _is_control("\\x00") and not _is_control("\\t")
        assert _is_punctuation("$") and _is_punctuation(",") and not _is_punctuation("a")
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

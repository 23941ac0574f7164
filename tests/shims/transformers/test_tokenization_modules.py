"""4.x's tokenizer module paths that transformers 5.24 lacks: the tokenization_<model>_fast
modules it merged into tokenization_<model>, the tokenizer modules of models whose tokenizer is
now another model's (LayoutLM's is BERT's), and the names transformers.tokenization_utils (now an
alias module) lost. Missing with compatfix off; with it on, the classes transformers 5 itself
gives for those names, which tokenize as 4.x's did (WordPiece pieces worked out by hand)."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

MODULES = ("transformers.models.roberta.tokenization_roberta_fast", "transformers.models.layoutlm.tokenization_layoutlm",
           "transformers.models.layoutlm.tokenization_layoutlm_fast", "transformers.models.bert.tokenization_bert_fast")
IMPORTS = """
import importlib
found = []
for name in %r:
    try:
        importlib.import_module(name)
        found.append(True)
    except ImportError:
        found.append(False)
print(found)
""" % (MODULES,)

UTILS_NAMES = ("BatchEncoding", "SPECIAL_TOKENS_MAP_FILE", "TruncationStrategy", "_is_control", "_is_punctuation",
               "_is_whitespace", "Trie")
UTILS_PRESENT = "import transformers.tokenization_utils as t\nprint([hasattr(t, n) for n in %r])" % (UTILS_NAMES,)


def test_tokenizer_modules_are_missing_without_compatfix():
    for env in (clean_env(compatfix=False), clean_env(COMPATFIX_DISABLE="transformers.models.tokenization_fast_modules")):
        result = run_python(code=IMPORTS, env=env)
        assert result.stdout.strip() == str([False] * len(MODULES)), result.stderr[-2000:]


def test_tokenization_utils_names_are_missing_without_compatfix():
    for env in (clean_env(compatfix=False), clean_env(COMPATFIX_DISABLE="transformers.tokenization_utils.BatchEncoding")):
        result = run_python(code=UTILS_PRESENT, env=env)
        assert result.stdout.strip() == str([False] * len(UTILS_NAMES)), result.stderr[-2000:]


def test_tokenizer_modules_hold_the_classes_transformers_gives(tmp_path):
    result = run_python(
        code="""
        import os
        import transformers
        from transformers.models.roberta.tokenization_roberta_fast import RobertaTokenizerFast, VOCAB_FILES_NAMES
        assert RobertaTokenizerFast is transformers.RobertaTokenizerFast
        assert VOCAB_FILES_NAMES["vocab_file"] == "vocab.json" and VOCAB_FILES_NAMES["merges_file"] == "merges.txt"
        from transformers.models.layoutlm.tokenization_layoutlm import LayoutLMTokenizer, VOCAB_FILES_NAMES
        from transformers.models.layoutlm.tokenization_layoutlm_fast import LayoutLMTokenizerFast
        from transformers.models.bert.tokenization_bert_fast import BertTokenizerFast
        assert LayoutLMTokenizer is transformers.LayoutLMTokenizer and LayoutLMTokenizerFast is transformers.LayoutLMTokenizerFast
        assert BertTokenizerFast is transformers.BertTokenizerFast
        assert VOCAB_FILES_NAMES["vocab_file"] == "vocab.txt"
        vocab = os.path.join(%r, "vocab.txt")
        with open(vocab, "w") as handle:
            handle.write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "hello"]))
        tokenizer = LayoutLMTokenizer(vocab)  # positional: 5.24 ignores the keyword vocab_file
        # lower-cased WordPiece, greedy longest match first
        assert tokenizer.tokenize("Hello unaffable") == ["hello", "un", "##aff", "##able"]
        # [CLS] hello [SEP]
        assert tokenizer("hello").input_ids == [2, 8, 3]
        print("ok")
        """ % str(tmp_path)
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_tokenization_utils_names_are_todays_objects():
    result = run_python(
        code="""
        import transformers
        # as an attribute first, the way 4.x's lazy module served it
        assert transformers.tokenization_utils.TruncationStrategy.ONLY_FIRST.value == "only_first"
        from transformers.tokenization_utils import (SPECIAL_TOKENS_MAP_FILE, BatchEncoding, Trie, TruncationStrategy,
                                                     _is_control, _is_punctuation, _is_whitespace)
        import transformers.tokenization_utils_base as base
        assert BatchEncoding is base.BatchEncoding and TruncationStrategy is base.TruncationStrategy
        assert SPECIAL_TOKENS_MAP_FILE == "special_tokens_map.json"
        encoding = BatchEncoding({"input_ids": [[1, 2]]})
        assert encoding["input_ids"] == [[1, 2]] and encoding.input_ids == [[1, 2]]
        assert _is_whitespace(" ") and _is_control("\\x00") and _is_punctuation("!") and not _is_punctuation("a")
        trie = Trie()
        trie.add("[CLS]")
        assert trie.split("[CLS] hi") == ["[CLS]", " hi"]
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


# transformers 5.0-5.2x: tokenization_utils is an alias module that transformers' __init__ puts
# into sys.modules itself (no import runs), which the alias_module shim fills once transformers
# has loaded. The names 5.0's sentencepiece module lacks:
ALIAS_NAMES = ("BatchEncoding", "PaddingStrategy", "EncodedInput", "ADDED_TOKENS_FILE")
ALIAS_CODE = """
import transformers.tokenization_utils as t
print([hasattr(t, n) for n in %r])
from transformers.tokenization_utils import BatchEncoding, PaddingStrategy, ADDED_TOKENS_FILE
import transformers.tokenization_utils_base as base
assert BatchEncoding is base.BatchEncoding and ADDED_TOKENS_FILE == "added_tokens.json"
assert PaddingStrategy.LONGEST.value == "longest" and BatchEncoding({"input_ids": [1]}).input_ids == [1]
print("ok")
""" % (ALIAS_NAMES,)


@pytest.mark.stack("transformers50")
def test_the_alias_module_of_5_0_lacks_the_names_without_compatfix():
    for env in (clean_env(compatfix=False), clean_env(COMPATFIX_DISABLE="transformers.tokenization_utils.alias_module")):
        result = run_python(code=ALIAS_CODE, env=env)
        assert result.stdout.splitlines() == [str([False] * len(ALIAS_NAMES))], result.stdout + result.stderr[-2000:]
        assert "cannot import name 'BatchEncoding'" in result.stderr, result.stderr[-2000:]


@pytest.mark.stack("transformers50")
def test_the_alias_module_of_5_0_gets_the_names():
    result = run_python(code=ALIAS_CODE)
    assert result.stdout.split("\n")[:2] == [str([True] * len(ALIAS_NAMES)), "ok"], result.stderr[-3000:]

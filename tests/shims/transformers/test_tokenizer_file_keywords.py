"""The tokenizers' 4.x file keywords (vocab_file=, merges_file=), which transformers 5
renamed vocab= and merges= and ignores without a word, against the real transformers
5.24 of the py312 stack. The expected tokens come from the vocabulary files written here:
with compatfix off, the keyword call builds an empty vocabulary ([UNK] for every word);
with it on, it tokenizes as the positional call does, and calls in today's spelling,
from_pretrained included, are unchanged."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

CALLS = """
import json, os, sys, tempfile, warnings
warnings.simplefilter("ignore")
folder = tempfile.mkdtemp()
bert_vocab = os.path.join(folder, "vocab.txt")
with open(bert_vocab, "w") as f:
    f.write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world"]) + "\\n")
gpt_vocab, gpt_merges = os.path.join(folder, "gpt.json"), os.path.join(folder, "merges.txt")
with open(gpt_vocab, "w") as f:
    json.dump({c: i for i, c in enumerate(["<|endoftext|>", "h", "e", "l", "o", "he", "ll"])}, f)
with open(gpt_merges, "w") as f:
    f.write("#version: 0.2\\nh e\\nl l\\n")

from transformers import BertTokenizer, GPT2Tokenizer

class OldStyleTokenizer(BertTokenizer):  # a 2021 subclass, handing the file on by keyword
    def __init__(self, vocab_file, do_lower_case=True, **kwargs):
        super().__init__(vocab_file=vocab_file, do_lower_case=do_lower_case, **kwargs)

out = {
    "bert keyword": BertTokenizer(vocab_file=bert_vocab).tokenize("hello world"),
    "bert positional": BertTokenizer(bert_vocab).tokenize("hello world"),
    "bert new keyword": BertTokenizer(vocab=bert_vocab).tokenize("hello world"),
    "subclass": OldStyleTokenizer(bert_vocab).tokenize("hello world"),
    "gpt2 keyword": GPT2Tokenizer(vocab_file=gpt_vocab, merges_file=gpt_merges).tokenize("hello"),
    "gpt2 positional": GPT2Tokenizer(gpt_vocab, gpt_merges).tokenize("hello"),
}
old_checkpoint = os.path.join(folder, "old")  # a 4.x-era folder: vocab.txt only
os.makedirs(old_checkpoint)
os.rename(bert_vocab, os.path.join(old_checkpoint, "vocab.txt"))
out["from_pretrained"] = BertTokenizer.from_pretrained(old_checkpoint).tokenize("hello world")
print(json.dumps(out))
"""


def _run(**kwargs) -> dict:
    result = run_python(code=CALLS, **kwargs)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_old_keywords_are_ignored_without_compatfix():
    found = _run(compatfix=False)
    assert found["bert keyword"] == ["[UNK]", "[UNK]"] and found["subclass"] == ["[UNK]", "[UNK]"]
    assert found["gpt2 keyword"] != found["gpt2 positional"]
    assert found["bert positional"] == ["hello", "world"] == found["from_pretrained"]
    disabled = _run(env=clean_env(COMPATFIX_DISABLE="transformers.tokenizer_file_keywords"))
    assert disabled["bert keyword"] == ["[UNK]", "[UNK]"]


def test_the_old_keywords_name_the_files_again():
    found = _run()
    # the vocabulary written above, and GPT-2's two merges: h+e, l+l, then o
    assert found["bert keyword"] == ["hello", "world"] == found["subclass"] == found["bert new keyword"]
    assert found["gpt2 keyword"] == ["he", "ll", "o"] == found["gpt2 positional"]
    assert found["bert positional"] == ["hello", "world"] == found["from_pretrained"]


def test_a_tokenizer_class_the_shim_cannot_wrap_still_imports_with_one_warning():
    result = run_python(code="""
        import inspect
        real = inspect.signature

        def failing(obj, *args, **kwargs):  # what the shim reads of each new class's __init__
            if getattr(obj, "__qualname__", "").startswith("Odd"):
                raise RuntimeError("no signature here")
            return real(obj, *args, **kwargs)

        inspect.signature = failing
        from transformers import BertTokenizer

        class OddTokenizer(BertTokenizer):
            def __init__(self, vocab=None, **kwargs):
                super().__init__(vocab=vocab, **kwargs)

        class OddTokenizerToo(OddTokenizer):
            def __init__(self, vocab=None, **kwargs):
                super().__init__(vocab=vocab, **kwargs)

        print("defined")
        """)
    assert result.stdout.split() == ["defined"], result.stderr[-3000:]
    assert result.stderr.count("could not wrap OddTokenizer") == 1, result.stderr[-3000:]

"""4.x's language-modeling datasets (transformers.data.datasets: TextDataset,
LineByLineTextDataset, LineByLineWithRefDataset), removed in transformers 5, against the real
5.24 and a WordPiece tokenizer over a vocabulary written here: missing with compatfix off; with
it on, the examples 4.x made, worked out by hand from the vocabulary's ids."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

PRESENT = """
import transformers
found = [hasattr(transformers, n) for n in ("TextDataset", "LineByLineTextDataset", "LineByLineWithRefDataset")]
try:
    import transformers.data.datasets
    found.append(True)
except ImportError:
    found.append(False)
print(found)
"""


def test_datasets_are_missing_without_compatfix():
    result = run_python(code=PRESENT, compatfix=False)
    assert result.stdout.strip() == "[False, False, False, False]", result.stderr[-2000:]
    # the provided module alone; the top-level names are the transformers.AdamW shim's
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.data.datasets"))
    assert result.stdout.strip() == "[True, True, True, False]", result.stderr[-2000:]
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.AdamW"))
    assert result.stdout.strip() == "[False, False, False, True]", result.stderr[-2000:]


def test_datasets_make_4x_examples(tmp_path):
    result = run_python(
        code="""
        import os, warnings
        import torch
        from transformers import BertTokenizer, LineByLineTextDataset, LineByLineWithRefDataset, TextDataset
        import transformers.data.datasets as datasets
        assert datasets.TextDataset is TextDataset and issubclass(TextDataset, torch.utils.data.Dataset)
        folder = %r
        vocab = os.path.join(folder, "vocab.txt")
        with open(vocab, "w") as handle:  # ids: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, un 5, ##aff 6, ##able 7, hello 8
            handle.write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "hello"]))
        tokenizer = BertTokenizer(vocab)
        text = os.path.join(folder, "text.txt")
        with open(text, "w") as handle:
            handle.write("hello unaffable hello\\n\\nun hello\\n")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            blocks = TextDataset(tokenizer, file_path=text, block_size=5)
        assert any(issubclass(w.category, FutureWarning) for w in caught)  # 4.x warned it was deprecated
        # tokens 8 5 6 7 8 5 8 in blocks of 5 - 2 special tokens = 3; the last, shorter block is dropped
        assert len(blocks) == 2
        assert [b.tolist() for b in blocks] == [[2, 8, 5, 6, 3], [2, 7, 8, 5, 3]]
        assert blocks[0].dtype == torch.long
        assert not [f for f in os.listdir(folder) if f.startswith("cached_lm_")]  # no pickle cache
        lines = LineByLineTextDataset(tokenizer, file_path=text, block_size=4)
        # one example per non-blank line, truncated to 4 ids with [CLS] and [SEP] kept
        assert [e["input_ids"].tolist() for e in lines] == [[2, 8, 5, 3], [2, 5, 8, 3]]
        ref = os.path.join(folder, "ref.txt")
        with open(ref, "w") as handle:
            handle.write("[2, 3]\\n[2]\\n")
        with_ref = LineByLineWithRefDataset(tokenizer, file_path=text, block_size=8, ref_path=ref)
        assert [e["input_ids"].tolist() for e in with_ref] == [[2, 8, 5, 6, 7, 8, 3], [2, 5, 8, 3]]
        assert [e["chinese_ref"].tolist() for e in with_ref] == [[2, 3], [2]]
        try:
            TextDataset(tokenizer, file_path=os.path.join(folder, "missing.txt"), block_size=5)
        except ValueError:
            print("ok")
        """ % str(tmp_path)
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

"""The SentencePiece tokenizers of 2020-22 translation and speech code (MarianTokenizer,
M2M100Tokenizer, Speech2TextTokenizer, BertGenerationTokenizer) are still in transformers 5.24 but
need the sentencepiece package, which its wheel does not depend on: the py312 stack carries it
(requirements/py312.txt), so they build from SentencePiece model files as in 4.x. No shim is
involved; the expected pieces are sentencepiece's own segmentation of the text."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("py312")


def test_sentencepiece_tokenizers_build_and_split_as_sentencepiece(tmp_path):
    result = run_python(
        code="""
        import json, os
        import sentencepiece
        folder = %r
        text = os.path.join(folder, "text.txt")
        with open(text, "w") as handle:
            handle.write("\\n".join(["hello world", "hello there", "the world is wide", "a translation model"] * 50))
        sentencepiece.SentencePieceTrainer.train(input=text, model_prefix=os.path.join(folder, "m"), vocab_size=12, model_type="word",
                                                 minloglevel=2)
        model = os.path.join(folder, "m.model")
        processor = sentencepiece.SentencePieceProcessor(model_file=model)
        expected = processor.encode("hello world", out_type=str)
        assert expected == ["▁hello", "▁world"], expected  # a word model: whole words are its pieces
        pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
        vocab = {piece: i for i, piece in enumerate(pieces + ["<pad>"])}
        vocab_file = os.path.join(folder, "vocab.json")
        with open(vocab_file, "w") as handle:
            json.dump(vocab, handle)

        from transformers import (BertGenerationTokenizer, M2M100Tokenizer, MarianTokenizer,
                                  Speech2TextTokenizer)
        tokenizers = [BertGenerationTokenizer(vocab_file=model),
                      MarianTokenizer(source_spm=model, target_spm=model, vocab=vocab_file),
                      M2M100Tokenizer(vocab_file=vocab_file, spm_file=model, src_lang="en", tgt_lang="fr"),
                      Speech2TextTokenizer(vocab_file=vocab_file, spm_file=model)]
        for tokenizer in tokenizers:
            assert tokenizer.tokenize("hello world") == expected, (type(tokenizer).__name__, tokenizer.tokenize("hello world"))
        # Marian's ids are its vocabulary's, then </s>
        marian = tokenizers[1]
        assert marian("hello world").input_ids == [vocab[p] for p in expected] + [vocab["</s>"]]
        print("ok")
        """ % str(tmp_path)
    )
    assert result.stdout.split()[-1:] == ["ok"], result.stderr[-3000:]

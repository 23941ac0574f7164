"""The model packages transformers 4.31 to 4.4x moved under transformers.models.deprecated, at
their 4.x module paths: on transformers 4.57.6 missing with compatfix off and, with it on, the
very objects that the deprecated packages and the top level hold; on transformers 5.24, which
deleted those models, nothing is provided (the import fails as without compatfix, silently)."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

IMPORTS = """
import importlib
for name in ("transformers.models.transfo_xl", "transformers.models.transfo_xl.tokenization_transfo_xl",
             "transformers.models.xlm_prophetnet.tokenization_xlm_prophetnet", "transformers.models.mmbt.modeling_mmbt"):
    try:
        importlib.import_module(name)
        print("found")
    except ImportError:
        print("missing")
"""


@pytest.mark.stack("transformers4", "py312")
def test_the_old_paths_are_missing_without_compatfix():
    for env in (clean_env(compatfix=False), clean_env(COMPATFIX_DISABLE="transformers.models.deprecated")):
        result = run_python(code=IMPORTS, env=env)
        assert result.stdout.split() == ["missing"] * 4, result.stderr[-2000:]


@pytest.mark.stack("transformers4")
def test_the_old_paths_hold_the_deprecated_objects():
    result = run_python(
        code="""
        import warnings
        warnings.simplefilter("ignore")
        import transformers
        import transformers.models.deprecated.transfo_xl.tokenization_transfo_xl as moved
        from transformers.models.transfo_xl import TransfoXLConfig, TransfoXLLMHeadModel
        from transformers.models.transfo_xl.tokenization_transfo_xl import TransfoXLTokenizer, VOCAB_FILES_NAMES
        from transformers.models.transfo_xl.modeling_transfo_xl import TransfoXLModel
        from transformers.models.xlm_prophetnet.tokenization_xlm_prophetnet import XLMProphetNetTokenizer
        from transformers.models.mmbt.modeling_mmbt import MMBTForClassification
        assert TransfoXLConfig is transformers.TransfoXLConfig and TransfoXLLMHeadModel is transformers.TransfoXLLMHeadModel
        assert TransfoXLTokenizer is moved.TransfoXLTokenizer is transformers.TransfoXLTokenizer
        assert TransfoXLModel is transformers.TransfoXLModel
        assert XLMProphetNetTokenizer is transformers.XLMProphetNetTokenizer
        assert MMBTForClassification.__module__ == "transformers.models.deprecated.mmbt.modeling_mmbt"
        # 4.x's file names, as the tokenizer writes them
        assert VOCAB_FILES_NAMES["pretrained_vocab_file"] == "vocab.pkl"
        # a small model builds from the old path's config, as 2020-22 code did
        config = TransfoXLConfig(vocab_size=20, cutoffs=[10], d_model=8, d_embed=8, n_head=2, d_head=4, d_inner=16,
                                 n_layer=1, mem_len=4)
        model = TransfoXLLMHeadModel(config)
        assert sum(p.numel() for p in model.parameters()) > 0
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


@pytest.mark.stack("py312")
def test_nothing_is_provided_where_transformers_deleted_the_models():
    result = run_python(code=IMPORTS)
    assert result.stdout.split() == ["missing"] * 4, result.stderr[-2000:]
    assert "compatfix" not in result.stderr, result.stderr[-2000:]

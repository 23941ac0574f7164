"""Shims for ``transformers.models``: each model module's shims in the file that mirrors it.

This file holds the kinds of shim that many model modules share:

- the frozen checkpoint lists ``<MODEL>_PRETRAINED_MODEL_ARCHIVE_LIST`` that 4.x's
  ``modeling_<model>`` modules defined and transformers 4.41 removed, restored at the module
  paths 2020-22 code imports them from as the very objects the top-level
  ``transformers.archive_maps`` shim restores (4.30.2's data);
- the docstring constants ``<MODEL>_START_DOCSTRING`` / ``<MODEL>_INPUTS_DOCSTRING`` of 4.x's
  BERT, ALBERT and RoBERTa modeling modules (compatfix's wording, in ``_docstrings``), with which
  2020-22 models built on them decorate their classes;
- 4.x's tokenizer modules that transformers 5 merged away: ``tokenization_<model>_fast`` (5 has
  one tokenizer class per model, in ``tokenization_<model>``, with the ``...Fast`` name as an
  alias of it) and the modules of models whose tokenizer 5 serves with another model's class
  (LayoutLM's, ELECTRA's, Longformer's ...: BERT's or RoBERTa's). Each is provided with the
  classes its 4.x namesake defined, as transformers 5 itself resolves those names
  (``transformers.LayoutLMTokenizerFast``), and the public names of the merged module;
- the packages of the models that 4.31 to 4.4x moved under ``transformers.models.deprecated``
  (MMBT and RetriBERT in 4.31, Transformer-XL in 4.36, Speech2Text2 and XLM-ProphetNet after
  4.40): their top-level names kept working, but ``from
  transformers.models.transfo_xl.tokenization_transfo_xl import TransfoXLTokenizer``, as 2020-22
  code wrote it, fails. Each old module path is provided with its deprecated namesake's objects;
  transformers 5 deleted these models, so nothing is provided there.
"""

from __future__ import annotations

import functools
import importlib

from compatfix.patching import Lazy, restore_names
from compatfix.registry import PROVIDE, Shim
from compatfix.shims.transformers import ARCHIVE_REPLACEMENT, archive_values

# modeling module -> the models whose archive list it defined (those 2020-22 code imports from there)
MODEL_LISTS_BY_MODULE = {
    "transformers.models.albert.modeling_albert": ("ALBERT",),
    "transformers.models.bert.modeling_bert": ("BERT",),
    "transformers.models.convbert.modeling_convbert": ("CONVBERT",),
    "transformers.models.deberta.modeling_deberta": ("DEBERTA",),
    "transformers.models.deberta_v2.modeling_deberta_v2": ("DEBERTA_V2",),
    "transformers.models.dpr.modeling_dpr": ("DPR_CONTEXT_ENCODER", "DPR_QUESTION_ENCODER", "DPR_READER"),
    "transformers.models.electra.modeling_electra": ("ELECTRA",),
    "transformers.models.flaubert.modeling_flaubert": ("FLAUBERT",),
    "transformers.models.gpt2.modeling_gpt2": ("GPT2",),
    "transformers.models.lxmert.modeling_lxmert": ("LXMERT",),
    "transformers.models.roberta.modeling_roberta": ("ROBERTA",),
    "transformers.models.t5.modeling_t5": ("T5",),
    "transformers.models.tapas.modeling_tapas": ("TAPAS",),
    "transformers.models.xlm.modeling_xlm": ("XLM",),
    "transformers.models.xlnet.modeling_xlnet": ("XLNET",),
}


def _archive_list_shim(module_name: str, models: tuple[str, ...]) -> Shim:
    names = tuple(model + "_PRETRAINED_MODEL_ARCHIVE_LIST" for model in models)
    shim_name = module_name + "." + names[0]

    def restore_archive_lists(module) -> None:
        restore_names(module, archive_values(names), shim_name)

    return Shim(
        shim_name,
        targets=[module_name],
        requires={"transformers": ">=4.41"},
        apply=restore_archive_lists,
        restores=names,
        broke="transformers 4.41 removed %s from %s" % (", ".join(names), module_name),
        summary="restore 4.30.2's checkpoint list%s, the object the top-level name is" % ("s" * (len(names) > 1)),
        replacement=ARCHIVE_REPLACEMENT,
        rewrites={module_name + "." + name: ARCHIVE_REPLACEMENT for name in names},
    )


# modeling module -> the model prefix of the START/INPUTS docstrings 4.x defined there (data in _docstrings)
DOCSTRINGS_BY_MODULE = {
    "transformers.models.albert.modeling_albert": "ALBERT",
    "transformers.models.bert.modeling_bert": "BERT",
    "transformers.models.roberta.modeling_roberta": "ROBERTA",
}
DOCSTRINGS_REPLACEMENT = "your own docstring (transformers 5 documents its models with auto_docstring)"


def _docstring(name: str) -> str:
    from compatfix.shims.transformers.models import _docstrings

    return getattr(_docstrings, name)


def _docstrings_shim(module_name: str, prefix: str) -> Shim:
    names = (prefix + "_START_DOCSTRING", prefix + "_INPUTS_DOCSTRING")
    shim_name = module_name + "." + names[0]

    def restore_docstrings(module) -> None:
        restore_names(module, {name: Lazy(functools.partial(_docstring, name)) for name in names}, shim_name)

    return Shim(
        shim_name,
        targets=[module_name],
        requires={"transformers": ">=4.52"},
        apply=restore_docstrings,
        restores=names,
        broke="transformers 4.52 documents its models with @auto_docstring and removed %s and %s from %s, with which "
        "2020-22 models built on it decorate their classes" % (names[0], names[1], module_name),
        summary="restore them, in compatfix's words, naming 4.x's arguments (the inputs one with {0} for the input "
        "shape)",
        replacement=DOCSTRINGS_REPLACEMENT,
        rewrites={module_name + "." + name: DOCSTRINGS_REPLACEMENT for name in names},
    )


# 4.x tokenizer module below transformers.models that transformers 5 lacks -> the tokenizer
# classes it defined (from transformers 4.30.2's source). BLOOM's is left out: transformers 5
# has no BloomTokenizerFast.
TOKENIZER_MODULES = {
    'albert.tokenization_albert_fast': ('AlbertTokenizerFast',),
    'bart.tokenization_bart_fast': ('BartTokenizerFast',),
    'barthez.tokenization_barthez_fast': ('BarthezTokenizerFast',),
    'bert.tokenization_bert_fast': ('BertTokenizerFast',),
    'big_bird.tokenization_big_bird_fast': ('BigBirdTokenizerFast',),
    'blenderbot.tokenization_blenderbot_fast': ('BlenderbotTokenizerFast',),
    'blenderbot_small.tokenization_blenderbot_small_fast': ('BlenderbotSmallTokenizerFast',),
    'camembert.tokenization_camembert_fast': ('CamembertTokenizerFast',),
    'clip.tokenization_clip_fast': ('CLIPTokenizerFast',),
    'codegen.tokenization_codegen_fast': ('CodeGenTokenizerFast',),
    'convbert.tokenization_convbert_fast': ('ConvBertTokenizerFast',),
    'deberta.tokenization_deberta_fast': ('DebertaTokenizerFast',),
    'deberta_v2.tokenization_deberta_v2_fast': ('DebertaV2TokenizerFast',),
    'distilbert.tokenization_distilbert_fast': ('DistilBertTokenizerFast',),
    'electra.tokenization_electra': ('ElectraTokenizer', 'BasicTokenizer', 'WordpieceTokenizer'),
    'electra.tokenization_electra_fast': ('ElectraTokenizerFast',),
    'fnet.tokenization_fnet_fast': ('FNetTokenizerFast',),
    'funnel.tokenization_funnel_fast': ('FunnelTokenizerFast',),
    'gpt2.tokenization_gpt2_fast': ('GPT2TokenizerFast',),
    'gpt_neox.tokenization_gpt_neox_fast': ('GPTNeoXTokenizerFast',),
    'herbert.tokenization_herbert_fast': ('HerbertTokenizerFast',),
    'layoutlm.tokenization_layoutlm': ('LayoutLMTokenizer', 'BasicTokenizer', 'WordpieceTokenizer'),
    'layoutlm.tokenization_layoutlm_fast': ('LayoutLMTokenizerFast',),
    'layoutlmv2.tokenization_layoutlmv2_fast': ('LayoutLMv2TokenizerFast',),
    'layoutlmv3.tokenization_layoutlmv3_fast': ('LayoutLMv3TokenizerFast',),
    'layoutxlm.tokenization_layoutxlm_fast': ('LayoutXLMTokenizerFast',),
    'led.tokenization_led': ('LEDTokenizer',),
    'led.tokenization_led_fast': ('LEDTokenizerFast',),
    'llama.tokenization_llama_fast': ('LlamaTokenizerFast',),
    'longformer.tokenization_longformer': ('LongformerTokenizer',),
    'longformer.tokenization_longformer_fast': ('LongformerTokenizerFast',),
    'lxmert.tokenization_lxmert': ('LxmertTokenizer', 'BasicTokenizer', 'WordpieceTokenizer'),
    'lxmert.tokenization_lxmert_fast': ('LxmertTokenizerFast',),
    'markuplm.tokenization_markuplm_fast': ('MarkupLMTokenizerFast',),
    'mbart.tokenization_mbart_fast': ('MBartTokenizerFast',),
    'mbart50.tokenization_mbart50_fast': ('MBart50TokenizerFast',),
    'mobilebert.tokenization_mobilebert_fast': ('MobileBertTokenizerFast',),
    'mpnet.tokenization_mpnet_fast': ('MPNetTokenizerFast',),
    'mvp.tokenization_mvp': ('MvpTokenizer',),
    'mvp.tokenization_mvp_fast': ('MvpTokenizerFast',),
    'nllb.tokenization_nllb_fast': ('NllbTokenizerFast',),
    'openai.tokenization_openai_fast': ('OpenAIGPTTokenizerFast',),
    'pegasus.tokenization_pegasus_fast': ('PegasusTokenizerFast',),
    'reformer.tokenization_reformer_fast': ('ReformerTokenizerFast',),
    'rembert.tokenization_rembert_fast': ('RemBertTokenizerFast',),
    'roberta.tokenization_roberta_fast': ('RobertaTokenizerFast',),
    'roformer.tokenization_roformer_fast': ('RoFormerTokenizerFast',),
    'splinter.tokenization_splinter_fast': ('SplinterTokenizerFast',),
    'squeezebert.tokenization_squeezebert_fast': ('SqueezeBertTokenizerFast',),
    't5.tokenization_t5_fast': ('T5TokenizerFast',),
    'whisper.tokenization_whisper_fast': ('WhisperTokenizerFast',),
    'xglm.tokenization_xglm_fast': ('XGLMTokenizerFast',),
    'xlm_roberta.tokenization_xlm_roberta_fast': ('XLMRobertaTokenizerFast',),
    'xlnet.tokenization_xlnet_fast': ('XLNetTokenizerFast',),
}
TOKENIZER_SHIM = "transformers.models.tokenization_fast_modules"


def _tokenizer_module_home(name: str) -> str:
    """Where transformers 5 has the classes of 4.x's ``transformers.models.<name>``: the module a
    fast one was merged into, or the top level where 5 has no tokenizer module for the model
    (its slow module is then one of TOKENIZER_MODULES too)."""
    merged = name[: -len("_fast")] if name.endswith("_fast") else None
    if merged is not None and merged not in TOKENIZER_MODULES:
        return "transformers.models." + merged
    return "transformers"


def provide_tokenizer_module(module) -> None:
    import importlib

    import transformers

    name = module.__name__[len("transformers.models."):]
    classes = TOKENIZER_MODULES[name]
    home = _tokenizer_module_home(name)
    names = {}
    if home != "transformers":
        merged = importlib.import_module(home)
        names.update({attribute: value for attribute, value in vars(merged).items() if not attribute.startswith("_")})
    names.update({attribute: getattr(transformers, attribute) for attribute in classes})
    # the file names the tokenizer reads and writes, where its home in 5 has no VOCAB_FILES_NAMES
    names.setdefault("VOCAB_FILES_NAMES", dict(names[classes[0]].vocab_files_names))
    restore_names(module, names, TOKENIZER_SHIM)


# 4.x's modules of the models moved under transformers.models.deprecated, as the 2020-22
# API-surface record lists them (the TensorFlow ones and the conversion script left out: 4.57
# has neither for them).
DEPRECATED_SHIM = "transformers.models.deprecated"
MOVED_MODULES = {
    "mmbt": ("configuration_mmbt", "modeling_mmbt"),
    "retribert": ("configuration_retribert", "modeling_retribert", "tokenization_retribert",
                  "tokenization_retribert_fast"),
    "speech_to_text_2": ("configuration_speech_to_text_2", "modeling_speech_to_text_2",
                         "processing_speech_to_text_2", "tokenization_speech_to_text_2"),
    "transfo_xl": ("configuration_transfo_xl", "modeling_transfo_xl", "modeling_transfo_xl_utilities",
                   "tokenization_transfo_xl"),
    "xlm_prophetnet": ("configuration_xlm_prophetnet", "modeling_xlm_prophetnet", "tokenization_xlm_prophetnet"),
}
MOVED_TARGETS = [path for model, submodules in MOVED_MODULES.items()
                 for path in ("transformers.models." + model,
                              *("transformers.models.%s.%s" % (model, sub) for sub in submodules))]


def deprecated_home(name: str) -> str:
    """``transformers.models.transfo_xl.x`` -> ``transformers.models.deprecated.transfo_xl.x``."""
    prefix = "transformers.models."
    return prefix + "deprecated." + name[len(prefix):]


def provide_moved_module(module) -> None:
    home = importlib.import_module(deprecated_home(module.__name__))
    if hasattr(home, "__path__"):
        module.__path__ = []  # a package: its submodules go through the finder, to their own shims
    # dir(): a package of transformers is a _LazyModule that lists the names it serves lazily
    names = {name: Lazy(functools.partial(getattr, home, name)) for name in dir(home) if not name.startswith("__")}
    restore_names(module, names, DEPRECATED_SHIM)


SHIMS = (
    *(_archive_list_shim(module_name, models) for module_name, models in MODEL_LISTS_BY_MODULE.items()),
    *(_docstrings_shim(module_name, prefix) for module_name, prefix in DOCSTRINGS_BY_MODULE.items()),
    Shim(
        TOKENIZER_SHIM,
        targets=["transformers.models." + name for name in TOKENIZER_MODULES],
        kind=PROVIDE,
        requires={"transformers": ">=5.0"},
        apply=provide_tokenizer_module,
        broke="transformers 5 merged each model's slow and fast tokenizer modules into tokenization_<model> (the "
        "...TokenizerFast names are aliases there) and dropped the tokenizer modules of models that use another "
        "model's tokenizer (layoutlm, electra, longformer, led, lxmert, mvp): `from "
        "transformers.models.roberta.tokenization_roberta_fast import RobertaTokenizerFast` fails",
        summary="provide each with the classes its 4.x namesake defined, as transformers 5 resolves those names, "
        "and the public names of the module it was merged into",
        replacement="from transformers import <Model>Tokenizer (or <Model>TokenizerFast, the same class in 5)",
        rewrites={"transformers.models." + name: "%s (%s)" % (_tokenizer_module_home(name), ", ".join(classes))
                  for name, classes in TOKENIZER_MODULES.items()},
    ),
    Shim(
        DEPRECATED_SHIM,
        targets=MOVED_TARGETS,
        kind=PROVIDE,
        # the first move (MMBT, RetriBERT) was in 4.31; transformers 5 deleted the deprecated models
        requires={"transformers": ">=4.31,<5.0"},
        apply=provide_moved_module,
        broke="transformers 4.31 to 4.4x moved the MMBT, RetriBERT, Transformer-XL, Speech2Text2 and XLM-ProphetNet "
        "packages under transformers.models.deprecated, so their 4.x module paths "
        "(transformers.models.transfo_xl.tokenization_transfo_xl, ...) no longer import",
        summary="provide each old module path with its deprecated namesake's objects",
        replacement="from transformers import TransfoXLTokenizer (the top-level names kept working), or "
        "transformers.models.deprecated.<model>",
        renames={path: deprecated_home(path) for path in MOVED_TARGETS},
    ),
)

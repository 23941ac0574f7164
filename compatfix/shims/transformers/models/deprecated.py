"""Shims for the model packages that transformers 4.31 to 4.4x moved under
``transformers.models.deprecated`` (MMBT and RetriBERT in 4.31, Transformer-XL in 4.36,
Speech2Text2 and XLM-ProphetNet after 4.40): the classes stayed importable from the top level,
but ``from transformers.models.transfo_xl.tokenization_transfo_xl import TransfoXLTokenizer``,
as 2020-22 code wrote it, fails. Each old module path is provided with the public names of
its deprecated namesake, the very objects. transformers 5 deleted these models, so nothing is
provided there.
"""

from __future__ import annotations

import functools
import importlib

from compatfix.patching import Lazy, restore_names
from compatfix.registry import PROVIDE, Shim

SHIM = "transformers.models.deprecated"

# 4.x's modules of the moved models, as the 2020-22 API-surface record lists them (the
# TensorFlow ones and the conversion script left out: transformers 4.57 has neither for them).
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
TARGETS = [path for model, submodules in MOVED_MODULES.items()
           for path in ("transformers.models." + model,
                        *("transformers.models.%s.%s" % (model, sub) for sub in submodules))]
PREFIX = "transformers.models."


def deprecated_home(name: str) -> str:
    """``transformers.models.transfo_xl.x`` -> ``transformers.models.deprecated.transfo_xl.x``."""
    return PREFIX + "deprecated." + name[len(PREFIX):]


def provide_moved_module(module) -> None:
    home = importlib.import_module(deprecated_home(module.__name__))
    if hasattr(home, "__path__"):
        module.__path__ = []  # a package: its submodules go through the finder, to their own shims
    # dir(): a package of transformers is a _LazyModule that lists the names it serves lazily
    names = {name: Lazy(functools.partial(getattr, home, name)) for name in dir(home) if not name.startswith("__")}
    restore_names(module, names, SHIM)


SHIMS = (
    Shim(
        SHIM,
        targets=TARGETS,
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
        renames={path: deprecated_home(path) for path in TARGETS},
    ),
)

"""Shims for ``transformers.data.processors``: the package, provided with what 4.x's
exported from ``utils``, ``glue`` and ``xnli`` (the SQuAD processors are not restored)."""

from __future__ import annotations

import functools

from compatfix.patching import Lazy, restore_names
from compatfix.registry import PROVIDE, Shim

# transformers 4.x's data/processors/glue.py tables.
GLUE_TASKS_NUM_LABELS = {"cola": 2, "mnli": 3, "mrpc": 2, "sst-2": 2, "sts-b": 1, "qqp": 2, "qnli": 2, "rte": 2,
                         "wnli": 2}
GLUE_OUTPUT_MODES = {"cola": "classification", "mnli": "classification", "mnli-mm": "classification",
                     "mrpc": "classification", "sst-2": "classification", "sts-b": "regression",
                     "qqp": "classification", "qnli": "classification", "rte": "classification",
                     "wnli": "classification"}
XNLI_OUTPUT_MODES = {"xnli": "classification"}
TABLES = {"glue_tasks_num_labels": GLUE_TASKS_NUM_LABELS, "glue_output_modes": GLUE_OUTPUT_MODES,
          "xnli_output_modes": XNLI_OUTPUT_MODES}


def provide_processors(module) -> None:
    from compatfix.shims.transformers.data.processors.utils import NAMES

    module.__path__ = []  # a package: ``import transformers.data.processors.utils`` goes through the finder
    glue = {name: Lazy(functools.partial(_glue_attribute, name))
            for name in ("glue_processors", "glue_convert_examples_to_features")}
    xnli = {name: Lazy(functools.partial(_xnli_attribute, name)) for name in ("xnli_processors", "xnli_tasks_num_labels")}
    restore_names(module, {**NAMES, **TABLES, **glue, **xnli}, "transformers.data.processors")


def _glue_attribute(name: str):
    from compatfix.shims.transformers.data.processors import glue

    return glue.NAMES[name]


def _xnli_attribute(name: str):
    from compatfix.shims.transformers.data.processors import xnli

    return xnli.NAMES[name]


SHIMS = (
    Shim(
        "transformers.data.processors",
        targets=["transformers.data.processors"],
        kind=PROVIDE,
        requires={"transformers": ">=5.0"},
        apply=provide_processors,
        broke="transformers 5 removed the transformers.data.processors package of 2019-22 GLUE-style scripts",
        summary="provide it with InputExample, InputFeatures, DataProcessor, 4.x's GLUE tables "
        "(glue_tasks_num_labels, glue_output_modes, xnli_output_modes), glue_processors and "
        "glue_convert_examples_to_features, xnli_processors and xnli_tasks_num_labels",
        replacement="your own dataclasses and tables, or the datasets library",
        rewrites={"transformers.data.processors": "your own dataclasses and tables, or the datasets library"},
    ),
)

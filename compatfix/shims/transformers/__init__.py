"""Shims for transformers: the 4.x API that 2020-22 PyTorch code uses and transformers 5
removed. Each submodule's shims live in the file that mirrors it (``optimization.py`` for
``transformers.optimization``, ``models/auto/modeling_auto.py`` for the auto classes);
this file gives the top-level ``transformers`` namespace back the names 4.x exported
from there, as the very objects the submodule shims restore.

The availability probes answer what is true today: transformers 5 runs on PyTorch only,
so TensorFlow and Flax are never available to it, and a TPU is torch_xla's.
"""

from __future__ import annotations

import functools

from compatfix.patching import Lazy, restore_names
from compatfix.registry import Shim


def is_tf_available() -> bool:
    """transformers 4.x's probe for TensorFlow models: transformers 5 has none, so False."""
    return False


def is_flax_available() -> bool:
    """transformers 4.x's probe for Flax/JAX models: transformers 5 has none, so False."""
    return False


def is_torch_tpu_available(check_device: bool = True) -> bool:
    """transformers 4.x's TPU probe: whether torch_xla is usable (with ``check_device``,
    on a TPU), as today's ``is_torch_xla_available`` answers it."""
    from transformers.utils import is_torch_xla_available

    return is_torch_xla_available(check_is_tpu=check_device)


def tpu_probe():
    """The TPU probe transformers.utils still has, else the one above."""
    import transformers.utils

    return getattr(transformers.utils, "is_torch_tpu_available", is_torch_tpu_available)


PROBES = {"is_tf_available": is_tf_available, "is_flax_available": is_flax_available,
          "is_torch_tpu_available": Lazy(tpu_probe)}


def _shim_attribute(module_name: str, attribute: str):
    import importlib

    return getattr(importlib.import_module(module_name), attribute)


# Top-level names of 4.x and the compatfix function that makes each (the shim of the
# submodule 4.x defined it in restores the same object there).
MADE = {
    "AdamW": ("compatfix.shims.transformers.optimization", "adamw_class"),
    "AutoModelWithLMHead": ("compatfix.shims.transformers.models.auto.modeling_auto", "auto_model_with_lm_head"),
    "MODEL_WITH_LM_HEAD_MAPPING": ("compatfix.shims.transformers.models.auto.modeling_auto", "lm_head_mapping"),
}
# ... and those that are plain attributes of a compatfix module.
MOVED = {
    "top_k_top_p_filtering": ("compatfix.shims.transformers.generation_utils", "top_k_top_p_filtering"),
    "InputExample": ("compatfix.shims.transformers.data.processors.utils", "InputExample"),
    "InputFeatures": ("compatfix.shims.transformers.data.processors.utils", "InputFeatures"),
    "DataProcessor": ("compatfix.shims.transformers.data.processors.utils", "DataProcessor"),
    "glue_tasks_num_labels": ("compatfix.shims.transformers.data.processors", "GLUE_TASKS_NUM_LABELS"),
    "glue_output_modes": ("compatfix.shims.transformers.data.processors", "GLUE_OUTPUT_MODES"),
    "xnli_output_modes": ("compatfix.shims.transformers.data.processors", "XNLI_OUTPUT_MODES"),
    "glue_compute_metrics": ("compatfix.shims.transformers.data.metrics", "glue_compute_metrics"),
    "glue_processors": ("compatfix.shims.transformers.data.processors.glue", "GLUE_PROCESSORS"),
    "glue_convert_examples_to_features": ("compatfix.shims.transformers.data.processors.glue",
                                          "glue_convert_examples_to_features"),
    "xnli_compute_metrics": ("compatfix.shims.transformers.data.metrics", "xnli_compute_metrics"),
}


def _made_by(module_name: str, factory: str):
    return _shim_attribute(module_name, factory)()


def restore_probes(module) -> None:
    restore_names(module, PROBES, "transformers.is_tf_available")


def restore_moved(module) -> None:
    # Lazy: the first use of one name must not import torch-heavy modules for the others.
    names = {name: Lazy(functools.partial(_made_by, *where)) for name, where in MADE.items()}
    names.update({name: Lazy(functools.partial(_shim_attribute, *where)) for name, where in MOVED.items()})
    restore_names(module, names, "transformers.AdamW")


SHIMS = (
    Shim(
        "transformers.is_tf_available",
        targets=["transformers"],
        requires={"transformers": ">=5.0"},
        apply=restore_probes,
        restores=list(PROBES),
        broke="transformers 5 dropped TensorFlow and Flax and removed is_tf_available, is_flax_available and "
        "the top-level is_torch_tpu_available, which 2020-22 code asks before choosing a framework",
        summary="restore them: TensorFlow and Flax are never available to transformers 5 (False); the TPU "
        "probe is transformers.utils' (torch_xla)",
        replacement="drop the TensorFlow/Flax branches; transformers.utils.is_torch_xla_available",
        rewrites={"transformers.is_tf_available": "False (transformers 5 has no TensorFlow models)",
                  "transformers.is_flax_available": "False (transformers 5 has no Flax models)",
                  "transformers.is_torch_tpu_available": "transformers.utils.is_torch_xla_available(check_is_tpu=True)"},
    ),
    Shim(
        "transformers.AdamW",
        targets=["transformers"],
        requires={"transformers": ">=5.0"},
        apply=restore_moved,
        restores=[*MADE, *MOVED],
        broke="transformers 5 removed the top-level AdamW, AutoModelWithLMHead, MODEL_WITH_LM_HEAD_MAPPING, "
        "top_k_top_p_filtering and the GLUE helpers (InputExample, InputFeatures, DataProcessor, "
        "glue_compute_metrics, glue_output_modes, glue_tasks_num_labels, glue_processors, "
        "glue_convert_examples_to_features, xnli_compute_metrics, xnli_output_modes)",
        summary="restore them as the objects the shims of the modules 4.x defined them in restore (4.x's AdamW, "
        "the LM-head auto class and mapping, the top-k/top-p filter, the GLUE data classes, tables and metrics)",
        replacement="torch.optim.AdamW; AutoModelForMaskedLM / AutoModelForCausalLM / AutoModelForSeq2SeqLM; "
        "TopKLogitsWarper and TopPLogitsWarper",
        rewrites={"transformers.AdamW": "torch.optim.AdamW (decay order, eps and correct_bias differ)",
                  "transformers.AutoModelWithLMHead": "AutoModelForMaskedLM, AutoModelForCausalLM or "
                  "AutoModelForSeq2SeqLM, by model type",
                  "transformers.MODEL_WITH_LM_HEAD_MAPPING": "MODEL_FOR_MASKED_LM_MAPPING / "
                  "MODEL_FOR_CAUSAL_LM_MAPPING / MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING",
                  "transformers.top_k_top_p_filtering": "TopKLogitsWarper then TopPLogitsWarper",
                  **{"transformers." + name: "your own code, or the datasets and evaluate libraries"
                     for name in MOVED if name != "top_k_top_p_filtering"}},
    ),
)


def accept_old_keywords(owner: type, renamed: dict[str, str], kept: dict[str, object], shim: str,
                        after: object = None) -> bool:
    """Let ``owner(...)`` take the keywords 4.x's ``__init__`` had: each of ``renamed`` is
    passed on under today's name (both at once is an error, as for any repeated argument),
    each of ``kept`` (name -> 4.x default) is taken out of the call and handed, with those
    the call did not pass at their defaults, to ``after(instance, values)`` once
    ``__init__`` returns. A call that uses none of them runs unchanged. The signature that
    ``inspect.signature`` shows has the old keywords, keyword-only, at the end."""
    import inspect

    from compatfix.patching import wrap

    def make_wrapper(init):
        signature = inspect.signature(init)
        parameters = list(signature.parameters.values())
        variadic = [p for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD]
        plain = [p for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD]
        old = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
               for name in renamed if name not in signature.parameters]
        old += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
                for name, default in kept.items() if name not in signature.parameters]

        def __init__(self, *args, **kwargs):
            for name, new in renamed.items():
                if name in kwargs and name not in signature.parameters:
                    value = kwargs.pop(name)
                    if new in kwargs:
                        raise TypeError("%s() got both %r and its new name %r" % (owner.__name__, name, new))
                    if value is not None:
                        kwargs[new] = value
            values = {name: kwargs.pop(name, default) for name, default in kept.items()
                      if name not in signature.parameters}
            init(self, *args, **kwargs)
            if after is not None and values:
                after(self, values)

        __init__.__signature__ = signature.replace(parameters=plain + old + variadic)
        return __init__

    return wrap(owner, "__init__", make_wrapper, shim)

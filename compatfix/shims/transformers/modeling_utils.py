"""Shims for ``transformers.modeling_utils``: the layer helpers 4.x defined or re-exported
there (``prune_linear_layer``, ``apply_chunking_to_forward``, ``Conv1D``,
``find_pruneable_heads_and_indices``, ``prune_conv1d_layer``, ``prune_layer``,
``SequenceSummary``), the TensorFlow checkpoint file names and the download-cache functions
(``cached_path``, ``hf_bucket_url``), which 2020-22 model code copied from BERT's and GPT-2's
modules imports from there.

The first three moved to ``transformers.pytorch_utils`` and are its very objects;
``SequenceSummary`` is XLNet's copy of it, ``XLNetSequenceSummary`` (the same code, reading
the same config fields); the pruning index and the Conv1D pruning that transformers 4.56
dropped are rebuilt on torch with 4.x's results; the download cache is the one
``transformers.file_utils``' shim restores (``_download_cache``).
"""

from __future__ import annotations

from typing import Any, Iterable

from compatfix.patching import Lazy, restore_names, wrap
from compatfix.registry import RISK_BEHAVIOUR, Shim

MOVED_TO_PYTORCH_UTILS = ("prune_linear_layer", "apply_chunking_to_forward", "Conv1D")

# 4.x's file names of TensorFlow checkpoints (code checks a folder for them).
TF_FILE_NAMES = {"TF_WEIGHTS_NAME": "model.ckpt", "TF2_WEIGHTS_NAME": "tf_model.h5"}


def find_pruneable_heads_and_indices(
    heads: Iterable[int], n_heads: int, head_size: int, already_pruned_heads: set[int]
) -> tuple[set[int], Any]:
    """transformers 4.x: the heads still to prune (``heads`` less those already pruned)
    and the indices of the ``n_heads * head_size`` rows that stay, where head numbers
    count the original heads, before any pruning."""
    import torch

    to_prune = set(heads) - set(already_pruned_heads)
    keep = torch.ones(n_heads, head_size, dtype=torch.bool)
    for head in to_prune:
        # the layer has lost the already pruned heads below this one
        keep[head - sum(1 for pruned in already_pruned_heads if pruned < head)] = False
    return to_prune, torch.arange(n_heads * head_size)[keep.view(-1)].long()


def prune_conv1d_layer(layer: Any, index: Any, dim: int = 1) -> Any:
    """transformers 4.x: a new ``Conv1D`` (GPT-2's transposed linear layer) keeping only
    the entries ``index`` of its weight along ``dim`` (1: outputs, so the bias too)."""
    import torch
    from transformers.pytorch_utils import Conv1D

    index = index.to(layer.weight.device)
    weight = layer.weight.index_select(dim, index).detach().clone()
    bias = (layer.bias if dim == 0 else layer.bias[index]).detach().clone()
    rows, columns = weight.shape  # Conv1D(nf, nx) holds a (nx, nf) weight
    pruned = Conv1D(columns, rows).to(layer.weight.device)
    with torch.no_grad():
        pruned.weight.copy_(weight.contiguous())
        pruned.bias.copy_(bias.contiguous())
    return pruned


def prune_layer(layer: Any, index: Any, dim: int | None = None) -> Any:
    """transformers 4.x: prune a ``nn.Linear`` (along ``dim``, 0 by default) or a ``Conv1D``
    (1 by default) to the entries ``index``."""
    from torch import nn
    from transformers.pytorch_utils import Conv1D, prune_linear_layer

    if isinstance(layer, nn.Linear):
        return prune_linear_layer(layer, index, dim=0 if dim is None else dim)
    if isinstance(layer, Conv1D):
        return prune_conv1d_layer(layer, index, dim=1 if dim is None else dim)
    raise ValueError(f"Can't prune layer of class {layer.__class__}")


def _from_pytorch_utils(name: str) -> Any:
    import transformers.pytorch_utils

    return getattr(transformers.pytorch_utils, name)


def sequence_summary_class() -> type:
    """4.x's SequenceSummary: the copy transformers 5 kept in XLNet's modeling module."""
    from transformers.models.xlnet.modeling_xlnet import XLNetSequenceSummary

    return XLNetSequenceSummary


def restore_layer_helpers(module) -> None:
    import functools

    names: dict[str, Any] = {name: Lazy(functools.partial(_from_pytorch_utils, name)) for name in MOVED_TO_PYTORCH_UTILS}
    names["SequenceSummary"] = Lazy(sequence_summary_class)
    names.update(find_pruneable_heads_and_indices=find_pruneable_heads_and_indices,
                 prune_conv1d_layer=prune_conv1d_layer, prune_layer=prune_layer, **TF_FILE_NAMES)
    from compatfix.shims.transformers import _download_cache

    names.update({name: getattr(_download_cache, name) for name in DOWNLOAD_CACHE})
    restore_names(module, names, "transformers.modeling_utils.prune_linear_layer")


# 4.x's download-cache functions, which modeling_utils imported and 2020-22 code took from there
DOWNLOAD_CACHE = ("cached_path", "hf_bucket_url")
RESTORED = (*MOVED_TO_PYTORCH_UTILS, "find_pruneable_heads_and_indices", "prune_conv1d_layer", "prune_layer",
            "SequenceSummary", *TF_FILE_NAMES, *DOWNLOAD_CACHE)

POST_INIT_SHIM = "transformers.modeling_utils.PreTrainedModel.post_init"


def register_like_post_init(model: Any) -> None:
    """What ``post_init()`` registers on ``model`` (tied-weight keys, parallel plans, the keys to
    ignore ...), without its weight initialisation: the loading that follows initialises the
    weights the checkpoint lacks, and the loaded ones must stay as loaded."""
    model.init_weights = lambda *args, **kwargs: None  # shadows the method for this one call
    try:
        model.post_init()
    finally:
        del model.init_weights


def _registered_before_marking(original: Any) -> Any:
    # from_pretrained's first reader of what post_init() registers, in every 5.x release
    # (5.0 calls it from _finalize_load_state_dict, 5.24 from _finalize_model_loading); a
    # model written for 3.x/4.x never called post_init() in its __init__
    def mark_tied_weights_as_initialized(model: Any, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(model, "all_tied_weights_keys"):
            register_like_post_init(model)
        return original(model, *args, **kwargs)

    return mark_tied_weights_as_initialized


def register_old_models_on_load(module) -> None:
    wrap(module.PreTrainedModel, "mark_tied_weights_as_initialized", _registered_before_marking, POST_INIT_SHIM)


SHIMS = (
    Shim(
        POST_INIT_SHIM,
        targets=["transformers.modeling_utils"],
        requires={"transformers": ">=5.0"},
        apply=register_old_models_on_load,
        risk=RISK_BEHAVIOUR,
        broke="transformers 5's from_pretrained reads what PreTrainedModel.post_init() registers "
        "(all_tied_weights_keys); a model class written for 3.x/4.x ends its __init__ without calling post_init() "
        "(or with the older init_weights()), so loading it fails with AttributeError: ... all_tied_weights_keys",
        summary="register what post_init() would have, without re-initialising weights, when a model being loaded "
        "lacks it; a model that called post_init() is loaded unchanged",
        replacement="call self.post_init() at the end of the model's __init__",
    ),
    Shim(
        "transformers.modeling_utils.prune_linear_layer",
        targets=["transformers.modeling_utils"],
        # 4.22 dropped cached_path and hf_bucket_url, 4.53 moved SequenceSummary out, 4.56 the
        # layer helpers; 5.0 the TensorFlow file names
        requires={"transformers": ">=4.22"},
        apply=restore_layer_helpers,
        restores=RESTORED,
        broke="transformers 4.22 to 5 removed from transformers.modeling_utils what 4.x had there: the "
        "download-cache functions cached_path and hf_bucket_url (4.22), SequenceSummary (4.53; XLNet's "
        "XLNetSequenceSummary now), the layer helpers (4.56: prune_linear_layer, apply_chunking_to_forward and "
        "Conv1D live in transformers.pytorch_utils; find_pruneable_heads_and_indices, prune_conv1d_layer and "
        "prune_layer are gone) and the TensorFlow checkpoint names TF_WEIGHTS_NAME and TF2_WEIGHTS_NAME (5.0)",
        summary="restore them: transformers.pytorch_utils' objects, XLNetSequenceSummary, the head-pruning index "
        "and Conv1D pruning "
        "rebuilt with 4.x's results, 4.x's file names 'model.ckpt' and 'tf_model.h5', and the download cache "
        "of transformers.file_utils' shim",
        replacement="transformers.pytorch_utils (prune_linear_layer, apply_chunking_to_forward, Conv1D)",
        renames={**{"transformers.modeling_utils." + name: "transformers.pytorch_utils." + name
                    for name in MOVED_TO_PYTORCH_UTILS},
                 "transformers.modeling_utils.SequenceSummary":
                 "transformers.models.xlnet.modeling_xlnet.XLNetSequenceSummary"},
        rewrites={"transformers.modeling_utils." + name: "a copy in your code (transformers 5 has none)"
                  for name in ("find_pruneable_heads_and_indices", "prune_conv1d_layer", "prune_layer",
                               *TF_FILE_NAMES)}
        | {"transformers.modeling_utils." + name: "huggingface_hub.hf_hub_download / hf_hub_url"
           for name in DOWNLOAD_CACHE},
    ),
)

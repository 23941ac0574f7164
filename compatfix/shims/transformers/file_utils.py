"""Shims for ``transformers.file_utils``, 4.x's old home of the utilities (kept in 5 as an
alias module of ``transformers.utils``) that lost names transformers 5 removed:
``cached_property``, ``torch_required``, the TensorFlow/Flax/TPU probes and
``is_offline_mode``.

``cached_property`` is 4.x's own descriptor, not ``functools.cached_property``: it is a
``property`` subclass that keeps the value in ``__cached_<name>`` on the instance, and
computes it again while that is None; ``TrainingArguments`` subclasses of 2020-22 decorate
``_setup_devices`` with it.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from compatfix.patching import Lazy, restore_names
from compatfix.registry import Shim
from compatfix.shims.transformers import PROBES


class cached_property(property):
    """transformers 4.x's ``cached_property``: like ``property``, computed on the first read
    and kept in the instance's ``__cached_<name>`` attribute (recomputed while None)."""

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        if self.fget is None:
            raise AttributeError("unreadable attribute")
        attr = "__cached_" + self.fget.__name__
        cached = getattr(obj, attr, None)
        if cached is None:
            cached = self.fget(obj)
            setattr(obj, attr, cached)
        return cached


def torch_required(func: Callable[..., Any]) -> Callable[..., Any]:
    """transformers 4.x's decorator: ``func`` runs only where PyTorch is available."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from transformers.utils import is_torch_available

        if is_torch_available():
            return func(*args, **kwargs)
        raise ImportError(f"Method `{func.__name__}` requires PyTorch.")

    return wrapper


def offline_probe() -> Callable[[], bool]:
    """The offline-mode probe transformers 5 itself obeys (huggingface_hub's)."""
    from transformers.utils import hub

    return hub.is_offline_mode


NAMES = {"cached_property": cached_property, "torch_required": torch_required,
         "is_offline_mode": Lazy(offline_probe), **PROBES}


def restore_file_utils(module) -> None:
    restore_names(module, NAMES, "transformers.file_utils.cached_property")


DOWNLOAD_CACHE = ("cached_path", "get_from_cache", "hf_bucket_url", "filename_to_url")


def restore_download_cache(module) -> None:
    from compatfix.shims.transformers import _download_cache

    restore_names(module, {name: getattr(_download_cache, name) for name in DOWNLOAD_CACHE},
                  "transformers.file_utils.cached_path")


SHIMS = (
    Shim(
        "transformers.file_utils.cached_property",
        targets=["transformers.file_utils"],
        # 4.26 removed torch_required, 4.39 is_torch_tpu_available, 4.57 cached_property, 5.0 the rest
        requires={"transformers": ">=4.26"},
        apply=restore_file_utils,
        restores=list(NAMES),
        broke="transformers 4.26 to 5 removed torch_required (4.26), is_torch_tpu_available (4.39), "
        "cached_property (4.57), is_tf_available, is_flax_available and is_offline_mode (5.0) from transformers.file_utils, which 2020-22 TrainingArguments "
        "subclasses and scripts import",
        summary="restore 4.x's cached_property (a property cached in __cached_<name>) and torch_required, the "
        "probes as the top-level shim answers them, and is_offline_mode as the probe transformers 5 obeys",
        replacement="functools.cached_property; drop torch_required; transformers.utils' probes",
        rewrites={
            "transformers.file_utils.cached_property": "functools.cached_property (4.x's recomputed while None)",
            "transformers.file_utils.torch_required": "nothing: transformers 5 always has PyTorch",
            "transformers.file_utils.is_tf_available": "False (transformers 5 has no TensorFlow models)",
            "transformers.file_utils.is_flax_available": "False (transformers 5 has no Flax models)",
            "transformers.file_utils.is_torch_tpu_available":
            "transformers.utils.is_torch_xla_available(check_is_tpu=True)",
            "transformers.file_utils.is_offline_mode": "huggingface_hub.constants.is_offline_mode",
        },
    ),
    Shim(
        "transformers.file_utils.cached_path",
        targets=["transformers.file_utils"],
        requires={"transformers": ">=4.22"},
        apply=restore_download_cache,
        restores=DOWNLOAD_CACHE,
        broke="transformers 4.22 replaced its own download cache with huggingface_hub's and removed cached_path, "
        "get_from_cache, hf_bucket_url and filename_to_url, with which 2020-22 code fetches vocabularies and "
        "weights by URL",
        summary="restore them with 4.x's cache layout (sha256(url).sha256(etag) and its .json record) over the "
        "standard library's HTTP; archives are extracted only inside their folder",
        replacement="huggingface_hub.hf_hub_download(repo_id, filename) for Hub files; your own download otherwise",
        rewrites={"transformers.file_utils." + name: "huggingface_hub.hf_hub_download / hf_hub_url"
                  for name in DOWNLOAD_CACHE},
    ),
)

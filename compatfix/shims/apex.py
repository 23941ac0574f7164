"""Shims for NVIDIA apex: provide a torch-native stand-in (compatfix.apex_standin) where
no usable real apex can be imported.

- ``apex`` is provided when nothing named apex is installed, and also replaces an
  installed ``apex`` that is not NVIDIA's (PyPI's ``apex`` is a Pyramid web toolkit,
  0.9.x, whose import fails on modern Pyramid and which has no ``amp``).
- ``apex.amp``, ``apex.parallel`` (a package, with ``apex.parallel.LARC``),
  ``apex.optimizers``, ``apex.normalization`` and ``apex.fp16_utils`` are provided where
  they cannot be found: under the provided ``apex``, and under a real apex that lacks
  them (apex master removed ``amp`` and ``parallel`` on 2025-05-08). Whatever a real
  NVIDIA apex has is left alone.

Nothing here imports torch: the stand-in modules load when code imports them.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys

from compatfix._messages import say
from compatfix.registry import PROVIDE, RISK_BEHAVIOUR, Shim

# Subpackages only NVIDIA apex has (compatfix.doctor's check_apex knows the same list):
# an "apex" package with none of them is not NVIDIA's.
NVIDIA_APEX_PARTS = (
    "amp", "parallel", "optimizers", "normalization", "contrib", "fused_dense", "mlp",
    "multi_tensor_apply",
)

STANDIN = "compatfix.apex_standin"
# torch.nn.RMSNorm and torch.set_autocast_enabled(device_type, ...) arrived in torch 2.4.
REQUIRES = {"torch": ">=2.4"}


def is_not_nvidia_apex(spec) -> bool:
    """Whether the found ``apex`` is some other package of that name."""
    locations = list(spec.submodule_search_locations or ())
    return not any(os.path.isdir(os.path.join(folder, part)) for folder in locations for part in NVIDIA_APEX_PARTS)


def provide_apex_package(module) -> None:
    """The ``apex`` package: its submodules import on first use (``apex.amp``), as
    ``import apex`` followed by ``apex.amp.initialize`` expects."""
    from compatfix.apex_standin import SUBMODULES

    found = importlib.machinery.PathFinder.find_spec("apex")
    if found is not None:
        say("the installed 'apex' (%s) is not NVIDIA apex (PyPI's 'apex' is an unrelated web toolkit): "
            "`import apex` gets compatfix's torch-native stand-in instead (docs/apex.md). Uninstall it with "
            "`pip uninstall apex`." % (found.origin or list(found.submodule_search_locations or ())))
    module.__path__ = []  # a package: ``import apex.amp`` goes through the finder
    module.__all__ = list(SUBMODULES)

    def __getattr__(name: str):
        if name in SUBMODULES:
            return importlib.import_module("apex." + name)
        raise AttributeError("module 'apex' has no attribute %r" % name)

    module.__getattr__ = __getattr__


# Where apex defined names that its packages re-export, for the 2020-22 code that imported
# them from there (``from apex.normalization.fused_layer_norm import FusedLayerNorm``): the
# module, the stand-in module that has the names, and the names.
DEFINING_MODULES = {
    "apex.normalization.fused_layer_norm": ("normalization", (
        "FusedLayerNorm", "FusedRMSNorm", "MixedFusedLayerNorm", "MixedFusedRMSNorm",
        "fused_layer_norm_affine", "fused_layer_norm", "mixed_dtype_fused_layer_norm_affine",
        "fused_rms_norm_affine", "fused_rms_norm", "mixed_dtype_fused_rms_norm_affine")),
    "apex.optimizers.fused_adam": ("optimizers", ("FusedAdam",)),
    "apex.optimizers.fused_lamb": ("optimizers", ("FusedLAMB",)),
    "apex.optimizers.fused_sgd": ("optimizers", ("FusedSGD",)),
    "apex.optimizers.fused_novograd": ("optimizers", ("FusedNovoGrad",)),
}


def provide_defining_module(module) -> None:
    """Fill ``apex.<package>.<module>`` with the names apex defined there."""
    standin_name, names = DEFINING_MODULES[module.__name__]
    standin = importlib.import_module(STANDIN + "." + standin_name)
    for name in names:
        setattr(module, name, getattr(standin, name))
    module.__all__ = list(names)


def provide_submodule(module) -> None:
    """Fill ``apex.<name>`` with the public names of ``compatfix.apex_standin.<name>``."""
    standin = importlib.import_module(STANDIN + module.__name__[len("apex"):])
    parent = sys.modules.get(module.__name__.rpartition(".")[0])
    if parent is not None and not hasattr(parent, "__compatfix_provided__"):
        where = list(getattr(parent, "__path__", []))
        say("NVIDIA apex at %s has no %s (apex master removed amp and parallel on 2025-05-08): compatfix's "
            "torch-native stand-in provides it (docs/apex.md)" % (where, module.__name__))
    if hasattr(standin, "__path__") or any(name.startswith(module.__name__ + ".") for name in DEFINING_MODULES):
        module.__path__ = []  # a package (apex.parallel): its submodules come through the finder too
    for name in standin.__all__:
        setattr(module, name, getattr(standin, name))
    module.__all__ = [name for name in standin.__all__ if not name.startswith("_")]
    module.__doc__ = standin.__doc__


_REMOVED = "apex master removed apex.amp and apex.parallel on 2025-05-08 (NVIDIA/apex cb65b8ed)"
_NEVER_ON_PYPI = "NVIDIA apex was never on PyPI and needs a CUDA source build"

SHIMS = (
    Shim(
        "apex",
        targets=["apex"],
        kind=PROVIDE,
        requires=REQUIRES,
        apply=provide_apex_package,
        replaces_found=is_not_nvidia_apex,
        risk=RISK_BEHAVIOUR,
        broke=_NEVER_ON_PYPI + ": `import apex` fails with \"No module named 'apex'\", and `pip install "
        "apex` installs an unrelated Pyramid web toolkit that fails to import",
        summary="provide a torch-native apex package where none is installed or the installed one is "
        "not NVIDIA's (PyPI's apex web toolkit)",
        replacement="torch's own AMP, DistributedDataParallel, SyncBatchNorm and optimizers; never `pip install apex` (an unrelated project on PyPI)",
        rewrites={'apex': 'torch.amp, torch.nn.parallel and torch.optim, by module'},
    ),
    Shim(
        "apex.amp",
        targets=["apex.amp"],
        kind=PROVIDE,
        requires=REQUIRES,
        apply=provide_submodule,
        risk=RISK_BEHAVIOUR,
        broke=_NEVER_ON_PYPI + "; " + _REMOVED,
        summary="provide apex.amp (initialize, scale_loss, master_params, state_dict) on torch.autocast "
        "with apex's dynamic loss scaling (float32 on the CPU)",
        replacement='torch.autocast and torch.amp.GradScaler',
        rewrites={'apex.amp': 'torch.autocast(device_type) around the forward and torch.amp.GradScaler for the loss', 'apex.amp.initialize': 'no call: models and optimizers stay as they are; use torch.autocast', 'apex.amp.scale_loss': 'scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()'},
    ),
    Shim(
        "apex.parallel",
        targets=["apex.parallel"],
        kind=PROVIDE,
        requires=REQUIRES,
        apply=provide_submodule,
        risk=RISK_BEHAVIOUR,
        broke=_NEVER_ON_PYPI + "; " + _REMOVED,
        summary="provide apex.parallel (DistributedDataParallel, SyncBatchNorm, convert_syncbn_model) on "
        "torch's DistributedDataParallel and SyncBatchNorm",
        replacement='torch.nn.parallel.DistributedDataParallel and torch.nn.SyncBatchNorm',
        rewrites={'apex.parallel': 'torch.nn.parallel and torch.nn.SyncBatchNorm', 'apex.parallel.DistributedDataParallel': "torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank]) (apex's delay_allreduce has no equivalent)", 'apex.parallel.SyncBatchNorm': 'torch.nn.SyncBatchNorm (needs a process group)', 'apex.parallel.convert_syncbn_model': 'torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)'},
    ),
    Shim(
        "apex.parallel.LARC",
        targets=["apex.parallel.LARC"],
        kind=PROVIDE,
        requires=REQUIRES,
        apply=provide_submodule,
        risk=RISK_BEHAVIOUR,
        broke=_NEVER_ON_PYPI + " (SwAV's `from apex.parallel.LARC import LARC` fails with \"No module named "
        "'apex'\"); a provided apex.parallel that is not a package fails it with \"'apex.parallel' is not a "
        "package\"",
        summary="provide apex.parallel.LARC, apex's layer-wise adaptive rate wrapper around a torch "
        "optimizer (its gradient rescaling and folded weight decay), which apex.amp accepts as an optimizer",
        replacement='a LARS/LARC implementation of your own (torch has none)',
        rewrites={'apex.parallel.LARC': 'a LARC wrapper of your own around the torch optimizer (torch has none)'},
    ),
    Shim(
        "apex.optimizers",
        targets=["apex.optimizers"],
        kind=PROVIDE,
        requires=REQUIRES,
        apply=provide_submodule,
        risk=RISK_BEHAVIOUR,
        broke=_NEVER_ON_PYPI + "; its fused optimizers need its CUDA extensions",
        summary="provide apex.optimizers (FusedAdam, FusedLAMB, FusedSGD, FusedNovoGrad) in torch, with "
        "apex's defaults, update rules and state layout",
        replacement='torch.optim.AdamW / Adam / SGD (fused=True on CUDA); LAMB and NovoGrad need another package',
        rewrites={'apex.optimizers': 'torch.optim', 'apex.optimizers.FusedAdam': "torch.optim.AdamW (FusedAdam's default adam_w_mode=True) or torch.optim.Adam, fused=True on CUDA", 'apex.optimizers.FusedSGD': 'torch.optim.SGD(..., fused=True on CUDA)'},
    ),
    Shim(
        "apex.normalization",
        targets=["apex.normalization"],
        kind=PROVIDE,
        requires=REQUIRES,
        apply=provide_submodule,
        risk=RISK_BEHAVIOUR,
        broke=_NEVER_ON_PYPI + "; its fused norms need its CUDA extensions",
        summary="provide apex.normalization (FusedLayerNorm, FusedRMSNorm) as torch's LayerNorm and RMSNorm",
        replacement='torch.nn.LayerNorm and torch.nn.RMSNorm',
        rewrites={'apex.normalization': 'torch.nn'},
        renames={"apex.normalization.FusedLayerNorm": "torch.nn.LayerNorm",
                 "apex.normalization.FusedRMSNorm": "torch.nn.RMSNorm"},
    ),
    Shim(
        "apex.module_paths",
        targets=list(DEFINING_MODULES),
        kind=PROVIDE,
        requires=REQUIRES,
        apply=provide_defining_module,
        risk=RISK_BEHAVIOUR,
        broke=_NEVER_ON_PYPI + "; 2020-22 code imported its layers and optimizers from the modules that "
        "define them (from apex.normalization.fused_layer_norm import FusedLayerNorm)",
        summary="provide apex.normalization.fused_layer_norm (the layers and apex's functional forms, "
        "fused_layer_norm_affine, fused_rms_norm_affine, ...) and apex.optimizers.fused_adam/fused_lamb/"
        "fused_sgd/fused_novograd with the stand-in's classes",
        replacement="torch.nn.LayerNorm / RMSNorm and torch.nn.functional.layer_norm / rms_norm; torch.optim",
        renames={"apex.normalization.fused_layer_norm.FusedLayerNorm": "torch.nn.LayerNorm",
                 "apex.normalization.fused_layer_norm.FusedRMSNorm": "torch.nn.RMSNorm"},
        rewrites={"apex.normalization.fused_layer_norm": "torch.nn.LayerNorm / torch.nn.functional.layer_norm",
                  "apex.optimizers.fused_adam": "torch.optim.AdamW (fused=True on CUDA)",
                  "apex.optimizers.fused_sgd": "torch.optim.SGD (fused=True on CUDA)",
                  "apex.optimizers.fused_lamb": "a LAMB implementation of your own (torch has none)",
                  "apex.optimizers.fused_novograd": "a NovoGrad implementation of your own (torch has none)"},
    ),
    Shim(
        "apex.multi_tensor_apply",
        targets=["apex.multi_tensor_apply"],
        kind=PROVIDE,
        requires=REQUIRES,
        apply=provide_submodule,
        risk=RISK_BEHAVIOUR,
        broke=_NEVER_ON_PYPI + "; code imports multi_tensor_applier to ask whether apex's fused kernels "
        "(amp_C) are there",
        summary="provide apex.multi_tensor_apply with multi_tensor_applier.available False (no amp_C), as "
        "an apex built without its CUDA extensions, so code takes its plain-torch path",
        replacement="torch._foreach_* ops",
        rewrites={"apex.multi_tensor_apply": "torch._foreach_* ops (torch's multi-tensor kernels)"},
    ),
    Shim(
        "apex.contrib.xentropy",
        targets=["apex.contrib", "apex.contrib.xentropy"],
        kind=PROVIDE,
        requires=REQUIRES,
        apply=provide_submodule,
        risk=RISK_BEHAVIOUR,
        broke=_NEVER_ON_PYPI + "; apex.contrib.xentropy's fused label-smoothed cross entropy needs its "
        "xentropy_cuda extension",
        summary="provide apex.contrib.xentropy.SoftmaxCrossEntropyLoss in torch: apex's per-row label-smoothed "
        "loss, padding rows 0, and its gradient",
        replacement="torch.nn.functional.cross_entropy(logits, labels, label_smoothing=s, ignore_index=pad, "
        "reduction='none')",
        rewrites={"apex.contrib": "torch (compatfix stands in for apex.contrib.xentropy only)",
                  "apex.contrib.xentropy": "torch.nn.functional.cross_entropy",
                  "apex.contrib.xentropy.SoftmaxCrossEntropyLoss": "torch.nn.functional.cross_entropy(..., "
                  "label_smoothing=s, ignore_index=padding_idx, reduction='none')"},
    ),
    Shim(
        "apex.fp16_utils",
        targets=["apex.fp16_utils"],
        kind=PROVIDE,
        requires=REQUIRES,
        apply=provide_submodule,
        risk=RISK_BEHAVIOUR,
        broke=_NEVER_ON_PYPI,
        summary="provide apex.fp16_utils (FP16_Optimizer, network_to_half, ...) in torch",
        replacement='torch.autocast and torch.amp.GradScaler instead of FP16_Optimizer and network_to_half',
        rewrites={'apex.fp16_utils': 'torch.autocast and torch.amp.GradScaler'},
    ),
)

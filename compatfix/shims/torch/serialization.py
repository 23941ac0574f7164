"""``torch.load`` under torch >= 2.6, whose ``weights_only=True`` default refuses the
checkpoints of 2019-24 research code: they pickle ``args`` (``argparse.Namespace``),
numpy scalars for ``best_acc``, yacs ``CfgNode`` and mmcv ``Config``/``ConfigDict``
configs, ``pathlib`` paths.

The records and the applies only. The machinery is the ``compatfix.checkpoint`` package
(the unpickler, the trust store, the policy); docs/checkpoints.md has the policy and its
threat model. Each apply puts the same two wrappers on torch (once); each wrapper asks
the engine's settings, at every call, which of the two shims is on.
"""

from __future__ import annotations

import types

from compatfix.checkpoint.policy import SHARED_WRAPPER, SHIM_DATA_ONLY, SHIM_TRUSTED, make_load, make_save
from compatfix.patching import replace_attribute, wrap
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, RISK_SECURITY, Shim


def _install(torch: types.ModuleType) -> str | None:
    """Put the shared wrappers on torch.serialization and torch (once for both shims); the
    reason there was nothing to do when the other shim's apply already put them there."""
    import torch.serialization as serialization

    installed = False
    for name, make in (("load", make_load), ("save", make_save)):
        current = getattr(serialization, name)
        if not wrap(serialization, name, make, SHARED_WRAPPER):
            continue
        installed = True
        if getattr(torch, name, None) is current:  # torch.load is torch.serialization.load
            replace_attribute(torch, name, getattr(serialization, name), SHARED_WRAPPER)
    if installed:
        return None
    return "torch.load/torch.save already carry the checkpoint policy's wrappers, which serve this shim too"


def allow_data_only_classes(torch: types.ModuleType) -> str | None:
    # The two hooks on torch's weights-only unpickler (inert outside a data-only load),
    # then the shared torch.load/torch.save wrappers.
    from torch import _weights_only_unpickler

    from compatfix.checkpoint import unpickler

    hooked = unpickler.install(_weights_only_unpickler, SHIM_DATA_ONLY)
    wrapped = _install(torch)
    return None if hooked or wrapped is None else wrapped


def trust_own_and_opted_in_files(torch: types.ModuleType) -> str | None:
    return _install(torch)


_BROKE = (
    "torch 2.6 (2025-01) made weights_only=True the default of torch.load: checkpoints that "
    "pickle argparse.Namespace, numpy scalars/dtypes, yacs CfgNode, mmcv Config/ConfigDict or "
    "pathlib paths fail with 'Weights only load failed ... Unsupported global' (dict subclasses "
    "fail even when allow-listed: 'Can only SETITEMS for dict ...')"
)

SHIMS = (
    Shim(
        SHIM_DATA_ONLY,
        targets=["torch"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=2.6"},
        apply=allow_data_only_classes,
        risk=RISK_BEHAVIOUR,
        broke=_BROKE,
        replacement="torch.serialization.add_safe_globals([...]) for plain classes; a dict subclass "
        "(CfgNode, ConfigDict) or numpy data needs converting to plain dicts, lists and tensors before "
        "torch.save",
        summary="torch.load's weights-only default also loads argparse.Namespace, numpy "
        "scalars/dtypes/arrays, pathlib paths, yacs CfgNode and mmcv Config/ConfigDict, each rebuilt "
        "from checked data inside torch's own weights-only unpickler and its checks; runs no code from "
        "the file; an explicit weights_only is respected",
    ),
    Shim(
        SHIM_TRUSTED,
        targets=["torch"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=2.6"},
        apply=trust_own_and_opted_in_files,
        risk=RISK_SECURITY,
        replacement="torch.load(path, weights_only=False) for a file you trust, or save the project's "
        "own objects as plain data (state_dict()) so the weights-only loader reads them",
        broke=_BROKE + "; checkpoints that pickle the project's own classes cannot be loaded safely at all",
        summary="torch.save records the sha256 of the bytes it writes in a trust store; a file the "
        "safe loaders refuse loads with full pickle only if its bytes are in that store or the user "
        "opted in (COMPATFIX_TORCH_LOAD=trust-all, COMPATFIX_TORCH_LOAD_TRUST=paths), with a warning "
        "naming the file",
    ),
)

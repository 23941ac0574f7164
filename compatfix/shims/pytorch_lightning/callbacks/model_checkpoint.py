"""Shims for ``pytorch_lightning.callbacks.model_checkpoint``: ``ModelCheckpoint``'s 1.x
keywords. 1.0 took ``filepath`` (a folder, or folder/filename-template), which 1.2 removed
for ``dirpath`` + ``filename``; ``prefix`` (put before every checkpoint's name, the last one's
too), which 1.3 removed; ``period`` (epochs between checkpoints), which 1.5 removed for
``every_n_epochs``. The call without them is passed on unchanged."""

from __future__ import annotations

import inspect
import os

from compatfix.patching import wrap
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_OLD_KEYWORDS = "pytorch_lightning.callbacks.model_checkpoint.ModelCheckpoint.old_keywords"
# the old keywords and their 1.x defaults (period: 1.0-1.2's; 1.3-1.4's None meant the same)
OLD_KEYWORDS = {"filepath": None, "period": None, "prefix": ""}


def _split_filepath(filepath: str) -> tuple[str, str | None]:
    """1.0-1.1's ``__init_ckpt_dir``: a folder is the dirpath; anything else is split into the
    folder (made absolute where it is local) and the filename template."""
    from lightning_fabric.utilities.cloud_io import get_filesystem

    fs = get_filesystem(filepath)
    if fs.isdir(filepath):
        return filepath, None
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    if "file" in protocols:
        filepath = os.path.realpath(filepath)
    return os.path.split(filepath)


def _with_old_keywords(init, handled: tuple[str, ...]):
    signature = inspect.signature(init)

    def __init__(self, *args, **kwargs):
        old = {name: kwargs.pop(name) for name in handled if name in kwargs}
        if not old:
            return init(self, *args, **kwargs)
        bound = signature.bind(self, *args, **kwargs)
        arguments = bound.arguments
        if old.get("filepath"):
            if arguments.get("dirpath") or arguments.get("filename"):
                from pytorch_lightning.utilities.exceptions import MisconfigurationException

                raise MisconfigurationException(
                    "You have set all three path/name inputs which are not feasible. You have to choose either "
                    "filepath=%s OR dirpath=%s and filename=%s configuration."
                    % (old["filepath"], arguments.get("dirpath"), arguments.get("filename")))
            arguments["dirpath"], arguments["filename"] = _split_filepath(str(old["filepath"]))
        if old.get("period") is not None:  # 1.3-1.4: period takes precedence over every_n_epochs
            arguments["every_n_epochs"] = old["period"]
        join = type(self).CHECKPOINT_JOIN_CHAR
        prefix = old.get("prefix")
        if prefix:  # 1.x joined it before the formatted name: the default one's too
            arguments["filename"] = join.join([prefix, arguments.get("filename") or "{epoch}" + join + "{step}"])
        init(*bound.args, **bound.kwargs)
        if prefix:  # 1.x's last checkpoint was <prefix>-last.ckpt
            self.CHECKPOINT_NAME_LAST = join.join([prefix, self.CHECKPOINT_NAME_LAST])
        for name, value in old.items():  # the attributes 1.x kept them in
            setattr(self, name, value)

    parameters = list(signature.parameters.values())
    at = next((i for i, p in enumerate(parameters) if p.kind is p.VAR_KEYWORD), len(parameters))
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=OLD_KEYWORDS[name]) for name in handled]
    __init__.__signature__ = signature.replace(parameters=parameters[:at] + added + parameters[at:])
    return __init__


def accept_old_keywords(module) -> str | None:
    checkpoint = module.ModelCheckpoint
    parameters = inspect.signature(checkpoint.__init__).parameters
    handled = tuple(name for name in OLD_KEYWORDS if name not in parameters)
    if not handled:
        return "ModelCheckpoint still takes filepath, prefix and period here"
    wrap(checkpoint, "__init__", lambda init: _with_old_keywords(init, handled), SHIM_OLD_KEYWORDS)
    return None


SHIMS = (
    Shim(
        SHIM_OLD_KEYWORDS,
        targets=["pytorch_lightning.callbacks.model_checkpoint"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=1.2"},
        apply=accept_old_keywords,
        risk=RISK_BEHAVIOUR,
        broke="pytorch-lightning removed ModelCheckpoint's filepath= in 1.2 (2021-02, for dirpath + filename), "
        "prefix= in 1.3 (2021-05) and period= in 1.5 (2021-11, for every_n_epochs): "
        "TypeError: unexpected keyword argument",
        summary="accept them again as 1.x did: filepath split into dirpath and filename, prefix joined before "
        "every checkpoint's name with '-', period as every_n_epochs",
        replacement="dirpath= and filename= for filepath=; the prefix written into filename=; every_n_epochs= for "
        "period=",
        rewrites={
            "%s.ModelCheckpoint(+%s)" % (module, keyword): replacement
            for module in ("pytorch_lightning.callbacks", "pytorch_lightning.callbacks.model_checkpoint")
            for keyword, replacement in (("filepath", "dirpath= and filename="),
                                         ("prefix", "the prefix at the start of filename="),
                                         ("period", "every_n_epochs="))
        },
    ),
)

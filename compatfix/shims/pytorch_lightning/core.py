"""Shims for ``pytorch_lightning.core``: ``LightningDataModule.add_argparse_args`` and
``from_argparse_args`` (and ``parse_argparser``, ``get_init_arguments_and_types``), which
1.x DataModules inherited and Lightning 2.0 removed with the Trainer's."""

from __future__ import annotations

from compatfix.patching import replace_attribute
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_ARGPARSE = "pytorch_lightning.core.datamodule.argparse"
METHODS = ("add_argparse_args", "from_argparse_args", "parse_argparser", "get_init_arguments_and_types")


def restore_argparse(module) -> str | None:
    from compatfix.shims.pytorch_lightning import _argparse

    datamodule = module.LightningDataModule
    missing = [name for name in METHODS if not hasattr(datamodule, name)]
    if not missing:
        return "LightningDataModule has its argparse classmethods here"
    for name, method in _argparse.classmethods(tuple(missing)).items():
        replace_attribute(datamodule, name, method, SHIM_ARGPARSE)
    return None


SHIMS = (
    Shim(
        SHIM_ARGPARSE,
        targets=["pytorch_lightning.core.datamodule"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=2.0"},
        apply=restore_argparse,
        risk=RISK_BEHAVIOUR,
        broke="pytorch-lightning 2.0 (2023-03) removed LightningDataModule.add_argparse_args, "
        "from_argparse_args, parse_argparser and get_init_arguments_and_types (1.x: "
        "dm = MyDataModule.from_argparse_args(args))",
        summary="restore them as 1.x wrote them, over the DataModule subclass's own __init__ signature "
        "(a subclass's own add_argparse_args still wins)",
        replacement="MyDataModule(**{k: v for k, v in vars(args).items() if k in its parameters}), or LightningCLI",
        rewrites={
            "pytorch_lightning.LightningDataModule.add_argparse_args": "parser.add_argument(...) per option",
            "pytorch_lightning.LightningDataModule.from_argparse_args": "MyDataModule(batch_size=args.batch_size, ...)",
        },
    ),
)

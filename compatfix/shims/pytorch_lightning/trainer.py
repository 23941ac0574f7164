"""Shims for ``pytorch_lightning.trainer``: ``Trainer.add_argparse_args`` and
``Trainer.from_argparse_args``, which 1.x scripts build their command line and their
Trainer with, and which Lightning 2.0 removed (for LightningCLI)."""

from __future__ import annotations

from compatfix.patching import replace_attribute
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_ARGPARSE = "pytorch_lightning.trainer.argparse"
METHODS = ("add_argparse_args", "from_argparse_args", "parse_argparser")


def restore_argparse(module) -> str | None:
    from compatfix.shims.pytorch_lightning import _argparse

    trainer = module.Trainer
    missing = [name for name in METHODS if not hasattr(trainer, name)]
    if not missing:
        return "Trainer has add_argparse_args, from_argparse_args and parse_argparser here"
    for name, method in _argparse.classmethods(tuple(missing)).items():
        replace_attribute(trainer, name, method, SHIM_ARGPARSE)
    return None


SHIMS = (
    Shim(
        SHIM_ARGPARSE,
        # the package: its import ends after pytorch_lightning.trainer.trainer's, with Trainer in it
        targets=["pytorch_lightning.trainer"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=2.0"},
        apply=restore_argparse,
        risk=RISK_BEHAVIOUR,
        broke="pytorch-lightning 2.0 (2023-03) removed Trainer.add_argparse_args, from_argparse_args and "
        "parse_argparser (1.x scripts: parser = Trainer.add_argparse_args(parser); "
        "trainer = Trainer.from_argparse_args(args))",
        summary="restore them as 1.x wrote them (pytorch_lightning/utilities/argparse.py), over today's "
        "Trainer signature: one --option per parameter, parsed as 1.x parsed its type; the Trainer is "
        "built from the namespace's keys it takes",
        replacement="LightningCLI, or parser.add_argument for the options you need and Trainer(**vars)",
        rewrites={
            "pytorch_lightning.Trainer.add_argparse_args": "parser.add_argument(...) per option, or LightningCLI",
            "pytorch_lightning.Trainer.from_argparse_args": "Trainer(max_epochs=args.max_epochs, ...)",
            "pytorch_lightning.Trainer.parse_argparser": "parser.parse_args()",
            "pytorch_lightning.trainer.Trainer.add_argparse_args": "parser.add_argument(...) per option, or LightningCLI",
            "pytorch_lightning.trainer.Trainer.from_argparse_args": "Trainer(max_epochs=args.max_epochs, ...)",
            "pytorch_lightning.trainer.trainer.Trainer.add_argparse_args":
                "parser.add_argument(...) per option, or LightningCLI",
            "pytorch_lightning.trainer.trainer.Trainer.from_argparse_args": "Trainer(max_epochs=args.max_epochs, ...)",
        },
    ),
)

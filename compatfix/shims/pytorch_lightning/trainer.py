"""Shims for ``pytorch_lightning.trainer``: ``Trainer.add_argparse_args`` and
``Trainer.from_argparse_args``, which 1.x scripts build their command line and their
Trainer with, and which Lightning 2.0 removed (for LightningCLI); and a strategy passed in
``plugins=``, as 1.x code passed ``DDPPlugin``, which 1.8 stopped accepting."""

from __future__ import annotations

from compatfix.patching import replace_attribute, wrap
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_ARGPARSE = "pytorch_lightning.trainer.argparse"
SHIM_STRATEGY_IN_PLUGINS = "pytorch_lightning.trainer.strategy_in_plugins"
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


def _strategy_out_of_plugins(init):
    from pytorch_lightning.strategies import Strategy

    def __init__(self, *args, **kwargs):
        # Only the two keywords are looked at: binding every argument would pass each default
        # explicitly, and Trainer's PL_TRAINER_* environment defaults would no longer apply.
        plugins = kwargs.get("plugins")
        if plugins is not None and kwargs.get("strategy", "auto") == "auto":
            listed = list(plugins) if isinstance(plugins, (list, tuple)) else [plugins]
            strategies = [plugin for plugin in listed if isinstance(plugin, Strategy)]
            if len(strategies) == 1:  # 1.x: the one training-type plugin among the plugins
                kwargs["strategy"] = strategies[0]
                kwargs["plugins"] = [plugin for plugin in listed if plugin is not strategies[0]] or None
        return init(self, *args, **kwargs)

    return __init__


def accept_strategy_in_plugins(module) -> str | None:
    import inspect

    from pytorch_lightning.strategies import Strategy

    from compatfix.shims.pytorch_lightning._argparse import annotation_types

    trainer = module.Trainer
    plugins = inspect.signature(trainer.__init__).parameters.get("plugins")
    if plugins is None:
        return "Trainer takes no plugins here"
    admitted = [t for t in annotation_types(plugins.annotation) if isinstance(t, type)]
    if any(issubclass(Strategy, t) for t in admitted) or plugins.annotation is inspect.Parameter.empty:
        return "Trainer's plugins take a strategy here"
    wrap(trainer, "__init__", _strategy_out_of_plugins, SHIM_STRATEGY_IN_PLUGINS)
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
    Shim(
        SHIM_STRATEGY_IN_PLUGINS,
        targets=["pytorch_lightning.trainer"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=1.8"},
        apply=accept_strategy_in_plugins,
        risk=RISK_BEHAVIOUR,
        broke="pytorch-lightning 1.8 (2022-11) stopped accepting a training-type plugin in Trainer(plugins=...) "
        "(1.x: plugins=DDPPlugin(find_unused_parameters=False)): MisconfigurationException: Found invalid type "
        "for plugin",
        summary="a single Strategy among plugins= is passed as strategy= (where strategy is left at 'auto'), as "
        "1.x took it; the other plugins stay",
        replacement="Trainer(strategy=DDPStrategy(...), plugins=[...the others])",
    ),
)

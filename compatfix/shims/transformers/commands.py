"""Shims for ``transformers.commands``, 4.x's ``transformers-cli`` package, which transformers 5
replaced with a typer application (``transformers.cli``) that has no extension point.

2020-22 projects subclass its ``BaseTransformersCLICommand`` to add their own sub-commands to an
``argparse`` parser of their own: a small abstract base class with a static
``register_subcommand(parser)`` and a ``run()``. The module is provided with that class, as 4.x
wrote it; 4.x's own commands (convert, download, env, run, serve, user) are not restored.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from argparse import ArgumentParser

from compatfix.patching import provided_submodule, restore_names
from compatfix.registry import PROVIDE, Shim


class BaseTransformersCLICommand(ABC):
    """transformers 4.x's base class of a ``transformers-cli`` sub-command."""

    @staticmethod
    @abstractmethod
    def register_subcommand(parser: ArgumentParser) -> None:
        """Add the command's sub-parser to ``parser`` (the result of ``add_subparsers()``)."""
        raise NotImplementedError()

    @abstractmethod
    def run(self) -> None:
        """Run the command."""
        raise NotImplementedError()


BaseTransformersCLICommand.__module__ = "transformers.commands"

BROKE = ("transformers 5 replaced the transformers-cli package transformers.commands (argparse sub-commands "
         "built on BaseTransformersCLICommand) with a typer application, transformers.cli")
REPLACEMENT = "your own abc.ABC with register_subcommand(parser) and run() (transformers.cli has no extension point)"


def provide_commands(module) -> None:
    restore_names(module, {"BaseTransformersCLICommand": BaseTransformersCLICommand}, "transformers.commands")


def restore_commands_attribute(transformers) -> None:
    restore_names(transformers, {"commands": provided_submodule("transformers.commands")},
                  "transformers.commands.attribute")


SHIMS = (
    Shim(
        "transformers.commands",
        targets=["transformers.commands"],
        kind=PROVIDE,
        requires={"transformers": ">=5.0"},
        apply=provide_commands,
        broke=BROKE,
        summary="provide transformers.commands with 4.x's BaseTransformersCLICommand (abstract "
        "register_subcommand(parser) and run())",
        replacement=REPLACEMENT,
        rewrites={"transformers.commands": REPLACEMENT},
    ),
    Shim(
        "transformers.commands.attribute",
        targets=["transformers"],
        requires={"transformers": ">=5.0"},
        apply=restore_commands_attribute,
        restores=["commands"],
        broke=BROKE,
        summary="restore transformers.commands as an attribute (the provided module), as 4.x's lazy module served it",
        replacement=REPLACEMENT,
        rewrites={"transformers.commands": REPLACEMENT},
    ),
)

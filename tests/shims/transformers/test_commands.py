"""transformers.commands.BaseTransformersCLICommand, 4.x's base class of transformers-cli
sub-commands (transformers 5 has a typer CLI instead): missing with compatfix off; with it on, a
2020-22 project's own command registers on its argparse parser and runs, as with 4.x's ABC."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

PRESENT = """
import transformers
found = [hasattr(transformers, "commands")]
try:
    from transformers.commands import BaseTransformersCLICommand
    found.append(True)
except ImportError:
    found.append(False)
print(found)
"""


def test_commands_are_missing_without_compatfix():
    result = run_python(code=PRESENT, compatfix=False)
    assert result.stdout.strip() == "[False, False]", result.stderr[-2000:]
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.commands"))
    assert result.stdout.strip() == "[False, False]", result.stderr[-2000:]
    # without the attribute shim the module still imports, but is not an attribute before that
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.commands.attribute"))
    assert result.stdout.strip() == "[False, True]", result.stderr[-2000:]


def test_a_project_command_registers_and_runs():
    result = run_python(
        code="""
        import inspect
        from argparse import ArgumentParser
        import transformers
        from transformers.commands import BaseTransformersCLICommand
        assert transformers.commands.BaseTransformersCLICommand is BaseTransformersCLICommand

        def factory(args):
            return GreetCommand(args.name)

        class GreetCommand(BaseTransformersCLICommand):
            @staticmethod
            def register_subcommand(parser):
                greet = parser.add_parser("greet")
                greet.add_argument("--name", default="world")
                greet.set_defaults(func=factory)

            def __init__(self, name):
                self.name = name

            def run(self):
                return "hello " + self.name

        parser = ArgumentParser("my-cli")
        GreetCommand.register_subcommand(parser.add_subparsers())
        args = parser.parse_args(["greet", "--name", "bert"])
        assert args.func(args).run() == "hello bert"
        # both methods are abstract, register_subcommand a static method, as in 4.x
        assert BaseTransformersCLICommand.__abstractmethods__ == {"register_subcommand", "run"}
        assert isinstance(inspect.getattr_static(BaseTransformersCLICommand, "register_subcommand"), staticmethod)

        class Incomplete(BaseTransformersCLICommand):
            @staticmethod
            def register_subcommand(parser):
                pass
        try:
            Incomplete()
        except TypeError:
            print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

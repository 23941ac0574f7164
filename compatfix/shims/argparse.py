"""Shims for ``argparse``: the ``--local_rank`` argument of distributed training scripts.

- ``argparse.local_rank_spelling``: since torch 2.0, ``python -m torch.distributed.launch``
  passes ``--local-rank=N``; scripts that declare ``--local_rank`` stop with
  "unrecognized arguments" (or, with ``parse_known_args``, silently keep the default).
  A parser that declares one spelling (and not the other) gets the other rewritten to
  its own before it parses; ``sys.argv`` itself is left alone.
- ``argparse.local_rank_from_env``: ``torchrun`` passes no ``--local_rank`` at all, only
  ``LOCAL_RANK`` in the environment; a parser that declares the option and is given
  neither spelling gets ``--local_rank=$LOCAL_RANK``.

argparse is a standard-library module, so it is not a start-up trigger (every process
imports it): its shims apply when the engine loads, on the first import of torch (or
numpy, mmcv), or at once under ``python -m compatfix``. The patch is on the
``ArgumentParser`` class, so parsers built before it are covered. In a torchrun /
``torch.distributed.launch`` worker argparse is a trigger as well (the bootstrap watches
it when ``TORCHELASTIC_RUN_ID`` is set), so a parse before ``import torch`` is covered.
"""

from __future__ import annotations

import os
import sys
from typing import Callable

from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_SPELLING = "argparse.local_rank_spelling"
SHIM_FROM_ENV = "argparse.local_rank_from_env"

SPELLINGS = ("--local_rank", "--local-rank")



def _declared(parser) -> list[str]:
    """The local-rank spellings this parser declares (underscore first)."""
    actions = getattr(parser, "_option_string_actions", {})
    return [spelling for spelling in SPELLINGS if spelling in actions]


def _is_given(arguments: list[str], spelling: str) -> bool:
    return any(arg == spelling or arg.startswith(spelling + "=") for arg in arguments)


def _options_part(arguments: list[str]) -> list[str]:
    """The arguments before a ``--`` (after it, everything is positional)."""
    return arguments[: arguments.index("--")] if "--" in arguments else arguments


def local_rank_arguments(parser, arguments: list[str], *, rename: bool, inject: bool) -> list[str]:
    """``arguments`` as ``parser`` should see them: with ``rename``, the local-rank
    spelling it does not declare renamed to the one it does; with ``inject``,
    ``--local_rank=$LOCAL_RANK`` added when neither is given under torchrun. Unchanged
    for parsers without a local-rank option."""
    declared = _declared(parser)
    if not declared:
        return arguments
    options = _options_part(arguments)
    rest = arguments[len(options):]
    if rename and len(declared) == 1:
        own = declared[0]
        other = SPELLINGS[1 - SPELLINGS.index(own)]
        if _is_given(options, other):
            options = [own + arg[len(other):] if arg == other or arg.startswith(other + "=") else arg
                       for arg in options]
            patching.record_redirect(SHIM_SPELLING, "%s -> %s" % (other, own))
    if inject and not any(_is_given(options, spelling) for spelling in SPELLINGS):
        local_rank = os.environ.get("LOCAL_RANK", "").strip()
        action = parser._option_string_actions[declared[0]]
        if local_rank.isdigit() and action.nargs in (None, "?"):  # it takes one value
            options = ["%s=%s" % (declared[0], local_rank)] + options
            patching.record_redirect(SHIM_FROM_ENV, "%s from LOCAL_RANK" % declared[0])
    return options + rest


def _parse_known_args(rename: bool, inject: bool) -> Callable[[Callable], Callable]:
    def make(original: Callable) -> Callable:
        def parse_known_args(self, args=None, namespace=None):
            given = sys.argv[1:] if args is None else args
            if isinstance(given, (list, tuple)) and all(isinstance(arg, str) for arg in given):
                adjusted = local_rank_arguments(self, list(given), rename=rename, inject=inject)
                if adjusted != list(given):
                    args = adjusted
            return original(self, args, namespace)

        return parse_known_args

    return make


# Each shim wraps ArgumentParser.parse_known_args on its own: the class, so parsers built
# before the patch are covered.
def apply_local_rank_spelling(module) -> None:
    patching.wrap(module.ArgumentParser, "parse_known_args", _parse_known_args(True, False), SHIM_SPELLING)


def apply_local_rank_from_env(module) -> None:
    patching.wrap(module.ArgumentParser, "parse_known_args", _parse_known_args(False, True), SHIM_FROM_ENV)


SHIMS = (
    Shim(
        SHIM_SPELLING,
        targets=["argparse"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=2.0"},
        apply=apply_local_rank_spelling,
        risk=RISK_BEHAVIOUR,
        broke="torch 2.0 (2023-03) torch.distributed.launch passes --local-rank=N; scripts that "
        "declare --local_rank fail 'unrecognized arguments: --local-rank=0' (or 'the following "
        "arguments are required: --local_rank'), or parse_known_args keeps the default",
        summary="a parser that declares --local_rank (or --local-rank) also accepts the other "
        "spelling; other parsers and sys.argv are untouched",
        replacement="declare both spellings: add_argument('--local_rank', '--local-rank', type=int, "
        "default=int(os.environ.get('LOCAL_RANK', 0)))",
        rewrites={"*.add_argument('--local_rank')": "add_argument('--local_rank', '--local-rank', ...)",
                  "*.add_argument('--local-rank')": "add_argument('--local-rank', '--local_rank', ...)"},
    ),
    Shim(
        SHIM_FROM_ENV,
        targets=["argparse"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=1.9"},
        apply=apply_local_rank_from_env,
        risk=RISK_BEHAVIOUR,
        broke="torchrun (torch 1.9+, and torch.distributed.launch --use-env) passes no "
        "--local_rank, only LOCAL_RANK: a required --local_rank fails, a defaulted one puts "
        "every rank on GPU 0",
        summary="a parser that declares a local-rank option and is given none reads it from "
        "LOCAL_RANK when a launcher set it",
        replacement="default=int(os.environ.get('LOCAL_RANK', 0)) for the local-rank option",
        rewrites={"*.add_argument('--local_rank')": "add_argument(..., default=int(os.environ.get('LOCAL_RANK', 0)))",
                  "*.add_argument('--local-rank')": "add_argument(..., default=int(os.environ.get('LOCAL_RANK', 0)))"},
    ),
)

"""Shims for launching distributed training: the ``--local_rank`` argument and the
launcher's ``--master_port``.

- ``argparse.local_rank_spelling``: since torch 2.0, ``python -m torch.distributed.launch``
  passes ``--local-rank=N``; scripts that declare ``--local_rank`` stop with
  "unrecognized arguments" (or, with ``parse_known_args``, silently keep the default).
  A parser that declares one spelling (and not the other) gets the other rewritten to
  its own before it parses; ``sys.argv`` itself is left alone.
- ``argparse.local_rank_from_env``: ``torchrun`` passes no ``--local_rank`` at all, only
  ``LOCAL_RANK`` in the environment; a parser that declares the option and is given
  neither spelling gets ``--local_rank=$LOCAL_RANK``.
- ``torch.distributed.run.free_master_port``: a single-node launch whose
  ``--master_port`` is taken ("EADDRINUSE") uses a free port, with a warning. Never with
  more than one node: the other nodes could not know the new port.

argparse is a standard-library module, so it is not a start-up trigger (every process
imports it): its shims apply when the engine loads, on the first import of torch (or
numpy, mmcv), or at once under ``python -m compatfix``. The patch is on the
``ArgumentParser`` class, so parsers built before it are covered. In a torchrun /
``torch.distributed.launch`` worker argparse is a trigger as well (the bootstrap watches
it when ``TORCHELASTIC_RUN_ID`` is set), so a parse before ``import torch`` is covered.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
from typing import Callable

from compatfix import _messages, patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_SPELLING = "argparse.local_rank_spelling"
SHIM_FROM_ENV = "argparse.local_rank_from_env"
SHIM_MASTER_PORT = "torch.distributed.run.free_master_port"

SPELLINGS = ("--local_rank", "--local-rank")

# Which of the two argparse shims are on; one replacement of parse_known_args serves both,
# marked with PARSER_MARK.
PARSER_MARK = "argparse.local_rank"
_rename_spelling = False
_inject_from_env = False


def _declared(parser) -> list[str]:
    """The local-rank spellings this parser declares (underscore first)."""
    actions = getattr(parser, "_option_string_actions", {})
    return [spelling for spelling in SPELLINGS if spelling in actions]


def _is_given(arguments: list[str], spelling: str) -> bool:
    return any(arg == spelling or arg.startswith(spelling + "=") for arg in arguments)


def _options_part(arguments: list[str]) -> list[str]:
    """The arguments before a ``--`` (after it, everything is positional)."""
    return arguments[: arguments.index("--")] if "--" in arguments else arguments


def local_rank_arguments(parser, arguments: list[str]) -> list[str]:
    """``arguments`` as ``parser`` should see them: the local-rank spelling it does not
    declare renamed to the one it does; ``--local_rank=$LOCAL_RANK`` added when neither
    is given under torchrun. Unchanged for parsers without a local-rank option."""
    declared = _declared(parser)
    if not declared:
        return arguments
    options = _options_part(arguments)
    rest = arguments[len(options):]
    if _rename_spelling and len(declared) == 1:
        own = declared[0]
        other = SPELLINGS[1 - SPELLINGS.index(own)]
        if _is_given(options, other):
            options = [own + arg[len(other):] if arg == other or arg.startswith(other + "=") else arg
                       for arg in options]
            patching.record_redirect(SHIM_SPELLING, "%s -> %s" % (other, own))
    if _inject_from_env and not any(_is_given(options, spelling) for spelling in SPELLINGS):
        local_rank = os.environ.get("LOCAL_RANK", "").strip()
        action = parser._option_string_actions[declared[0]]
        if local_rank.isdigit() and action.nargs in (None, "?"):  # it takes one value
            options = ["%s=%s" % (declared[0], local_rank)] + options
            patching.record_redirect(SHIM_FROM_ENV, "%s from LOCAL_RANK" % declared[0])
    return options + rest


def _parse_known_args(original: Callable) -> Callable:
    @functools.wraps(original)
    def parse_known_args(self, args=None, namespace=None):
        given = sys.argv[1:] if args is None else args
        if isinstance(given, (list, tuple)) and all(isinstance(arg, str) for arg in given):
            adjusted = local_rank_arguments(self, list(given))
            if adjusted != list(given):
                args = adjusted
        return original(self, args, namespace)

    return parse_known_args


def _patch_parser_class(module) -> None:
    parser_class = module.ArgumentParser
    current = vars(parser_class)["parse_known_args"]
    if getattr(current, patching._MARK, None) != PARSER_MARK:
        patching.replace_attribute(parser_class, "parse_known_args", _parse_known_args(current), PARSER_MARK)


def apply_local_rank_spelling(module) -> None:
    global _rename_spelling
    _rename_spelling = True
    _patch_parser_class(module)


def apply_local_rank_from_env(module) -> None:
    global _inject_from_env
    _inject_from_env = True
    _patch_parser_class(module)


# --- the launcher's --master_port ---------------------------------------------------------------

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0")


def _is_this_machine(address: str) -> bool:
    import socket  # here, not at the top: the engine loads this module in every numpy process

    if address in _LOOPBACK_NAMES:
        return True
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((address, 0))  # only an address of this machine can be bound
        except OSError:
            return False
    return True


def port_is_taken(port: int) -> bool:
    """Whether a server could not listen on ``port`` (all interfaces), as the launcher's
    TCP store would."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers do: TIME_WAIT is fine
        try:
            sock.bind(("", port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def _free_port_on_all_interfaces() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return sock.getsockname()[1]


def _config_from_args(original: Callable, module) -> Callable:
    @functools.wraps(original)
    def config_from_args(args):
        port = getattr(args, "master_port", None)
        if (
            port is not None
            and getattr(args, "rdzv_backend", None) == "static"
            and not getattr(args, "rdzv_endpoint", None)
            and int(getattr(args, "node_rank", 0) or 0) == 0
            and module.parse_min_max_nnodes(args.nnodes)[1] == 1
            and port_is_taken(int(port))
            and _is_this_machine(str(args.master_addr))
        ):
            args.master_port = _free_port_on_all_interfaces()
            patching.record_redirect(SHIM_MASTER_PORT, "--master_port %s -> %d" % (port, args.master_port))
            _messages.say(
                "--master_port %s is already in use on this machine (EADDRINUSE); this "
                "single-node launch uses the free port %d instead." % (port, args.master_port),
                key=SHIM_MASTER_PORT,
            )
        return original(args)

    return config_from_args


def apply_free_master_port(module) -> None:
    current = module.config_from_args
    if getattr(current, patching._MARK, None) != SHIM_MASTER_PORT:
        patching.replace_attribute(module, "config_from_args", _config_from_args(current, module), SHIM_MASTER_PORT)


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
    ),
    Shim(
        SHIM_MASTER_PORT,
        targets=["torch.distributed.run"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=1.9"},
        apply=apply_free_master_port,
        risk=RISK_BEHAVIOUR,
        broke="torchrun / torch.distributed.launch --master_port P with P taken (a previous job, "
        "another user) fails: 'The server socket has failed to listen on any local network "
        "address ... EADDRINUSE'",
        summary="a single-node launch whose --master_port is in use takes a free port, with a "
        "warning (never with more than one node)",
    ),
)

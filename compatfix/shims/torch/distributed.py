"""Shims for ``torch.distributed`` and its launcher ``torch.distributed.run``: backends,
the single-process rendezvous, the single-tensor collectives and the master port.

- ``torch.distributed.nccl_fallback``: ``init_process_group``/``new_group`` asked for
  ``nccl`` where NCCL cannot work (a torch built without it, or no CUDA device) use
  ``gloo``, with one warning. Its record says it yields to CPU mode's own backend
  rewrite, so under ``--device cpu`` the engine reports it as "nothing to do".
- ``torch.distributed.env_single_process`` (opt-in): ``init_process_group`` with the
  ``env://`` rendezvous in a process that no launcher started (no ``MASTER_ADDR``,
  ``MASTER_PORT``, ``RANK`` or ``WORLD_SIZE``) becomes a world of one on a free
  loopback port, so ``python train.py`` runs without ``torchrun``.
- ``torch.distributed.collective_names`` and ``torch.distributed.collective_fallbacks``:
  the single-tensor all-gather / reduce-scatter / gather go by three generations of
  names; each name missing from the running torch is served by the one it has.
- ``torch.distributed.run.free_master_port``: a single-node launch whose
  ``--master_port`` is taken ("EADDRINUSE") uses a free port, with a warning. Never with
  more than one node: the other nodes could not know the new port.

``init_process_group`` and ``new_group`` are wrapped once, by ``patching.rewrite_arguments``,
which runs the argument rewriters of whichever shims are on (CPU mode's too); the originals
are kept for ``compatfix.get_original``. Nothing here imports torch at module level.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
from typing import Any, Callable, MutableMapping

from compatfix import _messages, patching
from compatfix.patching import restore_names
from compatfix.registry import AFTER_IMPORT, RISK_ALIAS, RISK_BEHAVIOUR, Shim

SHIM_NCCL = "torch.distributed.nccl_fallback"
SHIM_ENV = "torch.distributed.env_single_process"
SHIM_MASTER_PORT = "torch.distributed.run.free_master_port"
SHIM_NAMES = "torch.distributed.collective_names"
SHIM_FALLBACKS = "torch.distributed.collective_fallbacks"

# Variables that torchrun / torch.distributed.launch / mpirun-style launchers set.
LAUNCHER_VARIABLES = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket  # here, not at the top: the engine loads this module in every numpy process

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- argument rewriters of init_process_group / new_group ---------------------------------


def rewrite_on_both(module, function_name: str, shim: str, rewrite: Callable[[str, MutableMapping[str, Any]], None]) -> None:
    """Make ``module.function_name`` (``torch.distributed``'s, which is also
    ``distributed_c10d``'s) run ``rewrite(qualified name, arguments)`` on its arguments,
    through ``patching.rewrite_arguments``: one wrapper, whichever shims are on."""
    qualified = "torch.distributed." + function_name

    def rewrite_bound(bound) -> None:
        rewrite(qualified, bound.arguments)

    current = getattr(module, function_name)
    patching.rewrite_arguments(module, function_name, rewrite_bound, shim)
    wrapper = getattr(module, function_name)
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    if c10d is not None and c10d is not module and getattr(c10d, function_name, None) is current:
        # the same wrapper (and so the same rewriters) for code that calls distributed_c10d's
        patching.replace_attribute(c10d, function_name, wrapper, patching.shim_of(wrapper) or shim)


# --- nccl where NCCL cannot work -> gloo ---------------------------------------------------


def _why_nccl_cannot_work() -> str | None:
    import torch
    import torch.distributed as dist

    if not dist.is_nccl_available():
        return "this torch build has no NCCL"
    if not torch.cuda.is_available():
        return "no CUDA device is visible"
    return None


def without_nccl(backend: Any) -> str | None:
    """``backend`` with nccl replaced by gloo, or None when it does not name nccl."""
    if not isinstance(backend, str):  # None: torch picks a backend that works
        return None
    text = backend.strip().lower()
    if text == "nccl":
        return "gloo"
    if ":" in text:  # a device map, "cpu:gloo,cuda:nccl"
        pairs = [part.partition(":") for part in text.split(",")]
        if any(name.strip() == "nccl" for _, _, name in pairs):
            return ",".join("%s:%s" % (device.strip(), "gloo" if name.strip() == "nccl" else name.strip())
                            for device, _, name in pairs)
    return None


def _gloo_for_nccl(function_name: str, arguments: MutableMapping[str, Any]) -> None:
    replacement = without_nccl(arguments.get("backend"))
    if replacement is None:
        return
    reason = _why_nccl_cannot_work()
    if reason is None:
        return
    backend = str(arguments["backend"])
    arguments["backend"] = replacement
    patching.record_redirect(SHIM_NCCL, "%s(backend=%r) -> %r" % (function_name, backend, replacement))
    _messages.say(
        "%s(backend=%r): NCCL cannot work here (%s); using %r instead (slower, and some "
        "collectives on CUDA tensors are not supported; without a GPU, --device cpu moves the "
        "tensors too). Disable with COMPATFIX_DISABLE=%s."
        % (function_name, backend, reason, replacement, SHIM_NCCL),
        key=SHIM_NCCL,
    )


def apply_nccl_fallback(module) -> None:
    rewrite_on_both(module, "init_process_group", SHIM_NCCL, _gloo_for_nccl)
    rewrite_on_both(module, "new_group", SHIM_NCCL, _gloo_for_nccl)


# --- env:// without a launcher -> a world of one ---------------------------------------------


def _single_process_rendezvous(function_name: str, arguments: MutableMapping[str, Any]) -> None:
    if arguments.get("init_method") not in (None, "env://") or arguments.get("store") is not None:
        return
    if any(variable in os.environ for variable in LAUNCHER_VARIABLES):
        return  # a launcher (or the script) set up a rendezvous: leave it to torch
    if arguments.get("world_size", -1) not in (-1, 1) or arguments.get("rank", -1) not in (-1, 0):
        return  # the caller expects other processes
    port = free_loopback_port()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1")
    os.environ.setdefault("LOCAL_RANK", "0")
    patching.record_redirect(SHIM_ENV, "%s(init_method='env://') without a launcher -> world of one" % function_name)
    _messages.say(
        "%s: no launcher set MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE; running as a world of "
        "one process (rank 0) on 127.0.0.1:%d. Use torchrun to run more processes." % (function_name, port),
        key=SHIM_ENV,
    )


def apply_env_single_process(module) -> None:
    rewrite_on_both(module, "init_process_group", SHIM_ENV, _single_process_rendezvous)


# --- the single-tensor collectives under all their names -------------------------------------

# Newest name first: torch 2.13 (2026, pytorch#186123) all_gather_single/reduce_scatter_single,
# torch 1.13 (2022, pytorch#85686) all_gather_into_tensor/reduce_scatter_tensor, torch 1.9
# (2021, pytorch#56315) the private _all_gather_base/_reduce_scatter_base; gather_single
# replaced gather_into_tensor in 2026 (pytorch#191073). None has been removed so far.
ALL_GATHER_NAMES = ("all_gather_single", "all_gather_into_tensor", "_all_gather_base")
REDUCE_SCATTER_NAMES = ("reduce_scatter_single", "reduce_scatter_tensor", "_reduce_scatter_base")
GATHER_NAMES = ("gather_single", "gather_into_tensor")
COLLECTIVE_FAMILIES = (ALL_GATHER_NAMES, REDUCE_SCATTER_NAMES, GATHER_NAMES)


def _existing(module, names: tuple[str, ...]) -> Callable | None:
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    for owner in (module, c10d):
        if owner is None:
            continue
        for name in names:
            if patching.has_working_name(owner, name):
                return getattr(owner, name)
    return None


def restore_collective_names(module) -> None:
    """Applied to ``torch.distributed`` and ``distributed_c10d``: every missing name of a
    collective serves the function that the running torch has under another name."""
    for names in COLLECTIVE_FAMILIES:
        function = _existing(module, names)
        if function is not None:
            restore_names(module, {name: function for name in names}, SHIM_NAMES)


class CompletedWork:
    """What ``async_op=True`` returns from a collective that already finished."""

    def wait(self, timeout: object = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True


def all_gather_via_list(output_tensor, input_tensor, group=None, async_op=False):
    """All-gather into one tensor through ``all_gather``'s list of tensors: the list
    holds views of ``output_tensor`` (which must be contiguous), one per rank."""
    dist = sys.modules["torch.distributed"]
    world_size = dist.get_world_size(group)
    parts = list(output_tensor.view(world_size, -1).unbind(0))
    return dist.all_gather(parts, input_tensor.reshape(-1), group=group, async_op=async_op)


def reduce_scatter_via_all_reduce(output, input, op=None, group=None, async_op=False):
    """Reduce-scatter through ``all_reduce``: every rank reduces the whole input, then
    keeps its own slice. Sends world-size times the data reduce-scatter would; it
    finishes before returning, also with ``async_op=True``."""
    import torch

    dist = sys.modules["torch.distributed"]
    reduced = input.clone(memory_format=torch.contiguous_format)  # all_reduce needs contiguous
    dist.all_reduce(reduced, op=dist.ReduceOp.SUM if op is None else op, group=group)
    world_size, rank = dist.get_world_size(group), dist.get_rank(group)
    output.copy_(reduced.reshape(world_size, -1)[rank].view_as(output))
    return CompletedWork() if async_op else None


def provide_collective_fallbacks(module) -> None:
    """Applied to ``torch.distributed`` and ``distributed_c10d``: where a torch has no
    single-tensor all-gather or reduce-scatter under any name, serve all its names with
    an implementation over ``all_gather`` / ``all_reduce``."""
    fallbacks = ((ALL_GATHER_NAMES, all_gather_via_list), (REDUCE_SCATTER_NAMES, reduce_scatter_via_all_reduce))
    for names, fallback in fallbacks:
        if _existing(module, names) is None:
            restore_names(module, {name: fallback for name in names}, SHIM_FALLBACKS)


# --- torch.distributed.run: the launcher's --master_port ---------------------------------------------------------------

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
    patching.wrap(module, "config_from_args", lambda current: _config_from_args(current, module), SHIM_MASTER_PORT)


_DISTRIBUTED = ["torch.distributed", "torch.distributed.distributed_c10d"]

SHIMS = (
    Shim(
        SHIM_NCCL,
        targets=["torch.distributed"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=1.9"},
        apply=apply_nccl_fallback,
        risk=RISK_BEHAVIOUR,
        yields_to=["cpu.torch.distributed.backend"],
        broke="init_process_group(backend='nccl') where NCCL cannot work raises 'Distributed "
        "package doesn't have NCCL built in' (Windows, macOS) or 'ProcessGroupNCCL is only "
        "supported with GPUs, no GPUs found!' (no CUDA device); launch scripts hard-code nccl",
        summary="init_process_group/new_group use gloo (one warning) where nccl is asked for "
        "but torch has no NCCL or no CUDA device is visible",
        replacement="backend='nccl' if torch.cuda.is_available() and torch.distributed.is_nccl_available() else 'gloo'",
    ),
    Shim(
        SHIM_ENV,
        targets=["torch.distributed"],
        kind=AFTER_IMPORT,
        requires={"torch": ">=1.9"},
        apply=apply_env_single_process,
        risk=RISK_BEHAVIOUR,
        default=False,
        broke="init_process_group(init_method='env://') in a script run without a launcher "
        "raises 'environment variable RANK expected, but not set'",
        summary="opt-in: env:// without a launcher's variables becomes a world of one process "
        "on a free loopback port (sets MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE)",
        replacement="run under torchrun, or set MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE for one process",
    ),
    Shim(
        SHIM_NAMES,
        targets=_DISTRIBUTED,
        kind=AFTER_IMPORT,
        requires={"torch": ">=1.9"},
        apply=restore_collective_names,
        risk=RISK_ALIAS,
        broke="torch.distributed's single-tensor collectives were named _all_gather_base/"
        "_reduce_scatter_base (1.9), all_gather_into_tensor/reduce_scatter_tensor (1.13), "
        "all_gather_single/reduce_scatter_single (2026); code written for one generation "
        "(apex, DeepSpeed) raises AttributeError on a torch with another",
        summary="every missing name of all-gather/reduce-scatter/gather into one tensor "
        "serves the function the running torch has under another name",
        replacement="the name the running torch has: all_gather_into_tensor / reduce_scatter_tensor since torch 1.13",
        rewrites={
            "torch.distributed._all_gather_base": "torch.distributed.all_gather_into_tensor (torch >= 1.13)",
            "torch.distributed._reduce_scatter_base": "torch.distributed.reduce_scatter_tensor (torch >= 1.13)",
        },
    ),
    Shim(
        SHIM_FALLBACKS,
        targets=_DISTRIBUTED,
        kind=AFTER_IMPORT,
        apply=provide_collective_fallbacks,
        risk=RISK_BEHAVIOUR,
        broke="torch before 1.9 has no single-tensor all-gather/reduce-scatter: apex and "
        "DeepSpeed raise AttributeError: module 'torch.distributed' has no attribute "
        "'_all_gather_base'",
        summary="where torch has no single-tensor all-gather/reduce-scatter at all, provide "
        "them over all_gather/all_reduce (correct, more traffic)",
        replacement="torch >= 1.9, or all_gather / all_reduce of a list",
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
        replacement="--master_port of a free port (or torchrun --rdzv-endpoint localhost:0)",
    ),
)

"""Differential fuzzing of the data-only checkpoint loader (docs/checkpoints.md, "Fuzzing").

    python scripts/fuzz-checkpoints.py --cases 1000000 [--seed N]     # the long run
    python scripts/fuzz-checkpoints.py --hypothesis --cases 300       # what the suite runs

Run it with the interpreter of a venv where compatfix is installed (and torch, numpy,
yacs). Each case is a pickle of protocol 2, 4 or 5 assembled from opcodes (the newer
protocols' own ones included) and from fragments of the pickles real checkpoints hold (numpy dtypes and arrays, Namespace, CfgNode), with
names torch allows, names compatfix adds and names that run code. Each goes through
torch's weights-only unpickler alone and with compatfix's data-only classes. The
invariants:

- nothing crashes or hangs (the caller runs this in a process with a timeout; the case
  about to run is written to ``--progress`` first, so a crash names it);
- nothing runs code: no file appears at the marker path the payload strings name;
- what compatfix accepts and torch refuses holds only torch's types, plain data and the
  real classes of the documented allow-list, never a compatfix object.

Exit 0 when every case holds, 1 with the failing case (hex) otherwise.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import struct
import sys
import tempfile
from typing import Any, Sequence

MARKER = os.path.join(tempfile.gettempdir(), "compatfix-fuzz-ran-%d" % os.getpid())


def _text(value: str) -> bytes:
    data = value.encode("utf-8")
    return b"X" + struct.pack("<I", len(data)) + data


def _global(module: str, name: str) -> bytes:
    return b"c%s\n%s\n" % (module.encode(), name.encode())


def _dtype(type_string: str, endian: str = "<", flags: int = 0) -> bytes:
    return (_global("numpy", "dtype") + b"(" + _text(type_string) + b"\x89\x88tR(K\x03" + _text(endian)
            + b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK" + bytes([flags]) + b"tb")


def _bytes(data: bytes) -> bytes:
    return _global("_codecs", "encode") + b"(" + _text(data.decode("latin1")) + _text("latin1") + b"tR"


_GLOBALS = [
    # torch's own allow-list
    ("collections", "OrderedDict"), ("builtins", "set"), ("_codecs", "encode"), ("torch", "Size"),
    ("torch._utils", "_rebuild_tensor_v2"), ("collections", "Counter"), ("builtins", "bytearray"),
    # compatfix's data-only names
    ("argparse", "Namespace"), ("numpy", "dtype"), ("numpy", "ndarray"), ("numpy", "float64"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "scalar"), ("pathlib", "PosixPath"),
    ("pathlib", "PurePath"), ("yacs.config", "CfgNode"), ("builtins", "bytes"), ("numpy.dtypes", "Float64DType"),
    # names that run code, or lead to it
    ("builtins", "exec"), ("builtins", "eval"), ("os", "system"), ("builtins", "getattr"), ("posix", "system"),
    ("builtins", "__import__"), ("copyreg", "_reconstructor"), ("numpy", "load"), ("functools", "partial"),
]
_STRINGS = ["f8", "i4", "O8", "V8", "U4", "S2", "M8", "<", ">", "|", "latin1", "b", "a", "lr", "__dict__",
            "__setstate__", "_get_kwargs", "open(%r, 'w').close()" % MARKER, "touch %s" % MARKER, "/tmp/x"]
_FRAGMENTS = [
    _dtype("f8"), _dtype("i4", ">"), _dtype("O8", "|", 63), _dtype("V8", "|", 0), _dtype("U4"), _dtype("M8"),
    _global("numpy.core.multiarray", "_reconstruct") + _global("numpy", "ndarray") + b"K\x00\x85" + _bytes(b"b")
    + b"\x87R",
    _global("argparse", "Namespace") + b")\x81", _global("yacs.config", "CfgNode") + b")\x81",
    _bytes(b"\x00" * 8), _bytes(b"\x41" * 16), b"(K\x01K\x02t", b"K\x02\x85", b"}", b"]", b")",
    _global("pathlib", "PosixPath") + b"(" + _text("/a") + b"tR",
]
_SIMPLE = [b"(", b"t", b"\x85", b"\x86", b"\x87", b"}", b"]", b")", b"\x8f", b"N", b"\x88", b"\x89", b"a", b"e",
           b"s", b"u", b"R", b"\x81", b"b", b"0", b"1", b"2", b"l", b"o", b"\x93"]


def _short(code: bytes, data: bytes) -> bytes:
    return code + bytes([len(data) % 256]) + data[:255]


def build(choices: Sequence[int]) -> bytes:
    """A pickle of protocol 2, 4 or 5 from a list of integers (hypothesis shrinks the list).
    The newer protocols also get their own opcodes, which compatfix reads as protocol 2."""
    numbers = iter(choices)
    protocol = (2, 4, 5)[next(numbers, 0) % 3]
    out = [b"\x80" + bytes([protocol])]
    kinds = 9 if protocol == 2 else 14
    for choice in numbers:
        argument = next(numbers, 0)
        kind = choice % kinds
        if kind == 0:
            out.append(_global(*_GLOBALS[argument % len(_GLOBALS)]))
        elif kind == 1:
            out.append(_FRAGMENTS[argument % len(_FRAGMENTS)])
        elif kind == 2:
            out.append(_text(_STRINGS[argument % len(_STRINGS)]))
        elif kind == 3:
            out.append(b"K" + bytes([argument % 256]))
        elif kind == 4:
            out.append(b"J" + struct.pack("<i", (argument * 2654435761) % (1 << 32) - (1 << 31)))
        elif kind == 5:
            out.append(b"q" + bytes([argument % 8]))  # BINPUT
        elif kind == 6:
            out.append(b"h" + bytes([argument % 8]))  # BINGET
        elif kind == 9:  # a global through STACK_GLOBAL, its strings in protocol 4's short form
            module, name = _GLOBALS[argument % len(_GLOBALS)]
            out.append(_short(b"\x8c", module.encode()) + _short(b"\x8c", name.encode()) + b"\x93")
        elif kind == 10:
            out.append(_short(b"\x8c", _STRINGS[argument % len(_STRINGS)].encode()))  # SHORT_BINUNICODE
        elif kind == 11:
            out.append(b"\x94")  # MEMOIZE
        elif kind == 12:  # bytes and bytearrays in the newer forms
            data = bytes([argument % 256]) * (argument % 17)
            out.append([_short(b"C", data), b"\x96" + struct.pack("<Q", len(data)) + data][argument % 2])
        elif kind == 13:
            out.append(b"\x95" + struct.pack("<Q", argument % 64))  # FRAME
        else:
            out.append(_SIMPLE[argument % len(_SIMPLE)])
    out.append(b".")
    return b"".join(out)


def _allowed_types() -> tuple:
    import argparse as _argparse
    import collections
    import pathlib

    import numpy
    import torch

    allowed: list = [str, bytes, bytearray, int, float, complex, bool, type(None), list, tuple, dict, set,
                     frozenset, collections.OrderedDict, collections.Counter, _argparse.Namespace,
                     pathlib.PurePath, numpy.ndarray, numpy.generic, numpy.dtype, torch.Tensor, torch.Size,
                     torch.dtype, torch.device, torch.layout, torch.memory_format, type]
    try:
        from yacs.config import CfgNode

        allowed.append(CfgNode)
    except ImportError:
        pass
    return tuple(allowed)


def _foreign_objects(result: Any, allowed: tuple) -> list[str]:
    """Objects in ``result`` of types outside ``allowed`` or defined by compatfix."""
    import types

    found, seen, todo = [], set(), [result]
    while todo:
        value = todo.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        cls = value if isinstance(value, type) else type(value)
        if (cls.__module__ or "").startswith("compatfix"):
            found.append("a compatfix object: %r" % (cls,))
        elif not isinstance(value, allowed) and not isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
            found.append("a %s.%s" % (cls.__module__, cls.__qualname__))
        if isinstance(value, dict):
            todo.extend(dict.keys(value))
            todo.extend(dict.values(value))
        elif isinstance(value, (list, tuple, set, frozenset)):
            todo.extend(value)
        instance_dict = getattr(value, "__dict__", None) if not isinstance(value, type) else None
        if type(instance_dict) is dict:
            todo.extend(instance_dict.values())
    return found


def check(pickled: bytes, allowed: tuple) -> str | None:
    """The broken invariant for this case, or None."""
    import warnings

    from torch import _weights_only_unpickler

    from compatfix.checkpoint.unpickler import data_only_scope

    warnings.simplefilter("ignore")
    try:
        _weights_only_unpickler.load(io.BytesIO(pickled))
        torch_accepts = True
    except Exception:
        torch_accepts = False
    try:
        with data_only_scope():
            ours = _weights_only_unpickler.load(io.BytesIO(pickled))
        accepted = True
    except Exception:
        accepted = False
    if os.path.exists(MARKER):
        os.unlink(MARKER)
        return "code ran: the marker file appeared"
    if accepted and not torch_accepts:
        foreign = _foreign_objects(ours, allowed)
        if foreign:
            return "compatfix accepted what torch refuses, holding %s" % ", ".join(sorted(set(foreign)))
    return None


def _installed() -> None:
    import torch
    from torch import _weights_only_unpickler

    from compatfix.checkpoint import unpickler

    # What the shim does at `import torch` under compatfix; done here too so that the
    # fuzzer also runs where the shim is off (COMPATFIX=0 for a torch-only baseline).
    unpickler.install(_weights_only_unpickler, "torch.serialization.load_data_only_classes")
    del torch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hypothesis", action="store_true", help="generate with hypothesis (shrinks failures)")
    parser.add_argument("--progress", help="write each case (hex) here before running it")
    options = parser.parse_args(argv)
    _installed()
    allowed = _allowed_types()

    def run(choices: Sequence[int]) -> str | None:
        pickled = build(choices)
        if options.progress:
            with open(options.progress, "w") as handle:
                handle.write(pickled.hex())
        return check(pickled, allowed)

    if options.hypothesis:
        from hypothesis import HealthCheck, given, settings, strategies

        @settings(max_examples=options.cases, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(strategies.lists(strategies.integers(0, 1 << 16), max_size=80))
        def property_holds(choices: list[int]) -> None:
            problem = run(choices)
            assert problem is None, "%s: %s" % (problem, build(choices).hex())

        try:
            property_holds()
        except AssertionError as exc:
            print("FAILED", exc)
            return 1
        print("OK %d hypothesis cases" % options.cases)
        return 0

    generator = random.Random(options.seed)
    for number in range(options.cases):
        choices = [generator.randrange(1 << 16) for _ in range(2 * generator.randrange(1, 40))]
        problem = run(choices)
        if problem is not None:
            print("FAILED case %d: %s: %s" % (number, problem, build(choices).hex()))
            return 1
        if number and number % 100000 == 0:
            print("... %d cases" % number, flush=True)
    print("OK %d cases, seed %d" % (options.cases, options.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())

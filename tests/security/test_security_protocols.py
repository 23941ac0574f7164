"""Checkpoints saved with pickle protocol 3, 4 or 5 (``torch.save(..., pickle_protocol=4)``):
compatfix's data-only load reads them as the protocol-2 opcodes torch's weights-only
unpickler reads (compatfix/checkpoint/protocol2.py), and refuses what torch refuses."""

from __future__ import annotations

import io
import json
import pickle
import pickletools

import pytest
from support import clean_env, run_python

from security import payloads

P = payloads

# Plain data in every form the newer protocols encode differently: short and long strings,
# a string used again (memoised, then read back with BINGET), bytes of each length class,
# a bytearray, big integers, nested tuples and a dotted global (STACK_GLOBAL).
DATA = {
    "short": "lr", "long": "x" * 70_000, "again": ["torch._utils", "torch._utils", "torch._utils"],
    "bytes": [b"", b"\x00\xff" * 10, bytes(range(256)) * 300], "bytearray": bytearray(b"\x01\x02"),
    "ints": [0, 255, 65_536, -1, 2**70], "float": 2.5, "nested": (1, (2, (3, None, True, False))),
    "unicode": "μ-law \u2603", "global": pickle.PickleError, "keys": {str(i): i for i in range(300)},
}


TRAILER = b"raw storage bytes that follow the pickle in torch's legacy format"


@pytest.mark.parametrize("protocol", [3, 4, 5])
def test_a_newer_protocol_reads_as_the_same_data_in_protocol_2_opcodes(protocol):
    pickled = pickle.dumps(DATA, protocol=protocol)
    opcodes = {op.name for op, _, _ in pickletools.genops(pickled)}
    assert opcodes & {"FRAME", "MEMOIZE", "SHORT_BINUNICODE", "BINBYTES"}  # the newer forms are there

    source = io.BytesIO(pickled + TRAILER)
    source.read(2)
    from compatfix.checkpoint.protocol2 import Protocol2Reader

    reader = Protocol2Reader(source.read, source.readline)
    out = bytearray()

    class Recording:  # the translated stream, as pickle's own unpickler reads it
        def read(self, size: int) -> bytes:
            chunk = reader.read(size)
            out.extend(chunk)
            return chunk

        def readline(self) -> bytes:
            line = reader.readline()
            out.extend(line)
            return line

    assert pickle.Unpickler(Recording()).load() == DATA
    assert source.read() == TRAILER  # nothing after the STOP was read
    used = [op for op, _, _ in pickletools.genops(bytes(out))]
    assert max(op.proto for op in used) <= 2, sorted({op.name for op in used if op.proto > 2})


SAVE_AND_LOAD = """
import argparse, io, json, sys, torch, numpy
value = {"state_dict": {"w": torch.arange(6.0).reshape(2, 3), "step": torch.tensor(7)},
         "args": argparse.Namespace(lr=0.1, name="run", tags=["a", "a"]),
         "mean": numpy.arange(6, dtype=numpy.float32).reshape(2, 3).T, "best": numpy.float64(0.5),
         "blob": b"\\x00\\xff" * 4}


def described(loaded):
    return {"w": loaded["state_dict"]["w"].tolist(), "step": int(loaded["state_dict"]["step"]),
            "args": [type(loaded["args"]).__qualname__, vars(loaded["args"])],
            "mean": [str(loaded["mean"].dtype), loaded["mean"].tolist(), bool(loaded["mean"].flags.f_contiguous)],
            "best": [type(loaded["best"]).__name__, float(loaded["best"])], "blob": list(loaded["blob"])}


results = {}
for protocol in (2, 3, 4, 5):
    for zip_format in (True, False):
        buffer = io.BytesIO()
        torch.save(value, buffer, pickle_protocol=protocol, _use_new_zipfile_serialization=zip_format)
        data = buffer.getvalue()
        expected = described(torch.load(io.BytesIO(data), weights_only=False))  # full pickle: the reference
        try:
            got = described(torch.load(io.BytesIO(data)))
        except Exception as exc:
            got = "refused: " + str(exc).splitlines()[0]
        results["%d %s" % (protocol, "zip" if zip_format else "legacy")] = got == expected or got
print("RESULTS " + json.dumps(results))
"""


def _results(result) -> dict:
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULTS ")]
    assert result.returncode == 0 and lines, (result.stdout[-2000:], result.stderr[-3000:])
    return json.loads(lines[0][len("RESULTS "):])


def test_checkpoints_of_every_protocol_load_as_full_pickle_loads_them(tmp_path):
    env = clean_env(True, COMPATFIX_TRUST_STORE=str(tmp_path / "store.tsv"))
    on = run_python("-c", SAVE_AND_LOAD, env=env, timeout=240)
    assert _results(on) == {"%d %s" % (p, f): True for p in (2, 3, 4, 5) for f in ("zip", "legacy")}

    off = _results(run_python("-c", SAVE_AND_LOAD, env=clean_env(False), timeout=240))
    # Without compatfix, torch's weights-only default refuses every one of them (the
    # Namespace and numpy values, and the newer protocols' opcodes).
    assert all(isinstance(outcome, str) and outcome.startswith("refused") for outcome in off.values()), off


REFUSAL = """
import sys, torch
try:
    torch.load(sys.argv[1])
except Exception as exc:
    print(str(exc).splitlines()[0])
else:
    print("LOADED")
"""


def test_the_report_says_which_protocol_was_read_as_protocol_2(tmp_path):
    # Tensors alone, so the protocol is the only thing torch's loader refuses.
    path, report = tmp_path / "p4.pth", tmp_path / "report.json"
    save = "import sys, torch; torch.save({'w': torch.ones(2)}, sys.argv[1], pickle_protocol=4)"
    assert run_python("-c", save, str(path), env=clean_env(False)).returncode == 0
    env = clean_env(True, COMPATFIX_TRUST_STORE=str(tmp_path / "s"), COMPATFIX_REPORT=str(report))
    result = run_python("-c", REFUSAL, str(path), env=env)
    assert result.stdout.strip() == "LOADED", result.stdout + result.stderr
    calls = [item["call"] for process in json.loads(report.read_text())["processes"]
             for item in process["redirected"] if item["shim"] == "torch.serialization.load_data_only_classes"]
    assert calls == ["torch.load(%s): pickle protocol 4, which it reads as protocol 2" % path], calls


def test_an_instruction_without_a_protocol_2_form_is_refused_by_name(tmp_path):
    # A set in protocol 4 is EMPTY_SET + ADDITEMS; torch's unpickler has no ADDITEMS.
    path = tmp_path / "p4-set.pth"
    save = "import sys, torch; torch.save({'classes': {1, 2}}, sys.argv[1], pickle_protocol=4)"
    assert run_python("-c", save, str(path), env=clean_env(False)).returncode == 0
    result = run_python("-c", REFUSAL, str(path), env=clean_env(True, COMPATFIX_TRUST_STORE=str(tmp_path / "s")))
    assert "saved with pickle protocol 4 (torch.save(..., pickle_protocol=4)) and holds a ADDITEMS instruction" in (
        result.stdout), result.stdout + result.stderr
    off = run_python("-c", REFUSAL, str(path), env=clean_env(
        True, COMPATFIX_TRUST_STORE=str(tmp_path / "s"), COMPATFIX_DISABLE="torch.serialization.load_data_only_classes"))
    assert "torch's weights-only loader reads protocol 2 only (compatfix's data-only load" in off.stdout, (
        off.stdout + off.stderr)


def _newer_protocol(body: bytes) -> bytes:
    return P.stream(body, b"\x80\x04")


# Attacks on the translation itself: each is refused (with this reason), and runs nothing.
ATTACKS = {
    # a dangerous global named through STACK_GLOBAL, from a memoised string read back
    "stack_global_from_memo": (_newer_protocol(
        P.text("builtins") + b"\x94" + b"\x94" + b"h\x00" + P.text("eval") + b"\x93"
        + P.MARK + P.text("1") + b"t" + P.REDUCE), "Unsupported global: GLOBAL eval"),
    # a line break in a STACK_GLOBAL name, to split it into two GLOBAL lines
    "line_break": (_newer_protocol(P.stack_global("argparse\nbuiltins", "eval")), "a global's name with a line break"),
    # STACK_GLOBAL with one string only, over a non-string
    "one_string": (_newer_protocol(P.NONE + P.text("eval") + b"\x93"), "STACK_GLOBAL without a module and a name"),
    # an out-of-band buffer (protocol 5)
    "next_buffer": (P.stream(b"\x97", b"\x80\x05"), "NEXT_BUFFER"),
}


def test_attacks_on_the_translation_are_refused(tmp_path):
    from security.test_security_numpy import load_all

    outcomes = load_all(tmp_path, {name: pickled for name, (pickled, _) in ATTACKS.items()})
    for (name, kind), outcome in outcomes.items():
        assert not outcome["ok"] and ATTACKS[name][1] in outcome["error"], (name, kind, outcome)

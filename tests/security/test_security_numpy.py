"""numpy objects in a checkpoint (issue 18, findings 1 and 7): the data-only loader builds
dtypes, arrays and scalars from checked descriptions, never through numpy's own
``__setstate__``, and calls nothing torch's unpickler would not. Every payload is
hand-assembled here; each runs in a child process, so a crash is a failed test, not a
dead suite."""

from __future__ import annotations

import json

from support import clean_env, run_python

from security import payloads

P = payloads

PROBE = """
import json, sys, torch
results = []
for path in sys.argv[1:]:
    try:
        loaded = torch.load(path)
    except Exception as exc:
        results.append({"ok": False, "error": "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0])})
    else:
        import numpy
        value = loaded["x"]
        results.append({"ok": True, "type": "%s.%s" % (type(value).__module__, type(value).__qualname__),
                        "repr": str(value.tolist() if isinstance(value, numpy.ndarray) else value)})
print("RESULTS " + json.dumps(results))
"""


def load_all(tmp_path, pickles: dict[str, bytes], compatfix: bool = True) -> dict[tuple[str, str], dict]:
    paths = {}
    for name, pickled in pickles.items():
        for kind, path in P.write(tmp_path, name, pickled).items():
            paths[name, kind] = path
    result = run_python("-c", PROBE, *paths.values(),
                        env=clean_env(compatfix, COMPATFIX_TRUST_STORE=str(tmp_path / "store.tsv")), timeout=240)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULTS ")]
    assert result.returncode == 0 and lines, (result.returncode, result.stdout[-2000:], result.stderr[-3000:])
    return dict(zip(paths, json.loads(lines[0][len("RESULTS "):])))


def checkpoint(value: bytes) -> bytes:
    return P.stream(P.dict_of(x=value))


def field(type_string: str, offset: int) -> bytes:
    return P.tuple_of(P.numpy_dtype(type_string, P.simple_dtype_state("|")), P.int1(offset))


def structured_state(names: list[str], fields: bytes, size: int, flags: int) -> bytes:
    return P.tuple_of(P.int1(3), P.text("|"), P.NONE, P.tuple_of(*map(P.text, names)), fields,
                      P.int4(size), P.int1(1), P.int1(flags))


# An object field at offset 0 with numpy's flags forged to 0 (numpy would then not know
# the array holds pointers), and an array whose data bytes become those "pointers".
OBJECT_FIELD = P.numpy_dtype("V8", structured_state(["p"], P.dict_of(p=field("O8", 0)), 8, 0))
FORGED_POINTERS = P.numpy_array(P.int1(1) + P.TUPLE1, OBJECT_FIELD, P.bytes_(b"\x41" * 8))


def test_an_array_of_forged_object_pointers_is_refused_not_built(tmp_path):
    # Before the fix this file killed the process (SIGSEGV) when an element was touched.
    results = load_all(tmp_path, {"pointers": checkpoint(FORGED_POINTERS)})
    for key, result in results.items():
        assert not result["ok"], (key, result)
        assert "holds Python objects (an object dtype)" in result["error"] or \
            "is not data (kinds b i u f c S U V M m)" in result["error"], (key, result)


def test_torch_alone_refuses_the_same_file(tmp_path):
    results = load_all(tmp_path, {"pointers": checkpoint(FORGED_POINTERS)}, compatfix=False)
    assert all(not result["ok"] and "Weights only load failed" in result["error"] for result in results.values())


def test_descriptions_that_do_not_add_up_are_refused(tmp_path):
    f8 = P.numpy_dtype("f8", P.simple_dtype_state())
    cases = {
        # three float64 need 24 bytes
        "short_data": P.numpy_array(P.int1(3) + P.TUPLE1, f8, P.bytes_(b"\0" * 8)),
        # a field that reaches past the item size
        "field_outside": P.numpy_array(P.int1(1) + P.TUPLE1, P.numpy_dtype(
            "V4", structured_state(["a"], P.dict_of(a=field("f8", 0)), 4, 16)), P.bytes_(b"\0" * 4)),
        # a huge shape whose product overflows a C integer
        "huge_shape": P.numpy_array(P.tuple_of(P.int4(1 << 30), P.int4(1 << 30), P.int4(1 << 30)), f8,
                                    P.bytes_(b"")),
        # the object type string itself
        "object_dtype": P.numpy_array(P.int1(1) + P.TUPLE1, P.numpy_dtype("O8", P.simple_dtype_state("|", 63)),
                                      P.bytes_(b"\0" * 8)),
        # a dtype read back from the memo before its state
        "read_back_early": P.call(P.global_("numpy", "dtype"), P.text("f8"), P.NEWFALSE, b"\x88") + b"q\x00h\x00"
        + P.TUPLE2,
        # a dtype that never gets its state
        "never_built": P.call(P.global_("numpy", "dtype"), P.text("f8"), P.NEWFALSE, b"\x88"),
        # numpy's _reconstruct for another class
        "other_class": P.call(P.global_("numpy.core.multiarray", "_reconstruct"), P.global_("numpy", "dtype"),
                              P.int1(0) + P.TUPLE1, P.bytes_(b"b")),
    }
    results = load_all(tmp_path, {name: checkpoint(value) for name, value in cases.items()})
    expected = {
        "short_data": "needs 24 bytes, the file gives 8",
        "field_outside": "lies outside the item size 4",
        "huge_shape": "%d bytes, the file gives 0" % ((1 << 90) * 8),
        "object_dtype": "is not data",
        "read_back_early": "refers back to a numpy object before giving it its state",
        "never_built": "creates a numpy dtype but never gives it its state",
        "other_class": "rebuilt for (numpy.ndarray, (0,), b'b') only",
    }
    for (name, kind), result in results.items():
        assert not result["ok"], (name, kind, result)
        assert expected[name] in result["error"], (name, kind, result["error"])


def test_a_name_the_file_may_mention_is_never_called(tmp_path):
    # numpy.ndarray and numpy.float64 resolve (a config may hold a dtype class), but
    # torch's unpickler calls or creates only what its allow-list's values() hold.
    cases = {
        "reduce_ndarray": P.call(P.global_("numpy", "ndarray"), P.int1(4) + P.TUPLE1),
        "newobj_float64": P.global_("numpy", "float64") + P.int1(1) + P.TUPLE1 + P.NEWOBJ,
        "reduce_on_data": P.call(P.bytes_(b"x"), P.int1(1)),
    }
    results = load_all(tmp_path, {name: checkpoint(value) for name, value in cases.items()})
    for (name, kind), result in results.items():
        assert not result["ok"], (name, kind, result)
        assert ("Trying to call reduce for unrecognized function" in result["error"]
                or "Can only create new object for nn.Parameter or classes allowlisted" in result["error"]), result


def test_checked_descriptions_build_the_real_objects(tmp_path):
    f8 = P.numpy_dtype("f8", P.simple_dtype_state())
    be_i4 = P.numpy_dtype("i4", P.simple_dtype_state(">"))
    pair = P.numpy_dtype("V12", structured_state(["a", "b"], P.dict_of(a=field("f8", 0), b=field("i4", 8)), 12, 16))
    cases = {
        "array": P.numpy_array(P.int1(2) + P.TUPLE1, f8, P.bytes_(b"\0" * 8 + b"\0\0\0\0\0\0\xf0\x3f")),
        "big_endian": P.numpy_array(P.int1(1) + P.TUPLE1, be_i4, P.bytes_(b"\0\0\1\0")),
        "structured": P.numpy_array(P.int1(1) + P.TUPLE1, pair, P.bytes_(b"\0" * 8 + b"\7\0\0\0")),
        "scalar": P.numpy_scalar("f8", b"\0\0\0\0\0\0\xf8\x3f", "numpy._core.multiarray"),
        "type_as_value": P.global_("numpy", "float32"),
    }
    results = load_all(tmp_path, {name: checkpoint(value) for name, value in cases.items()})
    expected = {
        "array": ("numpy.ndarray", "[0.0, 1.0]"),
        "big_endian": ("numpy.ndarray", "[256]"),
        "structured": ("numpy.ndarray", "[(0.0, 7)]"),
        "scalar": ("numpy.float64", "1.5"),
        "type_as_value": ("builtins.type", "<class 'numpy.float32'>"),
    }
    for (name, kind), result in results.items():
        assert result["ok"], (name, kind, result)
        assert (result["type"], result["repr"]) == expected[name], (name, kind, result)

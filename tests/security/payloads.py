"""Hand-assembled pickles for the security suite, and the two torch file formats that
carry them. Written for this suite from pickle's opcode table (Lib/pickletools.py)."""

from __future__ import annotations

import io
import pickle
import struct
import zipfile

PROTO2 = b"\x80\x02"
MARK, STOP, NONE, NEWFALSE = b"(", b".", b"N", b"\x89"
EMPTY_DICT, EMPTY_TUPLE, EMPTY_LIST = b"}", b")", b"]"
SETITEMS, BUILD, REDUCE, NEWOBJ, TUPLE1, TUPLE2 = b"u", b"b", b"R", b"\x81", b"\x85", b"\x86"

# torch < 1.6's format: these three pickles, the object, then the storage keys.
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001


def global_(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def stack_global(module: str, name: str) -> bytes:
    return text(module) + text(name) + b"\x93"


def text(value: str) -> bytes:
    data = value.encode("utf-8", "surrogatepass")
    return b"X" + struct.pack("<I", len(data)) + data


def dict_of(**items: bytes) -> bytes:
    return EMPTY_DICT + MARK + b"".join(text(key) + value for key, value in items.items()) + SETITEMS


def call(function: bytes, *arguments: bytes) -> bytes:
    return function + MARK + b"".join(arguments) + b"t" + REDUCE


def stream(body: bytes, protocol: bytes = PROTO2) -> bytes:
    return protocol + body + STOP


def as_zip(pickled: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", pickled)
        archive.writestr("archive/byteorder", "little")
        archive.writestr("archive/version", "3\n")
    return buffer.getvalue()


def as_legacy(pickled: bytes) -> bytes:
    sys_info = {"protocol_version": LEGACY_PROTOCOL, "little_endian": True,
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    head = b"".join(pickle.dumps(value, protocol=2) for value in (LEGACY_MAGIC, LEGACY_PROTOCOL, sys_info))
    return head + pickled + pickle.dumps([], protocol=2)


FORMATS = {"zip": as_zip, "legacy": as_legacy}


def write(folder, name: str, pickled: bytes) -> dict[str, str]:
    """The pickle as a zip and as a legacy checkpoint under ``folder``: {format: path}."""
    paths = {}
    for kind, wrap in FORMATS.items():
        path = folder / ("%s.%s.pth" % (name, kind))
        path.write_bytes(wrap(pickled))
        paths[kind] = str(path)
    return paths


def int1(value: int) -> bytes:
    return b"K" + bytes([value])


def int4(value: int) -> bytes:
    return b"J" + struct.pack("<i", value)


def bytes_(data: bytes) -> bytes:
    """``data`` as protocol 2 pickles bytes: ``_codecs.encode(latin-1 text, "latin1")``."""
    return call(global_("_codecs", "encode"), text(data.decode("latin1")), text("latin1"))


def tuple_of(*items: bytes) -> bytes:
    return MARK + b"".join(items) + b"t"


def numpy_dtype(type_string: str, state: bytes, module: str = "numpy") -> bytes:
    """``numpy.dtype(type_string, False, True)`` given the BUILD ``state``."""
    return call(global_(module, "dtype"), text(type_string), NEWFALSE, b"\x88") + state + BUILD


def simple_dtype_state(endian: str = "<", flags: int = 0) -> bytes:
    # (3, endian, subarray, names, fields, elsize, alignment, flags): numpy's own layout.
    return tuple_of(int1(3), text(endian), NONE, NONE, NONE, int4(-1), int4(-1), int1(flags))


def numpy_scalar(type_string: str, data: bytes, multiarray: str = "numpy.core.multiarray") -> bytes:
    return call(global_(multiarray, "scalar"), numpy_dtype(type_string, simple_dtype_state()), bytes_(data))


def numpy_array(shape: bytes, dtype: bytes, data: bytes, multiarray: str = "numpy.core.multiarray") -> bytes:
    """``_reconstruct(ndarray, (0,), b"b")`` given the state (1, shape, dtype, False, data)."""
    return (call(global_(multiarray, "_reconstruct"), global_("numpy", "ndarray"), int1(0) + TUPLE1, bytes_(b"b"))
            + tuple_of(int1(1), shape, dtype, NEWFALSE, data) + BUILD)


def runs_code(marker: str) -> dict[str, bytes]:
    """Pickles that, loaded with full pickle, create the file ``marker``: each reaches
    code another way. (None of them names a data-only class.)"""
    create = "open(%r, 'w').close()" % marker
    shell = "touch '%s'" % marker
    return {
        "exec": stream(call(global_("builtins", "exec"), text(create))),
        "eval_python2_name": stream(call(global_("__builtin__", "eval"), text(create))),
        "os_system": stream(call(global_("os", "system"), text(shell))),
        "posix_system": stream(call(global_("posix", "system"), text(shell))),
        "stack_global_exec": stream(call(stack_global("builtins", "exec"), text(create)), b"\x80\x04"),
        "inst_opcode": b"(" + text(shell) + b"ios\nsystem\n" + STOP,
        "obj_opcode": stream(MARK + global_("os", "system") + text(shell) + b"o"),
        "subprocess": stream(call(global_("subprocess", "check_call"), MARK + text("touch") + text(marker) + b"l")),
        "import_module": stream(
            call(global_("builtins", "getattr"), call(global_("importlib", "import_module"), text("os")), text("system"))
            + MARK + text(shell) + b"t" + REDUCE
        ),
        "partial": stream(call(call(global_("functools", "partial"), global_("os", "system")), text(shell))),
        "nested_pickle": stream(call(global_("pickle", "loads"),
                                     b"C" + bytes([len(p := stream(call(global_("builtins", "exec"), text(create))))]) + p)),
        "runpy": stream(call(global_("runpy", "_run_code"), text(create), EMPTY_DICT)),
        "torch_load_inner": stream(call(global_("torch.serialization", "load"), text(marker + ".inner"))),
        "numpy_load_pickle": stream(call(global_("numpy", "load"), text(marker + ".npy"), b"\x88")),
        "type_trick": stream(call(global_("builtins", "type"), text("X"), EMPTY_TUPLE, EMPTY_DICT)),
        "code_object": stream(call(global_("types", "FunctionType"), NONE, EMPTY_DICT)),
    }


def poisoners(victim: str) -> dict[str, bytes]:
    """Pickles that only give states (BUILD), to classes, functions and objects the
    data-only loader can name: no code, but they rewrite the process (finding 1)."""
    namespace = global_("argparse", "Namespace") + EMPTY_TUPLE + NEWOBJ
    return {
        # Every later pathlib path of the process would print as `victim`.
        "pathlib_class": stream(global_("pathlib", "PurePath") + NONE + dict_of(_str=text(victim)) + TUPLE2 + BUILD),
        "namespace_class": stream(global_("argparse", "Namespace") + NONE + dict_of(poisoned=text("yes")) + TUPLE2
                                  + BUILD),
        "counter_class": stream(global_("collections", "Counter") + NONE + dict_of(most_common=text("x")) + TUPLE2
                                + BUILD),
        "torch_function": stream(global_("torch._utils", "_rebuild_tensor_v2") + dict_of(poisoned=text("yes")) + BUILD),
        "cfgnode_second_build": stream(global_("yacs.config", "CfgNode") + EMPTY_TUPLE + NEWOBJ
                                       + dict_of(__immutable__=NEWFALSE) + BUILD + dict_of(clone=text("x")) + BUILD),
        "namespace_method_name": stream(namespace + dict_of(_get_kwargs=text("x")) + BUILD),
        "namespace_dunder": stream(namespace + dict_of(__wrapped__=text("x")) + BUILD),
        "namespace_holds_class": stream(namespace + dict_of(kind=global_("argparse", "Namespace")) + BUILD),
    }

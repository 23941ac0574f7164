"""Shims for NumPy: the aliases that 1.24, 2.0 and 2.4 removed, and the numpy 1.x
modules and submodule names that numpy 2 made private or deleted (numpy.compat,
numpy.lib's re-exports, numpy.lib.function_base, numpy.linalg.linalg).

Every one is a pure alias (or, for asfarray, sctypes, find_common_type and numpy.compat's
helpers, a rebuild from public API) and is only set where the name is missing: numpy 2
re-added ``bool`` and ``long`` with other meanings, and those are never touched.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import io
import os
import pathlib
import pickle
import sys
import warnings
from typing import Any

from compatfix._versions import release_tuple
from compatfix.patching import Lazy, provided_submodule, restore_names
from compatfix.registry import PROVIDE, Shim


# The builtins that numpy 1.24 stopped re-exporting under their own names.
BUILTIN_ALIASES = {
    "float": builtins.float,
    "int": builtins.int,
    "object": builtins.object,
    "str": builtins.str,
    "complex": builtins.complex,
    "unicode": builtins.str,
}
# numpy 2 re-added np.bool (numpy's bool_) and np.long (C long) with other meanings: these
# two are restored on numpy < 2 only.
BUILTIN_ALIASES_BEFORE_2 = {"bool": builtins.bool, "long": builtins.int}


def restore_builtin_aliases(np) -> None:
    names = dict(BUILTIN_ALIASES)
    if release_tuple(np.__version__) < (2,):
        names.update(BUILTIN_ALIASES_BEFORE_2)
    restore_names(np, names, "numpy.builtin_aliases")


def _asfarray(np):
    def asfarray(a, dtype=np.double):
        """Removed in numpy 2.0: ``a`` as an array of an inexact (float) dtype."""
        if not np.issubdtype(dtype, np.inexact):
            dtype = np.double
        return np.asarray(a, dtype=dtype)

    return asfarray


def _sctypes(np) -> dict:
    def present(*names):
        types = []
        for name in names:
            scalar_type = getattr(np, name, None)
            if scalar_type is not None and scalar_type not in types:
                types.append(scalar_type)
        return types

    return {
        "int": present("int8", "int16", "int32", "int64"),
        "uint": present("uint8", "uint16", "uint32", "uint64"),
        "float": present("float16", "float32", "float64", "longdouble"),
        "complex": present("complex64", "complex128", "clongdouble"),
        "others": [builtins.bool, builtins.object, builtins.bytes, builtins.str, np.void],
    }


def _find_common_type(np):
    kinds = "buifcSUVOMm"

    def find_common_type(array_types, scalar_types):
        """Removed in numpy 2.0. Rebuilt on ``result_type``: scalars decide only when
        they are of a higher kind than the arrays, as in numpy 1.x."""
        array_types = [np.dtype(t) for t in array_types]
        scalar_types = [np.dtype(t) for t in scalar_types]
        maxa = np.result_type(*array_types) if array_types else None
        maxsc = np.result_type(*scalar_types) if scalar_types else None
        if maxa is None or maxsc is None:
            return maxsc if maxa is None else maxa
        if kinds.find(maxsc.kind) > kinds.find(maxa.kind):
            return np.promote_types(maxsc, maxa)
        return maxa

    return find_common_type


# NEP 52's removed aliases of names numpy 2 still has: removed name -> numpy 2's name.
NUMPY2_ALIASES = {
    "float_": "float64",
    "complex_": "complex128",
    "cfloat": "complex128",
    "singlecomplex": "complex64",
    "longfloat": "longdouble",
    "longcomplex": "clongdouble",
    "clongfloat": "clongdouble",
    "string_": "bytes_",
    "unicode_": "str_",
    "NaN": "nan",
    "Inf": "inf",
    "Infinity": "inf",
    "infty": "inf",
    "PINF": "inf",
    "product": "prod",
    "cumproduct": "cumprod",
    "alltrue": "all",
    "sometrue": "any",
    "round_": "round",
    "bool8": "bool_",
    "int0": "intp",
    "uint0": "uintp",
    "object0": "object_",
    "str0": "str_",
    "bytes0": "bytes_",
    "void0": "void",
    "mat": "asmatrix",
    "row_stack": "vstack",
    "NAN": "nan",
}
# The other NEP 52 removals that numpy2_aliases restores (values, and rebuilt functions).
NUMPY2_REBUILT = ("NINF", "PZERO", "NZERO", "issubclass_", "asfarray", "sctypes", "find_common_type")


def restore_numpy2_aliases(np) -> None:
    names = {removed: getattr(np, current) for removed, current in NUMPY2_ALIASES.items()}
    names.update({
        "NINF": -np.inf,
        "PZERO": 0.0,
        "NZERO": -0.0,
        "issubclass_": builtins.issubclass,
        "asfarray": _asfarray(np),
        "sctypes": _sctypes(np),
        "find_common_type": _find_common_type(np),
    })
    restore_names(np, names, "numpy.numpy2_aliases")


def restore_numpy24_removals(np) -> None:
    def in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None):
        """Removed in numpy 2.4: ``isin`` on the flattened input."""
        return np.isin(ar1, ar2, assume_unique=assume_unique, invert=invert, kind=kind).ravel()

    restore_names(np, {"in1d": in1d, "trapz": np.trapezoid}, "numpy.numpy24_removals")


def restore_warnings_module(np) -> None:
    # numpy < 1.24 imported the standard library's warnings at its top level, so
    # np.warnings was that module (numpy/numpy#21403 removed the import).
    restore_names(np, {"warnings": warnings}, "numpy.warnings")


def restore_asscalar(np) -> None:
    def asscalar(a):
        """Removed in numpy 1.23: the Python scalar of a one-element array, ``a.item()``."""
        return a.item()

    restore_names(np, {"asscalar": asscalar}, "numpy.asscalar")


class _CastTable:
    """numpy 1.x's ``np.cast``: ``np.cast[dtype](a)`` is ``np.asarray(a).astype(dtype)``."""

    def __init__(self, np) -> None:
        self._np = np

    def __getitem__(self, dtype):
        scalar_type = self._np.dtype(dtype).type
        return lambda a: self._np.asarray(a).astype(scalar_type)


def _sctype_functions(np) -> dict:
    def obj2sctype(rep, default=None):
        """Removed in numpy 2.0: the scalar type of ``rep``, or ``default``."""
        if isinstance(rep, type) and issubclass(rep, np.generic):
            return rep
        if isinstance(rep, np.ndarray):
            return rep.dtype.type
        try:
            return np.dtype(rep).type
        except Exception:
            return default

    def sctype2char(sctype):
        """Removed in numpy 2.0: the type character of a scalar type."""
        scalar_type = obj2sctype(sctype)
        if scalar_type is None:
            raise ValueError("unrecognized type")
        return np.dtype(scalar_type).char

    def issctype(rep):
        """Removed in numpy 2.0: whether ``rep`` is a (non-object) scalar type."""
        if not isinstance(rep, (type, np.dtype)):
            return False
        scalar_type = obj2sctype(rep)
        return bool(scalar_type) and scalar_type is not np.object_

    def issubsctype(arg1, arg2):
        """Removed in numpy 2.0: ``issubclass`` of the two scalar types."""
        return issubclass(obj2sctype(arg1), obj2sctype(arg2))

    def maximum_sctype(t):
        """Removed in numpy 2.0: the scalar type of the highest precision of ``t``'s kind
        (signed or unsigned integer, float, complex); any other type is returned as it is."""
        scalar_type = obj2sctype(t)
        if scalar_type is None:
            return t
        kind = np.dtype(scalar_type).kind
        if kind not in "iufc":
            return scalar_type
        # numpy 1.x's sctypes[kind][-1]: the widest type of the kind, by its sized name
        widest = max(np.dtype(code).itemsize for code in np.typecodes["All"] if np.dtype(code).kind == kind)
        return np.dtype("%s%d" % (kind, widest)).type

    return {"obj2sctype": obj2sctype, "sctype2char": sctype2char, "issctype": issctype,
            "issubsctype": issubsctype, "maximum_sctype": maximum_sctype}


def _record_readers(np) -> dict:
    def as_records(output, usemask):
        if usemask:
            from numpy.ma.mrecords import MaskedRecords

            return output.view(MaskedRecords)
        return output.view(np.recarray)

    def recfromtxt(fname, **kwargs):
        """Removed in numpy 2.0: ``genfromtxt`` with ``dtype=None``, as a record array
        (a masked one with ``usemask=True``)."""
        kwargs.setdefault("dtype", None)
        return as_records(np.genfromtxt(fname, **kwargs), kwargs.get("usemask", False))

    def recfromcsv(fname, **kwargs):
        """Removed in numpy 2.0: ``recfromtxt`` for comma-separated files with a header
        row, the field names lower-cased."""
        kwargs.setdefault("case_sensitive", "lower")
        kwargs.setdefault("names", True)
        kwargs.setdefault("delimiter", ",")
        kwargs.setdefault("dtype", None)
        return as_records(np.genfromtxt(fname, **kwargs), kwargs.get("usemask", False))

    return {"recfromtxt": recfromtxt, "recfromcsv": recfromcsv}


def _deprecation_decorators() -> dict:
    def deprecating(function, old_name=None, new_name=None, message=None):
        old_name = old_name or function.__name__
        text = "`%s` is deprecated!" % old_name if new_name is None else \
            "`%s` is deprecated, use `%s` instead!" % (old_name, new_name)
        if message is not None:
            text += "\n" + message

        @functools.wraps(function)
        def deprecated(*args, **kwargs):
            warnings.warn(text, DeprecationWarning, stacklevel=2)
            return function(*args, **kwargs)

        deprecated.__name__ = old_name
        deprecated.__doc__ = text if function.__doc__ is None else text + "\n\n" + function.__doc__
        return deprecated

    def deprecate(*args, **kwargs):
        """Removed in numpy 2.0: ``deprecate(func, old_name=None, new_name=None, message=None)``
        wraps ``func`` to warn with a DeprecationWarning; without ``func`` it is a decorator."""
        if args:
            return deprecating(*args, **kwargs)
        return lambda function: deprecating(function, **kwargs)

    def deprecate_with_doc(msg):
        """Removed in numpy 2.0: a decorator that deprecates with ``msg`` as the message."""
        return lambda function: deprecating(function, message=msg)

    return {"deprecate": deprecate, "deprecate_with_doc": deprecate_with_doc}


def restore_numpy2_functions(np) -> None:
    def msort(a):
        """Removed in numpy 2.0: a copy sorted along the first axis."""
        return np.sort(a, axis=0)

    def fastCopyAndTranspose(a):  # noqa: N802 - numpy's own name
        """Removed in numpy 2.0: a transposed C-contiguous copy."""
        return np.asarray(a).T.copy()

    names = {
        "msort": msort,
        "fastCopyAndTranspose": fastCopyAndTranspose,
        "cast": _CastTable(np),
        "safe_eval": ast.literal_eval,
        # Moved, not removed: the table names their new homes.
        "byte_bounds": np.lib.array_utils.byte_bounds,
        # numpy.char and numpy.rec load on first use (numpy's own __getattr__): so do these.
        "compare_chararrays": Lazy(lambda: np.char.compare_chararrays),
        "format_parser": Lazy(lambda: np.rec.format_parser),
        "DataSource": np.lib.npyio.DataSource,
        "add_newdoc": np.lib.add_newdoc,
        "add_docstring": np.lib.add_docstring,
    }
    names.update(_sctype_functions(np))
    names.update(_record_readers(np))
    names.update(_deprecation_decorators())
    restore_names(np, names, "numpy.numpy2_functions")


# --- numpy 1.x modules that numpy 2.0 deleted or made private --------------------------

def _compat_names() -> dict[str, Any]:
    """numpy 1.x's numpy.compat (its py3k helpers), as numpy 1.21's py3k.py defined them."""

    def asbytes(s):
        if isinstance(s, bytes):
            return s
        return str(s).encode("latin1")

    def asstr(s):
        if isinstance(s, bytes):
            return s.decode("latin1")
        return str(s)

    def asbytes_nested(x):
        if hasattr(x, "__iter__") and not isinstance(x, (bytes, str)):
            return [asbytes_nested(y) for y in x]
        return asbytes(x)

    def asunicode_nested(x):
        if hasattr(x, "__iter__") and not isinstance(x, (bytes, str)):
            return [asunicode_nested(y) for y in x]
        return asstr(x)

    def isfileobj(f):
        return isinstance(f, (io.FileIO, io.BufferedReader, io.BufferedWriter))

    def open_latin1(filename, mode="r"):
        return open(filename, mode=mode, encoding="iso-8859-1")

    def sixu(s):
        return s

    def getexception():
        return sys.exc_info()[1]

    def is_pathlib_path(obj):
        return isinstance(obj, pathlib.Path)

    def npy_load_module(name, fn, info=None):
        """Load the Python source file ``fn`` as the module ``name`` (put in sys.modules),
        as ``SourceFileLoader(name, fn).load_module()`` did."""
        import importlib.machinery
        import importlib.util

        loader = importlib.machinery.SourceFileLoader(name, fn)
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
        sys.modules[name] = module
        loader.exec_module(module)
        return module

    return {
        "bytes": builtins.bytes, "unicode": builtins.str, "basestring": builtins.str, "long": builtins.int,
        "integer_types": (builtins.int,), "strchar": "U", "pickle": pickle, "Path": pathlib.Path,
        "os_fspath": os.fspath, "os_PathLike": os.PathLike, "contextlib_nullcontext": contextlib.nullcontext,
        "asbytes": asbytes, "asstr": asstr, "asunicode": asstr, "asbytes_nested": asbytes_nested,
        "asunicode_nested": asunicode_nested, "isfileobj": isfileobj, "open_latin1": open_latin1,
        "sixu": sixu, "getexception": getexception, "is_pathlib_path": is_pathlib_path,
        "npy_load_module": npy_load_module,
    }


def provide_compat(module) -> None:
    restore_names(module, _compat_names(), "numpy.compat")


def restore_compat_attribute(np) -> None:
    # numpy 1.x imported numpy.compat at its top level, so np.compat worked unimported.
    restore_names(np, {"compat": provided_submodule("numpy.compat")}, "numpy.compat.attribute")


# What numpy 1.21's numpy.lib re-exported from its submodules and numpy 2 keeps only at its
# top level: the same objects (numpy 1.x's np.pad was numpy.lib.pad). Its `polynomial` was
# numpy.lib.polynomial, not today's np.polynomial package, and is left out.
LIB_REEXPORTS = (
    "angle", "append", "apply_along_axis", "apply_over_axes", "array_split", "asarray_chkfinite", "average",
    "bartlett", "bincount", "blackman", "broadcast_arrays", "broadcast_shapes", "broadcast_to", "c_",
    "column_stack", "common_type", "copy", "corrcoef", "cov", "delete", "diag", "diag_indices",
    "diag_indices_from", "diagflat", "diff", "digitize", "dsplit", "dstack", "ediff1d", "emath", "expand_dims",
    "extract", "eye", "fill_diagonal", "fix", "flip", "fliplr", "flipud", "fromregex", "genfromtxt",
    "get_include", "gradient", "hamming", "hanning", "histogram", "histogram2d", "histogram_bin_edges",
    "histogramdd", "hsplit", "i0", "imag", "index_exp", "info", "insert", "interp", "intersect1d", "iscomplex",
    "iscomplexobj", "isin", "isneginf", "isposinf", "isreal", "isrealobj", "issubdtype", "iterable", "ix_",
    "kaiser", "kron", "load", "loadtxt", "mask_indices", "median", "meshgrid", "mgrid", "mintypecode",
    "nan_to_num", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian",
    "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar", "ndenumerate", "ndindex",
    "ogrid", "packbits", "pad", "percentile", "piecewise", "place", "poly", "poly1d", "polyadd", "polyder",
    "polydiv", "polyfit", "polyint", "polymul", "polysub", "polyval", "put_along_axis", "quantile", "r_",
    "ravel_multi_index", "real", "real_if_close", "roots", "rot90", "row_stack", "s_", "save", "savetxt",
    "savez", "savez_compressed", "select", "setdiff1d", "setxor1d", "sinc", "sort_complex", "split",
    "take_along_axis", "tile", "tri", "tril", "tril_indices", "tril_indices_from", "trim_zeros", "triu",
    "triu_indices", "triu_indices_from", "typename", "union1d", "unique", "unpackbits", "unravel_index",
    "unwrap", "vander", "vectorize", "vsplit",
)


def restore_lib_reexports(lib) -> None:
    np = sys.modules["numpy"]
    names = {name: getattr(np, name) for name in LIB_REEXPORTS if hasattr(np, name)}
    restore_names(lib, names, "numpy.lib.reexports")


def disp(mesg, device=None, linefeed=True) -> None:
    """Removed in numpy 2.0: write ``mesg`` to ``device`` (standard output by default),
    with a newline unless ``linefeed`` is false, and flush it."""
    if device is None:
        device = sys.stdout
    device.write("%s\n" % mesg if linefeed else "%s" % mesg)
    device.flush()


def provide_function_base(module) -> None:
    # numpy 2 keeps the module's code as numpy.lib._function_base_impl; disp went.
    from numpy.lib import _function_base_impl

    names = {name: value for name, value in vars(_function_base_impl).items() if not name.startswith("__")}
    names["disp"] = disp
    restore_names(module, names, "numpy.lib.function_base")


def restore_function_base_attribute(lib) -> None:
    restore_names(lib, {"function_base": provided_submodule("numpy.lib.function_base")},
                  "numpy.lib.function_base.attribute")


def restore_read_array_header(fmt) -> None:
    # numpy 2 left it in numpy.lib._format_impl; 1.24 only added max_header_size=, with a
    # default, so the old (fp, version) call is unchanged.
    from numpy.lib import _format_impl

    restore_names(fmt, {"_read_array_header": _format_impl._read_array_header}, "numpy.lib.format.read_array_header")


def provide_linalg_linalg(module) -> None:
    # numpy 2.0-2.3's numpy.linalg.linalg served every name of numpy.linalg._linalg (with a
    # DeprecationWarning) until numpy removed the module.
    from numpy.linalg import _linalg

    names = {name: value for name, value in vars(_linalg).items() if not name.startswith("__")}
    restore_names(module, names, "numpy.linalg.linalg")


def restore_linalg_linalg_attribute(linalg) -> None:
    restore_names(linalg, {"linalg": provided_submodule("numpy.linalg.linalg")}, "numpy.linalg.linalg.attribute")


COMPAT_BROKE = ("numpy 2.0 (2024-06) removed numpy.compat, its Python 2/3 helpers (long, unicode, asbytes, "
                "asstr, isfileobj, ...), deprecated in 1.26")
FUNCTION_BASE_BROKE = ("numpy 2.0 (2024-06) made numpy.lib.function_base private (numpy.lib._function_base_impl) "
                       "and removed its disp")
LINALG_LINALG_BROKE = ("numpy 2.0 (2024-06) made numpy.linalg.linalg private as numpy.linalg._linalg (a deprecated "
                       "stub served its names until numpy removed it)")


SHIMS = (
    Shim(
        "numpy.warnings",
        targets=["numpy"],
        requires={"numpy": ">=1.24"},
        apply=restore_warnings_module,
        restores=["warnings"],
        broke="numpy 1.24 (2022-12) no longer has np.warnings, which was the standard library's warnings "
        "module imported at numpy's top level (np.warnings.filterwarnings('ignore') in 2019-22 code)",
        summary="restore np.warnings as the standard library's warnings module",
        replacement="import warnings",
        renames={"numpy.warnings": "warnings"},
    ),
    Shim(
        "numpy.asscalar",
        targets=["numpy"],
        requires={"numpy": ">=1.23"},
        apply=restore_asscalar,
        restores=["asscalar"],
        broke="numpy 1.23 (2022-06) removed np.asscalar (deprecated in 1.16)",
        summary="restore np.asscalar(a) as a.item()",
        replacement="a.item()",
        rewrites={"numpy.asscalar": "a.item() for np.asscalar(a)"},
    ),
    Shim(
        "numpy.numpy2_functions",
        targets=["numpy"],
        requires={"numpy": ">=2.0"},
        apply=restore_numpy2_functions,
        restores=["msort", "fastCopyAndTranspose", "cast", "safe_eval", "byte_bounds", "compare_chararrays",
                  "format_parser", "DataSource", "add_newdoc", "add_docstring", "obj2sctype", "sctype2char",
                  "issctype", "issubsctype", "maximum_sctype", "recfromtxt", "recfromcsv", "deprecate",
                  "deprecate_with_doc"],
        broke="numpy 2.0 (2024-06) removed msort, cast, fastCopyAndTranspose, safe_eval, obj2sctype, "
        "maximum_sctype, recfromtxt, recfromcsv, deprecate, deprecate_with_doc, "
        "sctype2char, issctype, issubsctype and moved byte_bounds, DataSource, add_newdoc (NEP 52)",
        summary="restore them on np.sort(axis=0), astype, ast.literal_eval, np.dtype, genfromtxt, "
        "warnings.warn and their new homes",
        replacement="the replacement numpy 2's table names for each",
        renames={
            "numpy.byte_bounds": "numpy.lib.array_utils.byte_bounds",
            "numpy.compare_chararrays": "numpy.char.compare_chararrays",
            "numpy.format_parser": "numpy.rec.format_parser",
            "numpy.DataSource": "numpy.lib.npyio.DataSource",
            "numpy.add_newdoc": "numpy.lib.add_newdoc",
            "numpy.add_docstring": "numpy.lib.add_docstring",
        },
        rewrites={
            "numpy.msort": "np.sort(a, axis=0)",
            "numpy.fastCopyAndTranspose": "a.T.copy()",
            "numpy.cast": "np.asarray(a).astype(dtype) for np.cast[dtype](a)",
            "numpy.safe_eval": "ast.literal_eval",
            "numpy.obj2sctype": "np.dtype(obj).type",
            "numpy.sctype2char": "np.dtype(sctype).char",
            "numpy.issctype": "issubclass(rep, np.generic)",
            "numpy.issubsctype": "np.issubdtype",
            "numpy.maximum_sctype": "the widest type of the kind, chosen explicitly (np.float64, np.int64, ...)",
            "numpy.recfromtxt": "np.genfromtxt(fname, dtype=None, ...).view(np.recarray)",
            "numpy.recfromcsv": "np.genfromtxt(fname, delimiter=',', names=True, dtype=None, ...).view(np.recarray)",
            "numpy.deprecate": "warnings.warn(..., DeprecationWarning) in the function",
            "numpy.deprecate_with_doc": "warnings.warn(..., DeprecationWarning) in the function",
        },
    ),
    Shim(
        "numpy.builtin_aliases",
        targets=["numpy"],
        requires={"numpy": ">=1.24"},
        apply=restore_builtin_aliases,
        restores=[*BUILTIN_ALIASES, *BUILTIN_ALIASES_BEFORE_2],
        broke="numpy 1.24 (2022-12) removed np.float, np.int, np.bool, np.object, np.str, "
        "np.long, np.complex, np.unicode (deprecated in 1.20)",
        summary="restore np.float/int/object/str/complex/unicode as the builtins "
        "(and np.bool/np.long on numpy < 2 only)",
        replacement="the builtins float, int, bool, object, str, complex (np.float64 etc. where a numpy type is meant)",
        renames={**{"numpy." + name: alias.__name__ for name, alias in BUILTIN_ALIASES.items()},
                 **{"numpy." + name: alias.__name__ for name, alias in BUILTIN_ALIASES_BEFORE_2.items()}},
    ),
    Shim(
        "numpy.numpy2_aliases",
        targets=["numpy"],
        requires={"numpy": ">=2.0"},
        apply=restore_numpy2_aliases,
        restores=[*NUMPY2_ALIASES, *NUMPY2_REBUILT],
        broke="numpy 2.0 (2024-06) removed float_, complex_, string_, unicode_, NaN, Inf, "
        "product, alltrue, sctypes, find_common_type and more (NEP 52)",
        summary="restore the NEP 52 aliases as the names numpy 2 recommends",
        replacement="the names numpy 2 recommends (np.float64, np.nan, np.prod, ...)",
        renames={"numpy." + removed: "numpy." + current for removed, current in NUMPY2_ALIASES.items()},
        rewrites={
            "numpy.NINF": "-np.inf",
            "numpy.PZERO": "0.0",
            "numpy.NZERO": "-0.0",
            "numpy.issubclass_": "issubclass (issubclass_ returned False instead of raising TypeError)",
            "numpy.asfarray": "np.asarray(a, dtype=np.float64)",
            "numpy.sctypes": "an explicit list of the scalar types wanted",
            "numpy.find_common_type": "np.result_type / np.promote_types",
        },
    ),
    Shim(
        "numpy.numpy24_removals",
        targets=["numpy"],
        requires={"numpy": ">=2.4"},
        apply=restore_numpy24_removals,
        restores=["in1d", "trapz"],
        broke="numpy 2.4 (2025-12) removed in1d and trapz",
        summary="restore np.in1d (flattened isin) and np.trapz (trapezoid)",
        replacement="np.isin(a, b).ravel() and np.trapezoid",
        renames={"numpy.trapz": "numpy.trapezoid"},
        rewrites={"numpy.in1d": "np.isin(a, b).ravel() (isin keeps the input's shape)"},
    ),
    Shim(
        "numpy.compat",
        targets=["numpy.compat"],
        kind=PROVIDE,
        requires={"numpy": ">=2.0"},
        apply=provide_compat,
        broke=COMPAT_BROKE,
        summary="provide numpy.compat with numpy 1.x's names (long, unicode, basestring, integer_types, asbytes, "
        "asstr, asunicode, isfileobj, open_latin1, os_fspath, Path, npy_load_module, ...)",
        replacement="the builtins and the standard library (int, str, bytes, os.fspath, pathlib.Path)",
        rewrites={"numpy.compat": "the builtins and the standard library (int for long, str for unicode)"},
    ),
    Shim(
        "numpy.compat.attribute",
        targets=["numpy"],
        requires={"numpy": ">=2.0"},
        apply=restore_compat_attribute,
        restores=["compat"],
        broke=COMPAT_BROKE,
        summary="restore np.compat as an attribute (the provided module), as numpy 1.x imported it",
        replacement="the builtins and the standard library (int for np.compat.long)",
        renames={"numpy.compat.long": "int", "numpy.compat.unicode": "str", "numpy.compat.basestring": "str"},
        rewrites={"numpy.compat": "the builtins and the standard library (int for long, str for unicode)"},
    ),
    Shim(
        "numpy.lib.reexports",
        targets=["numpy.lib"],
        requires={"numpy": ">=2.0"},
        apply=restore_lib_reexports,
        restores=LIB_REEXPORTS,
        broke="numpy 2.0 (2024-06) cut numpy.lib down to a few submodules: np.lib.pad, np.lib.tile, "
        "np.lib.emath and the other functions numpy 1.x's numpy.lib re-exported are AttributeErrors",
        summary="restore numpy 1.x's numpy.lib re-exports as the top-level functions they were",
        replacement="the same names on numpy itself (np.pad, np.tile, np.emath, ...)",
        renames={"numpy.lib." + name: "numpy." + name for name in LIB_REEXPORTS},
    ),
    Shim(
        "numpy.lib.function_base",
        targets=["numpy.lib.function_base"],
        kind=PROVIDE,
        requires={"numpy": ">=2.0"},
        apply=provide_function_base,
        broke=FUNCTION_BASE_BROKE,
        summary="provide numpy.lib.function_base with the names of numpy.lib._function_base_impl, and disp",
        replacement="the same functions on numpy itself; print(mesg) for disp(mesg)",
        rewrites={"numpy.lib.function_base.disp": "print(mesg)",
                  "numpy.lib.function_base": "numpy (the functions are public there)"},
    ),
    Shim(
        "numpy.lib.function_base.attribute",
        targets=["numpy.lib"],
        requires={"numpy": ">=2.0"},
        apply=restore_function_base_attribute,
        restores=["function_base"],
        broke=FUNCTION_BASE_BROKE,
        summary="restore np.lib.function_base as an attribute (the provided module)",
        replacement="the same functions on numpy itself",
        rewrites={"numpy.lib.function_base": "numpy (the functions are public there)"},
    ),
    Shim(
        "numpy.lib.format.read_array_header",
        targets=["numpy.lib.format"],
        requires={"numpy": ">=2.0"},
        apply=restore_read_array_header,
        restores=["_read_array_header"],
        broke="numpy 2.0 (2024-06) turned numpy.lib.format into a re-export of the private "
        "numpy.lib._format_impl without its private _read_array_header(fp, version), which .npy readers called",
        summary="restore numpy.lib.format._read_array_header as numpy.lib._format_impl's, the same function",
        replacement="numpy.lib.format.read_magic(fp) then read_array_header_1_0(fp) / read_array_header_2_0(fp)",
        rewrites={"numpy.lib.format._read_array_header": "numpy.lib.format.read_array_header_1_0 / _2_0"},
    ),
    Shim(
        "numpy.linalg.linalg",
        targets=["numpy.linalg.linalg"],
        kind=PROVIDE,
        requires={"numpy": ">=2.0"},
        apply=provide_linalg_linalg,
        broke=LINALG_LINALG_BROKE,
        summary="provide numpy.linalg.linalg with the names of numpy.linalg._linalg (svd, norm, LinAlgError, ...)",
        replacement="numpy.linalg (numpy.linalg.svd is the same function)",
        rewrites={"numpy.linalg.linalg": "numpy.linalg"},
    ),
    Shim(
        "numpy.linalg.linalg.attribute",
        targets=["numpy.linalg"],
        requires={"numpy": ">=2.0"},
        apply=restore_linalg_linalg_attribute,
        restores=["linalg"],
        broke=LINALG_LINALG_BROKE,
        summary="restore np.linalg.linalg as an attribute (the provided module)",
        replacement="numpy.linalg",
        rewrites={"numpy.linalg.linalg": "numpy.linalg"},
    ),
)

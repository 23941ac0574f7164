"""numpy.asscalar and numpy.numpy2_functions against the real numpy 2.x: each name is
missing with compatfix off and behaves as numpy 1.x documented it with compatfix on."""

from __future__ import annotations

import json

import pytest

from support import run_python

NUMPY2_FUNCTIONS = [
    "msort", "cast", "fastCopyAndTranspose", "safe_eval", "obj2sctype", "sctype2char", "issctype",
    "issubsctype", "byte_bounds", "compare_chararrays", "format_parser", "DataSource", "add_newdoc",
    "add_docstring", "maximum_sctype", "recfromtxt", "recfromcsv", "deprecate", "deprecate_with_doc",
]


def missing(names, compatfix):
    result = run_python(
        code="import numpy as np\nprint(' '.join(n for n in %r if not hasattr(np, n)))" % (names,),
        compatfix=compatfix,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.stack("modern", "numpy1")
def test_asscalar_is_item():
    assert missing(["asscalar"], compatfix=False) == ["asscalar"]
    result = run_python(
        code="""
        import numpy as np
        value = np.asscalar(np.array([2.5], dtype=np.float32))
        print(type(value).__name__, value, type(np.asscalar(np.int64(7))).__name__)
        """
    )
    # numpy 1.16 docs: asscalar(a) is a.item(), a Python scalar.
    assert result.stdout.split() == ["float", "2.5", "int"], result.stderr


def test_numpy2_functions_are_restored_with_the_numpy1_meaning():
    assert missing(NUMPY2_FUNCTIONS, compatfix=False) == NUMPY2_FUNCTIONS
    assert missing(NUMPY2_FUNCTIONS, compatfix=True) == []
    result = run_python(
        code="""
        import numpy as np
        a = np.array([[3, 1], [1, 2], [2, 3]])
        # msort(a): "Return a copy of an array sorted along the first axis".
        assert np.msort(a).tolist() == [[1, 1], [2, 2], [3, 3]]
        t = np.fastCopyAndTranspose(a)
        assert t.tolist() == [[3, 1, 2], [1, 2, 3]] and t.flags.c_contiguous
        c = np.cast[np.float32]([1, 2])
        assert c.dtype == np.float32 and c.tolist() == [1.0, 2.0]
        assert np.safe_eval("{'a': [1, 2]}") == {"a": [1, 2]}
        assert np.obj2sctype(np.zeros(2, dtype=np.int16)) is np.int16
        assert np.obj2sctype("not a type", default=7) == 7
        assert np.sctype2char(np.float64) == "d"
        assert np.issctype(np.int32) and not np.issctype(np.object_) and not np.issctype(1.0)
        assert np.issubsctype(np.float32, np.floating) and not np.issubsctype(np.int8, np.floating)
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr


def test_the_numpy2_record_readers_widest_types_and_deprecation_helpers_keep_numpy1_meanings():
    result = run_python(code="""
        import io, json, warnings
        import numpy as np
        out = {}
        # numpy 1.26's sctypes lists end with these (sctypes['int'][-1] is int64, ...)
        out["widest"] = [np.maximum_sctype(t) is want for t, want in (
            (np.int8, np.int64), (np.uint16, np.uint64), (np.float32, np.longdouble), ("f4", np.longdouble),
            (np.complex64, np.clongdouble), (np.bool_, np.bool_), (np.str_, np.str_))]
        text = np.recfromtxt(io.StringIO("1 2.5\\n3 4.5"))
        want = np.genfromtxt(io.StringIO("1 2.5\\n3 4.5"), dtype=None).view(np.recarray)
        out["recfromtxt"] = [type(text).__name__, text.dtype == want.dtype, text.f0.tolist(), text.f1.tolist()]
        csv = np.recfromcsv(io.StringIO("Width,Label\\n3,7\\n5,9"))
        out["recfromcsv"] = [type(csv).__name__, list(csv.dtype.names), csv.width.tolist(), csv.label.tolist()]
        masked = np.recfromcsv(io.StringIO("a,b\\n1,\\n2,4"), usemask=True)
        out["masked"] = [type(masked).__name__, masked.b.mask.tolist()]

        def old(x):
            "doubles x"
            return 2 * x
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = np.deprecate(old, new_name="new")(21)
            decorated = np.deprecate(message="gone soon")(old)
            decorated(1)
            np.deprecate_with_doc("use new")(old)(1)
        out["deprecate"] = [value, [(w.category.__name__, str(w.message)) for w in caught],
                            decorated.__doc__.splitlines()[:2], decorated.__name__]
        print(json.dumps(out))
        """)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "widest": [True] * 7,
        "recfromtxt": ["recarray", True, [1, 3], [2.5, 4.5]],
        "recfromcsv": ["recarray", ["width", "label"], [3, 5], [7, 9]],
        "masked": ["MaskedRecords", [True, False]],
        "deprecate": [42, [["DeprecationWarning", "`old` is deprecated, use `new` instead!"],
                           ["DeprecationWarning", "`old` is deprecated!\ngone soon"],
                           ["DeprecationWarning", "`old` is deprecated!\nuse new"]],
                      ["`old` is deprecated!", "gone soon"], "old"],
    }

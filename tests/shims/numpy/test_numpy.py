"""numpy.asscalar and numpy.numpy2_functions against the real numpy 2.x: each name is
missing with compatfix off and behaves as numpy 1.x documented it with compatfix on."""

from __future__ import annotations

import pytest

from support import run_python

NUMPY2_FUNCTIONS = [
    "msort", "cast", "fastCopyAndTranspose", "safe_eval", "obj2sctype", "sctype2char", "issctype",
    "issubsctype", "byte_bounds", "compare_chararrays", "format_parser", "DataSource", "add_newdoc",
    "add_docstring",
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

"""numpy's removed aliases, against the real numpy: each name fails with compatfix off
and works (with the right meaning) with it on. numpy 2.x runs on the "modern" stack,
numpy 1.26 on the "numpy1" stack."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

BUILTIN = ["float", "int", "object", "str", "complex", "unicode"]
NUMPY2 = [
    "float_", "complex_", "cfloat", "string_", "unicode_", "NaN", "NAN", "Inf", "infty", "PINF",
    "NINF", "product", "cumproduct", "alltrue", "sometrue", "round_", "bool8", "int0", "uint0",
    "object0", "str0", "bytes0", "void0", "mat", "issubclass_", "row_stack", "asfarray",
    "sctypes", "find_common_type",
]
NUMPY24 = ["in1d", "trapz"]


def missing_names(names, compatfix):
    result = run_python(
        code="import numpy as np\nprint(' '.join(n for n in %r if not hasattr(np, n)))" % (names,),
        compatfix=compatfix,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.stack("modern", "numpy1")
def test_builtin_aliases_removed_in_1_24_are_restored():
    assert missing_names(BUILTIN, compatfix=False) == BUILTIN
    assert missing_names(BUILTIN, compatfix=True) == []
    result = run_python(
        code="""
        import numpy as np
        assert np.float is float and np.int is int and np.object is object
        assert np.str is str and np.complex is complex and np.unicode is str
        print(np.zeros(2).astype(np.int).dtype, np.array([1.5], dtype=np.float).dtype)
        """
    )
    assert result.stdout.split() == ["int64", "float64"], result.stderr


def test_numpy2_keeps_its_own_bool_and_long():
    result = run_python(code="import numpy as np; print(np.bool is np.bool_, np.long is float, np.long is int)")
    assert result.stdout.split() == ["True", "False", "False"], result.stderr


@pytest.mark.stack("numpy1")
def test_bool_and_long_are_restored_on_numpy_1_x():
    assert missing_names(["bool", "long"], compatfix=False) == ["bool", "long"]
    result = run_python(code="import numpy as np; print(np.__version__, np.bool is bool, np.long is int)")
    assert result.stdout.split()[1:] == ["True", "True"], result.stderr


@pytest.mark.stack("numpy1")
def test_numpy2_aliases_are_not_needed_on_numpy_1_x(tmp_path):
    # numpy 1.26 still has them: the shim is skipped, nothing is overwritten. (np.float,
    # which 1.26 lacks, is the first use that has numpy's shims decided.)
    report = tmp_path / "r.json"
    result = run_python(
        code="import numpy as np; np.float; print(np.float_ is np.float64)",
        env=clean_env(COMPATFIX_REPORT=str(report)),
    )
    assert result.stdout.split() == ["True"], result.stderr
    skipped = {s["shim"] for s in json.loads(report.read_text())["processes"][0]["skipped"]}
    assert {"numpy.numpy2_aliases", "numpy.numpy24_removals"} <= skipped


def test_numpy2_aliases_are_restored_with_their_old_meaning():
    # row_stack is only deprecated up to numpy 2.4 (removed later): it must stay numpy's.
    assert missing_names(NUMPY2, compatfix=False) == [n for n in NUMPY2 if n != "row_stack"]
    assert missing_names(NUMPY2, compatfix=True) == []
    result = run_python(
        code="""
        import math, numpy as np
        assert np.float_ is np.float64 and np.complex_ is np.complex128 and np.cfloat is np.complex128
        assert np.string_ is np.bytes_ and np.unicode_ is np.str_ and np.bool8 is np.bool_
        assert math.isnan(np.NaN) and math.isnan(np.NAN)
        assert np.Inf == np.infty == np.PINF == math.inf and np.NINF == -math.inf
        assert np.product([2, 3]) == 6 and list(np.cumproduct([2, 3])) == [2, 6]
        assert np.alltrue([True, True]) and np.sometrue([False, True]) and np.round_(1.26, 1) == 1.3
        assert np.int0 is np.intp and np.uint0 is np.uintp and np.object0 is np.object_
        assert np.str0 is np.str_ and np.bytes0 is np.bytes_ and np.void0 is np.void
        assert isinstance(np.mat([[1, 2]]), np.matrix) and np.issubclass_(bool, int)
        assert np.row_stack([[1], [2]]).shape == (2, 1)
        assert np.asfarray([1, 2]).dtype == np.float64 and np.asfarray([1], dtype=np.float32).dtype == np.float32
        assert np.asfarray([1], dtype=np.int32).dtype == np.float64
        assert np.float32 in np.sctypes["float"] and np.int8 in np.sctypes["int"] and bool in np.sctypes["others"]
        assert np.find_common_type([np.float32], [np.int64, np.float64]) == np.float32
        assert np.find_common_type([np.float32], [complex]) == np.complex128
        assert np.find_common_type([np.int8, np.int16], []) == np.int16
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr


def test_numpy24_removals_are_restored():
    import numpy

    if tuple(int(p) for p in numpy.__version__.split(".")[:2]) < (2, 4):
        pytest.fail("the modern stack must have numpy >= 2.4 to test this shim")
    assert missing_names(NUMPY24, compatfix=False) == NUMPY24
    result = run_python(
        code="""
        import numpy as np
        print(np.in1d([[1, 2], [3, 4]], [2, 3]).tolist(), np.trapz([1, 2, 3]))
        """
    )
    assert result.stdout.strip() == "[False, True, True, False] 4.0", result.stderr


def test_restored_names_are_plain_attributes_outside_report_mode():
    # numpy's shims only restore names, so they apply at the first use of one of them
    # (the engine's first-use __getattr__), all at once; then they are plain attributes.
    result = run_python(code="""
        import numpy as np
        print('float' in vars(np), 'float_' in vars(np))
        np.float
        print('float' in vars(np), 'float_' in vars(np))
        """)
    assert result.stdout.split() == ["False", "False", "True", "True"], result.stderr

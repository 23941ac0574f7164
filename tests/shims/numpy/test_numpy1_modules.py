"""numpy 1.x's modules and submodule names that numpy 2 deleted or made private:
numpy.compat, numpy.lib's re-exports (np.lib.pad), numpy.lib.function_base (disp),
numpy.lib.format._read_array_header and numpy.linalg.linalg, against the real numpy 2.4
and 2.5 of the "modern" and "py312" stacks. Expected values come from numpy 1.21's
definitions, written out here, or from numpy's own public functions, not from the shim."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern", "py312")

SHIMS = ("numpy.compat", "numpy.compat.attribute", "numpy.lib.reexports", "numpy.lib.function_base",
         "numpy.lib.function_base.attribute", "numpy.lib.format.read_array_header", "numpy.linalg.linalg",
         "numpy.linalg.linalg.attribute")
USES = [
    "np.compat.long",
    "from numpy.compat import asbytes",
    "np.lib.pad",
    "np.lib.emath",
    "np.lib.function_base.disp",
    "from numpy.lib.function_base import disp",
    "np.lib.format._read_array_header",
    "np.linalg.linalg.svd",
    "from numpy.linalg.linalg import LinAlgError",
]
PROBE = """
import numpy as np
for use in %r:
    try:
        exec(use) if use.startswith("from") else eval(use)
    except (ImportError, AttributeError):
        print("missing")
    else:
        print("present")
""" % (USES,)


@pytest.mark.parametrize("env", [clean_env(False), clean_env(COMPATFIX_DISABLE=",".join(SHIMS))],
                         ids=["compatfix-off", "these-shims-disabled"])
def test_the_numpy_1_names_are_missing_without_the_shims(env):
    result = run_python(code=PROBE, env=env)
    assert result.stdout.split() == ["missing"] * len(USES), result.stderr[-2000:]


def test_they_are_present_with_the_shims():
    result = run_python(code=PROBE)
    assert result.stdout.split() == ["present"] * len(USES), result.stderr[-2000:]


def test_numpy_compat_has_numpy_1_s_meanings(tmp_path):
    source = tmp_path / "plugin.py"
    source.write_text("VALUE = 42\n")
    result = run_python(code="""
        import io, os, pathlib, sys
        import numpy as np
        from numpy.compat import (asbytes, asstr, asunicode, asbytes_nested, basestring, integer_types,
                                  is_pathlib_path, isfileobj, long, npy_load_module, os_fspath, unicode)
        assert long is int and unicode is str and basestring is str and integer_types == (int,)
        assert np.compat.long is long and os_fspath is os.fspath
        # numpy 1.21's py3k: latin-1 both ways, and str() of anything else
        assert asbytes("caf\\xe9") == b"caf\\xe9" and asbytes(b"x") == b"x" and asbytes(3) == b"3"
        assert asstr(b"caf\\xe9") == "caf\\xe9" == asunicode(b"caf\\xe9") and asstr(3) == "3"
        assert asbytes_nested(["a", ["b"]]) == [b"a", [b"b"]]
        assert is_pathlib_path(pathlib.Path(".")) and not is_pathlib_path(".")
        with open(sys.executable, "rb") as binary:
            assert isfileobj(binary) and not isfileobj(io.BytesIO())
        module = npy_load_module("compatfix_test_plugin", %r)
        assert module.VALUE == 42 and sys.modules["compatfix_test_plugin"] is module
        print("ok")
        """ % (str(source),))
    assert result.stdout.split() == ["ok"], result.stderr[-2000:]


def test_lib_function_base_and_linalg_linalg_are_numpy_s_functions():
    result = run_python(code="""
        import io, numpy as np
        import numpy.lib.function_base as function_base
        from numpy.linalg import linalg
        assert np.lib.pad is np.pad and np.lib.tile is np.tile and np.lib.emath is np.emath
        assert function_base.median is np.median and function_base.percentile is np.percentile
        assert linalg.svd is np.linalg.svd and linalg.LinAlgError is np.linalg.LinAlgError
        # numpy 1.x's disp: the message and a newline unless linefeed=False, to the device
        out = io.StringIO()
        function_base.disp("one", device=out)
        function_base.disp(2, device=out, linefeed=False)
        assert out.getvalue() == "one\\n2", out.getvalue()
        print(np.lib.pad(np.array([1, 2]), 1).tolist())
        """)
    assert result.stdout.split() == ["[0,", "1,", "2,", "0]"], result.stderr[-2000:]


def test_read_array_header_reads_a_npy_header():
    result = run_python(code="""
        import io, numpy as np
        from numpy.lib import format
        buffer = io.BytesIO()
        np.save(buffer, np.zeros((2, 3), dtype=">i2", order="F"))
        buffer.seek(0)
        version = format.read_magic(buffer)
        # numpy 1.x: (shape, fortran_order, dtype), the file left at the data
        shape, fortran_order, dtype = format._read_array_header(buffer, version)
        print(version, shape, fortran_order, dtype.str, buffer.tell() % 64 == 0)
        """)
    assert result.stdout.strip() == "(1, 0) (2, 3) True >i2 True", result.stderr[-2000:]

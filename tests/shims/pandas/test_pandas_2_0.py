"""The pandas shims at the lower end of their ranges: pandas 2.0.3 (the numpy1 stack), the
first release line without DataFrame/Series.append, iteritems, read_csv's squeeze and
pandas.util.testing. Those shims must apply there; read_csv's delim_whitespace still
exists in 2.0 (it went in 3.0), so its shim must leave pandas' own keyword alone. The
modern stack's pandas 3 is the upper end (test_pandas.py, test_read_csv_and_util_testing.py)."""

from __future__ import annotations

import json

import pytest

from support import run_python

pytestmark = pytest.mark.stack("numpy1")

CALLS = """
import io, json
import pandas as pd
out = {"version": pd.__version__,
       "append": [hasattr(c, n) for c in (pd.DataFrame, pd.Series) for n in ("append", "iteritems")]}
try:
    out["squeeze"] = type(pd.read_csv(io.StringIO("a\\n1\\n2\\n"), squeeze=True)).__name__
except TypeError:
    out["squeeze"] = "TypeError"
try:
    import pandas.util.testing
    out["util.testing"] = pandas.util.testing.assert_frame_equal is pd.testing.assert_frame_equal
except ImportError:
    out["util.testing"] = "ImportError"
spaced = pd.read_csv(io.StringIO("a  b\\tc\\n1 2   3\\n"), delim_whitespace=True)
out["delim_whitespace"] = [spaced.columns.tolist(), spaced.values.tolist()]
if out["append"][0]:
    frame = pd.DataFrame({"a": [1], "b": [2]})
    out["appended"] = frame.append(pd.DataFrame({"a": [3], "b": [4]}), ignore_index=True).values.tolist()
print(json.dumps(out))
"""


def _run(compatfix: bool) -> dict:
    result = run_python(code=CALLS, compatfix=compatfix)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_pandas_2_0_lacks_what_the_shims_restore():
    found = _run(compatfix=False)
    assert found["version"].startswith("2.0."), found
    assert found["append"] == [False, False, False, False]
    assert found["squeeze"] == "TypeError" and found["util.testing"] == "ImportError"
    # pandas' own delim_whitespace, which the shim must not replace here
    assert found["delim_whitespace"] == [["a", "b", "c"], [[1, 2, 3]]]


def test_the_2_0_shims_apply_and_delim_whitespace_is_left_to_pandas():
    found = _run(compatfix=True)
    assert found["append"] == [True, True, True, True]
    assert found["squeeze"] == "Series" and found["util.testing"] is True
    # pd.concat of the two rows, as pandas 1.x's append documented it
    assert found["appended"] == [[1, 2], [3, 4]]
    assert found["delim_whitespace"] == [["a", "b", "c"], [[1, 2, 3]]]
    listed = run_python(code="from compatfix.cli import main\nraise SystemExit(main(['list', '--json']))")
    assert listed.returncode == 0, listed.stderr[-3000:]
    shims = {shim["name"]: shim for shim in json.loads(listed.stdout)}
    assert shims["pandas.read_csv.delim_whitespace"]["applies"] is False
    assert shims["pandas.read_csv.delim_whitespace"]["why"] == "pandas %s is outside >=3.0" % found["version"]
    for name in ("pandas.append", "pandas.iteritems", "pandas.read_csv.squeeze", "pandas.util.testing"):
        assert shims[name]["applies"] is True, name

"""read_csv/read_table's squeeze (removed in pandas 2.0) and delim_whitespace (removed in
3.0), and the pandas.util.testing module (removed in 2.0), against the real pandas 3 of
the stack: TypeErrors and a missing module with compatfix off; with it on, what pandas
1.3's documentation says: squeeze=True returns a one-column result as that column (a
Series, the column's name as its name), delim_whitespace=True splits on runs of spaces
and tabs, and pandas.util.testing's asserts are pandas.testing's."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern")

CALLS = """
import io, inspect
import pandas as pd
for call in (lambda: pd.read_csv(io.StringIO("a\\n1\\n"), squeeze=True),
             lambda: pd.read_csv(io.StringIO("a b\\n1 2\\n"), delim_whitespace=True)):
    try:
        call()
        print("accepted")
    except TypeError:
        print("TypeError")
print(sorted(n for n in ("squeeze", "delim_whitespace") if n in inspect.signature(pd.read_csv).parameters))
try:
    from pandas.util.testing import assert_frame_equal
    print("module")
except ImportError:
    print("no module")
"""


def test_missing_without_compatfix():
    result = run_python(code=CALLS, compatfix=False)
    assert result.stdout.split("\n")[:4] == ["TypeError", "TypeError", "[]", "no module"], result.stderr[-2000:]


def test_each_shim_is_its_own():
    for disabled, expected in [
        ("pandas.read_csv.squeeze", ["TypeError", "accepted", "['delim_whitespace']", "module"]),
        ("pandas.read_csv.delim_whitespace", ["accepted", "TypeError", "['squeeze']", "module"]),
        ("pandas.util.testing", ["accepted", "accepted", "['delim_whitespace', 'squeeze']", "no module"]),
    ]:
        result = run_python(code=CALLS, env=clean_env(COMPATFIX_DISABLE=disabled))
        assert result.stdout.split("\n")[:4] == expected, (disabled, result.stderr[-2000:])
    result = run_python(code="import pandas.util\nprint(hasattr(pandas.util, 'testing'))",
                        env=clean_env(COMPATFIX_DISABLE="pandas.util.testing.attribute"))
    assert result.stdout.split() == ["False"], result.stderr[-2000:]


def test_squeeze_and_delim_whitespace_keep_their_meaning():
    result = run_python(
        code="""
        import io
        import pandas as pd
        from pandas.io.parsers import read_csv as parsers_read_csv

        one = "value\\n1\\n2\\n3\\n"
        series = pd.read_csv(io.StringIO(one), squeeze=True)
        assert isinstance(series, pd.Series) and series.name == "value" and series.tolist() == [1, 2, 3]
        assert isinstance(parsers_read_csv(io.StringIO(one), squeeze=True), pd.Series)
        assert isinstance(pd.read_table(io.StringIO(one), squeeze=True), pd.Series)
        indexed = pd.read_csv(io.StringIO("key,value\\na,1\\nb,2\\n"), index_col=0, squeeze=True)
        assert isinstance(indexed, pd.Series) and indexed.to_dict() == {"a": 1, "b": 2}
        two = pd.read_csv(io.StringIO("a,b\\n1,2\\n"), squeeze=True)
        assert isinstance(two, pd.DataFrame) and two.columns.tolist() == ["a", "b"]
        assert isinstance(pd.read_csv(io.StringIO(one), squeeze=False), pd.DataFrame)
        assert isinstance(pd.read_csv(io.StringIO(one)), pd.DataFrame)
        chunks = list(pd.read_csv(io.StringIO(one), squeeze=True, chunksize=2))
        assert [type(c).__name__ for c in chunks] == ["Series", "Series"] and chunks[1].tolist() == [3]

        spaced = "a  b\\tc\\n1 2   3\\n4\\t5 6\\n"
        frame = pd.read_csv(io.StringIO(spaced), delim_whitespace=True)
        assert frame.columns.tolist() == ["a", "b", "c"] and frame.values.tolist() == [[1, 2, 3], [4, 5, 6]]
        assert pd.read_table(io.StringIO(spaced), delim_whitespace=True).values.tolist() == [[1, 2, 3], [4, 5, 6]]
        assert pd.read_csv(io.StringIO("a b\\n1 2\\n"), delim_whitespace=False).columns.tolist() == ["a b"]
        try:
            pd.read_csv(io.StringIO(spaced), delim_whitespace=True, sep=",")
        except ValueError:
            pass
        else:
            raise AssertionError("sep and delim_whitespace together must be a ValueError")
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_util_testing_is_pandas_testing():
    result = run_python(
        code="""
        import pandas as pd
        import pandas.testing
        import pandas.util.testing as tm
        from pandas.util.testing import assert_frame_equal, assert_series_equal
        assert assert_frame_equal is pandas.testing.assert_frame_equal and pd.util.testing is tm
        assert_frame_equal(pd.DataFrame({"a": [1]}), pd.DataFrame({"a": [1]}))
        try:
            assert_series_equal(pd.Series([1]), pd.Series([2]))
        except AssertionError:
            print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]

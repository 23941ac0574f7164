"""DataFrame/Series.append and iteritems (removed in pandas 2.0) against the real pandas
of the stack (3.x): missing with compatfix off; with it on, the results that pandas
1.3's documentation and rules give, written out here by hand, and those that the real
pandas 1.3.5 gave for the same calls (recorded once, on Python 3.9, where it installs)."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern")


PRESENT = "import pandas as pd\nprint([hasattr(c, n) for c in (pd.DataFrame, pd.Series) for n in ('append', 'iteritems')])"


def test_append_and_iteritems_are_missing_without_compatfix():
    result = run_python(code=PRESENT, compatfix=False)
    assert result.stdout.strip() == "[False, False, False, False]", result.stderr[-2000:]
    # each shim restores its own pair, and only that
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE="pandas.append"))
    assert result.stdout.strip() == "[False, True, False, True]", result.stderr[-2000:]
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE="pandas.iteritems"))
    assert result.stdout.strip() == "[True, False, True, False]", result.stderr[-2000:]


def test_dataframe_append_follows_pandas_1_3():
    result = run_python(
        code="""
        import pandas as pd

        def rows(frame):
            return [frame.index.tolist(), frame.columns.tolist(), frame.values.tolist()]

        df = pd.DataFrame([[1, 2], [3, 4]], columns=list("AB"), index=["x", "y"])
        df2 = pd.DataFrame([[5, 6], [7, 8]], columns=list("AB"), index=["x", "y"])
        # the docstring's examples
        assert rows(df.append(df2)) == [["x", "y", "x", "y"], ["A", "B"], [[1, 2], [3, 4], [5, 6], [7, 8]]]
        assert rows(df.append(df2, ignore_index=True))[0] == [0, 1, 2, 3]
        grown = pd.DataFrame(columns=["A"])
        for i in range(5):
            grown = grown.append({"A": i}, ignore_index=True)
        assert grown["A"].tolist() == [0, 1, 2, 3, 4] and grown.index.tolist() == [0, 1, 2, 3, 4]
        # a dict row: its new columns after the frame's, sorted (Index.difference)
        row = df.append({"B": 9, "D": 1, "C": 0, "A": 8}, ignore_index=True)
        assert row.columns.tolist() == ["A", "B", "C", "D"] and row.iloc[2].tolist() == [8, 9, 0, 1]
        assert row["C"].isna().tolist() == [True, True, False]
        # a named Series: its name is the new row's label
        named = df.append(pd.Series({"A": 0, "B": -1}, name="z"))
        assert rows(named) == [["x", "y", "z"], ["A", "B"], [[1, 2], [3, 4], [0, -1]]]
        # a list of dicts is one frame
        listed = df.append([{"A": 10, "B": 11}, {"A": 12, "B": 13}], ignore_index=True)
        assert listed.values.tolist() == [[1, 2], [3, 4], [10, 11], [12, 13]]
        # a list of frames
        assert len(df.append([df2, df2])) == 6
        # sort=True sorts the union of columns that are not aligned
        other = pd.DataFrame({"C": [1], "A": [2]})
        assert df.append(other, sort=True).columns.tolist() == ["A", "B", "C"]
        assert df.append(other).columns.tolist() == ["A", "B", "C"]
        failures = []
        for call in (lambda: df.append({"A": 1}), lambda: df.append(pd.Series({"A": 1})),
                     lambda: df.append(df2, verify_integrity=True)):
            try:
                call()
            except (TypeError, ValueError) as exc:
                failures.append(type(exc).__name__)
        assert failures == ["TypeError", "TypeError", "ValueError"], failures
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_series_append_and_iteritems():
    result = run_python(
        code="""
        import pandas as pd
        s1, s2, s3 = pd.Series([1, 2, 3]), pd.Series([4, 5, 6]), pd.Series([4, 5, 6], index=[3, 4, 5])
        # the docstring's examples
        assert s1.append(s2).index.tolist() == [0, 1, 2, 0, 1, 2] and s1.append(s2).tolist() == [1, 2, 3, 4, 5, 6]
        assert s1.append(s3).index.tolist() == [0, 1, 2, 3, 4, 5]
        assert s1.append(s2, ignore_index=True).index.tolist() == [0, 1, 2, 3, 4, 5]
        assert s1.append([s2, s3]).tolist() == [1, 2, 3, 4, 5, 6, 4, 5, 6]
        errors = []
        for call in (lambda: s1.append(s2, verify_integrity=True), lambda: s1.append(pd.DataFrame({"a": [1]}))):
            try:
                call()
            except (TypeError, ValueError) as exc:
                errors.append(type(exc).__name__)
        assert errors == ["ValueError", "TypeError"], errors
        df = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
        assert [(k, v.tolist()) for k, v in df.iteritems()] == [("a", [1, 2]), ("b", [3, 4])]
        assert list(pd.Series([7, 8], index=["p", "q"]).iteritems()) == [("p", 7), ("q", 8)]
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


# Recorded from the real pandas 1.3.5 (Python 3.9, numpy 1.23) running CASES' set-up:
# index, columns, dtypes and values of each result. pandas 3 names the dtype of text
# columns "str" where 1.3 said "object"; that is pandas' own string dtype, not append's.
PANDAS_1_3_5 = {
    'empty_cols': [[0], ['A'], ['object'], [[1]]],
    'empty_dict': [[0], ['x', 'y'], ['float64', 'object'], [[1.0, 'u']]],
    'frame_nosort': [   ['x', 'y', 0],
                        ['A', 'B', 'C'],
                        ['int64', 'float64', 'float64'],
                        [[1, 2.0, None], [3, 4.0, None], [2, None, 1.0]]],
    'frame_sort': [   ['x', 'y', 0],
                      ['A', 'B', 'C'],
                      ['int64', 'float64', 'float64'],
                      [[1, 2.0, None], [3, 4.0, None], [2, None, 1.0]]],
    'index_name': [['r', 'q'], ['v'], ['int64'], [[1], [2]]],
    'index_name_rows': ['key'],
    'list_dicts': [   [0, 1, 2, 3],
                      ['A', 'B', 'C'],
                      ['float64', 'float64', 'float64'],
                      [[1.0, 2.0, None], [3.0, 4.0, None], [10.0, 11.0, None], [None, None, 12.0]]],
    'mixed_types': [[0, 1], ['n', 's'], ['float64', 'object'], [[1.0, 'a'], [2.5, 'b']]],
    'named': [['x', 'y', 'z'], ['A', 'B'], ['int64', 'int64'], [[1, 2], [3, 4], [0, -1]]],
    'named_float': [   ['x', 'y', 'z'],
                       ['A', 'B'],
                       ['float64', 'float64'],
                       [[1.0, 2.0], [3.0, 4.0], [0.5, None]]],
    'new_cols': [   [0, 1, 2],
                    ['A', 'B', 'C', 'D'],
                    ['int64', 'int64', 'float64', 'float64'],
                    [[1, 2, None, None], [3, 4, None, None], [8, 9, 0.0, 1.0]]],
    'series': [[0, 1, 0], [1.0, 2.0, 3.5], 'float64']}

CASES = """
import json, warnings
warnings.simplefilter("ignore")
import pandas as pd

def show(f):
    dtypes = ["object" if str(t) == "str" else str(t) for t in f.dtypes]
    return [f.index.tolist(), [str(c) for c in f.columns], dtypes, f.astype(object).where(f.notna(), None).values.tolist()]

cases = {}
df = pd.DataFrame([[1, 2], [3, 4]], columns=list("AB"), index=["x", "y"])
cases["empty_dict"] = show(pd.DataFrame().append({"x": 1, "y": "u"}, ignore_index=True))
cases["empty_cols"] = show(pd.DataFrame(columns=["A"]).append({"A": 1}, ignore_index=True))
cases["new_cols"] = show(df.append({"B": 9, "D": 1, "C": 0, "A": 8}, ignore_index=True))
cases["named"] = show(df.append(pd.Series({"A": 0, "B": -1}, name="z")))
cases["named_float"] = show(df.append(pd.Series({"A": 0.5}, name="z")))
cases["list_dicts"] = show(df.append([{"A": 10, "B": 11}, {"C": 12}], ignore_index=True))
cases["frame_sort"] = show(df.append(pd.DataFrame({"C": [1], "A": [2]}), sort=True))
cases["frame_nosort"] = show(df.append(pd.DataFrame({"C": [1], "A": [2]})))
cases["mixed_types"] = show(pd.DataFrame({"n": [1], "s": ["a"]}).append({"n": 2.5, "s": "b"}, ignore_index=True))
idx = pd.DataFrame({"v": [1]}, index=pd.Index(["r"], name="key"))
cases["index_name"] = show(idx.append(pd.Series({"v": 2}, name="q")))
cases["index_name_rows"] = [idx.append(pd.Series({"v": 2}, name="q")).index.name]
s1, s2 = pd.Series([1, 2]), pd.Series([3.5])
cases["series"] = [s1.append(s2).index.tolist(), s1.append(s2).tolist(), str(s1.append(s2).dtype)]
print(json.dumps(cases))
"""


def test_dataframe_and_series_append_give_what_pandas_1_3_5_gave():
    result = run_python(code=CASES)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout) == PANDAS_1_3_5

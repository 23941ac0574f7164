"""Shims for pandas: the ``append`` and ``iteritems`` methods of DataFrame and Series that
pandas 2.0 removed, which 2020-22 logging and evaluation code calls in loops
(``df = df.append({...}, ignore_index=True)``); ``read_csv``/``read_table``'s ``squeeze``
(removed in 2.0) and ``delim_whitespace`` (removed in 3.0) keywords; and the
``pandas.util.testing`` module (removed in 2.0), whose asserts live in ``pandas.testing``.

``append`` is rebuilt on ``pandas.concat`` with pandas 1.3's rules (a dict or unnamed
Series needs ``ignore_index``, a row's new columns come after the frame's, sorted, a list
of dicts is one frame); ``iteritems`` is ``items``. Methods the installed pandas has are
never replaced.
"""

from __future__ import annotations

from typing import Any

from compatfix.patching import provided_submodule, replace_attribute, restore_names, wrap
from compatfix.registry import AFTER_IMPORT, PROVIDE, Shim

# Where pandas keeps the readers besides its top level (``from pandas.io.parsers import read_csv``).
READER_OWNERS = ("pandas", "pandas.io.parsers")
READERS = ("read_csv", "read_table")


def _row_frame(frame: Any, row: Any, ignore_index: bool) -> tuple[Any, Any]:
    """A dict or Series appended as one row: pandas 1.3 put the row's columns that the
    frame lacks after the frame's own, in sorted order (``Index.difference``), and gave
    the row the Series' name as its index label."""
    import pandas as pd

    if isinstance(row, dict):
        if not ignore_index:
            raise TypeError("Can only append a dict if ignore_index=True")
        row = pd.Series(row)
    if row.name is None and not ignore_index:
        raise TypeError("Can only append a Series if ignore_index=True or if the Series has a name")
    label = pd.Index([row.name], name=frame.index.name)
    columns = frame.columns.append(row.index.difference(frame.columns))
    row_frame = row.reindex(columns).to_frame().T.infer_objects().rename_axis(label.names)
    if not frame.columns.equals(columns):
        frame = frame.reindex(columns=columns)
    return frame, row_frame


def dataframe_append(self, other, ignore_index=False, verify_integrity=False, sort=False):
    """pandas < 2.0's ``DataFrame.append``: the rows of ``other`` (a DataFrame, a Series
    or dict, or a list of them) after this frame's, as a new frame, through ``concat``."""
    import pandas as pd

    frame = self
    if isinstance(other, (pd.Series, dict)):
        frame, other = _row_frame(self, other, ignore_index)
    elif isinstance(other, list) and other and not isinstance(other[0], pd.DataFrame):
        other = pd.DataFrame(other)
        if (frame.columns.get_indexer(other.columns) >= 0).all():
            other = other.reindex(columns=frame.columns)
    pieces = [frame, *other] if isinstance(other, (list, tuple)) else [frame, other]
    result = pd.concat(pieces, ignore_index=ignore_index, verify_integrity=verify_integrity, sort=sort)
    return result.__finalize__(self)


def series_append(self, to_append, ignore_index=False, verify_integrity=False):
    """pandas < 2.0's ``Series.append``: one Series with the values of ``to_append`` (a
    Series, or a list or tuple of them) after this one's, through ``concat``."""
    import pandas as pd

    pieces = [self, *to_append] if isinstance(to_append, (list, tuple)) else [self, to_append]
    if any(isinstance(piece, pd.DataFrame) for piece in pieces[1:]):
        raise TypeError("to_append should be a Series or list/tuple of Series, got DataFrame")
    return pd.concat(pieces, ignore_index=ignore_index, verify_integrity=verify_integrity)


def _add_missing(cls: type, methods: dict[str, Any], shim: str) -> None:
    for name, method in methods.items():
        if not hasattr(cls, name):  # a pandas that still has it keeps its own
            replace_attribute(cls, name, method, shim)


def restore_append(pandas) -> None:
    _add_missing(pandas.DataFrame, {"append": dataframe_append}, "pandas.append")
    _add_missing(pandas.Series, {"append": series_append}, "pandas.append")


def restore_iteritems(pandas) -> None:
    _add_missing(pandas.DataFrame, {"iteritems": pandas.DataFrame.items}, "pandas.iteritems")
    _add_missing(pandas.Series, {"iteritems": pandas.Series.items}, "pandas.iteritems")


def _with_keyword(reader: Any, name: str) -> Any:
    """``reader``'s signature with the keyword-only ``name=None`` added at the end."""
    import inspect

    signature = inspect.signature(reader)
    keyword = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
    return signature.replace(parameters=[*signature.parameters.values(), keyword])


def _wrap_readers(make_reader: Any, keyword: str, shim: str) -> None:
    import importlib
    import inspect

    for owner_name in READER_OWNERS:
        owner = importlib.import_module(owner_name)
        for name in READERS:
            current = getattr(owner, name, None)
            if current is None or keyword in inspect.signature(current).parameters:
                continue  # a pandas that still takes the keyword keeps its own
            if wrap(owner, name, make_reader, shim):
                getattr(owner, name).__signature__ = _with_keyword(current, keyword)


def _squeezed(frame: Any) -> Any:
    """pandas < 2.0's squeeze: a result of one column is that column, as a Series."""
    return frame.squeeze("columns") if len(frame.columns) == 1 else frame


def _reading_squeeze(reader: Any) -> Any:
    def read(*args: Any, squeeze: bool | None = None, **kwargs: Any) -> Any:
        result = reader(*args, **kwargs)
        if not squeeze:
            return result
        if hasattr(result, "columns"):
            return _squeezed(result)
        # chunksize= or iterator=True: pandas 1.x squeezed each chunk it read
        read_rows = result.read
        result.read = lambda nrows=None: _squeezed(read_rows(nrows))
        return result

    return read


def _reading_delim_whitespace(reader: Any) -> Any:
    def read(*args: Any, delim_whitespace: bool | None = None, **kwargs: Any) -> Any:
        if delim_whitespace:
            if len(args) > 1 or kwargs.get("sep") is not None or kwargs.get("delimiter") is not None:
                raise ValueError("Specified a delimiter with both sep and delim_whitespace=True; you can only "
                                 "specify one.")
            kwargs["sep"] = r"\s+"  # what delim_whitespace=True was documented to equal
        return reader(*args, **kwargs)

    return read


def accept_squeeze(pandas) -> None:
    _wrap_readers(_reading_squeeze, "squeeze", "pandas.read_csv.squeeze")


def accept_delim_whitespace(pandas) -> None:
    _wrap_readers(_reading_delim_whitespace, "delim_whitespace", "pandas.read_csv.delim_whitespace")


def provide_util_testing(module) -> None:
    import pandas.testing

    restore_names(module, {name: getattr(pandas.testing, name) for name in pandas.testing.__all__},
                  "pandas.util.testing")


def restore_util_testing_attribute(util) -> None:
    restore_names(util, {"testing": provided_submodule("pandas.util.testing")}, "pandas.util.testing.attribute")


TESTING_BROKE = ("pandas 2.0 (2023-04) removed pandas.util.testing (deprecated in 1.0), from which 2020-22 "
                 "tests imported assert_frame_equal and assert_series_equal")

SHIMS = (
    Shim(
        "pandas.read_csv.squeeze",
        targets=["pandas"],
        kind=AFTER_IMPORT,
        requires={"pandas": ">=2.0"},
        apply=accept_squeeze,
        broke="pandas 2.0 (2023-04) removed read_csv's and read_table's squeeze keyword (deprecated in 1.4): "
        "read_csv(path, squeeze=True) is a TypeError",
        summary="accept squeeze=True: a result of one column is returned as a Series (each chunk, when "
        "reading in chunks), as pandas 1.x did",
        replacement="pd.read_csv(...).squeeze('columns')",
        rewrites={"pandas.read_csv(+squeeze)": "pd.read_csv(...).squeeze('columns')",
                  "pandas.read_table(+squeeze)": "pd.read_table(...).squeeze('columns')"},
    ),
    Shim(
        "pandas.read_csv.delim_whitespace",
        targets=["pandas"],
        kind=AFTER_IMPORT,
        requires={"pandas": ">=3.0"},
        apply=accept_delim_whitespace,
        broke="pandas 3.0 (2026-01) removed read_csv's and read_table's delim_whitespace keyword (deprecated "
        "in 2.2): read_csv(path, delim_whitespace=True) is a TypeError",
        summary="accept delim_whitespace=True as sep=r'\\s+', which it was documented to equal",
        replacement="sep=r'\\s+'",
        rewrites={"pandas.read_csv(+delim_whitespace)": "sep=r'\\s+'",
                  "pandas.read_table(+delim_whitespace)": "sep=r'\\s+'"},
    ),
    Shim(
        "pandas.util.testing",
        targets=["pandas.util.testing"],
        kind=PROVIDE,
        requires={"pandas": ">=2.0"},
        apply=provide_util_testing,
        broke=TESTING_BROKE,
        summary="provide pandas.util.testing with pandas.testing's asserts",
        replacement="pandas.testing",
        renames={"pandas.util.testing": "pandas.testing"},
    ),
    Shim(
        "pandas.util.testing.attribute",
        targets=["pandas.util"],
        kind=AFTER_IMPORT,
        requires={"pandas": ">=2.0"},
        apply=restore_util_testing_attribute,
        restores=["testing"],
        broke=TESTING_BROKE,
        summary="restore pandas.util.testing as an attribute (the provided module)",
        replacement="pandas.testing",
        renames={"pandas.util.testing": "pandas.testing"},
    ),
    Shim(
        "pandas.append",
        targets=["pandas"],
        requires={"pandas": ">=2.0"},
        apply=restore_append,
        broke="pandas 2.0 (2023-04) removed DataFrame.append and Series.append (deprecated in 1.4)",
        summary="restore them on pandas.concat with pandas 1.3's rules for dict, Series and list rows, "
        "ignore_index, verify_integrity and sort",
        replacement="pandas.concat([df, other]) (a row: pd.concat([df, pd.DataFrame([row])], ignore_index=True))",
        rewrites={"*.append(+ignore_index)": "pd.concat([df, pd.DataFrame([row])], ignore_index=True)"},
    ),
    Shim(
        "pandas.iteritems",
        targets=["pandas"],
        requires={"pandas": ">=2.0"},
        apply=restore_iteritems,
        broke="pandas 2.0 (2023-04) removed DataFrame.iteritems and Series.iteritems (deprecated in 1.5)",
        summary="restore iteritems as items",
        replacement="DataFrame.items / Series.items",
        rewrites={"*.iteritems()": "items()"},
    ),
)

"""Shims for pandas: the ``append`` and ``iteritems`` methods of DataFrame and Series that
pandas 2.0 removed, which 2020-22 logging and evaluation code calls in loops
(``df = df.append({...}, ignore_index=True)``).

``append`` is rebuilt on ``pandas.concat`` with pandas 1.3's rules (a dict or unnamed
Series needs ``ignore_index``, a row's new columns come after the frame's, sorted, a list
of dicts is one frame); ``iteritems`` is ``items``. Methods the installed pandas has are
never replaced.
"""

from __future__ import annotations

from typing import Any

from compatfix.patching import replace_attribute
from compatfix.registry import Shim


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


SHIMS = (
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

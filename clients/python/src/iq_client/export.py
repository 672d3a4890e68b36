"""Writing query results as CSV that is safe to open in a spreadsheet.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or
carriage return followed by one) as a formula: a text value such as a
specification name could then compute, link or, in old spreadsheet programs, run
commands ("CSV injection"). :func:`escape_formulas` prefixes such *text* cells with
``'``, so that a spreadsheet takes them for text and never evaluates them (some
programs show the ``'``). Numbers are never touched: a
negative change ``-1.5`` in a numeric column stays the number ``-1.5``.

:func:`to_csv` is spreadsheet-safe by default, like the command line's ``--csv``;
pass ``spreadsheet_safe=False`` (the command line's ``--raw-csv``) for the values
exactly as the service sent them, e.g. for another program to read.
"""

from __future__ import annotations

from typing import IO, Any, Optional, Union, cast

import pandas as pd

from .catalogue import catalogue
from .frames import format_timestamps

__all__ = ["FORMULA_TRIGGERS", "escape_formulas", "to_csv"]

#: A text cell starting with one of these is escaped.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _escape(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value


def _is_text_column(frame: pd.DataFrame, series: "pd.Series[Any]", name: Any) -> bool:
    if (
        pd.api.types.is_numeric_dtype(series)
        or pd.api.types.is_bool_dtype(series)
        or pd.api.types.is_datetime64_any_dtype(series)
    ):
        return False
    api_name = frame.attrs.get("api_name")
    dataset = catalogue().get(api_name) if isinstance(api_name, str) else None
    field = dataset.field(name) if dataset is not None and isinstance(name, str) else None
    # A known column is text only if the catalogue says so: decimals in exact mode are
    # Decimal objects and dates in string mode are YYYYMMDD, never text to escape.
    return field is None or field.type == "text"


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells that a spreadsheet would run as a formula
    (starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return) start with
    ``'``. Numeric, boolean and date columns are left as they are, and so is every
    value that is not a ``str`` (``Decimal`` values of ``decimals="decimal"``, say).
    ``frame`` itself is not changed.
    """
    escaped = frame.copy()
    for position, name in enumerate(frame.columns):
        series = frame.iloc[:, position]
        if _is_text_column(frame, series, name):
            escaped.isetitem(position, cast(Any, series.map(_escape)))
    return escaped


def to_csv(
    frame: pd.DataFrame,
    path_or_buf: Union[str, "IO[str]", None] = None,
    *,
    spreadsheet_safe: bool = True,
    date_format: str = "%Y-%m-%d",
    index: bool = False,
    lineterminator: Optional[str] = None,
    **options: Any,
) -> Optional[str]:
    """Writes ``frame`` as CSV, as the command line does: no index column, dates as
    ``YYYY-MM-DD``, instants (``published_at``) as RFC 3339 in UTC with microseconds,
    and (unless ``spreadsheet_safe=False``) text cells that would run as formulas
    escaped with a leading ``'`` (see :func:`escape_formulas`).

    Spreadsheet-safe CSV ends its lines with CRLF (RFC 4180, as spreadsheets write
    it): only then does the CSV writer quote a cell that holds a lone carriage
    return, which a spreadsheet would otherwise take for the end of the row, and
    whose remainder it would read as a new row's first cell. Raw CSV ends its lines
    with ``\n``.

    Args:
        frame: a query's DataFrame (or any DataFrame).
        path_or_buf: a file name or text stream (open it with ``newline=""``);
            ``None`` returns the CSV as a string.
        spreadsheet_safe: escape formula-like text cells (default ``True``).
        lineterminator: default ``"\r\n"`` when spreadsheet-safe, else ``"\n"``.
        date_format, index, options: passed to :meth:`pandas.DataFrame.to_csv`.

    Returns:
        The CSV text when ``path_or_buf`` is ``None``, else ``None``.
    """
    data = format_timestamps(frame)
    data = escape_formulas(data) if spreadsheet_safe else data
    if lineterminator is None:
        lineterminator = "\r\n" if spreadsheet_safe else "\n"
    return data.to_csv(
        path_or_buf,
        index=index,
        date_format=date_format,
        lineterminator=lineterminator,
        **options,
    )

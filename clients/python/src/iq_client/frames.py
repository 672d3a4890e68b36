"""Turning the wire's fields + items into a typed pandas DataFrame.

The column types come from the catalogue, never from guessing at the values:

============  ======================  ===================================
wire type     default                 options
============  ======================  ===================================
date          ``datetime64[ns]``      ``dates="string"`` keeps ``YYYYMMDD``
timestamp     ``datetime64[ns, UTC]`` ``dates="string"`` keeps the RFC 3339 text
decimal       ``float64``             ``decimals="decimal"``: exact ``Decimal``
integer       ``int64``               (``Int64`` if a value is null)
boolean       ``bool``                (``boolean`` if a value is null)
text          pandas' text dtype
============  ======================  ===================================

Nulls become ``NaT`` / ``NaN`` / ``None``. An empty result is an empty frame that
still has every column with its dtype.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable, List, Literal, Optional, Sequence

import pandas as pd

from .catalogue import Dataset
from .errors import LocalValidationError

__all__ = ["DecimalMode", "DateMode", "to_frame", "check_modes", "format_timestamps"]

#: How decimal columns are returned: ``"float"`` (float64) or ``"decimal"``
#: (:class:`decimal.Decimal` objects, exact).
DecimalMode = Literal["float", "decimal"]
#: How date columns are returned: ``"datetime"`` (datetime64[ns]) or ``"string"``
#: (``YYYYMMDD`` text, as on the wire).
DateMode = Literal["datetime", "string"]


def check_modes(decimals: str, dates: str) -> None:
    """Refuses unknown ``decimals`` / ``dates`` options."""
    if decimals not in ("float", "decimal"):
        raise LocalValidationError(f"decimals must be 'float' or 'decimal', got {decimals!r}")
    if dates not in ("datetime", "string"):
        raise LocalValidationError(f"dates must be 'datetime' or 'string', got {dates!r}")


def _dates(values: List[Any], mode: str) -> pd.Series:
    if mode == "string":
        return pd.Series(values, dtype=object)
    series = pd.to_datetime(pd.Series(values, dtype=object), format="%Y%m%d")
    return series.astype("datetime64[ns]")


def _timestamps(values: List[Any], mode: str) -> pd.Series:
    if mode == "string":
        return pd.Series(values, dtype=object)
    series = pd.Series(values, dtype=object)
    try:  # every RFC 3339 form the service may send, whatever the fraction's length
        parsed = pd.to_datetime(series, utc=True, format="ISO8601")
    except (TypeError, ValueError):  # pandas < 2.0 has no format="ISO8601"
        parsed = pd.to_datetime(series, utc=True)
    return parsed.astype("datetime64[ns, UTC]")


#: How :func:`format_timestamps` writes an instant: RFC 3339 in UTC, microseconds,
#: as the service sends ``published_at``.
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def format_timestamps(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its time-zone-aware datetime columns (``published_at``) as RFC
    3339 text in UTC with microseconds, exactly as the service sends them (``NaT``
    stays missing); other columns untouched. Returns ``frame`` itself when it has no
    such column, else a copy."""
    aware = [
        position
        for position in range(frame.shape[1])
        if isinstance(frame.iloc[:, position].dtype, pd.DatetimeTZDtype)
    ]
    if not aware:
        return frame
    shown = frame.copy()
    for position in aware:
        series = frame.iloc[:, position].dt.tz_convert("UTC")
        text = series.dt.strftime(TIMESTAMP_FORMAT).astype(object)
        shown.isetitem(position, text.where(series.notna(), None))
    return shown


def _decimals(values: List[Any], mode: str) -> pd.Series:
    if mode == "decimal":
        return pd.Series([None if v is None else Decimal(str(v)) for v in values], dtype=object)
    return pd.Series([float("nan") if v is None else float(v) for v in values], dtype="float64")


def _integers(values: List[Any]) -> pd.Series:
    if any(v is None for v in values):
        return pd.Series(values, dtype="Int64")
    return pd.Series(values, dtype="int64")


def _booleans(values: List[Any]) -> pd.Series:
    if any(v is None for v in values):
        return pd.Series(values, dtype="boolean")
    return pd.Series(values, dtype="bool")


def _text(values: List[Any]) -> pd.Series:
    if values:
        return pd.Series(values)
    return pd.Series([], dtype=str(pd.Series(["text"]).dtype))


def column(kind: Optional[str], values: List[Any], *, decimals: str, dates: str) -> pd.Series:
    """One column of values of wire type ``kind`` (``None``: unknown, kept as is)."""
    if kind == "date":
        return _dates(values, dates)
    if kind == "timestamp":
        return _timestamps(values, dates)
    if kind == "decimal":
        return _decimals(values, decimals)
    if kind == "integer":
        return _integers(values)
    if kind == "boolean":
        return _booleans(values)
    if kind == "text":
        return _text(values)
    return pd.Series(values, dtype=object)


def to_frame(
    dataset: Dataset,
    fields: Sequence[str],
    items: Iterable[Sequence[Any]],
    *,
    decimals: str = "float",
    dates: str = "datetime",
) -> pd.DataFrame:
    """A DataFrame with one column per name in ``fields``, typed by the catalogue.

    Args:
        dataset: the dataset the rows come from.
        fields: the column names (``data.fields``).
        items: the rows (``data.items``), each aligned with ``fields``.
        decimals: ``"float"`` or ``"decimal"``.
        dates: ``"datetime"`` or ``"string"``.
    """
    check_modes(decimals, dates)
    rows = list(items)
    columns = {}
    for position, name in enumerate(fields):
        field = dataset.field(name)
        values = [row[position] for row in rows]
        columns[name] = column(
            field.type if field else None, values, decimals=decimals, dates=dates
        )
    frame = pd.DataFrame(columns, columns=list(fields))
    frame.index = pd.RangeIndex(len(rows))
    return frame


def concat(frames: List[pd.DataFrame], empty: pd.DataFrame) -> pd.DataFrame:
    """Pages joined into one frame with a fresh index; ``empty`` when there are none."""
    non_empty = [f for f in frames if len(f)]
    if not non_empty:
        return empty
    if len(non_empty) == 1:
        return non_empty[0].reset_index(drop=True)
    return pd.concat(non_empty, ignore_index=True)

"""Pages as Arrow columns (decision D29): ``Accept: application/vnd.apache.arrow.stream``.

The service answers a query's page as an Arrow IPC stream: one column per field,
decimals ``decimal128(38, scale)`` (exact), dates ``date32``, instants
``timestamp[us, UTC]``, text UTF-8, integers ``int32``, booleans ``bool``; the page's
place in the ``X-Limit``, ``X-Offset``, ``X-Returned`` and ``X-Has-More`` headers.
Reading it costs no Python work per value, which is what makes a bulk pull fast.

Needs ``pyarrow`` (``pip install 'iq-client[arrow]'``). Without it, ``query()`` and
``sync()`` read JSON as before; only ``format="arrow"`` requires it. A DataFrame made
from Arrow columns (:func:`to_frame`) is the one the JSON path makes, dtype for dtype
and value for value: decimals reach ``float64`` as ``float(text)`` would round their
decimal text (from their integer units where that is exact, else through the text),
never through arrow's own decimal-to-float cast.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import pandas as pd

from .catalogue import Dataset, Field
from .envelope import header_place
from .errors import APIError
from .frames import TIMESTAMP_FORMAT, check_modes, column
from .ratelimit import RateLimitInfo
from .transport import HTTPResponse
from .validation import instant_text, parse_rfc3339

__all__ = [
    "MEDIA_TYPE",
    "ArrowPage",
    "available",
    "require",
    "arrow_type",
    "schema",
    "to_frame",
    "to_columns",
    "join_columns",
    "from_wire",
    "wire_rows",
]

#: The media type of an Arrow answer (D29).
MEDIA_TYPE = "application/vnd.apache.arrow.stream"


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """Whether pyarrow can be imported (then the DataFrame path and ``sync()`` read
    Arrow)."""
    try:
        import pyarrow  # noqa: F401
        import pyarrow.compute  # noqa: F401
        import pyarrow.ipc  # noqa: F401
    except ImportError:
        return False
    return True


def require(what: str) -> Any:
    """The ``pyarrow`` module, or an ImportError saying how to install it for ``what``."""
    try:
        import pyarrow
        import pyarrow.compute  # noqa: F401
        import pyarrow.ipc  # noqa: F401
    except ImportError as err:
        raise ImportError(
            f"{what} needs pyarrow: pip install 'iq-client[arrow]' "
            "(or use format='frame' or 'csv', which need nothing more)"
        ) from err
    return pyarrow


def arrow_type(pa: Any, field: Optional[Field]) -> Any:
    """The Arrow type D29 gives ``field``'s values (text for an unknown field)."""
    kind = field.type if field is not None else "text"
    if kind == "date":
        return pa.date32()
    if kind == "decimal":
        assert field is not None
        return pa.decimal128(38, field.scale or 0)
    if kind == "timestamp":
        return pa.timestamp("us", tz="UTC")
    if kind == "integer":
        return pa.int32()
    if kind == "boolean":
        return pa.bool_()
    return pa.string()


def schema(dataset: Dataset, fields: Sequence[str]) -> Any:
    """The Arrow schema of ``fields`` of ``dataset``, as the service sends them."""
    pa = require("an Arrow schema")
    return pa.schema([pa.field(name, arrow_type(pa, dataset.field(name))) for name in fields])


def _read_stream(body: bytes) -> Any:
    import pyarrow.ipc

    return pyarrow.ipc.open_stream(body).read_all()


@dataclass(frozen=True)
class ArrowPage:
    """One answer of ``POST /api/v1/query`` asked as an Arrow stream (D29).

    Attributes:
        dataset: the dataset queried.
        table: the page's rows, a ``pyarrow.Table`` (one column per field).
        limit, offset, returned, has_more: the page's place (``X-Limit``,
            ``X-Offset``, ``X-Returned``, ``X-Has-More``).
        request_id: the service's trace id for this request.
        rate_limit: the quota headers of this answer, if any.
    """

    dataset: Dataset
    table: Any
    limit: int
    offset: int
    returned: int
    has_more: bool
    request_id: Optional[str]
    rate_limit: Optional[RateLimitInfo] = None

    @property
    def fields(self) -> List[str]:
        """The column names."""
        return list(self.table.column_names)

    def cut(self, keep: int) -> "ArrowPage":
        """This page with only its first ``keep`` rows (``has_more`` then true)."""
        return dataclasses.replace(
            self, table=self.table.slice(0, keep), returned=keep, has_more=True
        )

    def to_frame(self, *, decimals: str = "float", dates: str = "datetime") -> pd.DataFrame:
        """This page as the typed DataFrame a JSON page would give (:func:`to_frame`)."""
        return to_frame(self.dataset, self.table, decimals=decimals, dates=dates)

    @classmethod
    def from_response(
        cls,
        dataset: Dataset,
        response: HTTPResponse,
        *,
        request_id: Optional[str],
        rate_limit: Optional[RateLimitInfo],
    ) -> "ArrowPage":
        """The page of an Arrow answer; a malformed one raises APIError."""
        try:
            table = _read_stream(response.body)
            limit, offset, returned, has_more = header_place(response)
            page = cls(
                dataset=dataset,
                table=table,
                limit=limit,
                offset=offset,
                returned=-1 if returned is None else returned,
                has_more=has_more,
                request_id=request_id,
                rate_limit=rate_limit,
            )
        except Exception as err:  # pyarrow raises its own errors for a bad stream
            raise APIError(f"malformed Arrow answer ({err!r})", request_id=request_id) from err
        if page.returned != table.num_rows:
            raise APIError(
                f"malformed Arrow answer: {table.num_rows} rows, X-Returned {returned}",
                request_id=request_id,
            )
        return page

    @classmethod
    def from_page(cls, page: Any) -> "ArrowPage":
        """A JSON :class:`iq_client.Page` as the service would have sent it as Arrow
        (for a service that answered JSON although Arrow was asked for)."""
        return cls(
            dataset=page.dataset,
            table=from_wire(page.dataset, page.fields, page.items),
            limit=page.limit,
            offset=page.offset,
            returned=page.returned,
            has_more=page.has_more,
            request_id=page.request_id,
            rate_limit=page.rate_limit,
        )


def _to_arrow_value(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "date":
        text = str(value)
        return _dt.date(int(text[0:4]), int(text[4:6]), int(text[6:8]))
    if kind == "decimal":
        return Decimal(str(value))
    if kind == "timestamp":
        return parse_rfc3339(str(value))
    if kind == "integer":
        return int(value)
    if kind == "boolean":
        return bool(value)
    return str(value)


def _from_arrow_value(kind: str, scale: int, value: Any) -> Any:
    if value is None:
        return None
    if kind == "date":
        return f"{value.year:04d}{value.month:02d}{value.day:02d}"
    if kind == "decimal":
        return format(value, f".{scale}f")
    if kind == "timestamp":
        return instant_text(value)
    return value


def from_wire(dataset: Dataset, fields: Sequence[str], items: Sequence[Sequence[Any]]) -> Any:
    """Rows of wire values (as a JSON page holds them) as a ``pyarrow.Table`` of the
    types the service sends (:func:`schema`)."""
    pa = require("an Arrow table")
    arrays = []
    for position, name in enumerate(fields):
        field = dataset.field(name)
        kind = field.type if field is not None else "text"
        values = [_to_arrow_value(kind, row[position]) for row in items]
        arrays.append(pa.array(values, type=arrow_type(pa, field)))
    return pa.Table.from_arrays(arrays, schema=schema(dataset, fields))


#: The dtype pandas gives a Series of Python strings.
_TEXT_DTYPE = pd.Series(["text"]).dtype


def _pandas(series: Any) -> pd.Series:
    """A pandas Series pyarrow made (pyarrow has no type information)."""
    assert isinstance(series, pd.Series)
    return series


def _dates(pc: Any, pa: Any, values: Any, dates: str) -> pd.Series:
    if dates == "string":
        text = pc.strftime(pc.cast(values, pa.timestamp("s")), format="%Y%m%d")
        return pd.Series(text.to_pylist(), dtype=object)
    return _pandas(values.to_pandas(date_as_object=False).astype("datetime64[ns]"))


def _timestamps(values: Any, dates: str) -> pd.Series:
    series = _pandas(values.to_pandas().astype("datetime64[ns, UTC]"))
    if dates == "string":
        text = series.dt.strftime(TIMESTAMP_FORMAT).astype(object)
        return _pandas(text.where(series.notna(), None))
    return series


#: The largest scale whose power of ten a float64 holds exactly (10**22 < 2**53 * 2**22).
_EXACT_POWER = 22


def _unit_floats(chunk: Any, scale: int) -> Optional[np.ndarray]:
    """A ``decimal128`` chunk's values as float64, each ``units / 10**scale`` in one
    IEEE division: correctly rounded, so the float ``float(text)`` gives, when the units
    and the power of ten are exact doubles (|units| < 2**53, scale <= 22). None when a
    value is outside that (then the text path decides). Nulls are NaN."""
    if len(chunk) == 0:
        return np.empty(0, dtype=np.float64)
    values = chunk.buffers()[1]
    if scale > _EXACT_POWER or values is None:
        return None
    # Each value is 16 bytes of little-endian two's complement: low word, high word.
    words = np.frombuffer(values, dtype="<i8")
    words = words[2 * chunk.offset : 2 * (chunk.offset + len(chunk))]
    low, high = words[0::2], words[1::2]
    valid = np.ones(len(chunk), dtype=bool)
    if chunk.null_count:
        valid = np.asarray(chunk.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    exact = (high == (low >> 63)) & (low < 2**53) & (low > -(2**53))
    if not exact[valid].all():
        return None
    floats = low.astype(np.float64) / float(10**scale)
    floats[~valid] = np.nan
    return floats


def _floats(pc: Any, pa: Any, values: Any) -> pd.Series:
    """Decimal values as float64, as ``float(text)`` rounds their decimal text: by one
    division of their integer units where that is exact (:func:`_unit_floats`), else
    through the text. Never arrow's own decimal-to-float cast, which is not correctly
    rounded (it differs from ``float(text)`` in the last place for many values)."""
    scale = values.type.scale
    parts = []
    for chunk in values.chunks:
        part = _unit_floats(chunk, scale)
        if part is None:
            break
        parts.append(part)
    else:
        return pd.Series(np.concatenate(parts) if parts else np.array([], dtype=np.float64))
    return _pandas(pc.cast(pc.cast(values, pa.string()), pa.float64()).to_pandas())


def _decimals(pc: Any, pa: Any, values: Any, decimals: str) -> pd.Series:
    if decimals == "decimal":
        return pd.Series(values.to_pylist(), dtype=object)
    return _floats(pc, pa, values)


def _series(pc: Any, pa: Any, field: Optional[Field], values: Any, modes: Any) -> pd.Series:
    kind = field.type if field is not None else None
    if kind == "date":
        return _dates(pc, pa, values, modes["dates"])
    if kind == "timestamp":
        return _timestamps(values, modes["dates"])
    if kind == "decimal":
        return _decimals(pc, pa, values, modes["decimals"])
    if kind == "integer":
        return _pandas(values.to_pandas().astype("Int64" if values.null_count else "int64"))
    if kind == "boolean":
        return _pandas(values.to_pandas().astype("boolean" if values.null_count else "bool"))
    if kind == "text":
        # pandas' own text dtype, as a Series of Python strings gets (pandas 3: "str",
        # Arrow-backed; earlier: object), without a Python object per value on the way.
        # Copied first: pandas 3 would keep the Arrow buffers, which point into the
        # whole answer's body, and so hold every page's body until the frame is made.
        own = pa.chunked_array([pa.concat_arrays(values.chunks)], type=values.type)
        return _pandas(own.to_pandas().astype(_TEXT_DTYPE))
    return column(kind, values.to_pylist(), **modes)


def to_columns(
    dataset: Dataset, table: Any, *, decimals: str = "float", dates: str = "datetime"
) -> Dict[str, pd.Series]:
    """``table``'s columns as the Series of the typed DataFrame :func:`to_frame` makes."""
    check_modes(decimals, dates)
    pa = require("an Arrow page")
    import pyarrow.compute as pc

    modes = {"decimals": decimals, "dates": dates}
    return {
        name: _series(pc, pa, dataset.field(name), table.column(name), modes).reset_index(drop=True)
        for name in table.column_names
    }


def to_frame(
    dataset: Dataset, table: Any, *, decimals: str = "float", dates: str = "datetime"
) -> pd.DataFrame:
    """``table`` (Arrow columns of ``dataset``) as the typed DataFrame
    :func:`iq_client.frames.to_frame` makes of the same rows in JSON."""
    columns = to_columns(dataset, table, decimals=decimals, dates=dates)
    return join_columns(list(table.column_names), {n: [s] for n, s in columns.items()})


def join_columns(names: List[str], pieces: Dict[str, List[pd.Series]]) -> pd.DataFrame:
    """One frame of the columns ``names``, each joined from its ``pieces`` (pages in
    order). Each column's pieces are let go once joined (the lists are emptied), so a
    page's Series and the frame are never both held whole."""
    columns = {}
    for name in names:
        parts = pieces[name]
        columns[name] = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
        parts.clear()
    frame = pd.DataFrame(columns, columns=names, copy=False)
    frame.index = pd.RangeIndex(len(frame))
    return frame


def wire_rows(dataset: Dataset, table: Any) -> List[List[Any]]:
    """``table``'s rows as wire values (decimals at their scale, dates ``YYYYMMDD``,
    instants RFC 3339 in UTC with microseconds), as a JSON page holds them."""
    columns = []
    for name in table.column_names:
        field = dataset.field(name)
        kind = field.type if field is not None else "text"
        scale = field.scale if field is not None and field.scale is not None else 0
        columns.append([_from_arrow_value(kind, scale, v) for v in table.column(name).to_pylist()])
    return [list(row) for row in zip(*columns)] if columns else []


def with_attrs(table: Any, attrs: Any) -> Any:
    """``table`` with ``attrs`` (``api_name``, ``params``, ``request_ids``) in its schema
    metadata as JSON, under ``iq``: a table's counterpart of a DataFrame's ``attrs``."""
    return table.replace_schema_metadata({"iq": json.dumps(attrs)})

"""Arrow answers (decision D29): ``format="arrow"`` returns a ``pyarrow.Table`` of every
page; with pyarrow installed the DataFrame path reads Arrow and makes the frame the JSON
path makes, dtype for dtype and value for value; without it, JSON as before."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any, List

import pandas as pd
import pytest

import iq_client
from iq_client import APIError

from fakes import FULL_DAILY, arrow_ok, error, make_client, ok

pa = pytest.importorskip("pyarrow", reason="the Arrow path needs pyarrow (iq-client[arrow])")

UTC = dt.timezone.utc
#: ``index_daily``'s every field, as the service types them in Arrow.
TYPES = {
    "trade_date": pa.date32(),
    "index_code": pa.string(),
    "index_value": pa.decimal128(38, 6),
    "weighted_price": pa.decimal128(38, 6),
    "pre_value": pa.decimal128(38, 6),
    "change": pa.decimal128(38, 6),
    "pct_change": pa.decimal128(38, 6),
    "published_at": pa.timestamp("us", tz="UTC"),
}
assert list(TYPES) == FULL_DAILY

#: Two pages of rows: Arrow values, and the same rows on the JSON wire.
ARROW_ROWS: List[List[Any]] = [
    [
        dt.date(2026, 11, 9),
        "GPU_Index",
        Decimal("1000.000000"),
        Decimal("29700.000000"),
        None,
        None,
        None,
        dt.datetime(2026, 11, 9, 10, 0, 0, 123456, tzinfo=UTC),
    ],
    [
        dt.date(2026, 11, 10),
        "GPU_Index",
        Decimal("1003.417711"),
        Decimal("0.100000"),
        Decimal("1000.000000"),
        Decimal("3.417711"),
        Decimal("0.341771"),
        dt.datetime(2026, 11, 10, 10, 0, 0, tzinfo=UTC),
    ],
    [
        dt.date(2026, 11, 10),
        "SSD_Index",
        Decimal("-0.000001"),
        Decimal("12345678901.123456"),
        Decimal("0.300000"),
        Decimal("0.100000"),
        Decimal("-33.333333"),
        None,
    ],
]
JSON_ROWS = [
    [
        "20261109",
        "GPU_Index",
        "1000.000000",
        "29700.000000",
        None,
        None,
        None,
        "2026-11-09T10:00:00.123456Z",
    ],
    [
        "20261110",
        "GPU_Index",
        "1003.417711",
        "0.100000",
        "1000.000000",
        "3.417711",
        "0.341771",
        "2026-11-10T10:00:00.000000Z",
    ],
    [
        "20261110",
        "SSD_Index",
        "-0.000001",
        "12345678901.123456",
        "0.300000",
        "0.100000",
        "-33.333333",
        None,
    ],
]


def _arrow_pages() -> List[Any]:
    return [
        arrow_ok(TYPES, ARROW_ROWS[:2], limit=2, has_more=True, request_id="req_1"),
        arrow_ok(TYPES, ARROW_ROWS[2:], offset=2, limit=2, request_id="req_2"),
    ]


def _json_pages() -> List[Any]:
    return [
        ok(FULL_DAILY, JSON_ROWS[:2], limit=2, has_more=True, request_id="req_1"),
        ok(FULL_DAILY, JSON_ROWS[2:], offset=2, limit=2, request_id="req_2"),
    ]


@pytest.mark.parametrize("decimals", ["float", "decimal"])
@pytest.mark.parametrize("dates", ["datetime", "string"])
def test_the_arrow_frame_is_the_json_frame(monkeypatch, decimals: str, dates: str) -> None:
    options = dict(fields=FULL_DAILY, page_size=2, fixed_end_date=False)
    client, transport, _ = make_client(*_arrow_pages())
    by_arrow = client.index_daily(decimals=decimals, dates=dates, **options)
    assert transport.requests[0].headers["Accept"] == "application/vnd.apache.arrow.stream"
    monkeypatch.setattr(iq_client.arrow, "available", lambda: False)
    client, transport, _ = make_client(*_json_pages())
    by_json = client.index_daily(decimals=decimals, dates=dates, **options)
    assert transport.requests[0].headers["Accept"] == "application/json"
    pd.testing.assert_frame_equal(by_arrow, by_json, check_exact=True)
    assert by_arrow.attrs == by_json.attrs
    if decimals == "decimal":
        # Exact, with the wire's scale: the digits the service sent.
        assert [str(v) for v in by_arrow["index_value"]] == [r[2] for r in JSON_ROWS]


def test_format_arrow_is_a_table_of_every_page() -> None:
    client, transport, _ = make_client(*_arrow_pages())
    table = client.index_daily(fields=FULL_DAILY, page_size=2, fixed_end_date=False, format="arrow")
    assert isinstance(table, pa.Table)
    assert table.num_rows == 3
    assert table.schema.types == list(TYPES.values())
    assert table.column("index_value").to_pylist() == [r[2] for r in ARROW_ROWS]
    assert table.column("published_at").to_pylist()[2] is None
    assert [(b["offset"], b["limit"]) for b in transport.bodies] == [(0, 2), (2, 2)]
    attrs = json.loads(table.schema.metadata[b"iq"])
    assert attrs["request_ids"] == ["req_1", "req_2"]


def test_arrow_pages_one_by_one_and_an_empty_answer() -> None:
    client, _, _ = make_client(*_arrow_pages())
    tables = list(
        client.iter_query(
            "index_daily", fields=FULL_DAILY, page_size=2, fixed_end_date=False, format="arrow"
        )
    )
    assert [t.num_rows for t in tables] == [2, 1]
    client, _, _ = make_client(arrow_ok(TYPES, []))
    empty = client.index_daily(fields=FULL_DAILY, fixed_end_date=False, format="arrow")
    assert empty.num_rows == 0 and empty.schema.types == list(TYPES.values())
    client, _, _ = make_client(ok(FULL_DAILY, []))
    frame = client.index_daily(fields=FULL_DAILY, fixed_end_date=False)
    assert list(frame.columns) == FULL_DAILY and str(frame["index_value"].dtype) == "float64"


def test_a_json_answer_to_an_arrow_request_is_still_read() -> None:
    client, _, _ = make_client(*_json_pages())
    table = client.index_daily(fields=FULL_DAILY, page_size=2, fixed_end_date=False, format="arrow")
    assert table.schema.types == list(TYPES.values())
    assert table.column("index_value").to_pylist() == [r[2] for r in ARROW_ROWS]


def test_a_broken_stream_is_an_api_error_with_its_request_id() -> None:
    good = arrow_ok(TYPES, ARROW_ROWS)
    broken = iq_client.HTTPResponse.build(200, dict(good.headers), good.body[:40])
    client, _, _ = make_client(broken)
    with pytest.raises(APIError, match="malformed Arrow answer") as raised:
        client.index_daily(fields=FULL_DAILY, fixed_end_date=False, format="arrow")
    assert raised.value.request_id == "req_arrow"
    lying = iq_client.HTTPResponse.build(200, {**good.headers, "X-Returned": "7"}, good.body)
    client, _, _ = make_client(lying)
    with pytest.raises(APIError, match="X-Returned"):
        client.index_daily(fields=FULL_DAILY, fixed_end_date=False, format="arrow")


def test_format_arrow_without_pyarrow_says_how_to_install_it(monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    client, transport, _ = make_client()
    with pytest.raises(ImportError, match=r"iq-client\[arrow\]"):
        client.index_daily(format="arrow")
    assert transport.requests == []
    with pytest.raises(iq_client.LocalValidationError, match="'arrow'"):
        client.index_daily(format="feather")


def _decimal_column(units: List[Any], scale: int) -> Any:
    """``units`` (integers, None for null) as decimals of ``scale``, in two chunks, the
    second a slice (an offset into its buffer)."""
    values = [None if u is None else Decimal(u).scaleb(-scale) for u in units]
    kind = pa.decimal128(38, scale)
    half = len(values) // 2
    tail = pa.array([Decimal(0)] * 3 + values[half:], kind).slice(3)
    return pa.chunked_array([pa.array(values[:half], kind), tail])


@pytest.mark.parametrize("scale", [0, 1, 6, 8, 15, 22, 23])
@pytest.mark.parametrize("largest", [10**8, 2**53 - 1, 2**53 + 1, 10**30])
def test_decimals_become_the_floats_of_their_text(scale: int, largest: int) -> None:
    """A decimal's float is ``float(text)``, whether made from its integer units (all
    of them exact doubles, scale <= 22) or through its text (any unit beyond 2**53)."""
    import random

    rng = random.Random(scale * 1000 + largest % 997)
    units: List[Any] = [rng.randint(-largest, largest) for _ in range(3000)]
    units += [None, 0, 1, -1, largest, -largest, None]
    column = _decimal_column(units, scale)
    series = iq_client.arrow.to_columns(
        iq_client.catalogue.dataset("index_daily"),
        pa.table({"index_value": column}),
    )["index_value"]
    assert series.dtype == "float64"
    expected = [
        float("nan") if u is None else float(format(Decimal(u).scaleb(-scale), f".{scale}f"))
        for u in units
    ]
    got = series.tolist()
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (g == e) or (g != g and e != e), (g, e)


def _conversion_threads() -> List[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name.startswith("iq-arrow")]


def test_a_pull_ends_its_conversion_thread_whether_it_succeeds_or_fails() -> None:
    options = dict(fields=FULL_DAILY, page_size=2, fixed_end_date=False)
    client, _, _ = make_client(*_arrow_pages())
    assert len(client.index_daily(**options)) == 3
    assert _conversion_threads() == []
    refused = error(400, 40001, "a parameter is refused", request_id="req_2")
    client, _, _ = make_client(_arrow_pages()[0], refused)
    with pytest.raises(APIError):
        client.index_daily(**options)
    assert _conversion_threads() == []


def test_decimal_columns_of_no_values_or_only_nulls_become_floats() -> None:
    daily = iq_client.catalogue.dataset("index_daily")
    kind = pa.decimal128(38, 6)
    for column, expected in [
        (pa.chunked_array([], kind), []),
        (pa.chunked_array([pa.array([], kind)]), []),
        (
            pa.chunked_array([pa.nulls(3, kind), pa.array([Decimal("1.5")], kind).slice(1)]),
            [None] * 3,
        ),
    ]:
        series = iq_client.arrow.to_columns(daily, pa.table({"index_value": column}))["index_value"]
        assert series.dtype == "float64"
        assert [None if v != v else v for v in series.tolist()] == expected

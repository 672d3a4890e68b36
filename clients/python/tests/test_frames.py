"""Wire rows to DataFrames: dtypes from the catalogue, nulls, exact decimals."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest
from pandas.api import types

from iq_client.catalogue import dataset
from iq_client.frames import to_frame

from fakes import DAILY as DAILY_DEFAULTS
from fakes import FULL_DAILY, make_client, ok

DAILY = [name for name in FULL_DAILY if name != "published_at"]
ROWS = [
    ["20261109", "Server_Index", "1000.000000", "250000.500000", None, None, None],
    [
        "20261110",
        "Server_Index",
        "1010.123456",
        "252531.360000",
        "1000.000000",
        "10.123456",
        "1.012346",
    ],
    ["20261110", "Hardware_Index", "1003.300000", None, "1000.000000", "3.300000", "0.330000"],
]


def test_dates_are_datetime64_and_points_and_prices_float64() -> None:
    frame = to_frame(dataset("index_daily"), DAILY, ROWS)
    assert list(frame.columns) == DAILY
    assert str(frame["trade_date"].dtype) == "datetime64[ns]"
    for name in ["index_value", "weighted_price", "pre_value", "change", "pct_change"]:
        assert frame[name].dtype == "float64", name
    assert frame["trade_date"].tolist()[:2] == [
        pd.Timestamp("2026-11-09"),
        pd.Timestamp("2026-11-10"),
    ]
    assert frame.loc[1, "index_value"] == pytest.approx(1010.123456)
    assert pd.isna(frame.loc[0, "change"]) and pd.isna(frame.loc[2, "weighted_price"])
    assert types.is_string_dtype(frame["index_code"]) or frame["index_code"].dtype == object
    assert frame.index.equals(pd.RangeIndex(3))


def test_exact_decimals_on_request() -> None:
    frame = to_frame(dataset("index_daily"), DAILY, ROWS, decimals="decimal")
    assert frame.loc[1, "index_value"] == Decimal("1010.123456")
    assert isinstance(frame.loc[1, "weighted_price"], Decimal)
    assert str(frame.loc[1, "weighted_price"]) == "252531.360000"  # scale kept
    assert frame.loc[2, "weighted_price"] is None
    weights = to_frame(
        dataset("index_quote"),
        ["weight"],
        [["0.10000000"], ["0.20000000"], ["0.70000000"]],
        decimals="decimal",
    )
    assert sum(weights["weight"]) == Decimal("1")  # exact, unlike 0.1 + 0.2 + 0.7 in floats


def test_dates_as_strings_on_request() -> None:
    frame = to_frame(
        dataset("trade_calendar"),
        ["trade_date", "pretrade_date"],
        [["20230102", None]],
        dates="string",
    )
    assert frame.loc[0, "trade_date"] == "20230102" and frame.loc[0, "pretrade_date"] is None


def test_null_dates_become_nat() -> None:
    frame = to_frame(
        dataset("trade_calendar"),
        ["trade_date", "pretrade_date"],
        [["20230102", None], ["20230103", "20230102"]],
    )
    assert str(frame["pretrade_date"].dtype) == "datetime64[ns]"
    assert pd.isna(frame.loc[0, "pretrade_date"])


def test_integers_and_booleans() -> None:
    fields = ["index_code", "sort_no", "has_quotes", "base_date", "base_value"]
    rows = [
        ["GPU_Index", 30, True, "20251113", "1000.000000"],
        ["Hardware_Index", 80, False, None, "1000.000000"],
    ]
    frame = to_frame(dataset("index_basic"), fields, rows)
    assert frame["sort_no"].dtype == "int64"
    assert frame["has_quotes"].dtype == bool
    assert frame["has_quotes"].tolist() == [True, False]
    assert pd.isna(frame.loc[1, "base_date"])


def test_an_empty_result_keeps_columns_and_dtypes() -> None:
    frame = to_frame(dataset("index_quote"), ["trade_date", "index_code", "weight"], [])
    assert frame.empty and list(frame.columns) == ["trade_date", "index_code", "weight"]
    assert str(frame["trade_date"].dtype) == "datetime64[ns]" and frame["weight"].dtype == "float64"


def test_query_returns_typed_frame_with_request_ids() -> None:
    client, _, _ = make_client(
        ok(DAILY, ROWS[:2], limit=2, has_more=True, request_id="req_1"),
        ok(DAILY, ROWS[2:], offset=2, limit=2, request_id="req_2"),
    )
    frame = client.index_daily(end_date="20261120")
    assert len(frame) == 3 and frame.index.equals(pd.RangeIndex(3))
    assert str(frame["trade_date"].dtype) == "datetime64[ns]"
    assert frame["weighted_price"].dtype == "float64"
    assert frame.attrs["request_ids"] == ["req_1", "req_2"]
    assert frame.attrs["api_name"] == "index_daily"


def test_an_empty_answer_is_an_empty_typed_frame() -> None:
    client, _, _ = make_client(ok(DAILY_DEFAULTS, []))
    frame = client.index_daily(index_code="No_Such_Index", end_date="20261120")
    assert frame.empty
    assert list(frame.columns) == DAILY_DEFAULTS
    assert frame["index_value"].dtype == "float64"


def test_client_wide_decimal_default() -> None:
    client, _, _ = make_client(
        ok(["trade_date", "price"], [["20261110", "29700.000000"]]), decimals="decimal"
    )
    frame = client.index_quote(trade_date="20261110", fields=["trade_date", "price"])
    assert frame.loc[0, "price"] == Decimal("29700.000000")

"""Local refusal before any request (spec part 1 and 4.1, decisions D1)."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from iq_client import InvalidRequest, LocalValidationError
from iq_client.validation import normalise_date, validate_query

from fakes import make_client, ok


def refused(call, match: str) -> LocalValidationError:
    """Runs ``call`` on a client that fails on any request; expects a local refusal."""
    client, transport, _ = make_client()
    with pytest.raises(LocalValidationError, match=match) as caught:
        call(client)
    assert transport.requests == [], "nothing may be sent"
    return caught.value


def test_unknown_parameter() -> None:
    error = refused(lambda c: c.query("index_daily", {"ts_code": "GPU_Index"}), "ts_code")
    assert "accepted: index_code, trade_date, start_date, end_date" in error.message


def test_parameter_of_another_dataset() -> None:
    refused(lambda c: c.query("index_daily", specification="H100"), "specification")
    refused(lambda c: c.query("index_basic", trade_date="20261120"), "trade_date")
    refused(lambda c: c.query("trade_calendar", index_code="GPU_Index"), "index_code")


def test_unknown_field() -> None:
    error = refused(lambda c: c.index_daily(fields=["trade_date", "close"]), "'close'")
    assert "expected any of" in error.message


def test_field_of_another_dataset() -> None:
    refused(lambda c: c.trade_calendar(fields="trade_date,index_value"), "index_value")


def test_duplicate_field() -> None:
    refused(lambda c: c.index_quote(fields=["price", "price"]), "twice")


@pytest.mark.parametrize("other", ["start_date", "end_date"])
def test_trade_date_with_a_range(other: str) -> None:
    refused(
        lambda c: c.query("index_quote", {"trade_date": "20261105", other: "20261101"}),
        "trade_date cannot be combined",
    )


def test_trade_date_with_a_range_in_convenience_methods() -> None:
    refused(
        lambda c: c.index_daily(trade_date="20261105", start_date="20261101"),
        "trade_date cannot be combined",
    )
    refused(
        lambda c: c.trade_calendar(trade_date="20261105", end_date="20261130"),
        "trade_date cannot be combined",
    )


@pytest.mark.parametrize(
    "value",
    [
        "2026/11/05",
        "261105",
        "20261305",
        "2026-02-30",
        "20261-1-05",
        "2026-1105",
        "20261105\n",  # $ would accept a trailing newline
        "2026-11-05\n",
        "\uff12\uff10\uff12\uff16\uff11\uff11\uff10\uff15",  # fullwidth digits
        "\u0662\u0660\u0662\u0666\u0661\u0661\u0660\u0665",  # Arabic-Indic digits
        " 20261105",
    ],
)
def test_malformed_or_impossible_dates(value: str) -> None:
    refused(lambda c: c.index_daily(trade_date=value), "trade_date")


def test_start_after_end() -> None:
    refused(lambda c: c.index_daily(start_date="20261110", end_date="2026-11-01"), "later than")


def test_empty_and_non_string_values() -> None:
    refused(lambda c: c.index_daily(index_code=""), "empty")
    refused(lambda c: c.query("index_daily", {"index_code": 5}), "must be a string")
    refused(lambda c: c.query("index_daily", {"start_date": 20261101}), "must be a date")


def test_bad_limit_offset_and_page_size() -> None:
    refused(lambda c: c.index_daily(limit=0), "limit")
    refused(lambda c: c.index_daily(limit=True), "limit")
    refused(lambda c: c.index_daily(offset=-1), "offset")
    refused(lambda c: c.query("index_daily", page_size=0), "page_size")
    refused(lambda c: c.fetch_page("index_daily", limit=1.5), "limit")


def test_same_parameter_twice() -> None:
    refused(
        lambda c: c.query("index_daily", {"index_code": "A"}, index_code="B"),
        "both in params and as a keyword",
    )


def test_unknown_dataset_and_modes() -> None:
    refused(lambda c: c.query("daily"), "unknown api_name 'daily'")
    refused(lambda c: c.index_daily(decimals="double"), "decimals")
    refused(lambda c: c.index_daily(dates="epoch"), "dates")


def test_a_local_refusal_is_an_invalid_request_without_request_id() -> None:
    error = refused(lambda c: c.query("index_daily", {"foo": "x"}), "foo")
    assert isinstance(error, InvalidRequest) and isinstance(error, ValueError)
    assert error.code == 40001
    assert error.request_id is None and error.http_status is None


@pytest.mark.parametrize(
    "value",
    [
        "20261105",
        "2026-11-05",
        dt.date(2026, 11, 5),
        dt.datetime(2026, 11, 5, 9, 30),
        pd.Timestamp("2026-11-05"),
    ],
)
def test_dates_are_normalised_to_yyyymmdd(value: object) -> None:
    assert normalise_date("trade_date", value) == "20261105"


def test_early_years_are_zero_padded() -> None:
    assert normalise_date("trade_date", dt.date(999, 1, 2)) == "09990102"
    assert normalise_date("trade_date", dt.datetime(5, 12, 31, 23, 59)) == "00051231"
    assert normalise_date("trade_date", "0999-01-02") == "09990102"


def test_a_missing_timestamp_is_refused() -> None:
    with pytest.raises(LocalValidationError, match="NaT"):
        normalise_date("trade_date", pd.NaT)


def test_what_is_sent_is_normalised() -> None:
    fields = ["trade_date", "index_code", "index_value"]
    client, transport, _ = make_client(ok(fields, []))
    client.index_daily(
        index_code="GPU_Index",
        start_date=dt.date(2026, 11, 1),
        end_date="2026-11-20",
        fields="trade_date, index_code,index_value",
    )
    assert transport.bodies == [
        {
            "api_name": "index_daily",
            "params": {"index_code": "GPU_Index", "start_date": "20261101", "end_date": "20261120"},
            "fields": fields,
            "limit": 5000,
            "offset": 0,
        }
    ]


def test_none_filters_are_omitted_and_empty_fields_mean_defaults() -> None:
    query = validate_query("index_quote", {"index_code": None, "trade_date": "20261105"}, [])
    assert query.params == {"trade_date": "20261105"}
    body = query.body(limit=10, offset=0)
    assert "fields" not in body and body["params"] == {"trade_date": "20261105"}
    assert query.result_fields() == ["trade_date", "index_code", "specification", "weight", "price"]

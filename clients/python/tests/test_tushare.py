"""``iq_client.tushare``: Tushare-style calls sent as the service's queries, answered as
Tushare's ``DataApi`` answers (fields as asked, ``YYYYMMDD`` text dates, float values),
errors raised with the service's message."""

from __future__ import annotations

import pytest

import iq_client.tushare as ts
from iq_client import APIError, LocalValidationError

from fakes import DAILY, TEST_KEY, error, make_client, ok

ROW = ["20261120", "GPU_Index", "1012.345678", None, "-1.500000", "-0.147929"]


def api_with(*replies, **options):
    client, transport, _ = make_client(*replies, **options)
    api = ts.pro_api(TEST_KEY, base_url="http://iq.test")
    api.client = client
    return api, transport


def test_a_dataset_method_is_a_query_with_ts_code_as_index_code() -> None:
    api, transport = api_with(ok(DAILY, [ROW]))
    window = {"start_date": "20261101", "end_date": "20261120"}
    frame = api.index_daily(ts_code="GPU_Index", **window)
    body = transport.bodies[0]
    assert body["api_name"] == "index_daily"
    # Only ts_code is renamed; the other parameters go as they are.
    assert body["params"] == {"index_code": "GPU_Index", **window}
    # As Tushare answers: dates as YYYYMMDD text, numbers as floats, nulls as NaN.
    assert list(frame.columns) == DAILY
    assert frame["trade_date"].tolist() == ["20261120"]
    assert frame["index_value"].tolist() == [1012.345678]
    assert str(frame["change"].dtype) == "float64"
    assert frame["weighted_price"].isna().all()


def test_fields_as_a_comma_separated_string_or_a_list() -> None:
    api, transport = api_with(ok(["index_code", "index_name"], []), ok(["index_code"], []))
    api.query("index_basic", fields="index_code, index_name")
    api.query("index_basic", fields=["index_code"])
    assert [b["fields"] for b in transport.bodies] == [["index_code", "index_name"], ["index_code"]]


def test_empty_fields_ask_for_the_defaults_and_none_values_are_left_out() -> None:
    api, transport = api_with(ok(DAILY, []))
    api.query("index_daily", fields="", index_code=None, start_date="20261101", end_date="20261120")
    body = transport.bodies[0]
    assert "fields" not in body
    assert body["params"] == {"start_date": "20261101", "end_date": "20261120"}


def test_limit_and_offset_page_as_in_tushare() -> None:
    api, transport = api_with(ok(DAILY, [ROW], offset=10, limit=1))
    frame = api.index_daily(ts_code="GPU_Index", end_date="20261120", limit=1, offset=10)
    assert len(frame) == 1
    assert transport.bodies[0]["limit"] == 1 and transport.bodies[0]["offset"] == 10
    assert "limit" not in transport.bodies[0]["params"]


def test_the_services_refusal_raises_with_its_message() -> None:
    api, _ = api_with(error(403, 40301, "index Hardware_Index needs a plan with member indexes"))
    with pytest.raises(APIError, match="member indexes"):
        api.index_daily(ts_code="Hardware_Index", end_date="20261120")


def test_an_unknown_parameter_or_dataset_is_refused_before_anything_is_sent() -> None:
    api, transport = api_with()
    with pytest.raises(LocalValidationError, match="close"):
        api.index_daily(close="1")
    with pytest.raises(LocalValidationError, match="daily_basic"):
        api.daily_basic(ts_code="GPU_Index")
    assert transport.requests == []


def test_private_names_are_not_datasets() -> None:
    api = ts.pro_api()
    with pytest.raises(AttributeError):
        api._secret  # noqa: B018 - the attribute access is the test

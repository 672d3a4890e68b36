"""``iq_client.tushare``: Tushare's SDK for this service. Each call posts Tushare's
body to ``POST {base_url}/tushare/{api_name}`` and answers the frame the official SDK
builds from the answer, ``pd.DataFrame(items, columns=fields)``; a refusal raises the
package's exception for its code, with the service's ``msg``, ``code`` and
``request_id``. Requests go through the ``Client``'s transport and retries."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest

import iq_client.tushare as ts
from iq_client import (
    APIError,
    AuthenticationError,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    QuotaExhausted,
    RateLimited,
    ServerError,
)

from fakes import (
    OTHER_KEY,
    TEST_KEY,
    FakeTransport,
    error,
    make_client,
    raw,
    tushare_ok,
    tushare_refusal,
)

#: ``index_daily``'s columns on the Tushare wire, and two rows as the service sends them
#: (the oldest day has no previous one: nulls).
DAILY = ["ts_code", "trade_date", "close", "pre_close", "change", "pct_chg"]
ROWS = [
    ["GPU_Index", "20261120", 1012.345678, 1013.85, -1.504322, -0.148375],
    ["GPU_Index", "20261119", 1013.85, None, None, None],
]
#: ``index_weekly``'s and ``index_monthly``'s columns.
BARS = ["ts_code", "trade_date", "close", "open", "high", "low", "pre_close", "change", "pct_chg"]
BAR = ["GPU_Index", "20261120", 1012.3, 1001.0, 1020.5, 998.25, 1000.0, 12.3, 1.23]

URL = "http://iq.test/tushare"


@pytest.fixture(autouse=True)
def _no_saved_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no token remembered by ``set_token``."""
    monkeypatch.setattr(ts, "_saved_token", None)


def api_with(*replies, **options):
    """A ``DataApi`` whose client sends through a FakeTransport, with a recording
    sleep and a jitter of 0.5 s."""
    client, transport, sleeps = make_client(*replies, **options)
    api = ts.pro_api(TEST_KEY, base_url="http://iq.test")
    api.client = client
    return api, transport, sleeps


def sdk_frame(response) -> pd.DataFrame:
    """What tushare 1.4.29's ``DataApi.query`` makes of an answer."""
    result = json.loads(response.body.decode("utf-8"))
    return pd.DataFrame(result["data"]["items"], columns=result["data"]["fields"])


# -- the request ------------------------------------------------------------------------


def test_a_dataset_method_posts_tushares_body_to_its_path() -> None:
    api, transport, _ = api_with(tushare_ok(DAILY, ROWS))
    api.index_daily(ts_code="GPU_Index", start_date="20261101")
    (request,) = transport.requests
    assert request.method == "POST"
    assert request.url == f"{URL}/index_daily"
    # The SDK's body, params as given (no name is mapped here: the service does it).
    assert json.loads(request.body) == {
        "api_name": "index_daily",
        "token": TEST_KEY,
        "params": {"ts_code": "GPU_Index", "start_date": "20261101"},
        "fields": "",
    }
    # The key travels only as the token: a key header as well is refused as ambiguous.
    names = {name.lower() for name in request.headers}
    assert "x-api-key" not in names and "authorization" not in names
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"].startswith("iq-client-python/")


def test_query_posts_to_the_named_path_and_fields_go_as_given() -> None:
    replies = [tushare_ok(["ts_code", "name"], []) for _ in range(3)]
    api, transport, _ = api_with(*replies)
    api.query("index_basic", fields="ts_code,name")
    api.query("index_basic", fields=["ts_code", "name"])
    api.index_basic("ts_code")  # fields positional, as the SDK's partial allows
    assert [r.url for r in transport.requests] == [f"{URL}/index_basic"] * 3
    assert [b["fields"] for b in transport.bodies] == [
        "ts_code,name",
        ["ts_code", "name"],
        "ts_code",
    ]


def test_an_empty_api_name_posts_to_the_bare_path() -> None:
    api, transport, _ = api_with(tushare_refusal(40001, "'api_name' is required"))
    with pytest.raises(InvalidRequest, match="api_name"):
        api.query("")
    assert transport.requests[0].url == URL


def test_none_params_are_sent_as_null_and_no_ts_type_name() -> None:
    """As the SDK sends them; the service takes null (and "") as absent."""
    api, transport, _ = api_with(tushare_ok(DAILY, ROWS))
    api.index_daily(ts_code="GPU_Index", trade_date=None, limit=None, offset=None)
    params = transport.bodies[0]["params"]
    assert params == {"ts_code": "GPU_Index", "trade_date": None, "limit": None, "offset": None}
    assert "ts_type_name" not in params


def test_limit_and_offset_go_among_the_params_in_one_request() -> None:
    api, transport, _ = api_with(tushare_ok(DAILY, ROWS[:1], has_more=True))
    frame = api.index_daily(ts_code="GPU_Index", limit=1, offset=2)
    assert len(frame) == 1 and len(transport.requests) == 1
    assert transport.bodies[0]["params"] == {"ts_code": "GPU_Index", "limit": 1, "offset": 2}


def test_more_rows_left_without_limit_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    api, transport, _ = api_with(tushare_ok(DAILY, ROWS, has_more=True))
    with caplog.at_level(logging.WARNING, logger="iq_client"):
        frame = api.index_daily(ts_code="GPU_Index")
    # One request, as the SDK: the frame is that one answer's.
    assert len(frame) == 2 and len(transport.requests) == 1
    assert "has more" in caplog.text


# -- the frame --------------------------------------------------------------------------


def test_the_frame_is_the_sdks() -> None:
    answer = tushare_ok(DAILY, ROWS)
    api, _, _ = api_with(answer)
    frame = api.index_daily(ts_code="GPU_Index")
    pd.testing.assert_frame_equal(frame, sdk_frame(answer))
    assert list(frame.columns) == DAILY
    # Numbers are floats, nulls NaN; dates and codes text (YYYYMMDD), not datetimes.
    for name in ("close", "pre_close", "change", "pct_chg"):
        assert str(frame[name].dtype) == "float64"
    assert frame["close"].tolist() == [1012.345678, 1013.85]
    assert frame.loc[1, ["pre_close", "change", "pct_chg"]].isna().all()
    for name in ("ts_code", "trade_date"):
        assert pd.api.types.is_string_dtype(frame[name])
        assert not pd.api.types.is_numeric_dtype(frame[name])
    assert frame["trade_date"].tolist() == ["20261120", "20261119"]


def test_columns_are_the_services_in_its_order_and_integers_stay_integers() -> None:
    fields = ["cal_date", "is_open", "exchange", "pretrade_date"]
    answer = tushare_ok(
        fields, [["20261108", 0, "IQ", "20261106"], ["20261109", 1, "IQ", "20261106"]]
    )
    api, transport, _ = api_with(answer)
    frame = api.trade_cal(exchange="", start_date="20261108", end_date="20261109")
    assert transport.requests[0].url == f"{URL}/trade_cal"
    assert list(frame.columns) == fields
    assert str(frame["is_open"].dtype) == "int64"
    pd.testing.assert_frame_equal(frame, sdk_frame(answer))


def test_an_empty_answer_is_an_empty_frame_with_the_columns() -> None:
    answer = tushare_ok(DAILY, [])
    api, _, _ = api_with(answer)
    frame = api.index_daily(ts_code="Nothing_Index")
    assert frame.empty and list(frame.columns) == DAILY
    pd.testing.assert_frame_equal(frame, sdk_frame(answer))


def test_the_request_id_and_rate_limit_are_remembered_on_the_client() -> None:
    answer = tushare_ok(DAILY, ROWS, request_id="req_abc", headers={"X-RateLimit-Remaining": "7"})
    api, _, _ = api_with(answer)
    api.index_daily(ts_code="GPU_Index")
    assert api.client.last_request_id == "req_abc"
    assert api.client.last_rate_limit is not None and api.client.last_rate_limit.remaining == 7


# -- refusals ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code, kind",
    [
        (40001, InvalidRequest),
        (40102, AuthenticationError),
        (40301, PermissionDenied),
        (40302, PermissionDenied),
        (42902, QuotaExhausted),
        (49999, APIError),
    ],
)
def test_a_refusal_raises_the_exception_of_its_code_with_msg_and_request_id(code, kind) -> None:
    api, transport, sleeps = api_with(
        tushare_refusal(code, "the service's words", request_id="req_no")
    )
    with pytest.raises(kind) as caught:
        api.index_daily(ts_code="GPU_Index")
    err = caught.value
    assert isinstance(err, APIError)
    assert err.code == code and err.message == "the service's words"
    assert err.request_id == "req_no" and err.http_status == 200
    assert "the service's words" in str(err) and str(code) in str(err)
    # Not retried (a daily quota neither).
    assert len(transport.requests) == 1 and sleeps.calls == []
    assert api.client.last_request_id == "req_no"


def test_a_member_index_refused_for_a_free_key() -> None:
    msg = "index Hardware_Index needs a plan with member indexes"
    api, _, _ = api_with(tushare_refusal(40301, msg))
    with pytest.raises(PermissionDenied, match="member indexes") as caught:
        api.index_daily(ts_code="Hardware_Index")
    assert caught.value.code == 40301


def test_a_per_minute_refusal_is_retried_after_retry_after() -> None:
    slow = tushare_refusal(42901, "slow down", headers={"Retry-After": "3"})
    api, transport, sleeps = api_with(slow, tushare_ok(DAILY, ROWS))
    frame = api.index_daily(ts_code="GPU_Index")
    assert len(frame) == 2 and len(transport.requests) == 2
    assert sleeps.calls == [3.5]  # max(backoff 1, Retry-After 3) + jitter 0.5
    assert transport.bodies[0] == transport.bodies[1]


def test_a_per_minute_refusal_raises_once_the_retries_are_used_up() -> None:
    slow = tushare_refusal(42901, "slow down", headers={"Retry-After": "1"})
    api, transport, sleeps = api_with(slow, repeat_last=True, max_retries=2)
    with pytest.raises(RateLimited) as caught:
        api.index_daily(ts_code="GPU_Index")
    assert caught.value.retry_after == 1 and caught.value.code == 42901
    assert len(transport.requests) == 3 and len(sleeps.calls) == 2


def test_a_server_error_keeps_its_status_and_is_retried() -> None:
    api, transport, sleeps = api_with(
        tushare_refusal(50000, "internal error", status=500), tushare_ok(DAILY, ROWS)
    )
    assert len(api.index_daily(ts_code="GPU_Index")) == 2
    assert len(transport.requests) == 2 and sleeps.calls == [1.5]


def test_a_server_error_raises_once_the_retries_are_used_up() -> None:
    api, _, _ = api_with(
        tushare_refusal(50000, "boom", status=503), repeat_last=True, max_retries=1
    )
    with pytest.raises(ServerError, match="boom") as caught:
        api.index_daily(ts_code="GPU_Index")
    assert caught.value.http_status == 503


def test_an_answer_that_is_not_the_services_raises() -> None:
    """Where the SDK answers an empty frame without a word."""
    api, _, _ = api_with(raw(404, b"<html>not here</html>"))
    with pytest.raises(NotFound, match="unexpected answer") as caught:
        api.index_daily(ts_code="GPU_Index")
    assert caught.value.http_status == 404 and caught.value.code is None


def test_a_service_without_the_tushare_wire_raises_its_message() -> None:
    api, _, _ = api_with(error(404, 40401, "no such endpoint"))
    with pytest.raises(NotFound, match="no such endpoint") as caught:
        api.index_daily(ts_code="GPU_Index")
    assert caught.value.code == 40401 and caught.value.request_id == "req_err"


def test_a_success_without_rows_is_not_understood() -> None:
    body = {"request_id": "req_x", "code": 0, "msg": "", "data": None}
    api, _, _ = api_with(raw(200, json.dumps(body).encode(), "application/json"))
    with pytest.raises(APIError, match="data.fields") as caught:
        api.index_daily(ts_code="GPU_Index")
    assert caught.value.request_id == "req_x"


# -- pro_bar ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "freq, api_name, fields",
    [("D", "index_daily", DAILY), ("w", "index_weekly", BARS), (" M ", "index_monthly", BARS)],
)
def test_pro_bar_reads_the_dataset_of_its_freq_with_the_code_upper_cased(
    freq, api_name, fields
) -> None:
    row = ROWS[0] if api_name == "index_daily" else BAR
    answer = tushare_ok(fields, [row])
    api, transport, _ = api_with(answer)
    frame = ts.pro_bar(ts_code=" gpu_index,ssd_Index ", api=api, freq=freq, start_date="20261101")
    (request,) = transport.requests
    assert request.url == f"{URL}/{api_name}"
    assert json.loads(request.body) == {
        "api_name": api_name,
        "token": TEST_KEY,
        "params": {
            "ts_code": "GPU_INDEX,SSD_INDEX",
            "start_date": "20261101",
            "end_date": "",
            "offset": None,
            "limit": None,
        },
        "fields": "",
    }
    pd.testing.assert_frame_equal(frame, sdk_frame(answer))


def test_pro_bar_pages_with_offset_and_limit() -> None:
    api, transport, _ = api_with(tushare_ok(DAILY, ROWS[:1]))
    ts.pro_bar("GPU_Index", api, end_date="20261120", asset="i", offset=5, limit=1)
    params = transport.bodies[0]["params"]
    assert params["offset"] == 5 and params["limit"] == 1 and params["end_date"] == "20261120"


def test_pro_bar_fields_select_the_frames_columns_in_their_order() -> None:
    replies = [tushare_ok(BARS, [BAR]) for _ in range(3)]
    api, transport, _ = api_with(*replies)
    frame = ts.pro_bar("GPU_Index", api, freq="W", fields="trade_date, close,ts_code")
    assert list(frame.columns) == ["trade_date", "close", "ts_code"]
    assert frame.loc[0, "close"] == 1012.3
    listed = ts.pro_bar("GPU_Index", api, freq="W", fields=["high", "low"])
    assert list(listed.columns) == ["high", "low"]
    # As the SDK: every column is asked for, the selection is made on the frame.
    assert [b["fields"] for b in transport.bodies] == ["", ""]
    with pytest.raises(KeyError, match="vol"):
        ts.pro_bar("GPU_Index", api, freq="W", fields="trade_date,vol")


@pytest.mark.parametrize("asset", ["E", "FT", "", "C"])
def test_pro_bar_serves_indexes_only(asset) -> None:
    api, transport, _ = api_with()
    with pytest.raises(ValueError, match="asset"):
        ts.pro_bar("GPU_Index", api, asset=asset)
    assert transport.requests == []


@pytest.mark.parametrize("freq", ["Y", "60min", "", "Q"])
def test_pro_bar_serves_days_weeks_and_months_only(freq) -> None:
    api, transport, _ = api_with()
    with pytest.raises(ValueError, match="freq"):
        ts.pro_bar("GPU_Index", api, freq=freq)
    assert transport.requests == []


def test_pro_bar_without_api_uses_pro_api(monkeypatch: pytest.MonkeyPatch) -> None:
    api, transport, _ = api_with(tushare_ok(DAILY, ROWS))
    monkeypatch.setattr(ts, "pro_api", lambda: api)
    assert len(ts.pro_bar("GPU_Index")) == 2
    assert transport.requests[0].url == f"{URL}/index_daily"


# -- the token --------------------------------------------------------------------------


def test_set_token_is_used_by_pro_api_without_a_token(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    ts.set_token(TEST_KEY)
    assert ts.get_token() == TEST_KEY
    api = ts.pro_api(base_url="http://iq.test")
    assert api.token == TEST_KEY and api.client.api_key == TEST_KEY
    api.client.transport = FakeTransport(tushare_ok(DAILY, ROWS))
    api.index_daily(ts_code="GPU_Index")
    assert api.client.transport.bodies[0]["token"] == TEST_KEY
    # A token given wins; nothing was written to the home directory.
    assert ts.pro_api(OTHER_KEY).token == OTHER_KEY
    assert list(tmp_path.iterdir()) == []
    # An empty one forgets it.
    ts.set_token("")
    assert ts.get_token() is None and ts.pro_api().token == ""


def test_iq_api_key_is_the_fallback_after_set_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IQ_API_KEY", OTHER_KEY)
    assert ts.get_token() == OTHER_KEY
    assert ts.pro_api().token == OTHER_KEY
    assert ts.pro_api(None).token == OTHER_KEY
    ts.set_token(TEST_KEY)
    assert ts.pro_api().token == TEST_KEY


def test_no_token_is_the_visitor_with_an_empty_token() -> None:
    api = ts.pro_api(base_url="http://iq.test")
    assert api.token == "" and api.client.api_key is None
    api.client.transport = FakeTransport(tushare_ok(["ts_code"], [["GPU_Index"]]))
    api.index_basic(fields="ts_code")
    assert api.client.transport.bodies[0]["token"] == ""
    assert api.url == URL


def test_a_token_not_of_the_services_shape_is_refused_before_any_request() -> None:
    tushare_token = "0123456789abcdef" * 3  # a Tushare token, not a key of this service
    with pytest.raises(AuthenticationError) as caught:
        ts.pro_api(tushare_token)
    assert tushare_token not in str(caught.value)
    with pytest.raises(TypeError):
        ts.set_token(123)  # type: ignore[arg-type]


# -- the object -------------------------------------------------------------------------


def test_private_names_are_not_datasets() -> None:
    api = ts.pro_api()
    with pytest.raises(AttributeError):
        api._secret  # noqa: B018 - the attribute access is the test
    with pytest.raises(AttributeError):
        api.__array__  # noqa: B018
    assert callable(api.index_weekly)


def test_the_sdks_url_names_the_same_service() -> None:
    for base in ("http://iq.test/tushare", "http://iq.test/tushare/", "http://iq.test/"):
        assert ts.pro_api(base_url=base).url == URL


def test_repr_shows_the_url_and_only_a_hint_of_the_key() -> None:
    api = ts.pro_api(TEST_KEY, base_url="http://iq.test/")
    text = repr(api)
    assert URL in text and TEST_KEY not in text
    with api:
        pass

"""Point-in-time queries (decision D17): ``as_of`` and ``updated_since`` on the
market-data methods, checked locally as the service checks them, sent as strings in
``params``; ``published_at`` as a UTC datetime column."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal

import pandas as pd
import pytest

from iq_client import AsyncClient, LocalValidationError
from iq_client.validation import normalise_instant, rfc3339

from fakes import DAILY, FULL_DAILY, TEST_KEY, FakeTransport, make_client, ok

SHANGHAI = dt.timezone(dt.timedelta(hours=8))  # the service's usual zone, as an offset
MARKET = ["index_daily", "index_latest", "index_quote"]


def sent_params(method: str, **arguments):
    client, transport, _ = make_client(ok(DAILY, []))
    getattr(client, method)(**arguments)
    return transport.bodies[0].get("params", {})


# -- what is sent ------------------------------------------------------------------


@pytest.mark.parametrize("method", MARKET)
def test_as_of_and_updated_since_are_sent_as_params(method: str) -> None:
    params = sent_params(
        method,
        as_of="2026-11-22T18:00:00+08:00",
        updated_since="2026-11-21T10:15:30.123456Z",
        fixed_end_date=False,
    )
    assert params == {
        "as_of": "2026-11-22T18:00:00+08:00",
        "updated_since": "2026-11-21T10:15:30.123456Z",
    }


@pytest.mark.parametrize(
    "value, expected",
    [
        ("20261122", "20261122"),  # a date: the end of that day in the service's zone
        ("2026-11-22", "2026-11-22"),
        (dt.date(2026, 11, 22), "2026-11-22"),
        (dt.datetime(2026, 11, 22, 18, 0, tzinfo=SHANGHAI), "2026-11-22T10:00:00Z"),
        (
            dt.datetime(2026, 11, 22, 10, 15, 30, 123456, tzinfo=dt.timezone.utc),
            "2026-11-22T10:15:30.123456Z",
        ),
        (pd.Timestamp("2026-11-22 18:00:00.000001+08:00"), "2026-11-22T10:00:00.000001Z"),
        ("2026-11-22T18:00:00-05:30", "2026-11-22T18:00:00-05:30"),
        ("2026-11-22t18:00:00z", "2026-11-22t18:00:00z"),
        ("2026-12-31T23:59:60Z", "2026-12-31T23:59:60Z"),  # a leap second
    ],
)
def test_as_of_forms(value, expected) -> None:
    assert sent_params("index_daily", as_of=value, fixed_end_date=False) == {"as_of": expected}


def test_updated_since_takes_an_aware_datetime_as_utc() -> None:
    moment = dt.datetime(2026, 11, 21, 9, 0, 0, 500000, tzinfo=SHANGHAI)
    params = sent_params("index_quote", updated_since=moment, fixed_end_date=False)
    assert params == {"updated_since": "2026-11-21T01:00:00.500000Z"}


def test_the_generic_query_takes_them_too() -> None:
    client, transport, _ = make_client(ok(DAILY, []))
    client.query(
        "index_latest",
        {"as_of": dt.date(2026, 11, 20)},
        updated_since="2026-11-19T00:00:00Z",
    )
    assert transport.bodies[0]["params"] == {
        "as_of": "2026-11-20",
        "updated_since": "2026-11-19T00:00:00Z",
    }


def test_end_date_is_still_pinned_with_as_of() -> None:
    """Only the data travels back in time: the cutoff is today's, so a bulk pull
    still pins end_date to it."""
    client, transport, _ = make_client(ok(DAILY, []))
    client.index_daily(as_of="2026-11-01")
    assert transport.bodies[0]["params"] == {"as_of": "2026-11-01", "end_date": "20261120"}
    assert len(transport.membership_requests) == 1


def test_every_page_asks_the_same_as_of() -> None:
    row = ["20261119", "GPU_Index", "1", "2", "3", "4"]
    client, transport, _ = make_client(
        ok(DAILY, [row], has_more=True), ok(DAILY, [row], offset=1), page_size=1
    )
    frame = client.index_daily(as_of="2026-11-22T00:00:00Z", fixed_end_date=False)
    assert len(frame) == 2
    assert [b["params"] for b in transport.bodies] == [{"as_of": "2026-11-22T00:00:00Z"}] * 2
    assert frame.attrs["params"] == {"as_of": "2026-11-22T00:00:00Z"}


# -- refused locally, before any request -------------------------------------------


def refused(method: str = "index_daily", **arguments) -> str:
    client, transport, _ = make_client()  # no reply scripted: a request would fail
    with pytest.raises(LocalValidationError) as caught:
        getattr(client, method)(**arguments)
    assert transport.requests == [] and transport.membership_requests == []
    assert caught.value.code == 40001 and caught.value.request_id is None
    return str(caught.value)


@pytest.mark.parametrize("name", ["as_of", "updated_since"])
@pytest.mark.parametrize("method", MARKET)
def test_a_naive_datetime_is_refused(method: str, name: str) -> None:
    message = refused(method, **{name: dt.datetime(2026, 11, 22, 18, 0)})
    assert "naive" in message and "offset" in message and name in message


def test_a_naive_pandas_timestamp_is_refused() -> None:
    assert "naive" in refused(as_of=pd.Timestamp("2026-11-22 18:00"))


def test_nat_is_refused() -> None:
    assert "NaT" in refused(as_of=pd.NaT)


@pytest.mark.parametrize(
    "value",
    ["2026-11-22T18:00:00", "2026-11-22 18:00:00", "2026-11-22T18:00", "2026-11-22T18:00:00.5"],
)
def test_a_local_time_without_offset_is_refused(value: str) -> None:
    message = refused(as_of=value)
    assert "no offset" in message


@pytest.mark.parametrize(
    "value",
    ["20261122", "2026-11-22", dt.date(2026, 11, 22)],
)
def test_updated_since_takes_no_date(value) -> None:
    assert "updated_since" in refused(updated_since=value)


@pytest.mark.parametrize(
    "value, why",
    [
        ("2026-02-30T00:00:00Z", "calendar date"),
        ("2026-11-22T24:00:00Z", "time of day"),
        ("2026-11-22T18:61:00Z", "time of day"),
        ("2026-11-22T18:00:00+24:00", "offset"),
        ("20261131", "calendar date"),
        ("2026-11-22T18:00Z", "RFC 3339"),  # no seconds
        ("2026-11-22T18:00:00+0800", "RFC 3339"),  # the offset needs its colon
        ("yesterday", "RFC 3339"),
        ("", "RFC 3339"),
        (" 2026-11-22T18:00:00Z", "RFC 3339"),
        ("２０２６-11-22T18:00:00Z", "RFC 3339"),  # full-width digits
    ],
)
def test_malformed_instants_are_refused(value: str, why: str) -> None:
    assert why in refused(as_of=value)


@pytest.mark.parametrize("value", [1763800000, 1.5, Decimal("1"), ["2026-11-22"]])
def test_other_types_are_refused(value) -> None:
    assert "as_of" in refused(as_of=value)


@pytest.mark.parametrize("api_name", ["index_basic", "trade_calendar"])
def test_datasets_without_history_refuse_as_of(api_name: str) -> None:
    client, transport, _ = make_client()
    with pytest.raises(LocalValidationError, match="unknown parameter 'as_of'"):
        client.query(api_name, as_of="2026-11-22T00:00:00Z")
    assert transport.requests == []


def test_the_helpers_directly() -> None:
    assert normalise_instant("as_of", "2026-11-22", allow_date=True) == "2026-11-22"
    with pytest.raises(LocalValidationError):
        normalise_instant("updated_since", "2026-11-22", allow_date=False)
    assert rfc3339(dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)) == "0001-01-01T00:00:00Z"
    with pytest.raises(ValueError):
        rfc3339(dt.datetime(2026, 1, 1))


# -- published_at -------------------------------------------------------------------


def test_published_at_is_a_utc_datetime_column() -> None:
    rows = [
        ["20261119", "GPU_Index", "1", "2", None, "3", "4", "2026-11-19T10:15:30.123456Z"],
        ["20261120", "GPU_Index", "1", "2", "1", "3", "4", "2026-11-20T10:15:31.000001Z"],
    ]
    client, _, _ = make_client(ok(FULL_DAILY, rows))
    frame = client.index_daily(fields=FULL_DAILY, fixed_end_date=False)
    assert str(frame["published_at"].dtype) == "datetime64[ns, UTC]"
    assert frame.loc[0, "published_at"] == pd.Timestamp("2026-11-19T10:15:30.123456Z")
    assert frame["published_at"].iloc[1].microsecond == 1
    as_text, _, _ = make_client(ok(FULL_DAILY, rows))
    strings = as_text.index_daily(fields=FULL_DAILY, fixed_end_date=False, dates="string")
    assert strings["published_at"].tolist() == [rows[0][7], rows[1][7]]


def test_an_empty_answer_keeps_the_published_at_dtype() -> None:
    client, _, _ = make_client(ok(FULL_DAILY, []))
    frame = client.index_daily(fields=FULL_DAILY, fixed_end_date=False)
    assert str(frame["published_at"].dtype) == "datetime64[ns, UTC]" and frame.empty


def test_default_fields_do_not_change() -> None:
    client, transport, _ = make_client(ok(DAILY, []))
    frame = client.index_daily(as_of="2026-11-20", fixed_end_date=False)
    assert "fields" not in transport.bodies[0]
    assert list(frame.columns) == DAILY


def test_csv_export_writes_published_at_as_sent() -> None:
    import iq_client

    rows = [["20261120", "GPU_Index", "1", "2", "1", "3", "-4", "2026-11-20T10:15:31.000001Z"]]
    client, _, _ = make_client(ok(FULL_DAILY, rows))
    frame = client.index_daily(fields=FULL_DAILY, fixed_end_date=False)
    text = iq_client.to_csv(frame)
    assert text.splitlines()[1].endswith(",-4.0,2026-11-20T10:15:31.000001Z")
    assert text.splitlines()[1].startswith("2026-11-20,GPU_Index,")


# -- the asyncio client ------------------------------------------------------------


def test_the_async_client_sends_and_refuses_the_same() -> None:
    transport = FakeTransport(ok(DAILY, []))

    class Async:
        async def send(self, request, timeout):
            return transport.send(request, timeout)

    async def go() -> None:
        async with AsyncClient(TEST_KEY, base_url="http://iq.test", transport=Async()) as client:
            await client.index_quote(
                as_of=dt.date(2026, 11, 22),
                updated_since=dt.datetime(2026, 11, 21, tzinfo=dt.timezone.utc),
                fixed_end_date=False,
            )
            with pytest.raises(LocalValidationError, match="naive"):
                await client.index_latest(as_of=dt.datetime(2026, 11, 22))

    asyncio.run(go())
    assert transport.bodies[0]["params"] == {
        "as_of": "2026-11-22",
        "updated_since": "2026-11-21T00:00:00Z",
    }
    assert len(transport.bodies) == 1

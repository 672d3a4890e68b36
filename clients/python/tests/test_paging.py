"""Paging (spec 4.3): follow has_more with offset + returned, keep end_date fixed."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest

from iq_client import APIError, AuthenticationError, Client, HTTPResponse

from fakes import (
    CAL,
    DAILY,
    TEST_KEY,
    FakeTransport,
    calendar_page,
    error,
    make_client,
    membership,
    ok,
)


def calendar_server(days: int, cap: int):
    """A fake service holding ``days`` calendar rows that caps pages at ``cap``."""
    rows = [[f"2026{(i // 28) + 1:02d}{(i % 28) + 1:02d}", None] for i in range(days)]

    def answer(request):
        body = json.loads(request.body)
        limit = min(body["limit"], cap)
        offset = body["offset"]
        page = rows[offset : offset + limit]
        return ok(
            CAL,
            page,
            offset=offset,
            limit=limit,
            has_more=offset + len(page) < days,
            request_id=f"req_{offset}",
        )

    return answer, rows


def test_pages_are_followed_with_offset_plus_returned() -> None:
    answer, rows = calendar_server(days=10, cap=4)
    client, transport, _ = make_client(answer, repeat_last=True)
    frame = client.trade_calendar(dates="string")
    assert frame["trade_date"].tolist() == [r[0] for r in rows]
    assert [(b["offset"], b["limit"]) for b in transport.bodies] == [
        (0, 5000),
        (4, 5000),
        (8, 5000),
    ]
    assert frame.attrs["request_ids"] == ["req_0", "req_4", "req_8"]


def test_page_size_offset_and_total_limit() -> None:
    answer, rows = calendar_server(days=10, cap=100)
    client, transport, _ = make_client(answer, repeat_last=True)
    frame = client.query("trade_calendar", page_size=3, offset=2, limit=5, dates="string")
    assert frame["trade_date"].tolist() == [r[0] for r in rows[2:7]]
    assert [(b["offset"], b["limit"]) for b in transport.bodies] == [(2, 3), (5, 2)]


def test_iter_query_yields_one_frame_per_page_lazily() -> None:
    answer, rows = calendar_server(days=7, cap=3)
    client, transport, _ = make_client(answer, repeat_last=True)
    pages = client.iter_query("trade_calendar", page_size=3)
    assert transport.requests == []  # nothing sent before the first next()
    sizes = []
    for frame in pages:
        assert str(frame["trade_date"].dtype) == "datetime64[ns]"
        sizes.append(len(frame))
    assert sizes == [3, 3, 1]


def test_iter_query_validates_at_once() -> None:
    client, transport, _ = make_client()
    with pytest.raises(ValueError):
        client.iter_query("trade_calendar", {"index_code": "GPU_Index"})
    assert transport.requests == []


def test_end_date_is_pinned_to_the_data_cutoff_the_service_reports() -> None:
    first = ok(DAILY, [["20261119", "GPU_Index", "1", "2", "3", "4"]], limit=1, has_more=True)
    second = ok(DAILY, [["20261120", "GPU_Index", "1", "2", "3", "4"]], offset=1, limit=1)
    client, transport, _ = make_client(first, second, membership=membership(cutoff="20261120"))
    frame = client.index_daily(start_date="20261101")
    assert len(frame) == 2
    assert [b["params"] for b in transport.bodies] == [
        {"start_date": "20261101", "end_date": "20261120"},
        {"start_date": "20261101", "end_date": "20261120"},
    ]
    assert frame.attrs["params"]["end_date"] == "20261120"
    # One membership lookup for the whole pull, with the key, never counted.
    [asked] = transport.membership_requests
    assert asked.method == "GET" and asked.url == "http://iq.test/api/v1/membership"
    assert asked.headers["X-API-Key"] == TEST_KEY and asked.body == b""


def test_a_service_ahead_of_utc_plus_8_keeps_its_newest_day() -> None:
    """SERVICE_TZ east of Shanghai (Pacific/Kiritimati, UTC+14): at 20:00 UTC+8 on
    20 November it is already the 21st there, and the service's data for the 21st
    exists. The client never guesses "today" itself: it pins end_date to the cutoff
    the service reports, a day later than "today" in UTC+8."""
    shanghai_today = dt.datetime.now(dt.timezone(dt.timedelta(hours=8))).date()
    tomorrow = (shanghai_today + dt.timedelta(days=1)).strftime("%Y%m%d")
    newest = ok(DAILY, [[tomorrow, "GPU_Index", "1", "2", "3", "4"]])
    client, transport, _ = make_client(newest, membership=membership(cutoff=tomorrow))
    frame = client.index_daily(index_code="GPU_Index")
    assert transport.bodies[0]["params"] == {"index_code": "GPU_Index", "end_date": tomorrow}
    assert frame["trade_date"].iloc[-1] == pd.Timestamp(tomorrow)
    client, transport, _ = make_client(newest, membership=membership(cutoff=tomorrow))
    assert len(list(client.iter_query("index_daily", start_date=shanghai_today))) == 1
    assert transport.bodies[0]["params"]["end_date"] == tomorrow


def test_a_free_key_is_pinned_to_its_delayed_cutoff() -> None:
    client, transport, _ = make_client(
        ok(["trade_date"], []), membership=membership(cutoff="20261110", tier="free", delay_days=7)
    )
    client.index_quote(start_date="20261101")
    assert transport.bodies[0]["params"] == {"start_date": "20261101", "end_date": "20261110"}


def test_the_visitor_is_pinned_to_the_visitors_cutoff() -> None:
    transport = FakeTransport(
        ok(["trade_date"], []), membership=membership(identity="visitor", cutoff="20261110")
    )
    Client(base_url="http://iq.test", transport=transport).index_quote()
    assert transport.bodies[0]["params"] == {"end_date": "20261110"}
    assert "X-API-Key" not in transport.membership_requests[0].headers


@pytest.mark.parametrize(
    "answer, why",
    [
        (membership(cutoff=None), "no open day is old enough: nothing to pin to"),
        (membership(identity="visitor"), "the service did not describe the key"),
    ],
)
def test_end_date_is_left_open_when_the_cutoff_cannot_be_trusted(answer, why) -> None:
    client, transport, _ = make_client(ok(["trade_date"], []), membership=answer)
    client.index_quote()
    assert transport.bodies[0].get("params") is None, why
    assert len(transport.membership_requests) == 1


def test_end_date_is_not_pinned_when_not_needed() -> None:
    cases = [
        (lambda c: c.index_daily(end_date="20261110"), {"end_date": "20261110"}),
        (lambda c: c.index_daily(trade_date="20261110"), {"trade_date": "20261110"}),
        (lambda c: c.index_daily(start_date="20261201"), {"start_date": "20261201"}),
        (lambda c: c.query("index_daily", fixed_end_date=False), None),
        (lambda c: c.index_daily(fixed_end_date=False), None),
        (lambda c: c.index_quote(fixed_end_date=False), None),
        (lambda c: c.iter_query("index_quote", fixed_end_date=False).__next__(), None),
        (lambda c: c.trade_calendar(), None),  # not delayed: future days exist
        (lambda c: c.index_latest(), None),
        (lambda c: c.index_basic(), None),
        (lambda c: c.fetch_page("index_quote"), None),
    ]
    for call, expected in cases:
        client, transport, _ = make_client(ok(["trade_date"], []))
        call(client)
        assert transport.bodies[0].get("params") == expected
        # The membership is asked only when a pin is possible (start_date 20261201
        # is after the cutoff: asked, then left open).
        asked = 1 if expected == {"start_date": "20261201"} else 0
        assert len(transport.membership_requests) == asked


def test_a_failed_membership_lookup_is_retried_and_raised_like_a_query() -> None:
    client, transport, sleeps = make_client(
        error(503, 50000),
        membership(cutoff="20261119"),
        ok(["trade_date"], []),
        membership=None,
        jitter=0.0,
    )
    client.index_quote()
    assert [r.method for r in transport.requests] == ["GET", "GET", "POST"]
    assert transport.bodies[0]["params"] == {"end_date": "20261119"}
    assert sleeps.calls == [1.0]
    client, transport, _ = make_client(error(401, 40102, "invalid API key"), membership=None)
    with pytest.raises(AuthenticationError):
        client.index_daily()
    assert len(transport.requests) == 1  # no query after a refused key


def test_iter_query_asks_the_membership_lazily() -> None:
    client, transport, _ = make_client(ok(DAILY, []))
    pages = client.iter_query("index_daily")
    assert transport.membership_requests == [] and transport.requests == []
    assert [len(p) for p in pages] == [0]
    assert len(transport.membership_requests) == 1
    assert transport.bodies[0]["params"] == {"end_date": "20261120"}


def test_the_next_offset_is_the_one_asked_for_plus_rows_returned() -> None:
    """Spec 4.3 rule 2: the offset the service echoes is not trusted."""
    answer, rows = calendar_server(days=7, cap=3)

    def wrong_echo(request):
        response = answer(request)
        body = json.loads(response.body)
        body["data"]["offset"] = 1000  # a buggy echo
        return HTTPResponse.build(
            response.status, dict(response.headers), json.dumps(body).encode()
        )

    client, transport, _ = make_client(wrong_echo, repeat_last=True)
    frame = client.query("trade_calendar", page_size=3, offset=1, dates="string")
    assert [b["offset"] for b in transport.bodies] == [1, 4]
    assert frame["trade_date"].tolist() == [r[0] for r in rows[1:]]


@pytest.mark.parametrize("has_more", ["false", "true", 0, 1, None, [], "yes"])
def test_has_more_must_be_a_boolean(has_more) -> None:
    response = ok(CAL, [["20261120", "20261119"]])
    body = json.loads(response.body)
    body["data"]["has_more"] = has_more
    bad = HTTPResponse.build(200, dict(response.headers), json.dumps(body).encode())
    client, transport, sleeps = make_client(bad)
    with pytest.raises(APIError, match="malformed query answer.*has_more") as caught:
        client.trade_calendar()
    assert caught.value.request_id == "req_ok"
    assert len(transport.requests) == 1 and sleeps.calls == []


def test_has_more_with_an_empty_page_stops_with_an_error() -> None:
    client, _, _ = make_client(ok(CAL, [], has_more=True))
    with pytest.raises(APIError, match="has_more"):
        client.trade_calendar()


def test_progress_bar(capsys: pytest.CaptureFixture) -> None:
    answer, _ = calendar_server(days=5, cap=2)
    client, _, _ = make_client(answer, repeat_last=True)
    frame = client.trade_calendar(progress=True)
    assert len(frame) == 5
    assert "5row" in capsys.readouterr().err.replace(" ", "")


def test_fetch_page_is_one_raw_request() -> None:
    client, transport, _ = make_client(calendar_page())
    page = client.fetch_page("trade_calendar", limit=1, offset=3)
    assert (page.offset, page.returned, page.has_more, page.limit) == (0, 1, True, 1)
    assert page.items == [["20261120", "20261119"]]
    assert page.rate_limit.remaining == 7
    assert transport.bodies == [{"api_name": "trade_calendar", "limit": 1, "offset": 3}]
    assert isinstance(page.to_frame()["trade_date"][0], pd.Timestamp)

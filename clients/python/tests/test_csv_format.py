"""``format="csv"``: the service's own CSV (decision D18), asked with ``Accept: text/csv``,
pages joined under one header row; errors stay typed exceptions."""

from __future__ import annotations

import asyncio
import csv
import io
import json

import pytest

import iq_client
from iq_client import (
    APIError,
    AsyncClient,
    CsvPage,
    HTTPResponse,
    LocalValidationError,
    PermissionDenied,
    RateLimited,
)

from fakes import DAILY, TEST_KEY, FakeTransport, csv_ok, error, make_client, ok, too_many

QUOTE = ["trade_date", "index_code", "specification", "weight", "price"]
ROWS = [
    ["20261118", "GPU_Index", "1005.000000", None, "-1.608992", "-0.159514"],
    ["20261119", "GPU_Index", "1007.074318", "23185.671000", "2.074318", "0.206400"],
    ["20261120", "GPU_Index", "1009.305519", "23237.039500", "2.231201", "0.221553"],
]


def header(fields) -> str:
    return ",".join(fields) + "\r\n"


def test_csv_is_asked_with_accept_and_returned_as_sent() -> None:
    client, transport, _ = make_client(csv_ok(DAILY, ROWS))
    text = client.query("index_daily", index_code="GPU_Index", format="csv", fixed_end_date=False)
    request = transport.requests[0]
    assert request.headers["Accept"] == "text/csv"
    assert json.loads(request.body)["params"] == {"index_code": "GPU_Index"}
    assert text == csv_ok(DAILY, ROWS).body.decode()
    lines = text.split("\r\n")
    assert lines[0] == ",".join(DAILY)
    assert lines[1] == "20261118,GPU_Index,1005.000000,,-1.608992,-0.159514"  # null: empty
    assert client.last_request_id == "req_csv"


def test_json_is_asked_by_default_without_pyarrow(monkeypatch) -> None:
    monkeypatch.setattr(iq_client.arrow, "available", lambda: False)
    client, transport, _ = make_client(ok(DAILY, ROWS))
    client.index_daily(fixed_end_date=False)
    assert transport.requests[0].headers["Accept"] == "application/json"


def test_pages_are_joined_under_one_header() -> None:
    client, transport, _ = make_client(
        csv_ok(DAILY, ROWS[:2], has_more=True, limit=2, request_id="req_1"),
        csv_ok(DAILY, ROWS[2:], offset=2, limit=2, request_id="req_2"),
        page_size=2,
    )
    text = client.index_daily("GPU_Index", format="csv")
    assert text == csv_ok(DAILY, ROWS).body.decode()
    assert text.count(",".join(DAILY)) == 1
    assert [(b["offset"], b["limit"]) for b in transport.bodies] == [(0, 2), (2, 2)]
    # end_date pinned for the bulk pull, as for frames
    assert {b["params"]["end_date"] for b in transport.bodies} == {"20261120"}
    assert len(transport.membership_requests) == 1


def test_quoted_cells_survive_the_join() -> None:
    odd = [
        ["20261120", "Server_Index", 'rack, 8" "quoted"', "0.50000000", "1.000000"],
        ["20261120", "Server_Index", "two\r\nlines", "0.50000000", "2.000000"],
    ]
    client, _, _ = make_client(
        csv_ok(QUOTE, odd[:1], has_more=True, limit=1),
        csv_ok(QUOTE, odd[1:], offset=1, limit=1),
        page_size=1,
    )
    text = client.index_quote(trade_date="20261120", format="csv")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows == [QUOTE] + odd


def test_an_empty_answer_is_the_header_row() -> None:
    client, _, _ = make_client(csv_ok(QUOTE, []))
    assert client.index_quote(trade_date="20261121", format="csv") == header(QUOTE)


def test_limit_cuts_a_page_that_holds_more() -> None:
    client, _, _ = make_client(csv_ok(DAILY, ROWS))  # a service sending more than asked
    text = client.query("index_daily", limit=2, format="csv", fixed_end_date=False)
    assert text == csv_ok(DAILY, ROWS[:2]).body.decode()


def test_errors_stay_typed_exceptions() -> None:
    client, _, _ = make_client(error(403, 40302, "outside the key's range", request_id="req_x"))
    with pytest.raises(PermissionDenied) as caught:
        client.index_daily("Hardware_Index", format="csv", fixed_end_date=False)
    assert (caught.value.code, caught.value.request_id) == (40302, "req_x")


def test_429_is_retried_for_csv_too() -> None:
    client, transport, sleeps = make_client(too_many(retry_after=3), csv_ok(DAILY, ROWS))
    text = client.index_daily(format="csv", fixed_end_date=False)
    assert text.startswith(",".join(DAILY)) and sleeps.calls == [3.5]
    assert len(transport.requests) == 2
    client, _, _ = make_client(too_many(), repeat_last=True, max_retries=1)
    with pytest.raises(RateLimited):
        client.index_daily(format="csv", fixed_end_date=False)


def test_a_service_that_answers_json_gets_the_same_csv() -> None:
    """A service without D18 answers JSON: the client writes it as the service would."""
    odd = [["20261120", "Server_Index", 'a, "b"', "0.50000000", None]]
    client, _, _ = make_client(ok(QUOTE, odd))
    text = client.index_quote(trade_date="20261120", format="csv")
    assert text == csv_ok(QUOTE, odd).body.decode()


def test_a_malformed_csv_answer_raises() -> None:
    broken = HTTPResponse.build(200, {"Content-Type": "text/csv"}, b"a,b\r\n1,2\r\n")
    client, _, _ = make_client(broken)
    with pytest.raises(APIError, match="malformed CSV answer"):
        client.index_daily(format="csv", fixed_end_date=False)


def test_iter_query_yields_each_page_as_sent() -> None:
    client, _, _ = make_client(
        csv_ok(DAILY, ROWS[:2], has_more=True, limit=2),
        csv_ok(DAILY, ROWS[2:], offset=2, limit=2),
        page_size=2,
    )
    pages = list(client.iter_query("index_daily", format="csv", fixed_end_date=False))
    assert pages == [
        csv_ok(DAILY, ROWS[:2]).body.decode(),
        csv_ok(DAILY, ROWS[2:]).body.decode(),
    ]


def test_an_unknown_format_is_refused_locally() -> None:
    client, transport, _ = make_client()
    with pytest.raises(LocalValidationError, match="format"):
        client.index_daily(format="xlsx")  # type: ignore[call-overload]
    assert transport.requests == []


@pytest.mark.parametrize(
    "method",
    ["index_basic", "index_daily", "index_latest", "index_quote", "revisions", "trade_calendar"],
)
def test_every_dataset_method_takes_format(method: str) -> None:
    client, transport, _ = make_client(csv_ok(["x"], []))
    assert getattr(client, method)(format="csv", fixed_end_date=False) == "x\r\n"
    assert transport.requests[0].headers["Accept"] == "text/csv"


def test_as_of_with_csv() -> None:
    client, transport, _ = make_client(csv_ok(DAILY, ROWS))
    client.index_daily(as_of="2026-11-20", format="csv", fixed_end_date=False)
    assert transport.bodies[0]["params"] == {"as_of": "2026-11-20"}


def test_csv_page_helpers() -> None:
    from iq_client.catalogue import dataset

    answer = csv_ok(QUOTE, [["20261120", "A", "x,y", "1", "2"]], has_more=True)
    page = CsvPage.from_response(dataset("index_quote"), answer, request_id="r", rate_limit=None)
    assert page.fields == QUOTE and page.returned == 1 and page.has_more
    assert page.rows() == [["20261120", "A", "x,y", "1", "2"]]
    assert page.body == '20261120,A,"x,y",1,2\r\n'
    assert page.cut(0).text == header(QUOTE) and page.cut(0).returned == 0


# -- the asyncio client ------------------------------------------------------------


def test_the_async_client_asks_and_joins_csv_the_same() -> None:
    transport = FakeTransport(
        csv_ok(DAILY, ROWS[:2], has_more=True, limit=2),
        csv_ok(DAILY, ROWS[2:], offset=2, limit=2),
        error(403, 40301, "no scope"),
    )

    class Async:
        async def send(self, request, timeout):
            return transport.send(request, timeout)

    async def go() -> None:
        async with AsyncClient(
            TEST_KEY, base_url="http://iq.test", transport=Async(), page_size=2
        ) as client:
            text = await client.index_daily(format="csv", fixed_end_date=False)
            assert text == csv_ok(DAILY, ROWS).body.decode()
            with pytest.raises(PermissionDenied):
                await client.query("index_quote", format="csv", fixed_end_date=False)

    asyncio.run(go())
    assert {r.headers["Accept"] for r in transport.requests} == {"text/csv"}


def test_the_async_iter_query_yields_csv_pages() -> None:
    transport = FakeTransport(csv_ok(DAILY, ROWS))

    class Async:
        async def send(self, request, timeout):
            return transport.send(request, timeout)

    async def go() -> list:
        client = AsyncClient(TEST_KEY, base_url="http://iq.test", transport=Async())
        return [
            p async for p in client.iter_query("index_daily", format="csv", fixed_end_date=False)
        ]

    assert asyncio.run(go()) == [csv_ok(DAILY, ROWS).body.decode()]

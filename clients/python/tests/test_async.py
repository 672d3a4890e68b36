"""AsyncClient: the same surface as Client, over httpx (tested with httpx.MockTransport).

No test needs an event-loop plugin: each runs its coroutine with asyncio.run().
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import subprocess
import sys
from typing import Any, List

import pandas as pd
import pytest

httpx = pytest.importorskip("httpx", reason="AsyncClient needs httpx: pip install -e '.[test]'")

from iq_client import (  # noqa: E402
    AsyncClient,
    AuthenticationError,
    Client,
    HttpxTransport,
    InvalidRequest,
    LocalValidationError,
    Membership,
    PermissionDenied,
    QuotaExhausted,
    RateLimited,
    ServerError,
    TransportError,
)

from fakes import (  # noqa: E402
    CAL,
    DAILY,
    DEFAULT_MEMBERSHIP,
    TEST_KEY,
    calendar_page,
    error,
    membership,
    ok,
    raw,
    too_many,
)

ROW = ["20261120", "GPU_Index", "1009.305519", "23237.039500", "-2.231201", "0.221553"]


class MockService:
    """Scripted answers for httpx.MockTransport; records every request. Replies are
    fakes.HTTPResponse objects, exceptions to raise, or functions of the request."""

    def __init__(self, *replies: Any, repeat_last: bool = False, membership: Any = None) -> None:
        self.replies = list(replies)
        self.repeat_last = repeat_last
        self.membership = membership
        self.requests: List[httpx.Request] = []
        self.membership_requests: List[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.membership is not None and request.url.path == "/api/v1/membership":
            self.membership_requests.append(request)
            reply = self.membership
        else:
            self.requests.append(request)
            if not self.replies:
                raise AssertionError(f"unexpected request: {request.content!r}")
            keep = self.repeat_last and len(self.replies) == 1
            reply = self.replies[0] if keep else self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            reply = reply(request)
        return httpx.Response(reply.status, headers=dict(reply.headers), content=reply.body)

    @property
    def bodies(self) -> List[dict]:
        return [json.loads(r.content) for r in self.requests if r.method == "POST"]


class Sleeps(list):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(
    *replies: Any,
    repeat_last: bool = False,
    jitter: float = 0.5,
    membership: Any = DEFAULT_MEMBERSHIP,
    **options: Any,
) -> "tuple[AsyncClient, MockService, Sleeps]":
    service = MockService(*replies, repeat_last=repeat_last, membership=membership)
    sleeps = Sleeps()
    options.setdefault("api_key", TEST_KEY)
    options.setdefault("base_url", "http://iq.test")
    client = AsyncClient(
        transport=httpx.MockTransport(service), sleep=sleeps, random=lambda: jitter, **options
    )
    return client, service, sleeps


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


# -- the same surface ----------------------------------------------------------------


def test_the_public_methods_are_the_same_as_clients() -> None:
    def public(cls: type) -> set:
        return {n for n in dir(cls) if not n.startswith("_")} - {"close", "aclose"}

    assert public(AsyncClient) == public(Client)
    for name in ("query", "fetch_page", "whoami"):
        assert inspect.iscoroutinefunction(getattr(AsyncClient, name)), name
    for name in ("query", "iter_query", "fetch_page", "index_daily", "index_quote"):
        a = inspect.signature(getattr(AsyncClient, name)).parameters
        b = inspect.signature(getattr(Client, name)).parameters
        assert list(a) == list(b), name
    a = inspect.signature(AsyncClient.__init__).parameters
    b = inspect.signature(Client.__init__).parameters
    assert list(a) == list(b)


def test_query_returns_a_typed_frame() -> None:
    async def go() -> None:
        client, service, _ = make(ok(DAILY, [ROW], request_id="req_a"))
        async with client:
            frame = await client.index_daily("GPU_Index", trade_date="2026-11-20")
        assert str(frame["trade_date"].dtype) == "datetime64[ns]"
        assert frame["change"].tolist() == [-2.231201]
        assert frame.attrs == {
            "api_name": "index_daily",
            "params": {"index_code": "GPU_Index", "trade_date": "20261120"},
            "request_ids": ["req_a"],
        }
        [request] = service.requests
        assert request.method == "POST" and str(request.url) == "http://iq.test/api/v1/query"
        assert request.headers["x-api-key"] == TEST_KEY
        assert request.headers["user-agent"].startswith("iq-client-python/")
        assert json.loads(request.content) == {
            "api_name": "index_daily",
            "params": {"index_code": "GPU_Index", "trade_date": "20261120"},
            "limit": 5000,
            "offset": 0,
        }
        assert client.last_request_id == "req_a"

    run(go())


def test_every_typed_method_is_awaitable_and_takes_the_paging_options() -> None:
    async def go() -> None:
        client, service, _ = make(ok(["trade_date"], []), repeat_last=True, membership=None)
        for call in (
            client.index_basic(fixed_end_date=False, page_size=10),
            client.index_daily(fixed_end_date=False, page_size=10),
            client.index_latest(fixed_end_date=False, page_size=10, progress=False),
            client.index_quote(fixed_end_date=False, page_size=10, limit=5),
            client.trade_calendar(fixed_end_date=False, page_size=10, decimals="decimal"),
        ):
            assert isinstance(await call, pd.DataFrame)
        assert [b["limit"] for b in service.bodies] == [10, 10, 10, 5, 10]
        assert all("params" not in b for b in service.bodies)

    run(go())


def test_decimal_and_string_modes() -> None:
    async def go() -> None:
        client, _, _ = make(ok(DAILY, [ROW]), decimals="decimal", dates="string")
        frame = await client.query("index_daily", index_code="GPU_Index", end_date="20261120")
        assert (
            str(frame.loc[0, "change"]) == "-2.231201" and frame.loc[0, "trade_date"] == "20261120"
        )

    run(go())


# -- paging and pinning --------------------------------------------------------------


def calendar_server(days: int, cap: int):
    rows = [[f"2026{(i // 28) + 1:02d}{(i % 28) + 1:02d}", None] for i in range(days)]

    def answer(request: httpx.Request):
        body = json.loads(request.content)
        limit = min(body["limit"], cap)
        offset = body["offset"]
        page = rows[offset : offset + limit]
        return ok(CAL, page, offset=offset, limit=limit, has_more=offset + len(page) < days)

    return answer, rows


def test_pages_are_followed_like_the_blocking_client() -> None:
    async def go() -> None:
        answer, rows = calendar_server(days=10, cap=4)
        client, service, _ = make(answer, repeat_last=True)
        frame = await client.trade_calendar(dates="string", offset=1, limit=8)
        assert frame["trade_date"].tolist() == [r[0] for r in rows[1:9]]
        assert [(b["offset"], b["limit"]) for b in service.bodies] == [(1, 8), (5, 4)]

    run(go())


def test_iter_query_is_an_async_iterator_validated_at_once() -> None:
    async def go() -> None:
        answer, _ = calendar_server(days=7, cap=3)
        client, service, _ = make(answer, repeat_last=True)
        pages = client.iter_query("trade_calendar", page_size=3)
        assert service.requests == []
        assert [len(p) async for p in pages] == [3, 3, 1]
        with pytest.raises(LocalValidationError):
            client.iter_query("trade_calendar", {"index_code": "GPU_Index"})

    run(go())


def test_end_date_is_pinned_to_the_services_cutoff_ahead_of_utc_plus_8() -> None:
    # The service's zone is ahead: its cutoff is "tomorrow" in UTC+8 terms.
    async def go() -> None:
        client, service, _ = make(
            ok(DAILY, [ROW]), ok(DAILY, []), membership=membership(cutoff="20261121")
        )
        await client.index_quote(start_date="20261101")
        assert service.bodies[0]["params"] == {"start_date": "20261101", "end_date": "20261121"}
        assert len(service.membership_requests) == 1
        pages = client.iter_query("index_daily")
        assert len(service.membership_requests) == 1  # lazily: not before iterating
        assert [len(p) async for p in pages] == [0]
        assert service.bodies[1]["params"] == {"end_date": "20261121"}
        assert len(service.membership_requests) == 2  # once per pull

    run(go())


def test_fixed_end_date_false_sends_the_query_as_given() -> None:
    async def go() -> None:
        client, service, _ = make(ok(DAILY, []))
        await client.index_daily(fixed_end_date=False)
        assert "params" not in service.bodies[0] and service.membership_requests == []

    run(go())


def test_fetch_page_is_one_raw_request() -> None:
    async def go() -> None:
        client, service, _ = make(calendar_page())
        page = await client.fetch_page("trade_calendar", limit=1, offset=3)
        assert page.items == [["20261120", "20261119"]] and page.has_more
        assert page.rate_limit.remaining == 7 and client.last_rate_limit.remaining == 7
        assert service.bodies == [{"api_name": "trade_calendar", "limit": 1, "offset": 3}]

    run(go())


def test_progress_bar(capsys: pytest.CaptureFixture) -> None:
    async def go() -> None:
        answer, _ = calendar_server(days=5, cap=2)
        client, _, _ = make(answer, repeat_last=True)
        assert len(await client.trade_calendar(progress=True)) == 5

    run(go())
    assert "5row" in capsys.readouterr().err.replace(" ", "")


# -- whoami --------------------------------------------------------------------------


def test_whoami() -> None:
    async def go() -> None:
        client, service, _ = make(membership(request_id="req_who"), membership=None)
        who = await client.whoami()
        assert isinstance(who, Membership) and who.tier == "pro" and who.key.name == "laptop"
        assert who.quota.used_day == 40 and who.request_id == "req_who"
        [request] = service.requests
        assert request.method == "GET" and request.url.path == "/api/v1/membership"
        assert request.headers["x-api-key"] == TEST_KEY

    run(go())


# -- retries and errors --------------------------------------------------------------


def test_429_backoff_then_success() -> None:
    async def go() -> None:
        client, service, sleeps = make(too_many(), too_many(), ok(CAL, []), jitter=0.25)
        await client.trade_calendar()
        assert sleeps == [1.25, 2.25] and len(service.requests) == 3

    run(go())


def test_at_most_five_retries_then_rate_limited() -> None:
    async def go() -> None:
        client, service, sleeps = make(too_many(), repeat_last=True, jitter=0.0)
        with pytest.raises(RateLimited) as caught:
            await client.trade_calendar()
        assert type(caught.value) is RateLimited and caught.value.code == 42901
        assert sleeps == [1.0, 2.0, 4.0, 8.0, 16.0] and len(service.requests) == 6

    run(go())


def test_retry_after_is_honoured_and_too_long_is_not_waited_for() -> None:
    async def go() -> None:
        client, _, sleeps = make(
            too_many(retry_after=30), too_many(retry_after=3), ok(CAL, []), jitter=0.5
        )
        await client.trade_calendar()
        assert sleeps == [30.5, 3.5]
        client, service, sleeps = make(too_many(retry_after=600))
        with pytest.raises(RateLimited):
            await client.trade_calendar()
        assert sleeps == [] and len(service.requests) == 1

    run(go())


def test_the_daily_quota_is_not_retried() -> None:
    async def go() -> None:
        client, service, sleeps = make(too_many(code=42902, retry_after=72000))
        with pytest.raises(QuotaExhausted) as caught:
            await client.trade_calendar()
        assert caught.value.code == 42902 and caught.value.retry_after == 72000
        assert sleeps == [] and len(service.requests) == 1

    run(go())


def test_5xx_is_retried_then_raised() -> None:
    async def go() -> None:
        client, service, sleeps = make(
            error(500, 50000), raw(502, b"bad gateway"), ok(CAL, []), jitter=0.0
        )
        await client.trade_calendar()
        assert sleeps == [1.0, 2.0]
        client, _, _ = make(raw(503, b""), repeat_last=True, max_retries=1)
        with pytest.raises(ServerError) as caught:
            await client.trade_calendar()
        assert caught.value.http_status == 503

    run(go())


@pytest.mark.parametrize(
    "failure, cls",
    [
        (error(400, 40001), InvalidRequest),
        (error(401, 40102), AuthenticationError),
        (error(403, 40302), PermissionDenied),
    ],
)
def test_client_errors_are_typed_and_never_retried(failure, cls) -> None:
    async def go() -> None:
        client, service, sleeps = make(failure)
        with pytest.raises(cls) as caught:
            await client.index_latest()
        assert caught.value.request_id == "req_err" and sleeps == []
        assert len(service.requests) == 1

    run(go())


def test_a_plain_sleep_function_works_too() -> None:
    async def go() -> None:
        waits: list = []
        client = AsyncClient(
            TEST_KEY,
            base_url="http://iq.test",
            transport=httpx.MockTransport(MockService(too_many(), ok(CAL, []))),
            sleep=waits.append,
            random=lambda: 0.0,
        )
        await client.trade_calendar()
        assert waits == [1.0]

    run(go())


def test_local_refusal_sends_nothing() -> None:
    async def go() -> None:
        client, service, _ = make()
        with pytest.raises(LocalValidationError):
            await client.index_daily(trade_date="20261105", start_date="20261101")
        with pytest.raises(LocalValidationError):
            await client.query("index_daily", {"ts_code": "x"})
        assert service.requests == [] and service.membership_requests == []

    run(go())


# -- the httpx transport ------------------------------------------------------------


@pytest.mark.parametrize(
    "failure, timed_out",
    [
        (httpx.ReadTimeout("slow"), True),
        (httpx.ConnectTimeout("slow"), True),
        (httpx.ConnectError("refused"), False),
        (httpx.RemoteProtocolError("peer closed"), False),
    ],
)
def test_network_failures_are_retried_transport_errors(failure, timed_out) -> None:
    async def go() -> None:
        client, service, sleeps = make(failure, ok(CAL, []), jitter=0.0)
        await client.trade_calendar()
        assert sleeps == [1.0]
        client, service, sleeps = make(failure, repeat_last=True, jitter=0.0, max_retries=2)
        with pytest.raises(TransportError) as caught:
            await client.trade_calendar()
        assert caught.value.timed_out is timed_out and caught.value.retryable
        assert len(service.requests) == 3

    run(go())


def test_a_bad_header_is_not_retried_and_not_shown(caplog: pytest.LogCaptureFixture) -> None:
    import socket
    import threading

    from iq_client import HTTPRequest

    caplog.set_level(logging.DEBUG)
    listener = socket.socket()  # accepts; httpx refuses the header before sending it
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    threading.Thread(target=listener.accept, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/x"

    async def go() -> None:
        transport = HttpxTransport()
        secret = "iq_secret\nvalue"
        try:
            with pytest.raises(TransportError) as caught:
                await transport.send(HTTPRequest("GET", url, {"X-API-Key": secret}), 2.0)
        finally:
            await transport.aclose()
            listener.close()
        err = caught.value
        assert not err.retryable and "secret" not in str(err)
        assert err.__cause__ is None and err.__context__ is None
        assert not [
            r for r in caplog.records if r.name == "iq_client" and "secret" in r.getMessage()
        ]

    run(go())


def test_a_refused_connection_on_the_real_transport() -> None:
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()

    async def go() -> None:
        sleeps = Sleeps()
        async with AsyncClient(
            TEST_KEY,
            base_url=f"http://127.0.0.1:{port}",
            sleep=sleeps,
            random=lambda: 0.0,
            max_retries=2,
        ) as client:
            with pytest.raises(TransportError) as caught:
                await client.index_latest()
        assert not caught.value.timed_out and sleeps == [1.0, 2.0]

    run(go())


def test_the_timeout_reaches_httpx() -> None:
    seen: list = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        answer = ok(CAL, [])
        return httpx.Response(200, headers=dict(answer.headers), content=answer.body)

    async def go() -> None:
        client = AsyncClient(
            TEST_KEY, base_url="http://iq.test", timeout=2.5, transport=httpx.MockTransport(handler)
        )
        await client.trade_calendar()

    run(go())
    assert seen == [{"connect": 2.5, "read": 2.5, "write": 2.5, "pool": 2.5}]


def test_transports_and_who_closes_them() -> None:
    async def go() -> None:
        mine = httpx.AsyncClient(transport=httpx.MockTransport(MockService(ok(CAL, []))))
        client = AsyncClient(TEST_KEY, base_url="http://iq.test", transport=mine)
        await client.trade_calendar()
        await client.aclose()
        assert not mine.is_closed  # the caller's own httpx client stays open
        await mine.aclose()
        made = AsyncClient(TEST_KEY, base_url="http://iq.test")
        assert isinstance(made.transport, HttpxTransport)
        await made.aclose()
        assert made.transport.client.is_closed

        class Plain:
            async def send(self, request, timeout):
                return ok(CAL, [["20261120", "20261119"]])

        plain = AsyncClient(TEST_KEY, base_url="http://iq.test", transport=Plain())
        assert len(await plain.trade_calendar()) == 1
        await plain.aclose()
        with pytest.raises(TypeError, match="send"):
            AsyncClient(TEST_KEY, transport=object())

    run(go())


def test_configuration_is_checked_as_by_client() -> None:
    with pytest.raises(AuthenticationError):
        AsyncClient(TEST_KEY + "\n", transport=httpx.MockTransport(MockService()))
    with pytest.raises(ValueError, match="scheme"):
        AsyncClient(
            TEST_KEY, base_url="localhost:8080", transport=httpx.MockTransport(MockService())
        )
    client = AsyncClient(TEST_KEY, transport=httpx.MockTransport(MockService()))
    assert (
        repr(client)
        == f"AsyncClient(base_url='http://127.0.0.1:8080', api_key='{TEST_KEY[:9]}...')"
    )


def test_iq_client_imports_without_httpx() -> None:
    code = (
        "import sys; sys.modules['httpx'] = None\n"
        "import iq_client\n"
        "class T:\n"
        "    async def send(self, request, timeout): raise AssertionError\n"
        "iq_client.AsyncClient(transport=T())\n"
        "try:\n"
        "    iq_client.AsyncClient()\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "pip install 'iq-client[async]'" in result.stdout


def test_one_client_serves_concurrent_tasks() -> None:
    def answer(request: httpx.Request):
        body = json.loads(request.content)
        code = body["params"]["index_code"]
        return ok(DAILY, [["20261120", code, "1", "2", "3", "4"]], request_id=f"req_{code}")

    async def go() -> None:
        client, service, _ = make(answer, repeat_last=True)
        codes = ["GPU_Index", "SSD_Index", "CPU_Index", "DRAM_Index"]
        frames = await asyncio.gather(*(client.index_daily(code) for code in codes))
        assert [f["index_code"].tolist() for f in frames] == [[c] for c in codes]
        assert [f.attrs["request_ids"] for f in frames] == [[f"req_{c}"] for c in codes]
        assert len(service.membership_requests) == 4  # one per pull
        await client.aclose()

    run(go())

"""Test doubles: a scripted transport, a recording sleep, envelope builders."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from iq_client import Client, HTTPRequest, HTTPResponse, TransportError

Reply = Union[HTTPResponse, Exception, Callable[[HTTPRequest], HTTPResponse]]

#: Keys of the service's shape (``iq_`` + 40 letters and digits); not real keys.
TEST_KEY = "iq_" + "TestKey0" * 5
OTHER_KEY = "iq_" + "OtherKey" * 5


def ok(
    fields: Sequence[str],
    items: Sequence[Sequence[Any]],
    *,
    offset: int = 0,
    limit: int = 1000,
    has_more: bool = False,
    request_id: str = "req_ok",
    headers: Optional[Dict[str, str]] = None,
) -> HTTPResponse:
    """A successful query answer."""
    body = {
        "request_id": request_id,
        "code": 0,
        "message": "ok",
        "data": {
            "fields": list(fields),
            "items": [list(row) for row in items],
            "limit": limit,
            "offset": offset,
            "returned": len(items),
            "has_more": has_more,
        },
    }
    return HTTPResponse.build(
        200,
        {"Content-Type": "application/json", "X-Request-Id": request_id, **(headers or {})},
        json.dumps(body).encode(),
    )


def error(
    status: int,
    code: int,
    message: str = "refused",
    *,
    request_id: str = "req_err",
    headers: Optional[Dict[str, str]] = None,
) -> HTTPResponse:
    """An error envelope."""
    body = {"request_id": request_id, "code": code, "message": message, "data": None}
    return HTTPResponse.build(
        status,
        {"Content-Type": "application/json", "X-Request-Id": request_id, **(headers or {})},
        json.dumps(body).encode(),
    )


def raw(status: int, body: bytes, content_type: str = "text/html") -> HTTPResponse:
    """An answer that is not an envelope (a proxy's error page, say)."""
    return HTTPResponse.build(status, {"Content-Type": content_type}, body)


def too_many(code: int = 42901, retry_after: Optional[int] = None) -> HTTPResponse:
    headers = {"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "0"}
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
        headers["X-RateLimit-Reset"] = str(retry_after)
    return error(429, code, "slow down", headers=headers)


class FakeTransport:
    """Answers each request with the next scripted reply, and records the requests.

    A reply may be a response, an exception to raise, or a function of the request.
    Running out of replies fails the test (a request that should not have been sent).
    """

    def __init__(self, *replies: Reply, repeat_last: bool = False) -> None:
        self.replies: List[Reply] = list(replies)
        self.repeat_last = repeat_last
        self.requests: List[HTTPRequest] = []
        self.timeouts: List[float] = []

    def send(self, request: HTTPRequest, timeout: float) -> HTTPResponse:
        self.requests.append(request)
        self.timeouts.append(timeout)
        if not self.replies:
            raise AssertionError(f"unexpected request: {request.body!r}")
        reply = (
            self.replies[0]
            if (self.repeat_last and len(self.replies) == 1)
            else self.replies.pop(0)
        )
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            return reply(request)
        return reply

    @property
    def bodies(self) -> List[Dict[str, Any]]:
        """The JSON bodies sent, in order."""
        return [json.loads(r.body) for r in self.requests]


class Sleeps:
    """A ``sleep`` that records instead of waiting."""

    def __init__(self) -> None:
        self.calls: List[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def make_client(
    *replies: Reply,
    repeat_last: bool = False,
    jitter: float = 0.5,
    **options: Any,
) -> "tuple[Client, FakeTransport, Sleeps]":
    """A client on a FakeTransport with a recording sleep and fixed jitter."""
    transport = FakeTransport(*replies, repeat_last=repeat_last)
    sleeps = Sleeps()
    options.setdefault("api_key", TEST_KEY)
    options.setdefault("base_url", "http://iq.test")
    client = Client(transport=transport, sleep=sleeps, random=lambda: jitter, **options)
    return client, transport, sleeps


def timeout_error() -> TransportError:
    return TransportError("no answer within 30 s", timed_out=True)

"""Test doubles: a scripted transport, a recording sleep, envelope builders (and those
of the Tushare wire)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from iq_client import Client, HTTPRequest, HTTPResponse, TransportError

Reply = Union[HTTPResponse, Exception, Callable[[HTTPRequest], HTTPResponse]]

#: ``index_daily``'s (and ``index_latest``'s) default fields, and all of them.
DAILY = ["trade_date", "index_code", "index_value", "weighted_price", "change", "pct_change"]
FULL_DAILY = DAILY[:4] + ["pre_value"] + DAILY[4:] + ["published_at"]
#: ``trade_calendar``'s fields.
CAL = ["trade_date", "pretrade_date"]
#: ``index_basic``'s facts (D20): returned only when named in ``fields``.
INDEX_FACTS = [
    "currency",
    "price_basis",
    "source",
    "publish_time",
    "methodology_version",
    "latest_trade_date",
    "next_publication_at",
]

#: The client's README, whose table of the datasets users read.
README = Path(__file__).resolve().parents[1] / "README.md"


def documented_defaults(api_name: str) -> List[str]:
    """``api_name``'s default fields as the README's table of the datasets lists them
    (without the fields it names as given on request; ``as index_daily``: that one's)."""
    for line in README.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] == f"`{api_name}`":
            listed = re.sub(r"\s*\(\+ .* on request\)$", "", cells[2])
            if listed.startswith("as "):
                return documented_defaults(listed[len("as ") :])
            return listed.split(", ")
    raise AssertionError(f"{api_name} is not in the README's table of the datasets")


#: Keys of the service's shape (``iq_`` + 40 letters and digits); not real keys.
TEST_KEY = "iq_" + "TestKey0" * 5
OTHER_KEY = "iq_" + "OtherKey" * 5


@dataclass(frozen=True)
class Place:
    """Where a scripted page of a query answer stands, and what else it carries: the
    keyword arguments of :func:`ok` and :func:`csv_ok` (how many rows it returns is
    its items')."""

    offset: int = 0
    limit: int = 1000
    has_more: bool = False
    request_id: str = "req_ok"
    headers: Dict[str, str] = field(default_factory=dict)


def ok(fields: Sequence[str], items: Sequence[Sequence[Any]], **place: Any) -> HTTPResponse:
    """A successful query answer (``place``: see :class:`Place`)."""
    at = Place(**place)
    body = {
        "request_id": at.request_id,
        "code": 0,
        "message": "ok",
        "data": {
            "fields": list(fields),
            "items": [list(row) for row in items],
            "limit": at.limit,
            "offset": at.offset,
            "returned": len(items),
            "has_more": at.has_more,
        },
    }
    return HTTPResponse.build(
        200,
        {"Content-Type": "application/json", "X-Request-Id": at.request_id, **at.headers},
        json.dumps(body).encode(),
    )


def arrow_ok(types: Dict[str, Any], rows: Sequence[Sequence[Any]], **place: Any) -> HTTPResponse:
    """A successful query answer asked as an Arrow stream (D29): ``types`` maps each
    field to its pyarrow type, ``rows`` hold Python values of those types (``place``:
    see :class:`Place`; the request id is ``req_arrow`` unless told)."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    at = Place(**{"request_id": "req_arrow", **place})
    names = list(types)
    arrays = [pa.array([row[i] for row in rows], type=types[n]) for i, n in enumerate(names)]
    table = pa.Table.from_arrays(arrays, names=names)
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return HTTPResponse.build(
        200,
        {
            "Content-Type": "application/vnd.apache.arrow.stream",
            "X-Request-Id": at.request_id,
            "X-Limit": str(at.limit),
            "X-Offset": str(at.offset),
            "X-Returned": str(len(rows)),
            "X-Has-More": "true" if at.has_more else "false",
            **at.headers,
        },
        sink.getvalue().to_pybytes(),
    )


def calendar_page() -> HTTPResponse:
    """One calendar row of a page of 1 with more to come, answered with
    ``X-RateLimit-Remaining: 7``: what the ``fetch_page`` tests ask for."""
    return ok(
        CAL,
        [["20261120", "20261119"]],
        limit=1,
        has_more=True,
        headers={"X-RateLimit-Remaining": "7"},
    )


def csv_ok(fields: Sequence[str], items: Sequence[Sequence[Any]], **place: Any) -> HTTPResponse:
    """A successful query answer asked with ``Accept: text/csv`` (D18), written as the
    service writes it: RFC 4180 quoting, CRLF, null as an empty cell (``place``: see
    :class:`Place`; the request id is ``req_csv`` unless told)."""

    def cell(value: Any) -> str:
        text = "" if value is None else str(value)
        if any(c in text for c in ',"\r\n'):
            return '"' + text.replace('"', '""') + '"'
        return text

    at = Place(**{"request_id": "req_csv", **place})
    lines = [",".join(fields)] + [",".join(cell(v) for v in row) for row in items]
    body = "".join(line + "\r\n" for line in lines)
    return HTTPResponse.build(
        200,
        {
            "Content-Type": "text/csv; charset=utf-8",
            "X-Request-Id": at.request_id,
            "X-Limit": str(at.limit),
            "X-Offset": str(at.offset),
            "X-Returned": str(len(items)),
            "X-Has-More": "true" if at.has_more else "false",
            **at.headers,
        },
        body.encode("utf-8"),
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


def tushare_ok(
    fields: Sequence[str],
    items: Sequence[Sequence[Any]],
    *,
    has_more: bool = False,
    request_id: str = "req_ts",
    headers: Optional[Dict[str, str]] = None,
) -> HTTPResponse:
    """A successful answer of the Tushare wire (``POST /tushare/{api_name}``), as the
    service writes it: ``msg`` empty, ``data`` with ``fields``, ``items`` and
    ``has_more``; numbers as JSON numbers."""
    body = {
        "request_id": request_id,
        "code": 0,
        "msg": "",
        "data": {
            "fields": list(fields),
            "items": [list(row) for row in items],
            "has_more": has_more,
        },
    }
    return HTTPResponse.build(
        200,
        {"Content-Type": "application/json", "X-Request-Id": request_id, **(headers or {})},
        json.dumps(body).encode(),
    )


def tushare_refusal(
    code: int,
    msg: str = "refused",
    *,
    status: int = 200,
    request_id: str = "req_ts_err",
    headers: Optional[Dict[str, str]] = None,
) -> HTTPResponse:
    """A refusal on the Tushare wire: HTTP 200 (a 5xx keeps its status), the service's
    ``code`` and ``msg``, ``data`` null."""
    body = {"request_id": request_id, "code": code, "msg": msg, "data": None}
    return HTTPResponse.build(
        status,
        {"Content-Type": "application/json", "X-Request-Id": request_id, **(headers or {})},
        json.dumps(body).encode(),
    )


def membership_data(
    *,
    identity: str = "key",
    cutoff: Optional[str] = "20261120",
    tier: str = "pro",
    delay_days: int = 0,
    **overrides: Any,
) -> Dict[str, Any]:
    """The ``data`` of ``GET /api/v1/membership`` as the service sends it."""
    data: Dict[str, Any] = {
        "identity": identity,
        "user": {"id": "7", "username": "kim", "role": "user"},
        "tier": tier,
        "delay_days": delay_days,
        "data_cutoff": cutoff,
        "indexes": ["Server_Index", "GPU_Index"],
        "key": {
            "id": "key_01",
            "name": "laptop",
            "scopes": ["index:read", "quote:read", "calendar:read"],
            "index_codes": None,
            "expires_at": None,
        },
        "quota": {
            "per_minute": 60,
            "per_day": 10000,
            "max_keys": 5,
            "max_rows": 5000,
            "used_minute": 2,
            "used_day": 40,
            "remaining_minute": 58,
            "remaining_day": 9960,
        },
    }
    if identity != "key":
        data["user"] = None
        del data["key"]
        for name in ("used_minute", "used_day", "remaining_minute", "remaining_day"):
            del data["quota"][name]
        data["protection"] = {"per_minute": 300}
    data.update(overrides)
    return data


def membership(request_id: str = "req_who", **options: Any) -> HTTPResponse:
    """A ``GET /api/v1/membership`` answer (see :func:`membership_data`)."""
    body = {
        "request_id": request_id,
        "code": 0,
        "message": "ok",
        "data": membership_data(**options),
    }
    return HTTPResponse.build(
        200,
        {"Content-Type": "application/json", "X-Request-Id": request_id},
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

    With ``membership`` set, every ``GET /api/v1/membership`` is answered with it and
    recorded in ``membership_requests`` only (``requests`` and ``bodies`` hold the
    queries); without it, such a request takes the next scripted reply like any other.
    """

    def __init__(
        self, *replies: Reply, repeat_last: bool = False, membership: Optional[Reply] = None
    ) -> None:
        self.replies: List[Reply] = list(replies)
        self.repeat_last = repeat_last
        self.membership = membership
        self.requests: List[HTTPRequest] = []
        self.membership_requests: List[HTTPRequest] = []
        self.timeouts: List[float] = []

    def send(self, request: HTTPRequest, timeout: float) -> HTTPResponse:
        if self.membership is not None and request.url.endswith("/api/v1/membership"):
            self.membership_requests.append(request)
            return _answer(self.membership, request)
        self.requests.append(request)
        self.timeouts.append(timeout)
        if not self.replies:
            raise AssertionError(f"unexpected request: {request.body!r}")
        reply = (
            self.replies[0]
            if (self.repeat_last and len(self.replies) == 1)
            else self.replies.pop(0)
        )
        return _answer(reply, request)

    @property
    def bodies(self) -> List[Dict[str, Any]]:
        """The JSON bodies of the queries sent, in order."""
        return [json.loads(r.body) for r in self.requests if r.method == "POST"]


def _answer(reply: Reply, request: HTTPRequest) -> HTTPResponse:
    if isinstance(reply, Exception):
        raise reply
    if callable(reply):
        return reply(request)
    return reply


class Sleeps:
    """A ``sleep`` that records instead of waiting."""

    def __init__(self) -> None:
        self.calls: List[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


#: What the fakes' service reports by default: a pro key, cutoff 2026-11-20.
DEFAULT_MEMBERSHIP = membership()


def make_client(
    *replies: Reply,
    repeat_last: bool = False,
    jitter: float = 0.5,
    membership: Optional[Reply] = DEFAULT_MEMBERSHIP,
    **options: Any,
) -> "tuple[Client, FakeTransport, Sleeps]":
    """A client on a FakeTransport with a recording sleep and fixed jitter; the
    membership (for pinning ``end_date``) answers cutoff 2026-11-20 unless told."""
    transport = FakeTransport(*replies, repeat_last=repeat_last, membership=membership)
    sleeps = Sleeps()
    options.setdefault("api_key", TEST_KEY)
    options.setdefault("base_url", "http://iq.test")
    client = Client(transport=transport, sleep=sleeps, random=lambda: jitter, **options)
    return client, transport, sleeps


def timeout_error() -> TransportError:
    return TransportError("no answer within 30 s", timed_out=True)

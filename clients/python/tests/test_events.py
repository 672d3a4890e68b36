"""``events()`` and ``verify_webhook`` (decisions D22, D27): the feed long-polled page
after page, ``next`` followed, narrowed by type and index, the cursor file remembered and
read back, bad arguments refused locally; webhook messages verified as the Standard
Webhooks specification says."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from test_async import make as make_async

from iq_client import Event, LocalValidationError, WebhookVerificationError, verify_webhook
from iq_client.transport import HTTPResponse

from fakes import make_client


def event(n: int, kind: str = "index.published") -> Dict[str, Any]:
    return {
        "id": f"evt_{n}",
        "type": kind,
        "timestamp": "2026-11-20T10:00:03.512345Z",
        "data": {
            "index_code": "GPU_Index",
            "trade_dates": ["20261119", "20261120"],
            "published_at": "2026-11-20T10:00:03.498Z",
        },
    }


def revised(n: int, reason: Any) -> Dict[str, Any]:
    message = event(n, "index.revised")
    message["data"]["reason"] = reason
    return message


def page(events: List[Dict[str, Any]], next_id: str) -> HTTPResponse:
    body = {
        "request_id": "req_e",
        "code": 0,
        "message": "ok",
        "data": {"events": events, "next": next_id},
    }
    return HTTPResponse.build(
        200,
        {"Content-Type": "application/json", "X-Request-Id": "req_e"},
        json.dumps(body).encode(),
    )


def test_events_follow_next_and_stop_at_an_empty_page_when_not_following() -> None:
    client, transport, _ = make_client(
        page([event(1), event(2)], "evt_2"),
        page([event(3, "index.revised")], "evt_3"),
        page([], "evt_3"),
    )
    got = list(client.events(follow=False, wait=5, limit=2))
    assert [e.id for e in got] == ["evt_1", "evt_2", "evt_3"]
    assert got[2].type == "index.revised"
    assert got[2].reason is None and got[0].reason is None
    assert got[0].trade_dates == (dt.date(2026, 11, 19), dt.date(2026, 11, 20))
    assert got[0].published_at == dt.datetime(
        2026, 11, 20, 10, 0, 3, 498000, tzinfo=dt.timezone.utc
    )
    urls = [r.url for r in transport.requests]
    assert urls[0] == "http://iq.test/api/v1/events?limit=2&wait=5"
    assert urls[1].endswith("&after=evt_2") and urls[2].endswith("&after=evt_3")
    # A long poll waits longer than the client's own timeout.
    assert all(t >= 5 + 30 for t in transport.timeouts)


def test_types_and_index_code_narrow_the_feed_on_every_request() -> None:
    client, transport, _ = make_client(
        page([event(1, "index.revised")], "evt_1"), page([], "evt_1")
    )
    got = list(client.events(follow=False, types=["index.revised"], index_code="GPU_Index"))
    assert [e.id for e in got] == ["evt_1"]
    for request in transport.requests:
        assert "&types=index.revised&index_code=GPU_Index" in request.url, request.url


def test_a_cursor_file_remembers_each_event_taken(tmp_path: Path) -> None:
    cursor = tmp_path / "events.cursor"
    client, transport, _ = make_client(page([event(7), event(8)], "evt_8"), page([], "evt_8"))
    events = client.events(follow=False, cursor=cursor)
    assert next(events).id == "evt_7"
    assert next(events).id == "evt_8"
    # Written once the caller came back for more: evt_7 is handled, evt_8 may not be.
    assert cursor.read_text().strip() == "evt_7"
    assert list(events) == []
    assert cursor.read_text().strip() == "evt_8"
    again, transport, _ = make_client(page([], "evt_8"))
    assert list(again.events(follow=False, cursor=cursor)) == []
    assert transport.requests[0].url.endswith("&after=evt_8")


@pytest.mark.parametrize(
    "arguments",
    [
        {"after": "42"},
        {"after": "evt_x"},
        {"wait": 31},
        {"wait": -1},
        {"limit": 0},
        {"limit": 1001},
        {"wait": True},
        {"types": "index.revised"},
        {"types": []},
        {"types": ["index.deleted"]},
        {"index_code": ""},
    ],
)
def test_bad_arguments_are_refused_before_any_request(arguments: Dict[str, Any]) -> None:
    client, transport, _ = make_client()
    with pytest.raises(LocalValidationError):
        client.events(**arguments)
    assert transport.requests == []


def test_the_async_client_iterates_too() -> None:
    client, service, _ = make_async(page([event(1)], "evt_1"), page([], "evt_1"))

    async def collect() -> List[Event]:
        return [e async for e in client.events(follow=False)]

    assert [e.id for e in asyncio.run(collect())] == ["evt_1"]
    assert service.requests[1].url.params["after"] == "evt_1"


# -- webhooks ------------------------------------------------------------------------

#: The example of the Standard Webhooks specification.
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_HEADERS = {
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": "1614265330",
    "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
}


def signed(body: bytes, secret: str, at: int, message_id: str = "evt_9") -> Dict[str, str]:
    key = base64.b64decode(secret[len("whsec_") :])
    mac = hmac.new(key, f"{message_id}.{at}.".encode() + body, hashlib.sha256).digest()
    return {
        "Webhook-Id": message_id,
        "Webhook-Timestamp": str(at),
        "Webhook-Signature": "v1,bm90IHRoaXMgb25l v1," + base64.b64encode(mac).decode(),
    }


def test_a_message_signed_with_the_secret_verifies() -> None:
    body = json.dumps({k: v for k, v in event(9).items() if k != "id"}).encode()
    got = verify_webhook(
        body, signed(body, SPEC_SECRET, 1_800_000_000), SPEC_SECRET, now=lambda: 1_800_000_100
    )
    assert got.id == "evt_9" and got.index_code == "GPU_Index"


def test_the_specification_example_verifies_and_a_change_does_not() -> None:
    body = b'{"test": 2432232314}'
    with pytest.raises(ValueError):  # not an event, but the signature held
        verify_webhook(body, SPEC_HEADERS, SPEC_SECRET, now=lambda: 1614265330)
    for headers, when in [
        (dict(SPEC_HEADERS, **{"webhook-id": "msg_other"}), 1614265330),
        (SPEC_HEADERS, 1614265330 + 301),
        ({"webhook-id": "x"}, 1614265330),
    ]:
        with pytest.raises(WebhookVerificationError):
            verify_webhook(body, headers, SPEC_SECRET, now=lambda when=when: when)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body + b" ", SPEC_HEADERS, SPEC_SECRET, now=lambda: 1614265330)


def test_a_revised_event_carries_its_reason() -> None:
    client, _, _ = make_client(
        page([revised(1, "Distributor price corrected"), revised(2, None)], "evt_2"),
        page([], "evt_2"),
    )
    got = list(client.events(follow=False))
    assert [e.reason for e in got] == ["Distributor price corrected", None]
    with pytest.raises(ValueError):
        from iq_client.events import parse_event

        parse_event(revised(3, 42))

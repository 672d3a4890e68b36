"""Events: what the service tells of publications and revisions, read from the feed
(:meth:`iq_client.Client.events`) or received by a webhook (:func:`verify_webhook`).

An event names what to fetch, never a value: ``index.published`` (trading days of an
index became visible to the account) or ``index.revised`` (values it could already see
changed), with the index, the days and the instant the newest value was published.
Fetch the values with a query (``client.index_daily(index_code=..., trade_date=...)``,
or ``as_of=event.published_at``).

Webhook messages follow the Standard Webhooks specification; :func:`verify_webhook`
checks one with the standard library alone (any Standard Webhooks library does the same).
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import hashlib
import hmac
import json
import os
import re
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import IQError, LocalValidationError

__all__ = ["Event", "EventPage", "WebhookVerificationError", "verify_webhook"]

#: How far a message's timestamp may be from now, in seconds (the specification's).
TOLERANCE = 5 * 60
_EVENT_ID = re.compile(r"evt_[0-9]{1,19}")
_FRACTION = re.compile(r"\.([0-9]+)")


class WebhookVerificationError(IQError):
    """A webhook message that is not signed with the secret, or too old or new."""


@dataclass(frozen=True)
class Event:
    """One event. ``id`` is the feed's (``evt_...``), or a webhook's ``webhook-id``;
    ``data`` is the event's ``data`` object as sent; ``reason`` (``index.revised``
    only) says why the values changed, as the correction's note gave it, else
    ``None``."""

    id: Optional[str]
    type: str
    timestamp: _dt.datetime
    index_code: Optional[str]
    trade_dates: Tuple[_dt.date, ...]
    published_at: Optional[_dt.datetime]
    data: Mapping[str, Any] = field(repr=False)
    reason: Optional[str] = None


@dataclass(frozen=True)
class EventPage:
    """One answer of the feed: its events and the id to continue after."""

    events: List[Event]
    next: str


def check_after(after: Optional[str]) -> Optional[str]:
    """An event id (``evt_`` and a number) or ``None``."""
    if after is None or (isinstance(after, str) and _EVENT_ID.fullmatch(after)):
        return after
    raise LocalValidationError(
        f"after must be an event id such as 'evt_42' (a page's next), got {after!r}"
    )


#: The types of events the feed tells (``types=`` narrows it to some of them).
EVENT_TYPES = ("index.published", "index.revised")


def check_filters(types: Optional[Sequence[str]], index_code: Optional[str]) -> str:
    """The feed's ``types`` and ``index_code`` as query text (empty when neither is
    given), or :class:`LocalValidationError` for a type the feed does not tell."""
    query = ""
    if types is not None:
        if isinstance(types, str) or not all(t in EVENT_TYPES for t in types) or not types:
            raise LocalValidationError(
                f"types must be a list of event types from {list(EVENT_TYPES)}, got {types!r}"
            )
        query += "&types=" + ",".join(types)
    if index_code is not None:
        if not isinstance(index_code, str) or not index_code:
            raise LocalValidationError(f"index_code must be an index code, got {index_code!r}")
        query += "&index_code=" + urllib.parse.quote(index_code, safe="")
    return query


def _instant(text: Any, name: str) -> _dt.datetime:
    if not isinstance(text, str):
        raise ValueError(f"{name} is not an RFC 3339 time: {text!r}")
    normal = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    normal = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], normal, count=1)
    value = _dt.datetime.fromisoformat(normal)
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return value.astimezone(_dt.timezone.utc)


def parse_event(obj: Any, id: Optional[str] = None) -> Event:
    """An event from its JSON object (the feed's, or a webhook's body)."""
    if not isinstance(obj, Mapping) or not isinstance(obj.get("type"), str):
        raise ValueError(f"not an event: {obj!r}"[:200])
    data = obj.get("data") or {}
    if not isinstance(data, Mapping):
        raise ValueError("an event's data is not an object")
    dates = data.get("trade_dates") or []
    published = data.get("published_at")
    return Event(
        id=obj.get("id", id),
        type=obj["type"],
        timestamp=_instant(obj.get("timestamp"), "timestamp"),
        index_code=data.get("index_code"),
        trade_dates=tuple(_dt.datetime.strptime(d, "%Y%m%d").date() for d in dates),
        published_at=None if published is None else _instant(published, "published_at"),
        data=data,
        reason=_reason(data.get("reason")),
    )


def _reason(value: Any) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"an event's reason is not text: {value!r}"[:200])


def parse_page(data: Any) -> EventPage:
    """The feed's ``data``: ``{events, next}``."""
    if not isinstance(data, Mapping) or not isinstance(data.get("events"), list):
        raise ValueError("the event feed's answer has no events list")
    return EventPage(events=[parse_event(e) for e in data["events"]], next=str(data["next"]))


def read_cursor(path: "os.PathLike[str] | str") -> Optional[str]:
    """The event id remembered in ``path``; ``None`` when there is none yet."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read().strip()
    except FileNotFoundError:
        return None
    return check_after(text) if text else None


def write_cursor(path: "os.PathLike[str] | str", event_id: str) -> None:
    """Remembers ``event_id`` in ``path``, replacing the file whole (never half written)."""
    temporary = f"{os.fspath(path)}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        file.write(event_id + "\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def verify_webhook(
    body: Union[bytes, str],
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance: int = TOLERANCE,
    now: Callable[[], float] = time.time,
) -> Event:
    """Checks a webhook message and returns its event (``id`` is its ``webhook-id``).

    ``body`` is the request body exactly as received (bytes, or text); ``headers`` the
    request's headers (any letter case); ``secret`` the endpoint's ``whsec_...``.

    Raises:
        WebhookVerificationError: a header missing, a timestamp more than
            ``tolerance`` seconds from now, or no signature made with the secret.
    """
    lower = {name.lower(): value for name, value in headers.items()}
    message_id = lower.get("webhook-id")
    stamp = lower.get("webhook-timestamp")
    signatures = lower.get("webhook-signature")
    if not message_id or not stamp or not signatures:
        raise WebhookVerificationError("the webhook-id, -timestamp or -signature header is missing")
    try:
        sent = int(stamp)
    except ValueError:
        raise WebhookVerificationError("webhook-timestamp is not a number") from None
    if abs(now() - sent) > tolerance:
        raise WebhookVerificationError("the message's timestamp is too old or too new")
    try:
        key = base64.b64decode(secret[len("whsec_") :] if secret.startswith("whsec_") else secret)
    except (binascii.Error, ValueError):
        raise ValueError("secret is not a whsec_ secret") from None
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    signed = f"{message_id}.{sent}.".encode("utf-8") + raw
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")
    for candidate in signatures.split(" "):
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return parse_event(json.loads(raw), id=message_id)
    raise WebhookVerificationError("no signature matches the secret")

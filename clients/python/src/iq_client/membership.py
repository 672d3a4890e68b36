"""``GET /api/v1/membership``: who the caller is and what it may see, typed.

With a key the service describes the key (``identity`` ``"key"``): its owner, tier,
delay, data cutoff, visible indexes, the key itself (scopes, index range, expiry) and
today's use against its effective limits. Without a key it describes the anonymous
visitor and the per-minute protection of callers without a key. Asking never counts
against a quota.

:meth:`iq_client.Client.whoami` returns a :class:`Membership`; the client also reads
``data_cutoff`` from it to pin ``end_date`` for bulk pulls.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Tuple

from .errors import APIError

__all__ = [
    "Membership",
    "MembershipUser",
    "MembershipKey",
    "MembershipQuota",
    "KeylessProtection",
    "parse_membership",
]


@dataclass(frozen=True)
class MembershipUser:
    """The key's owner (or the signed-in user).

    Attributes:
        id: the user's id (opaque text).
        username: the user name.
        role: ``user``, ``admin``...
    """

    id: str
    username: str
    role: str


@dataclass(frozen=True)
class MembershipKey:
    """The key the membership was asked with.

    Attributes:
        id: the key's id (as in the service's key listings).
        name: the name its owner gave it.
        scopes: what it may read, e.g. ``("index:read", "quote:read", "calendar:read")``.
        index_codes: the indexes it is limited to; ``None``: every index of its tier.
        expires_at: when it expires (aware, UTC); ``None``: never.
    """

    id: str
    name: str
    scopes: Tuple[str, ...]
    index_codes: Optional[Tuple[str, ...]]
    expires_at: Optional[_dt.datetime]


@dataclass(frozen=True)
class MembershipQuota:
    """The limits that apply, and with a key today's use.

    With a key these are the key's effective limits (the tightest of the key's own,
    its tier's and its account's) and the ``used_*``/``remaining_*`` counts of the
    current UTC minute and day. Without a key they are the tier's key quota, and the
    counts are ``None``.

    Attributes:
        per_minute: calls allowed a minute.
        per_day: calls allowed a (UTC) day.
        max_keys: keys an account of the tier may hold; ``None``: unlimited.
        max_rows: the most rows one page may hold.
        used_minute, used_day: calls counted this minute / day (key only).
        remaining_minute, remaining_day: calls left this minute / day (key only).
    """

    per_minute: int
    per_day: int
    max_keys: Optional[int]
    max_rows: int
    used_minute: Optional[int] = None
    used_day: Optional[int] = None
    remaining_minute: Optional[int] = None
    remaining_day: Optional[int] = None


@dataclass(frozen=True)
class KeylessProtection:
    """The per-minute protection of callers without a key (``0``: none)."""

    per_minute: int


@dataclass(frozen=True)
class Membership:
    """What ``GET /api/v1/membership`` reports for the client's key (or the visitor).

    Attributes:
        identity: ``"key"`` with a key, ``"visitor"`` without one.
        user: the key's owner; ``None`` for the visitor.
        tier: the tier's name (``"free"``, ``"pro"``...).
        delay_days: the tier's delay in open trading days.
        data_cutoff: the latest trade date whose rows this caller sees, in the
            service's time zone; ``None`` when no open day is old enough yet.
        indexes: the index codes this caller sees, in display order.
        key: the key (``None`` without one).
        quota: limits and, with a key, today's use.
        protection: without a key, the per-minute protection that applies.
        request_id: the service's trace id of this answer.
        raw: the answer's ``data`` as sent (fields newer than this client included).
    """

    identity: str
    user: Optional[MembershipUser]
    tier: str
    delay_days: int
    data_cutoff: Optional[_dt.date]
    indexes: Tuple[str, ...]
    key: Optional[MembershipKey]
    quota: MembershipQuota
    protection: Optional[KeylessProtection] = None
    request_id: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def data_cutoff_str(self) -> Optional[str]:
        """``data_cutoff`` as the service sends it (``YYYYMMDD``)."""
        day = self.data_cutoff
        return None if day is None else f"{day.year:04d}{day.month:02d}{day.day:02d}"


class _Malformed(Exception):
    pass


def _get(data: Mapping[str, Any], name: str, kind: Any, *, optional: bool = False) -> Any:
    value = data.get(name)
    if value is None and optional:
        return None
    if isinstance(value, bool) and kind is not bool:
        raise _Malformed(f"{name} is a boolean")
    if not isinstance(value, kind):
        raise _Malformed(f"{name} is {type(value).__name__}")
    return value


def _int(data: Mapping[str, Any], name: str, *, optional: bool = False) -> Optional[int]:
    value = _get(data, name, int, optional=optional)
    return None if value is None else int(value)


def _strings(
    data: Mapping[str, Any], name: str, *, optional: bool = False
) -> Optional[Tuple[str, ...]]:
    values = _get(data, name, list, optional=optional)
    if values is None:
        return None
    if not all(isinstance(v, str) for v in values):
        raise _Malformed(f"{name} holds a value that is not text")
    return tuple(values)


_YYYYMMDD = re.compile(r"([0-9]{4})([0-9]{2})([0-9]{2})")


def _date(text: Optional[str]) -> Optional[_dt.date]:
    if text is None:
        return None
    match = _YYYYMMDD.fullmatch(text) if isinstance(text, str) else None
    if not match:
        raise _Malformed(f"data_cutoff is not YYYYMMDD: {text!r}")
    try:
        return _dt.date(*(int(part) for part in match.groups()))
    except ValueError:
        raise _Malformed(f"data_cutoff is not a calendar date: {text!r}") from None


_FRACTION = re.compile(r"\.([0-9]+)")


def _timestamp(text: Optional[str]) -> Optional[_dt.datetime]:
    """An RFC 3339 time (``2026-12-01T00:00:00Z``, any number of fractional digits)."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise _Malformed(f"expires_at is {type(text).__name__}")
    # datetime.fromisoformat before Python 3.11 takes neither "Z" nor more than 6
    # fractional digits (chrono sends up to 9).
    normal = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    normal = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], normal, count=1)
    try:
        value = _dt.datetime.fromisoformat(normal)
    except ValueError:
        raise _Malformed(f"expires_at is not an RFC 3339 time: {text!r}") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return value.astimezone(_dt.timezone.utc)


def _membership(data: Any, request_id: Optional[str]) -> Membership:
    if not isinstance(data, Mapping):
        raise _Malformed(f"data is {type(data).__name__}, not an object")
    raw_user = _get(data, "user", Mapping, optional=True)
    user = None
    if raw_user is not None:
        user = MembershipUser(
            id=str(_get(raw_user, "id", (str, int))),
            username=_get(raw_user, "username", str),
            role=_get(raw_user, "role", str),
        )
    raw_key = _get(data, "key", Mapping, optional=True)
    key = None
    if raw_key is not None:
        key = MembershipKey(
            id=_get(raw_key, "id", str),
            name=_get(raw_key, "name", str),
            scopes=_strings(raw_key, "scopes") or (),
            index_codes=_strings(raw_key, "index_codes", optional=True),
            expires_at=_timestamp(raw_key.get("expires_at")),
        )
    raw_quota = _get(data, "quota", Mapping)
    quota = MembershipQuota(
        per_minute=_int(raw_quota, "per_minute") or 0,
        per_day=_int(raw_quota, "per_day") or 0,
        max_keys=_int(raw_quota, "max_keys", optional=True),
        max_rows=_int(raw_quota, "max_rows") or 0,
        used_minute=_int(raw_quota, "used_minute", optional=True),
        used_day=_int(raw_quota, "used_day", optional=True),
        remaining_minute=_int(raw_quota, "remaining_minute", optional=True),
        remaining_day=_int(raw_quota, "remaining_day", optional=True),
    )
    raw_protection = _get(data, "protection", Mapping, optional=True)
    protection = None
    if raw_protection is not None:
        protection = KeylessProtection(per_minute=_int(raw_protection, "per_minute") or 0)
    return Membership(
        identity=_get(data, "identity", str),
        user=user,
        tier=_get(data, "tier", str),
        delay_days=_int(data, "delay_days") or 0,
        data_cutoff=_date(data.get("data_cutoff")),
        indexes=_strings(data, "indexes") or (),
        key=key,
        quota=quota,
        protection=protection,
        request_id=request_id,
        raw=dict(data),
    )


def parse_membership(data: Any, *, request_id: Optional[str] = None) -> Membership:
    """A :class:`Membership` from the ``data`` of ``GET /api/v1/membership``.

    Raises:
        APIError: when ``data`` does not have the documented shape.
    """
    try:
        return _membership(data, request_id)
    except _Malformed as problem:
        raise APIError(f"malformed membership answer: {problem}", request_id=request_id) from None

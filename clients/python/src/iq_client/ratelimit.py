"""The service's rate-limit headers, parsed.

Every answer to a key-authenticated query carries ``X-RateLimit-Limit``,
``X-RateLimit-Remaining``, ``X-RateLimit-Reset`` (seconds until the binding window
resets), ``RateLimit-Policy`` and ``RateLimit``; a 429 also carries ``Retry-After``.
Answers to the website identity (no key) carry none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

__all__ = ["RateLimitInfo"]


def _number(text: Optional[str]) -> Optional[float]:
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value >= 0 else None


def _integer(text: Optional[str]) -> Optional[int]:
    value = _number(text)
    return int(value) if value is not None else None


@dataclass(frozen=True)
class RateLimitInfo:
    """Quota state reported with one answer.

    Attributes:
        limit: calls allowed in the binding window (``X-RateLimit-Limit``).
        remaining: calls left in it (``X-RateLimit-Remaining``).
        reset: seconds until that window resets (``X-RateLimit-Reset``).
        retry_after: seconds to wait before retrying (``Retry-After``, 429 only).
        policy: the raw ``RateLimit-Policy`` header, e.g.
            ``"minute";q=10;w=60, "day";q=10;w=86400``.
        state: the raw ``RateLimit`` header, e.g. ``"minute";r=9;t=42, "day";r=9;t=72000``.
    """

    limit: Optional[int] = None
    remaining: Optional[int] = None
    reset: Optional[float] = None
    retry_after: Optional[float] = None
    policy: Optional[str] = None
    state: Optional[str] = None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> Optional["RateLimitInfo"]:
        """Reads the headers (keys in lower case); ``None`` when none is present."""
        names = (
            "x-ratelimit-limit",
            "x-ratelimit-remaining",
            "x-ratelimit-reset",
            "retry-after",
            "ratelimit-policy",
            "ratelimit",
        )
        if not any(name in headers for name in names):
            return None
        return cls(
            limit=_integer(headers.get("x-ratelimit-limit")),
            remaining=_integer(headers.get("x-ratelimit-remaining")),
            reset=_number(headers.get("x-ratelimit-reset")),
            retry_after=_number(headers.get("retry-after")),
            policy=headers.get("ratelimit-policy"),
            state=headers.get("ratelimit"),
        )

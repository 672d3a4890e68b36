"""Reading the service's JSON envelope: ``{request_id, code, message, data}``.

A success (``code`` 0) gives its ``data``; anything else raises the typed exception
of :mod:`iq_client.errors`. JSON numbers are parsed as :class:`decimal.Decimal` so
no value ever passes through a binary float on the way in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Optional, Tuple

from .errors import error_for
from .ratelimit import RateLimitInfo
from .transport import HTTPResponse

__all__ = ["Envelope", "read_envelope"]


@dataclass(frozen=True)
class Envelope:
    """A successful answer: its ``data``, trace id, rate-limit headers and the
    service's ``Date`` header (the HTTP date it answered at, to the second)."""

    data: Any
    request_id: Optional[str]
    http_status: int
    rate_limit: Optional[RateLimitInfo]
    date: Optional[str] = None


def _snippet(body: bytes, size: int = 200) -> str:
    text = body[:size].decode("utf-8", errors="replace").strip()
    return text + ("..." if len(body) > size else "")


def read_envelope(response: HTTPResponse) -> Envelope:
    """The envelope of ``response``.

    Raises:
        APIError: a subclass chosen by the business code (or the HTTP status, when the
            body is not an envelope, e.g. a proxy's HTML error page).
    """
    rate_limit = RateLimitInfo.from_headers(response.headers)
    header_id = response.header("x-request-id")
    try:
        document = json.loads(response.body.decode("utf-8"), parse_float=Decimal)
    except (UnicodeDecodeError, ValueError):
        document = None
    if not isinstance(document, dict) or not isinstance(document.get("code"), int):
        content_type = response.header("content-type") or "no content type"
        raise error_for(
            None,
            f"unexpected answer from the service (HTTP {response.status}, "
            f"{content_type}): {_snippet(response.body)!r}",
            request_id=header_id,
            http_status=response.status,
            rate_limit=rate_limit,
        )
    code: int = document["code"]
    request_id = document.get("request_id") or header_id
    if code == 0 and 200 <= response.status < 300:
        return Envelope(
            data=document.get("data"),
            request_id=request_id,
            http_status=response.status,
            rate_limit=rate_limit,
            date=response.header("date"),
        )
    message = document.get("message")
    raise error_for(
        code,
        str(message) if message else f"request failed with code {code}",
        request_id=request_id,
        http_status=response.status,
        rate_limit=rate_limit,
    )


def header_place(response: HTTPResponse) -> Tuple[int, int, Optional[int], bool]:
    """A CSV or Arrow page's place from its headers (D18, D29): ``X-Limit``,
    ``X-Offset``, ``X-Returned`` (``None`` when absent) and ``X-Has-More``. Raises
    ``KeyError`` or ``ValueError`` for a header that is not what the service sends."""
    has_more = {"true": True, "false": False}[(response.header("x-has-more") or "").strip().lower()]
    returned = response.header("x-returned")
    return (
        int(response.header("x-limit") or 0),
        int(response.header("x-offset") or 0),
        None if returned is None else int(returned),
        has_more,
    )

"""Exceptions raised by the client, one class per family of business codes.

Every error the service reports arrives in the envelope
``{"request_id", "code", "message", "data": null}``; programs decide on ``code``,
never on ``message``. The client turns each envelope into an exception of the class
below that matches its code (falling back on the HTTP status), so callers can write::

    try:
        df = client.index_daily(index_code="GPU_Index")
    except iq_client.PermissionDenied as err:
        print(err.code, err.request_id)

A failed call never yields an empty DataFrame: an empty frame always means "no rows
matched".
"""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Type

from .ratelimit import RateLimitInfo

__all__ = [
    "IQError",
    "APIError",
    "AuthenticationError",
    "PermissionDenied",
    "RateLimited",
    "QuotaExhausted",
    "InvalidRequest",
    "LocalValidationError",
    "NotFound",
    "Conflict",
    "ServerError",
    "TransportError",
    "error_for",
]


class IQError(Exception):
    """Base class of every exception this package raises.

    Attributes:
        code: the business code (``40001``, ``42901``...), or ``None`` when the
            service did not send one (a network failure, a non-JSON answer).
        message: human-readable text; for display only.
        request_id: the service's trace id (``req_...``), to quote in reports;
            ``None`` when no request reached the service.
        http_status: the HTTP status of the answer, or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        code: Optional[int] = None,
        request_id: Optional[str] = None,
        http_status: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id
        self.http_status = http_status

    def __str__(self) -> str:
        parts = []
        if self.code is not None:
            parts.append(f"[{self.code}]")
        parts.append(self.message)
        extra = []
        if self.http_status is not None:
            extra.append(f"HTTP {self.http_status}")
        if self.request_id:
            extra.append(f"request_id {self.request_id}")
        if extra:
            parts.append(f"({', '.join(extra)})")
        return " ".join(parts)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, "
            f"request_id={self.request_id!r}, http_status={self.http_status!r})"
        )


class APIError(IQError):
    """An error envelope returned by the service (or an unusable answer from it).

    Attributes:
        rate_limit: the ``X-RateLimit-*`` / ``RateLimit`` headers of the answer,
            when it carried them.
    """

    def __init__(
        self,
        message: str,
        *,
        code: Optional[int] = None,
        request_id: Optional[str] = None,
        http_status: Optional[int] = None,
        rate_limit: Optional[RateLimitInfo] = None,
    ) -> None:
        super().__init__(message, code=code, request_id=request_id, http_status=http_status)
        self.rate_limit = rate_limit


class AuthenticationError(APIError):
    """40101 / 40102 / 40103: the API key is missing where required, invalid,
    deleted, or expired. Check the key; retrying will not help.

    Also raised by :class:`iq_client.Client` itself, before any request, for a key
    that is empty or not of the service's shape (``code`` 40102, no ``request_id``
    nor ``http_status``). Its message never contains the key."""


class PermissionDenied(APIError):
    """40301 / 40302: the key, its owner, the client IP or the key's scope is refused
    (40301), or the named index is outside the key's index range (40302)."""


class RateLimited(APIError):
    """42901: the per-minute limit was hit. The client retries these itself with
    backoff; this is raised only when the retries are used up.

    Attributes:
        retry_after: seconds the service asked to wait (``Retry-After``), if sent.
    """

    @property
    def retry_after(self) -> Optional[float]:
        return self.rate_limit.retry_after if self.rate_limit else None


class QuotaExhausted(RateLimited):
    """42902: the key's daily quota is used up. Never retried: waiting minutes would
    not help; the quota resets at the next UTC day (see ``retry_after``)."""


class InvalidRequest(APIError):
    """40001 / 40002: a bad parameter, field, date or header. Fix the request; do not
    retry it unchanged."""


class LocalValidationError(InvalidRequest, ValueError):
    """The client refused the request before sending it (unknown parameter or field,
    ``trade_date`` with a date range, a malformed date...). ``code`` is 40001, as
    the service would answer; ``request_id`` and ``http_status`` are ``None``."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code=40001)


class NotFound(APIError):
    """40401: no such endpoint or resource (usually a wrong ``base_url``)."""


class Conflict(APIError):
    """40901: a duplicate or conflicting operation."""


class ServerError(APIError):
    """50000 or any HTTP 5xx: a failure on the service side. Retried with backoff;
    raised when the retries are used up. Quote ``request_id`` when reporting it."""


class TransportError(IQError):
    """The request did not get an HTTP answer: connection refused or reset, DNS
    failure, or the request timeout passed. Retried with backoff like a 5xx, then
    raised. A request that could not even be built (a malformed URL or header) is
    raised at once, with ``retryable`` false.

    Attributes:
        timed_out: whether the request timeout was the cause.
        retryable: whether trying again could help (a network failure, not a
            malformed request).
    """

    def __init__(self, message: str, *, timed_out: bool = False, retryable: bool = True) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        self.retryable = retryable


_BY_CODE: Dict[int, Type[APIError]] = {
    40001: InvalidRequest,
    40002: InvalidRequest,
    40101: AuthenticationError,
    40102: AuthenticationError,
    40103: AuthenticationError,
    40301: PermissionDenied,
    40302: PermissionDenied,
    40401: NotFound,
    40901: Conflict,
    42901: RateLimited,
    42902: QuotaExhausted,
    50000: ServerError,
}

_BY_STATUS: Mapping[int, Type[APIError]] = {
    400: InvalidRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    422: InvalidRequest,
    429: RateLimited,
}


def error_class(code: Optional[int], http_status: Optional[int]) -> Type[APIError]:
    """The exception class for a business ``code``, else for the HTTP status."""
    if code is not None and code in _BY_CODE:
        return _BY_CODE[code]
    if http_status is not None:
        if http_status >= 500:
            return ServerError
        if http_status in _BY_STATUS:
            return _BY_STATUS[http_status]
    return APIError


def error_for(
    code: Optional[int],
    message: str,
    *,
    request_id: Optional[str] = None,
    http_status: Optional[int] = None,
    rate_limit: Optional[RateLimitInfo] = None,
) -> APIError:
    """Builds the typed exception for an error envelope."""
    cls = error_class(code, http_status)
    return cls(
        message,
        code=code,
        request_id=request_id,
        http_status=http_status,
        rate_limit=rate_limit,
    )

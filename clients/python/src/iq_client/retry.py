"""When and how long to wait before trying a failed request again.

The reference behaviour of the specification (part 8, rule 5): on a 429 wait with
exponential backoff, 1, 2, 4, 8, 16 seconds plus up to 1 second of random jitter, at
most 5 retries, never retrying with no delay. In addition:

* ``Retry-After`` is honoured: the wait is ``max(backoff, Retry-After) + jitter``, so
  a per-minute refusal is retried once the next minute starts, not before. A 429
  without ``Retry-After`` uses ``X-RateLimit-Reset`` (seconds until the window resets)
  the same way.
* 42902 (daily quota used up) is never retried: waiting seconds would not help.
  Neither is a 429 whose ``Retry-After`` (or reset) is longer than ``max_wait``.
* HTTP 5xx answers and transport failures (connection refused or reset, timeout) are
  retried with the same backoff. A request that could not be built (a malformed URL
  or header: ``TransportError.retryable`` false) is not.
* Everything else (bad request, bad key, no permission) is raised at once.

The decisions live in :meth:`RetryPolicy.wait_for`; :func:`with_retries` loops over them
without I/O (a flow, see :mod:`iq_client._sansio`: it yields the request to send and the
waits), for both clients. ``sleep`` and ``random`` are injected in the clients, so tests
never wait.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Optional, TypeVar

from ._sansio import Flow, Sleep
from .errors import IQError, QuotaExhausted, RateLimited, ServerError, TransportError
from .transport import HTTPRequest, HTTPResponse

__all__ = ["RetryPolicy", "with_retries"]

T = TypeVar("T")

log = logging.getLogger("iq_client")


@dataclass(frozen=True)
class RetryPolicy:
    """Retry settings.

    Attributes:
        max_retries: retries after the first attempt (so at most ``max_retries + 1``
            requests).
        backoff_base: the first wait, in seconds.
        backoff_factor: each further wait is this many times the previous one.
        max_jitter: up to this many seconds of random jitter are added to each wait.
        max_wait: a ``Retry-After`` (or, without one, ``X-RateLimit-Reset``) longer
            than this is not waited for: the error is raised at once.
        retry_server_errors: retry HTTP 5xx / code 50000. Each retried call that
            reached the service counts against the key's quota.
        retry_transport_errors: retry connection failures and timeouts.
    """

    max_retries: int = 5
    backoff_base: float = 1.0
    backoff_factor: float = 2.0
    max_jitter: float = 1.0
    max_wait: float = 120.0
    retry_server_errors: bool = True
    retry_transport_errors: bool = True

    def backoff(self, retry: int) -> float:
        """The wait before retry number ``retry`` (0-based), without jitter."""
        return float(self.backoff_base * self.backoff_factor**retry)

    def wait_for(self, error: IQError, retry: int, random: Callable[[], float]) -> Optional[float]:
        """Seconds to wait before retry number ``retry`` after ``error``, or ``None``
        when it must not be retried."""
        if retry >= self.max_retries:
            return None
        if isinstance(error, QuotaExhausted):
            return None
        floor = 0.0
        if isinstance(error, RateLimited):
            retry_after = error.retry_after
            if retry_after is None and error.rate_limit is not None:
                retry_after = error.rate_limit.reset
            if retry_after is not None:
                if retry_after > self.max_wait:
                    return None
                floor = retry_after
        elif isinstance(error, ServerError):
            if not self.retry_server_errors:
                return None
            if error.rate_limit and error.rate_limit.retry_after is not None:
                floor = min(error.rate_limit.retry_after, self.max_wait)
        elif isinstance(error, TransportError):
            if not (self.retry_transport_errors and error.retryable):
                return None
        else:
            return None
        return max(self.backoff(retry), floor) + random() * self.max_jitter


def _note(error: IQError, retry: int, policy: RetryPolicy, wait: float) -> None:
    log.warning(
        "iq_client: %s; retry %d of %d in %.2f s",
        error,
        retry + 1,
        policy.max_retries,
        wait,
    )


def with_retries(
    request: HTTPRequest,
    read: Callable[[HTTPResponse], T],
    policy: RetryPolicy,
    random: Callable[[], float],
) -> Flow[T]:
    """The flow that sends ``request`` until ``read`` accepts the answer, retrying as
    ``policy`` allows: ``read`` raises the typed exception of an error answer, the
    driver raises the transport's. The last error is raised when no retry is left (or
    allowed)."""
    retry = 0
    while True:
        try:
            return read((yield request))
        except IQError as error:
            wait = policy.wait_for(error, retry, random)
            if wait is None:
                raise
            _note(error, retry, policy, wait)
            yield Sleep(wait)
            retry += 1

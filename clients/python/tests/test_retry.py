"""429 / 5xx / transport failures: backoff 1, 2, 4, 8, 16 s + jitter, at most 5
retries; 42902 not retried; Retry-After honoured. No test really sleeps."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from iq_client import (
    AuthenticationError,
    Client,
    InvalidRequest,
    PermissionDenied,
    QuotaExhausted,
    RateLimited,
    RetryPolicy,
    ServerError,
    TransportError,
)

from fakes import TEST_KEY, error, make_client, ok, raw, timeout_error, too_many

LATEST = ["trade_date", "index_code", "index_value"]


def latest_ok():
    return ok(LATEST, [["20261120", "GPU_Index", "1009.305519"]])


def test_429_is_retried_with_exponential_backoff_then_succeeds() -> None:
    client, transport, sleeps = make_client(too_many(), too_many(), latest_ok(), jitter=0.25)
    started = time.monotonic()
    frame = client.index_latest(fields=LATEST)
    assert time.monotonic() - started < 1.0, "no real sleeping"
    assert len(frame) == 1
    assert sleeps.calls == [1.25, 2.25]
    assert len(transport.requests) == 3


def test_at_most_five_retries_then_rate_limited() -> None:
    client, transport, sleeps = make_client(too_many(), repeat_last=True, jitter=0.0)
    with pytest.raises(RateLimited) as caught:
        client.index_latest()
    assert type(caught.value) is RateLimited and caught.value.code == 42901
    assert caught.value.http_status == 429
    assert sleeps.calls == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert len(transport.requests) == 6


@pytest.mark.parametrize("jitter", [0.0, 0.5, 0.999999])
def test_jitter_is_up_to_one_second(jitter: float) -> None:
    client, _, sleeps = make_client(too_many(), repeat_last=True, jitter=jitter)
    with pytest.raises(RateLimited):
        client.index_latest()
    for waited, backoff in zip(sleeps.calls, [1, 2, 4, 8, 16]):
        assert backoff <= waited < backoff + 1
        assert waited == pytest.approx(backoff + jitter)


def test_default_jitter_source_is_random_in_range() -> None:
    sleeps: list = []
    client = Client(
        TEST_KEY, base_url="http://iq.test", sleep=sleeps.append, transport=_Always(too_many())
    )
    with pytest.raises(RateLimited):
        client.index_latest()
    assert len(sleeps) == 5
    assert all(b <= s < b + 1 for s, b in zip(sleeps, [1, 2, 4, 8, 16]))


class _Always:
    def __init__(self, response):
        self.response = response

    def send(self, request, timeout):
        return self.response


def test_retry_after_is_honoured() -> None:
    client, _, sleeps = make_client(
        too_many(retry_after=30), too_many(retry_after=3), latest_ok(), jitter=0.5
    )
    client.index_latest(fields=LATEST)
    assert sleeps.calls == [30.5, 3.5]  # max(backoff, Retry-After) + jitter


def test_without_retry_after_the_rate_limit_reset_is_waited_for() -> None:
    reset_only = error(
        429, 42901, "slow down", headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "30"}
    )
    client, _, sleeps = make_client(reset_only, too_many(), latest_ok(), jitter=0.5)
    client.index_latest(fields=LATEST)
    assert sleeps.calls == [30.5, 2.5]  # max(backoff, reset) + jitter; then plain backoff


def test_a_rate_limit_reset_beyond_max_wait_is_not_waited_for() -> None:
    far = error(429, 42901, "slow down", headers={"X-RateLimit-Reset": "600"})
    client, transport, sleeps = make_client(far)
    with pytest.raises(RateLimited) as caught:
        client.index_latest()
    assert caught.value.retry_after is None  # no Retry-After was sent
    assert sleeps.calls == [] and len(transport.requests) == 1


def test_a_retry_after_beyond_max_wait_is_not_waited_for() -> None:
    client, transport, sleeps = make_client(too_many(retry_after=600))
    with pytest.raises(RateLimited):
        client.index_latest()
    assert sleeps.calls == [] and len(transport.requests) == 1


def test_daily_quota_is_not_retried() -> None:
    client, transport, sleeps = make_client(too_many(code=42902, retry_after=72000))
    with pytest.raises(QuotaExhausted) as caught:
        client.index_latest()
    assert caught.value.code == 42902 and caught.value.retry_after == 72000
    assert sleeps.calls == [] and len(transport.requests) == 1


@pytest.mark.parametrize("failure", [error(500, 50000), raw(502, b"bad gateway"), raw(503, b"")])
def test_5xx_is_retried_with_backoff(failure) -> None:
    client, transport, sleeps = make_client(failure, failure, latest_ok(), jitter=0.0)
    client.index_latest(fields=LATEST)
    assert sleeps.calls == [1.0, 2.0] and len(transport.requests) == 3


def test_transport_failures_are_retried_then_raised() -> None:
    client, transport, sleeps = make_client(timeout_error(), latest_ok(), jitter=0.0)
    client.index_latest(fields=LATEST)
    assert sleeps.calls == [1.0]
    client, transport, sleeps = make_client(timeout_error(), repeat_last=True, jitter=0.0)
    with pytest.raises(TransportError) as caught:
        client.index_latest()
    assert caught.value.timed_out and len(transport.requests) == 6


@pytest.mark.parametrize(
    "failure, cls",
    [
        (error(400, 40001), InvalidRequest),
        (error(401, 40102), AuthenticationError),
        (error(403, 40301), PermissionDenied),
        (error(403, 40302), PermissionDenied),
    ],
)
def test_client_errors_are_never_retried(failure, cls) -> None:
    client, transport, sleeps = make_client(failure)
    with pytest.raises(cls):
        client.index_latest()
    assert sleeps.calls == [] and len(transport.requests) == 1


def test_retries_are_configurable() -> None:
    client, transport, sleeps = make_client(too_many(), repeat_last=True, max_retries=2, jitter=0.0)
    with pytest.raises(RateLimited):
        client.index_latest()
    assert sleeps.calls == [1.0, 2.0] and len(transport.requests) == 3
    policy = RetryPolicy(
        backoff_base=0.5, backoff_factor=3, max_jitter=0.0, retry_server_errors=False
    )
    client, transport, sleeps = make_client(too_many(), too_many(), latest_ok(), retry=policy)
    client.index_latest(fields=LATEST)
    assert sleeps.calls == [0.5, 1.5]
    client, transport, sleeps = make_client(error(500, 50000), retry=policy)
    with pytest.raises(ServerError):
        client.index_latest()
    assert sleeps.calls == []


def test_the_timeout_is_30_seconds_by_default_and_configurable() -> None:
    client, transport, _ = make_client(latest_ok())
    client.index_latest(fields=LATEST)
    assert client.timeout == 30.0 and transport.timeouts == [30.0]
    client, transport, _ = make_client(latest_ok(), timeout=2.5)
    client.index_latest(fields=LATEST)
    assert transport.timeouts == [2.5]
    with pytest.raises(ValueError):
        Client(timeout=0)


def test_the_default_transport_enforces_the_timeout() -> None:
    # A server that accepts the connection and never answers.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    accepted = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    client = Client(TEST_KEY, base_url=f"http://127.0.0.1:{port}", timeout=0.2, max_retries=0)
    started = time.monotonic()
    try:
        with pytest.raises(TransportError) as caught:
            client.index_latest()
    finally:
        client.close()
        listener.close()
    assert caught.value.timed_out
    assert time.monotonic() - started < 5


def test_a_refused_connection_is_a_transport_error() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    sleeps: list = []
    client = Client(
        TEST_KEY, base_url=f"http://127.0.0.1:{port}", sleep=sleeps.append, random=lambda: 0.0
    )
    with pytest.raises(TransportError) as caught:
        client.index_latest()
    assert not caught.value.timed_out
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 16.0]

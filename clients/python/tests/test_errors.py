"""Error envelopes become typed exceptions; an error is never an empty DataFrame."""

from __future__ import annotations

import pytest

import iq_client
from iq_client import (
    APIError,
    AuthenticationError,
    Conflict,
    InvalidRequest,
    IQError,
    NotFound,
    PermissionDenied,
    QuotaExhausted,
    RateLimited,
    ServerError,
)

from fakes import error, make_client, raw


@pytest.mark.parametrize(
    "status, code, cls",
    [
        (400, 40001, InvalidRequest),
        (422, 40002, InvalidRequest),
        (401, 40101, AuthenticationError),
        (401, 40102, AuthenticationError),
        (401, 40103, AuthenticationError),
        (403, 40301, PermissionDenied),
        (403, 40302, PermissionDenied),
        (404, 40401, NotFound),
        (409, 40901, Conflict),
        (429, 42902, QuotaExhausted),
    ],
)
def test_each_business_code_has_its_exception(status: int, code: int, cls: type) -> None:
    client, transport, sleeps = make_client(error(status, code, "nope", request_id="req_abc"))
    with pytest.raises(cls) as caught:
        client.index_daily(index_code="GPU_Index")
    err = caught.value
    assert type(err) is cls
    assert (err.code, err.message, err.request_id, err.http_status) == (
        code,
        "nope",
        "req_abc",
        status,
    )
    assert len(transport.requests) == 1 and sleeps.calls == []
    assert client.last_request_id == "req_abc"
    assert "req_abc" in str(err) and str(code) in str(err)


def test_the_hierarchy() -> None:
    assert issubclass(QuotaExhausted, RateLimited)
    for cls in (AuthenticationError, PermissionDenied, RateLimited, InvalidRequest, ServerError):
        assert issubclass(cls, APIError) and issubclass(cls, IQError)
    assert issubclass(iq_client.TransportError, IQError)
    assert not issubclass(iq_client.TransportError, APIError)


def test_an_unknown_code_falls_back_on_the_http_status() -> None:
    client, _, _ = make_client(error(403, 40399), error(418, 41800))
    with pytest.raises(PermissionDenied):
        client.index_latest()
    with pytest.raises(APIError) as caught:
        client.index_latest()
    assert type(caught.value) is APIError and caught.value.code == 41800


def test_a_server_error_after_retries_keeps_the_envelope() -> None:
    client, transport, sleeps = make_client(
        error(500, 50000, "internal", request_id="req_500"), repeat_last=True
    )
    with pytest.raises(ServerError) as caught:
        client.index_latest()
    assert (caught.value.code, caught.value.request_id, caught.value.http_status) == (
        50000,
        "req_500",
        500,
    )
    assert len(transport.requests) == 6 and len(sleeps.calls) == 5


def test_an_answer_that_is_not_an_envelope() -> None:
    client, _, _ = make_client(raw(404, b"<html>not here</html>"), max_retries=0)
    with pytest.raises(NotFound) as caught:
        client.index_latest()
    assert caught.value.code is None and caught.value.http_status == 404
    assert "not here" in caught.value.message
    client, _, _ = make_client(raw(502, b"Bad Gateway"), max_retries=0)
    with pytest.raises(ServerError) as caught:
        client.index_latest()
    assert caught.value.http_status == 502


def test_a_malformed_success_is_an_error_not_an_empty_frame() -> None:
    from iq_client import HTTPResponse

    broken = HTTPResponse.build(
        200, {}, b'{"request_id": "req_x", "code": 0, "message": "ok", "data": null}'
    )
    client, _, _ = make_client(broken)
    with pytest.raises(APIError, match="malformed"):
        client.index_latest()


def test_rate_limited_carries_retry_after_and_quota_headers() -> None:
    headers = {
        "Retry-After": "72000",
        "X-RateLimit-Limit": "10",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": "72000",
        "RateLimit-Policy": '"minute";q=10;w=60, "day";q=10;w=86400',
    }
    client, _, _ = make_client(error(429, 42902, "daily quota used up", headers=headers))
    with pytest.raises(QuotaExhausted) as caught:
        client.index_latest()
    err = caught.value
    assert err.retry_after == 72000 and err.rate_limit.limit == 10 and err.rate_limit.remaining == 0
    assert client.last_rate_limit.reset == 72000
    assert "day" in err.rate_limit.policy

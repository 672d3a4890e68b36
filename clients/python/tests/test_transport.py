"""The default transport: which failures are retried, and the key never in an error
or a log line."""

from __future__ import annotations

import logging
import socket
import traceback
from typing import Any, List

import pytest
import requests

from iq_client import Client, HTTPRequest, RequestsTransport, TransportError

from fakes import TEST_KEY


class _FailingSession:
    """A ``requests.Session`` stand-in whose ``request`` raises ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def request(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        raise self.error

    def close(self) -> None:
        pass


def _everything_shown(err: BaseException) -> str:
    """The exception as a traceback would print it, chained causes included."""
    return "".join(traceback.format_exception(type(err), err, err.__traceback__)) + repr(err)


def _closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port: int = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    return port


@pytest.mark.parametrize(
    "error",
    [
        requests.ConnectionError("connection refused"),
        requests.exceptions.ChunkedEncodingError("connection broken"),
        requests.exceptions.SSLError("handshake failed"),
    ],
)
def test_network_failures_are_retryable(error: Exception) -> None:
    transport = RequestsTransport(session=_FailingSession(error))  # type: ignore[arg-type]
    with pytest.raises(TransportError) as caught:
        transport.send(HTTPRequest("POST", "http://iq.test/api/v1/query"), 1.0)
    assert caught.value.retryable and not caught.value.timed_out


def test_timeouts_are_retryable_and_marked() -> None:
    for error in (requests.exceptions.ReadTimeout("slow"), requests.exceptions.ConnectTimeout()):
        transport = RequestsTransport(session=_FailingSession(error))  # type: ignore[arg-type]
        with pytest.raises(TransportError) as caught:
            transport.send(HTTPRequest("POST", "http://iq.test/api/v1/query"), 1.0)
        assert caught.value.retryable and caught.value.timed_out


@pytest.mark.parametrize(
    "error",
    [
        requests.exceptions.InvalidURL("bad url"),
        requests.exceptions.MissingSchema("no scheme"),
        requests.exceptions.InvalidSchema("no adapter"),
        requests.exceptions.URLRequired("no url"),
        requests.exceptions.TooManyRedirects("30 redirects"),
    ],
)
def test_malformed_requests_are_not_retried(error: Exception) -> None:
    session = _FailingSession(error)
    transport = RequestsTransport(session=session)  # type: ignore[arg-type]
    sleeps: List[float] = []
    client = Client(TEST_KEY, base_url="http://iq.test", transport=transport, sleep=sleeps.append)
    with pytest.raises(TransportError) as caught:
        client.index_latest()
    assert not caught.value.retryable
    assert session.calls == 1 and sleeps == []


@pytest.mark.parametrize("url", ["localhost:8080/api/v1/query", "http:///api/v1/query", ""])
def test_a_url_requests_cannot_use_is_not_retried(url: str) -> None:
    with pytest.raises(TransportError) as caught:
        RequestsTransport().send(HTTPRequest("POST", url), 1.0)
    assert not caught.value.retryable


def test_an_invalid_header_never_shows_its_value(caplog: pytest.LogCaptureFixture) -> None:
    """requests' InvalidHeader quotes the header's value; the client's error must not,
    and must not keep it as cause or context either."""
    caplog.set_level(logging.DEBUG)
    key = TEST_KEY + "\n"
    request = HTTPRequest("POST", "http://127.0.0.1:9/api/v1/query", {"X-API-Key": key})
    with pytest.raises(TransportError) as caught:
        RequestsTransport().send(request, 1.0)
    err = caught.value
    assert not err.retryable
    assert err.__cause__ is None and err.__context__ is None
    assert TEST_KEY not in _everything_shown(err)
    assert TEST_KEY not in caplog.text
    assert "header" in str(err)


def test_a_malformed_key_is_in_no_log_record_nor_exception(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    key = TEST_KEY + "\n"
    with pytest.raises(Exception) as caught:
        Client(key, base_url=f"http://127.0.0.1:{_closed_port()}", sleep=lambda s: None)
    assert TEST_KEY not in _everything_shown(caught.value)
    assert TEST_KEY[9:] not in _everything_shown(caught.value)
    assert all(TEST_KEY not in record.getMessage() for record in caplog.records)
    assert TEST_KEY not in caplog.text


def test_a_connection_error_shows_the_key_nowhere(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # urllib3's debug lines included
    sleeps: List[float] = []
    client = Client(
        TEST_KEY,
        base_url=f"http://127.0.0.1:{_closed_port()}",
        max_retries=2,
        sleep=sleeps.append,
        random=lambda: 0.0,
    )
    with pytest.raises(TransportError) as caught:
        client.index_latest()
    client.close()
    assert caught.value.retryable and sleeps == [1.0, 2.0]
    assert TEST_KEY not in _everything_shown(caught.value)
    warnings = [r for r in caplog.records if r.name == "iq_client" and r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert all(TEST_KEY not in record.getMessage() for record in caplog.records)
    assert TEST_KEY not in caplog.text

"""Client configuration: key, base URL, headers, and never showing the key."""

from __future__ import annotations

import logging

import pytest

from iq_client import AuthenticationError, Client, HTTPRequest

from fakes import OTHER_KEY, TEST_KEY, FakeTransport, membership, ok

LATEST = ["trade_date"]


def test_key_and_base_url_from_arguments() -> None:
    transport = FakeTransport(ok(LATEST, []))
    client = Client(TEST_KEY, base_url="https://iq.example/", transport=transport)
    client.index_latest()
    request = transport.requests[0]
    assert request.url == "https://iq.example/api/v1/query"
    assert request.method == "POST"
    assert request.headers["X-API-Key"] == TEST_KEY
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"].startswith("iq-client-python/")


def test_key_and_base_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IQ_API_KEY", TEST_KEY)
    monkeypatch.setenv("IQ_BASE_URL", "http://10.0.0.5:8080/api/v1")
    transport = FakeTransport(ok(LATEST, []))
    client = Client(transport=transport)
    client.index_latest()
    assert transport.requests[0].headers["X-API-Key"] == TEST_KEY
    assert transport.requests[0].url == "http://10.0.0.5:8080/api/v1/query"
    assert Client(OTHER_KEY, transport=transport).api_key == OTHER_KEY


def test_without_a_key_no_header_is_sent() -> None:
    transport = FakeTransport(ok(LATEST, []))
    client = Client(transport=transport)
    client.index_latest()
    assert "X-API-Key" not in transport.requests[0].headers
    assert client.api_key is None
    assert client.base_url == "http://127.0.0.1:8080"


def test_running_without_a_key_is_logged_once_per_client(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="iq_client")
    transport = FakeTransport(ok(LATEST, []), repeat_last=True)
    client = Client(transport=transport)
    client.index_latest()
    client.index_latest()
    notes = [r for r in caplog.records if r.name == "iq_client" and "anonymous" in r.getMessage()]
    assert len(notes) == 1 and notes[0].levelno == logging.INFO
    Client(transport=transport)
    assert len([r for r in caplog.records if "anonymous" in r.getMessage()]) == 2
    caplog.clear()
    Client(TEST_KEY, transport=transport).index_latest()
    assert not [r for r in caplog.records if "anonymous" in r.getMessage()]


@pytest.mark.parametrize("key", ["", " ", "\n", "\t  "])
def test_an_empty_key_is_refused_not_turned_into_the_visitor(key: str) -> None:
    transport = FakeTransport()
    with pytest.raises(AuthenticationError, match="empty") as caught:
        Client(key, transport=transport)
    assert caught.value.code == 40102
    assert caught.value.request_id is None and caught.value.http_status is None
    assert transport.requests == []


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_key_in_the_environment_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("IQ_API_KEY", value)
    with pytest.raises(AuthenticationError, match="IQ_API_KEY"):
        Client(transport=FakeTransport())


@pytest.mark.parametrize(
    "key",
    [
        TEST_KEY + "\n",  # read from a file
        " " + TEST_KEY,
        TEST_KEY[:20] + "\r\n" + TEST_KEY[20:],
        TEST_KEY + "\x00",
        TEST_KEY[:-1],  # too short
        TEST_KEY + "x",  # too long
        TEST_KEY[:-1] + "-",  # not base62
        TEST_KEY[:-1] + "é",
        "xx_" + TEST_KEY[3:],  # wrong prefix
        "secret-password-of-someone",
    ],
)
def test_a_malformed_key_is_refused_locally_and_never_shown(
    key: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    transport = FakeTransport()
    with pytest.raises(AuthenticationError) as caught:
        Client(key, transport=transport)
    err = caught.value
    assert (err.code, err.request_id, err.http_status) == (40102, None, None)
    assert transport.requests == []
    secret = key.strip()[9:]  # anything beyond the hint
    for text in (str(err), repr(err), err.message, caplog.text):
        assert secret not in text
        assert key.strip() not in text
    assert all(secret not in record.getMessage() for record in caplog.records)


def test_the_refusal_shows_at_most_the_key_hint() -> None:
    with pytest.raises(AuthenticationError) as caught:
        Client(TEST_KEY + "extra")
    assert TEST_KEY[:9] in caught.value.message and TEST_KEY[9:] not in caught.value.message
    assert "43 characters" in caught.value.message


@pytest.mark.parametrize(
    "base_url",
    [
        "localhost:8080",
        "127.0.0.1:8080",
        "iq.example/api/v1",
        "ftp://iq.example",
        "http://",
        "http://:8080",
        "http://iq.example:port",
        "http://iq.example\n",
        " http://iq.example",
    ],
)
def test_a_base_url_needs_a_scheme_and_a_host(base_url: str) -> None:
    transport = FakeTransport()
    with pytest.raises(ValueError, match="base_url"):
        Client(TEST_KEY, base_url=base_url, transport=transport)
    assert transport.requests == []


def test_a_bad_base_url_from_the_environment_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IQ_BASE_URL", "localhost:8080")
    with pytest.raises(ValueError, match="scheme"):
        Client(TEST_KEY)


def test_the_key_is_not_shown_in_repr() -> None:
    client = Client("iq_P5jz4N8lLpeq02SfsafUwL3PrPbl8Zxo570iY6vw")
    assert "570iY6vw" not in repr(client) and "iq_P5jz4N" in repr(client)
    assert repr(Client()).endswith("api_key=None)")


def test_the_key_is_not_shown_in_a_requests_repr() -> None:
    transport = FakeTransport(ok(LATEST, []))
    Client(TEST_KEY, transport=transport).index_latest()
    request = transport.requests[0]
    shown = repr(request)
    assert TEST_KEY not in shown and TEST_KEY[9:] not in shown
    assert TEST_KEY[:9] + "..." in shown and "/api/v1/query" in shown
    odd = HTTPRequest("POST", "http://iq.test", {"x-api-key": "iq_\nsecret-value"})
    assert "secret" not in repr(odd) and "<hidden>" in repr(odd)
    assert request.headers["X-API-Key"] == TEST_KEY  # only the repr is masked


def test_only_index_code_may_be_positional() -> None:
    transport = FakeTransport(ok(LATEST, []), repeat_last=True, membership=membership())
    client = Client(TEST_KEY, transport=transport)
    client.index_daily("GPU_Index", trade_date="20261120")
    client.index_quote("GPU_Index", specification="H100")
    client.index_basic("GPU_Index")
    client.index_latest("GPU_Index")
    assert [b["params"]["index_code"] for b in transport.bodies] == ["GPU_Index"] * 4
    with pytest.raises(TypeError):
        client.index_daily("GPU_Index", "20261120")  # type: ignore[misc]
    with pytest.raises(TypeError):
        client.index_quote("GPU_Index", None, None, None, "H100")  # type: ignore[misc]
    with pytest.raises(TypeError):
        client.trade_calendar("20261120")  # type: ignore[misc]
    with pytest.raises(TypeError):
        client.index_basic("GPU_Index", ["index_code"])  # type: ignore[misc]


def test_context_manager_closes_the_session() -> None:
    with Client(TEST_KEY) as client:
        assert client.transport is not None

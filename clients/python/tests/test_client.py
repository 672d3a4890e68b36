"""Client configuration: key, base URL, headers."""

from __future__ import annotations

import pytest

from iq_client import Client

from fakes import FakeTransport, ok

LATEST = ["trade_date"]


def test_key_and_base_url_from_arguments() -> None:
    transport = FakeTransport(ok(LATEST, []))
    client = Client("iq_from_argument", base_url="https://iq.example/", transport=transport)
    client.index_latest()
    request = transport.requests[0]
    assert request.url == "https://iq.example/api/v1/query"
    assert request.method == "POST"
    assert request.headers["X-API-Key"] == "iq_from_argument"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"].startswith("iq-client-python/")


def test_key_and_base_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IQ_API_KEY", "iq_from_env")
    monkeypatch.setenv("IQ_BASE_URL", "http://10.0.0.5:8080/api/v1")
    transport = FakeTransport(ok(LATEST, []))
    client = Client(transport=transport)
    client.index_latest()
    assert transport.requests[0].headers["X-API-Key"] == "iq_from_env"
    assert transport.requests[0].url == "http://10.0.0.5:8080/api/v1/query"
    assert Client("iq_explicit", transport=transport).api_key == "iq_explicit"


def test_without_a_key_no_header_is_sent() -> None:
    transport = FakeTransport(ok(LATEST, []))
    client = Client(transport=transport)
    client.index_latest()
    assert "X-API-Key" not in transport.requests[0].headers
    assert client.base_url == "http://127.0.0.1:8080"


def test_the_key_is_not_shown_in_repr() -> None:
    client = Client("iq_P5jz4N8lLpeq02SfsafUwL3PrPbl8Zxo570iY6vw")
    assert "570iY6vw" not in repr(client) and "iq_P5jz4N" in repr(client)


def test_context_manager_closes_the_session() -> None:
    with Client("iq_k") as client:
        assert client.transport is not None

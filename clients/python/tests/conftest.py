"""Shared fixtures. Unit tests never touch the network nor sleep; the integration
tests (test_integration.py) run only when the service's test harness provides
IQ_TEST_BASE_URL and the keys."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_ambient_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own IQ_API_KEY / IQ_BASE_URL must not leak into the tests."""
    monkeypatch.delenv("IQ_API_KEY", raising=False)
    monkeypatch.delenv("IQ_BASE_URL", raising=False)
    # Tests that reach 127.0.0.1 must not go through a proxy set for the machine.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")

"""Sending one HTTP request: the seam between the client and the network.

The client builds an :class:`HTTPRequest` and hands it to a :class:`Transport`; it
never touches ``requests`` itself. Tests (and callers with special needs: a proxy
library, recording, an async bridge) pass their own object with a ``send`` method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Protocol

import requests

from .errors import TransportError

__all__ = ["HTTPRequest", "HTTPResponse", "Transport", "RequestsTransport"]


@dataclass(frozen=True)
class HTTPRequest:
    """One request: method, absolute URL, headers and the encoded body."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass(frozen=True)
class HTTPResponse:
    """One answer. ``headers`` keys are lower case."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    @classmethod
    def build(cls, status: int, headers: Mapping[str, str], body: bytes) -> "HTTPResponse":
        """An answer with the header names folded to lower case."""
        folded: Dict[str, str] = {k.lower(): v for k, v in headers.items()}
        return cls(status=status, headers=folded, body=body)

    def header(self, name: str) -> Optional[str]:
        """A header's value, looked up case-insensitively."""
        return self.headers.get(name.lower())


class Transport(Protocol):
    """Anything that can send one request and return the answer.

    Implementations raise :class:`iq_client.TransportError` when no HTTP answer
    arrives (connection failure, timeout); every HTTP answer, 4xx and 5xx included,
    is returned, never raised.
    """

    def send(self, request: HTTPRequest, timeout: float) -> HTTPResponse:
        """Sends ``request``, waiting at most ``timeout`` seconds."""
        ...


class RequestsTransport:
    """The default transport: a ``requests.Session`` (connection pooling, proxies and
    CA settings from the environment, as ``requests`` does)."""

    def __init__(self, session: Optional[requests.Session] = None) -> None:
        self.session = session if session is not None else requests.Session()

    def send(self, request: HTTPRequest, timeout: float) -> HTTPResponse:
        try:
            answer = self.session.request(
                request.method,
                request.url,
                headers=dict(request.headers),
                data=request.body or None,
                timeout=timeout,
            )
        except requests.Timeout as err:
            raise TransportError(
                f"no answer from {request.url} within {timeout:g} s: {err}",
                timed_out=True,
            ) from err
        except requests.RequestException as err:
            raise TransportError(f"request to {request.url} failed: {err}") from err
        return HTTPResponse.build(answer.status_code, answer.headers, answer.content)

    def close(self) -> None:
        """Closes the pooled connections."""
        self.session.close()

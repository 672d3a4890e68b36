"""Sending one HTTP request: the seam between the client and the network.

The client builds an :class:`HTTPRequest` and hands it to a :class:`Transport`; it
never touches ``requests`` itself. Tests (and callers with special needs: a proxy
library, recording) pass their own object with a ``send`` method. The asyncio client
uses the same :class:`HTTPRequest` / :class:`HTTPResponse` with an
:class:`AsyncTransport` (by default :class:`iq_client.HttpxTransport`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Protocol

import requests

from .credentials import key_hint
from .errors import TransportError

__all__ = ["HTTPRequest", "HTTPResponse", "Transport", "AsyncTransport", "RequestsTransport"]

#: Failures to build the request (a malformed URL or header): sending it again would
#: fail the same way. ``InvalidHeader``'s message quotes the header's whole value.
_MALFORMED_REQUEST = (
    requests.exceptions.InvalidHeader,
    requests.exceptions.InvalidURL,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidSchema,
    requests.exceptions.URLRequired,
)
#: Failures on the way: the network, the peer or the clock. Worth retrying.
_NETWORK_FAILURE = (requests.ConnectionError, requests.exceptions.ChunkedEncodingError)


def invalid_header() -> TransportError:
    """The failure of a request with a header that is not valid HTTP. The message never
    quotes the header (which would show the API key); raise it outside the handler of
    the library's error, so that error is neither the cause nor the context."""
    return TransportError(
        "a request header is not valid HTTP (a control character or whitespace "
        "in the API key or another header?); the value is not shown",
        retryable=False,
    )


def malformed(request: "HTTPRequest", err: Exception) -> TransportError:
    """The failure of a request that cannot be sent as built (a malformed URL): sending
    it again would fail the same way."""
    return TransportError(
        f"cannot send a request to {request.url!r}: {type(err).__name__} (check base_url)",
        retryable=False,
    )


def timed_out(request: "HTTPRequest", timeout: float, why: object) -> TransportError:
    """No answer to ``request`` within ``timeout`` seconds; ``why`` names the library's
    timeout (each library words its own)."""
    return TransportError(
        f"no answer from {request.url} within {timeout:g} s: {why}", timed_out=True
    )


def failed(request: "HTTPRequest", err: Exception, *, retryable: bool = False) -> TransportError:
    """Any other failure of the HTTP library, named with its type."""
    return TransportError(
        f"request to {request.url} failed: {type(err).__name__}: {err}", retryable=retryable
    )


@dataclass(frozen=True)
class HTTPRequest:
    """One request: method, absolute URL, headers and the encoded body.

    ``repr()`` shows the ``X-API-Key`` header only as its hint (first 9 characters).
    """

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    #: The least the transport must wait for the answer, when more than the client's
    #: timeout: a long poll's own wait.
    timeout: Optional[float] = None

    def __repr__(self) -> str:
        shown = {
            name: (key_hint(value) if name.lower() == "x-api-key" else value)
            for name, value in self.headers.items()
        }
        return (
            f"HTTPRequest(method={self.method!r}, url={self.url!r}, "
            f"headers={shown!r}, body={self.body!r})"
        )


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
        """Sends ``request``. ``timeout`` is in seconds; for the default transport it
        is ``requests``' connect and read timeout (per socket operation), not a cap
        on the whole exchange."""
        ...


class AsyncTransport(Protocol):
    """:class:`Transport` for :class:`iq_client.AsyncClient`: ``send`` is a
    coroutine. The default is :class:`iq_client.HttpxTransport`."""

    async def send(self, request: HTTPRequest, timeout: float) -> HTTPResponse:
        """Sends ``request``; raises :class:`iq_client.TransportError` when no HTTP
        answer arrives, returns every HTTP answer (4xx and 5xx included)."""
        ...


class RequestsTransport:
    """The default transport: a ``requests.Session`` (connection pooling, proxies and
    CA settings from the environment, as ``requests`` does).

    ``timeout`` is passed to ``requests`` as both its connect and its read timeout:
    it bounds establishing the connection and each wait for data from the socket,
    not the whole exchange (a slow answer that keeps sending is not cut off).

    Failures become :class:`iq_client.TransportError`: connection errors, timeouts
    and broken chunked answers are ``retryable``; a malformed URL or header is not,
    and its message never quotes a header (which would show the API key).
    """

    def __init__(self, session: Optional[requests.Session] = None) -> None:
        self.session = session if session is not None else requests.Session()

    def send(self, request: HTTPRequest, timeout: float) -> HTTPResponse:
        try:
            return self._send(request, timeout)
        except requests.exceptions.InvalidHeader:
            pass
        # Raised outside the handler: InvalidHeader's message quotes the header's
        # value (the key), so it is neither shown nor kept as the cause or context.
        raise invalid_header()

    def _send(self, request: HTTPRequest, timeout: float) -> HTTPResponse:
        try:
            answer = self.session.request(
                request.method,
                request.url,
                headers=dict(request.headers),
                data=request.body or None,
                timeout=timeout,
            )
        except requests.exceptions.InvalidHeader:
            raise
        except _MALFORMED_REQUEST as err:
            raise malformed(request, err) from err
        except requests.Timeout as err:
            raise timed_out(request, timeout, err) from err
        except _NETWORK_FAILURE as err:
            raise TransportError(f"request to {request.url} failed: {err}") from err
        except requests.RequestException as err:
            raise failed(request, err) from err
        return HTTPResponse.build(answer.status_code, answer.headers, answer.content)

    def close(self) -> None:
        """Closes the pooled connections."""
        self.session.close()

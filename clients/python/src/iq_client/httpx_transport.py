"""The default transport of :class:`iq_client.AsyncClient`: an ``httpx.AsyncClient``.

``httpx`` is an optional dependency: ``pip install 'iq-client[async]'``. Importing
this module without it raises an :class:`ImportError` that says so.

``timeout`` is passed to ``httpx`` as its connect, read, write and pool timeout: like
the blocking client's, it bounds each wait, not the whole exchange. Failures become
:class:`iq_client.TransportError`: connection errors, timeouts and broken answers are
``retryable``; a malformed URL or header is not, and its message never quotes a header
(which would show the API key).
"""

from __future__ import annotations

from typing import Any, Optional

try:
    import httpx
except ImportError as _missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "iq_client.AsyncClient needs httpx: pip install 'iq-client[async]'"
    ) from _missing

from .transport import HTTPRequest, HTTPResponse, failed, invalid_header, malformed, timed_out

__all__ = ["HttpxTransport"]

#: Failures on the way: the network, the peer, a proxy or a broken answer.
_NETWORK_FAILURE = (
    httpx.NetworkError,
    httpx.RemoteProtocolError,
    httpx.ProxyError,
    httpx.DecodingError,
)
#: The request could not be built or sent as given: trying again would fail the same way.
_MALFORMED_REQUEST = (httpx.UnsupportedProtocol, httpx.InvalidURL)


class HttpxTransport:
    """Sends requests with an ``httpx.AsyncClient`` (connection pooling; proxies and
    CA settings from the environment, as ``httpx`` does).

    Args:
        client: the ``httpx.AsyncClient`` to use (it stays yours: :meth:`aclose` does
            not close it). Default: a new one, closed by :meth:`aclose`.
        transport: an ``httpx`` transport for the new client, e.g.
            ``httpx.MockTransport(handler)`` in tests. Only without ``client``.
    """

    def __init__(
        self,
        client: Optional[httpx.AsyncClient] = None,
        *,
        transport: Optional[httpx.AsyncBaseTransport] = None,
    ) -> None:
        if client is not None and transport is not None:
            raise ValueError("give either an httpx.AsyncClient or an httpx transport, not both")
        self._owns_client = client is None
        self.client: httpx.AsyncClient = (
            client if client is not None else httpx.AsyncClient(transport=transport)
        )

    async def send(self, request: HTTPRequest, timeout: float) -> HTTPResponse:
        try:
            return await self._send(request, timeout)
        except httpx.LocalProtocolError:
            pass
        # Raised outside the handler: the message may quote the header's value (the
        # key), so it is neither shown nor kept as the cause or context.
        raise invalid_header()

    async def _send(self, request: HTTPRequest, timeout: float) -> HTTPResponse:
        try:
            answer = await self.client.request(
                request.method,
                request.url,
                headers=dict(request.headers),
                content=request.body or None,
                timeout=timeout,
            )
        except httpx.LocalProtocolError:
            raise
        except _MALFORMED_REQUEST as err:
            raise malformed(request, err) from err
        except httpx.TimeoutException as err:
            raise timed_out(request, timeout, type(err).__name__) from err
        except _NETWORK_FAILURE as err:
            raise failed(request, err, retryable=True) from err
        except httpx.HTTPError as err:
            raise failed(request, err) from err
        return HTTPResponse.build(answer.status_code, answer.headers, answer.content)

    async def aclose(self) -> None:
        """Closes the pooled connections of the client this transport created."""
        if self._owns_client:
            await self.client.aclose()

    def __repr__(self) -> str:
        return f"HttpxTransport(client={self.client!r})"


def is_httpx_transport(value: Any) -> bool:
    """Whether ``value`` is an ``httpx`` transport (``httpx.MockTransport``...)."""
    return isinstance(value, httpx.AsyncBaseTransport)


def is_httpx_client(value: Any) -> bool:
    """Whether ``value`` is an ``httpx.AsyncClient``."""
    return isinstance(value, httpx.AsyncClient)

"""The :class:`AsyncClient`: :class:`iq_client.Client` for asyncio (notebooks, async
services). Same arguments, same methods, same validation, paging, pinning, retries and
exceptions; every method that talks to the service is a coroutine, and
:meth:`AsyncClient.iter_query` is an async iterator.

The methods are those of :class:`iq_client._methods.ClientMethods`, written once for
both clients over the sans-I/O core; this module is only the asyncio driver: it sends
the flows' requests with ``await`` on an :class:`iq_client.AsyncTransport`, waits with
``sleep`` and runs blocking work (writing a synced copy) in a worker thread.

It needs ``httpx`` (``pip install 'iq-client[async]'``) unless it is given its own
``transport``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import random as _random
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Coroutine, Optional, TypeVar, Union

import pandas as pd

from ._core import DEFAULT_PAGE_SIZE, DEFAULT_TIMEOUT
from ._methods import ClientMethods
from ._sansio import Action, Emit, Flow, Runner, Sleep
from .dataset_sync import SyncResult
from .frames import DateMode, DecimalMode
from .membership import Membership
from .paging import Page
from .retry import RetryPolicy
from .transport import AsyncTransport, HTTPRequest

__all__ = ["AsyncClient"]

T = TypeVar("T")
Co = Coroutine[Any, Any, T]


def _transport(given: Any) -> "tuple[AsyncTransport, bool]":
    """The transport to use and whether the client owns it (closes it)."""
    if given is None or hasattr(given, "handle_async_request") or hasattr(given, "build_request"):
        from .httpx_transport import HttpxTransport, is_httpx_client, is_httpx_transport

        if given is None:
            return HttpxTransport(), True
        if is_httpx_transport(given):
            return HttpxTransport(transport=given), True
        if is_httpx_client(given):
            return HttpxTransport(client=given), False
    if not callable(getattr(given, "send", None)):
        raise TypeError(
            "transport must have an async send(request, timeout) method, or be an httpx "
            f"transport or httpx.AsyncClient; got {type(given).__name__}"
        )
    return given, False


def _coroutine(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` of :class:`ClientMethods` (which returns what ``_run`` makes of a flow,
    here an awaitable) as a coroutine function, with its name, signature and
    documentation: it runs, arguments checks included, when the coroutine does."""

    @functools.wraps(method)
    async def call(*args: Any, **kwargs: Any) -> Any:
        return await method(*args, **kwargs)

    return call


class AsyncClient(
    ClientMethods[
        Co[pd.DataFrame],
        Co[str],
        AsyncIterator[pd.DataFrame],
        AsyncIterator[str],
        Co[Page],
        Co[Membership],
        Co[SyncResult],
    ]
):
    """A client of the index data service for asyncio.

    Takes the arguments of :class:`iq_client.Client`, except that:

    * ``transport`` is an :class:`iq_client.AsyncTransport` (an object with an
      ``async send(request, timeout)``), an ``httpx`` transport such as
      ``httpx.MockTransport``, or an ``httpx.AsyncClient`` of your own (not closed by
      the client). Default: a new ``httpx.AsyncClient``.
    * ``sleep`` waits between retries; default :func:`asyncio.sleep`. A plain function
      works too (tests record the waits instead of waiting).

    Example::

        from iq_client import AsyncClient
        async with AsyncClient() as client:          # key from IQ_API_KEY
            df = await client.index_daily("GPU_Index", start_date="2026-01-01")
            async for page in client.iter_query("index_quote", start_date="20260101"):
                store(page)
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        base_url: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: Optional[int] = None,
        retry: Optional[RetryPolicy] = None,
        transport: Optional[Union[AsyncTransport, Any]] = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        random: Callable[[], float] = _random.random,
        page_size: int = DEFAULT_PAGE_SIZE,
        decimals: DecimalMode = "float",
        dates: DateMode = "datetime",
    ) -> None:
        super().__init__(
            api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            retry=retry,
            random=random,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
        )
        self.transport, self._owns_transport = _transport(transport)
        self._sleep = sleep

    async def aclose(self) -> None:
        """Releases the HTTP connections of a transport the client created."""
        close = getattr(self.transport, "aclose", None)
        if self._owns_transport and close is not None:
            await close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    if not TYPE_CHECKING:  # for type checkers, ClientMethods' own, returning coroutines
        query = _coroutine(ClientMethods.query)
        fetch_page = _coroutine(ClientMethods.fetch_page)
        whoami = _coroutine(ClientMethods.whoami)
        sync = _coroutine(ClientMethods.sync)

    # -- the driver -------------------------------------------------------------------

    async def _perform(self, step: Action) -> Any:
        """Does one step of a flow with ``await``: sends a request, sleeps (``sleep``
        may be a plain function), or runs work in a worker thread."""
        if isinstance(step, HTTPRequest):
            return await self.transport.send(step, max(self.timeout, step.timeout or 0))
        if isinstance(step, Sleep):
            slept = self._sleep(step.seconds)
            return (await slept) if inspect.isawaitable(slept) else slept
        return await asyncio.to_thread(step.function)

    async def _drive(self, run: Runner[Any]) -> AsyncIterator[Any]:
        for step in run:
            if isinstance(step, Emit):
                yield step.value
                continue
            try:
                run.reply(await self._perform(step))
            except BaseException as error:
                run.fail(error)

    async def _run(self, flow: Flow[T]) -> T:
        run = Runner(flow)
        async for _ in self._drive(run):
            pass
        return run.result

    def _iterate(self, flow: Flow[Any]) -> AsyncIterator[Any]:
        return self._drive(Runner(flow))

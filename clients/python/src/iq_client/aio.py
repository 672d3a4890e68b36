"""The :class:`AsyncClient`: :class:`iq_client.Client` for asyncio (notebooks, async
services). Same arguments, same methods, same validation, paging, pinning, retries and
exceptions; every method that talks to the service is a coroutine, and
:meth:`AsyncClient.iter_query` is an async iterator.

It needs ``httpx`` (``pip install 'iq-client[async]'``) unless it is given its own
``transport``.
"""

from __future__ import annotations

import asyncio
import inspect
import random as _random
from typing import (
    Any,
    AsyncIterator,
    Callable,
    Coroutine,
    Literal,
    Optional,
    TypeVar,
    Union,
    overload,
)

import pandas as pd

from ._core import DEFAULT_PAGE_SIZE, DEFAULT_TIMEOUT, ClientCore, Collector, CsvCollector, Plan
from ._methods import DatasetMethods, Format, InstantLike
from .envelope import Envelope
from .frames import DateMode, DecimalMode
from .membership import Membership
from .paging import CsvPage, Page, awalk, awith_progress
from .retry import RetryPolicy, acall_with_retries
from .sync import SETTLE_POLL, PathArg, SyncFormat, SyncJob, SyncResult
from .transport import AsyncTransport, HTTPRequest, HTTPResponse
from .validation import FieldsArg, ParamsArg, ValidQuery

__all__ = ["AsyncClient"]

_Frame = Coroutine[Any, Any, pd.DataFrame]
_Text = Coroutine[Any, Any, str]
T = TypeVar("T")


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


class AsyncClient(DatasetMethods[_Frame, _Text], ClientCore):
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
            page_size=page_size,
            decimals=decimals,
            dates=dates,
        )
        self.transport, self._owns_transport = _transport(transport)
        self._sleep = sleep
        self._random = random

    async def aclose(self) -> None:
        """Releases the HTTP connections of a transport the client created."""
        close = getattr(self.transport, "aclose", None)
        if self._owns_transport and close is not None:
            await close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- one request --------------------------------------------------------------

    async def _exchange(self, request: HTTPRequest, read: Callable[[HTTPResponse], T]) -> T:
        """Sends ``request`` (with retries) and returns what ``read`` makes of the
        answer (``read`` raises the typed exception of an error)."""

        async def attempt() -> T:
            return read(await self.transport.send(request, self.timeout))

        return await acall_with_retries(attempt, self.retry, sleep=self._sleep, random=self._random)

    async def _send(self, request: HTTPRequest) -> Envelope:
        """Sends ``request`` (with retries) and returns the success envelope."""
        return await self._exchange(request, self._read)

    async def whoami(self) -> Membership:
        """See :meth:`iq_client.Client.whoami`."""
        return self._membership(await self._send(self._membership_request()))

    async def fetch_page(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        **keyword_params: Any,
    ) -> Page:
        """See :meth:`iq_client.Client.fetch_page`. The query is checked when the
        coroutine runs."""
        query, request = self._single(api_name, params, fields, keyword_params, limit, offset)
        return self._page(query, await self._send(request))

    # -- paged queries ------------------------------------------------------------

    async def _resolve(self, plan: Plan) -> ValidQuery:
        return self._pin(plan.query, await self.whoami()) if plan.pin else plan.query

    def _walk(self, query: ValidQuery, plan: Plan) -> AsyncIterator[Page]:
        async def fetch(at: int, want: int) -> Page:
            body = query.body(limit=want, offset=at)
            return self._page(query, await self._send(self._query_request(body)))

        pages = awalk(fetch, offset=plan.offset, page_size=plan.page_size, max_rows=plan.limit)
        if plan.progress:
            pages = awith_progress(pages, desc=query.api_name, total=plan.limit)
        return pages

    def _walk_csv(self, query: ValidQuery, plan: Plan) -> AsyncIterator[CsvPage]:
        async def fetch(at: int, want: int) -> CsvPage:
            request = self._query_request(query.body(limit=want, offset=at), csv=True)
            return await self._exchange(request, lambda answer: self._read_csv(query, answer))

        pages = awalk(fetch, offset=plan.offset, page_size=plan.page_size, max_rows=plan.limit)
        if plan.progress:
            pages = awith_progress(pages, desc=query.api_name, total=plan.limit)
        return pages

    @overload
    async def query(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Literal["frame"] = "frame",
        **keyword_params: Any,
    ) -> pd.DataFrame: ...

    @overload
    async def query(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Literal["csv"],
        **keyword_params: Any,
    ) -> str: ...

    @overload
    async def query(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
        **keyword_params: Any,
    ) -> Union[pd.DataFrame, str]: ...

    async def query(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
        **keyword_params: Any,
    ) -> Union[pd.DataFrame, str]:
        """See :meth:`iq_client.Client.query`: every matching row as one typed
        DataFrame (the service's CSV text with ``format="csv"``), pages followed,
        ``end_date`` pinned for bulk pulls."""
        plan = self._plan(
            api_name,
            params,
            fields,
            keyword_params,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
            fixed_end_date=fixed_end_date,
            format=format,
        )
        query = await self._resolve(plan)
        if plan.csv:
            text = CsvCollector(query)
            async for csv_page in self._walk_csv(query, plan):
                text.add(csv_page)
            return text.text()
        collector = Collector(query, plan.modes)
        async for page in self._walk(query, plan):
            collector.add(page)
        return collector.frame()

    @overload
    def iter_query(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Literal["frame"] = "frame",
        **keyword_params: Any,
    ) -> AsyncIterator[pd.DataFrame]: ...

    @overload
    def iter_query(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Literal["csv"],
        **keyword_params: Any,
    ) -> AsyncIterator[str]: ...

    @overload
    def iter_query(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
        **keyword_params: Any,
    ) -> Union[AsyncIterator[pd.DataFrame], AsyncIterator[str]]: ...

    def iter_query(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
        **keyword_params: Any,
    ) -> Union[AsyncIterator[pd.DataFrame], AsyncIterator[str]]:
        """One DataFrame per page (with ``format="csv"``, each page's CSV text as
        sent, header row included), as an async iterator (``async for``). The query
        is checked now, before the first page is awaited; requests are sent as the
        iterator is consumed."""
        plan = self._plan(
            api_name,
            params,
            fields,
            keyword_params,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
            fixed_end_date=fixed_end_date,
            format=format,
        )
        return self._texts(plan) if plan.csv else self._frames(plan)

    async def _frames(self, plan: Plan) -> AsyncIterator[pd.DataFrame]:
        query = await self._resolve(plan)
        async for page in self._walk(query, plan):
            yield page.to_frame(**plan.modes)

    async def _texts(self, plan: Plan) -> AsyncIterator[str]:
        query = await self._resolve(plan)
        async for page in self._walk_csv(query, plan):
            yield page.text

    # -- a local copy ---------------------------------------------------------------

    async def sync(
        self,
        api_name: str,
        path: PathArg,
        *,
        params: ParamsArg = None,
        format: Optional[SyncFormat] = None,
        progress: bool = True,
        full: bool = False,
        as_of: InstantLike = None,
        page_size: Optional[int] = None,
    ) -> SyncResult:
        """See :meth:`iq_client.Client.sync`. The files are read and written in a
        worker thread (:func:`asyncio.to_thread`), so the event loop goes on."""
        job = SyncJob(
            self,
            api_name,
            path,
            params=params,
            format=format,
            full=full,
            as_of=as_of,
            page_size=page_size,
            progress=progress,
        )
        envelope = await self._send(self._membership_request())
        query = job.begin(self._membership(envelope), envelope.date)
        while job.wait_for_clock(query, envelope.date):
            slept = self._sleep(SETTLE_POLL)
            if inspect.isawaitable(slept):
                await slept
            envelope = await self._send(self._membership_request())
        try:
            if query is not None:
                async for page in self._walk(query, job.plan(query)):
                    job.add(page)
        finally:
            job.close()
        return await asyncio.to_thread(job.finish)

"""The :class:`Client`: queries in, typed DataFrames out (blocking; see
:class:`iq_client.AsyncClient` for asyncio)."""

from __future__ import annotations

import random as _random
import time
from typing import Any, Callable, Iterator, Literal, Optional, TypeVar, Union, overload

import pandas as pd

from ._core import (
    DEFAULT_BASE_URL,
    DEFAULT_PAGE_SIZE,
    DEFAULT_TIMEOUT,
    ClientCore,
    Collector,
    CsvCollector,
    Plan,
)
from ._methods import DatasetMethods, DateLike, Format, InstantLike
from .envelope import Envelope
from .frames import DateMode, DecimalMode
from .membership import Membership
from .paging import CsvPage, Page, walk, with_progress
from .retry import RetryPolicy, call_with_retries
from .sync import SETTLE_POLL, PathArg, SyncFormat, SyncJob, SyncResult
from .transport import HTTPRequest, HTTPResponse, RequestsTransport, Transport
from .validation import FieldsArg, ParamsArg, ValidQuery

__all__ = ["Client", "DateLike", "InstantLike", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT"]

T = TypeVar("T")


class Client(DatasetMethods[pd.DataFrame, str], ClientCore):
    """A client of the index data service.

    Args:
        api_key: the ``X-API-Key`` to send; default the ``IQ_API_KEY`` environment
            variable. Only when both are unset (``None``) does the client query as the
            anonymous visitor (free-tier delay, public indexes only; logged once at
            INFO on the ``iq_client`` logger). A key that is empty, has whitespace or
            control characters, or is not ``iq_`` + 40 letters and digits raises
            :class:`AuthenticationError` here, before any request; it is never
            stripped or replaced by the visitor.
        base_url: where the service is; default ``IQ_BASE_URL`` or
            ``http://127.0.0.1:8080``. It needs an ``http://`` or ``https://``
            scheme and a host (``ValueError`` otherwise).
        timeout: seconds; ``requests``' connect and read timeout, i.e. per socket
            operation, not a cap on the whole request (default 30).
        max_retries: retries of a request refused with 429 / 5xx or that failed in
            transit (default 5); overrides ``retry.max_retries``.
        retry: the full :class:`RetryPolicy` (backoff 1, 2, 4, 8, 16 s + jitter).
        transport: what sends HTTP requests (default: a ``requests.Session``).
        sleep: how to wait between retries (default :func:`time.sleep`).
        random: a ``[0, 1)`` source for jitter (default :func:`random.random`).
        page_size: rows asked for per request when paging (the service caps it).
        decimals: default for decimal columns: ``"float"`` (float64) or
            ``"decimal"`` (exact :class:`decimal.Decimal`).
        dates: default for date columns: ``"datetime"`` (datetime64) or
            ``"string"`` (``YYYYMMDD``).

    Example::

        from iq_client import Client
        client = Client()                       # key from IQ_API_KEY
        df = client.index_daily(index_code="GPU_Index", start_date="2026-01-01")
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        base_url: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: Optional[int] = None,
        retry: Optional[RetryPolicy] = None,
        transport: Optional[Transport] = None,
        sleep: Callable[[float], None] = time.sleep,
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
        self._owns_transport = transport is None
        self.transport: Transport = transport if transport is not None else RequestsTransport()
        self._sleep = sleep
        self._random = random

    def close(self) -> None:
        """Releases the HTTP connections of the default transport."""
        if self._owns_transport and isinstance(self.transport, RequestsTransport):
            self.transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one request --------------------------------------------------------------

    def _exchange(self, request: HTTPRequest, read: Callable[[HTTPResponse], T]) -> T:
        """Sends ``request`` (with retries) and returns what ``read`` makes of the
        answer (``read`` raises the typed exception of an error)."""

        def attempt() -> T:
            return read(self.transport.send(request, self.timeout))

        return call_with_retries(attempt, self.retry, sleep=self._sleep, random=self._random)

    def _send(self, request: HTTPRequest) -> Envelope:
        """Sends ``request`` (with retries) and returns the success envelope."""
        return self._exchange(request, self._read)

    def whoami(self) -> Membership:
        """What the service knows of this client's key: owner, tier, delay, data
        cutoff, visible indexes, the key (scopes, index range, expiry) and today's
        use against its limits (``GET /api/v1/membership``; never counted against
        the quota). Without a key, the anonymous visitor's view.

        Raises:
            AuthenticationError, PermissionDenied: a refused key, as a query would be.
        """
        return self._membership(self._send(self._membership_request()))

    def fetch_page(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        **keyword_params: Any,
    ) -> Page:
        """Sends exactly one request and returns the raw :class:`Page` (wire values,
        ``has_more``, ``request_id``, rate-limit headers). No paging, no pinning.

        Raises:
            LocalValidationError: before sending, for a query the service would refuse.
            APIError: a subclass per business code when the service refuses it.
        """
        query, request = self._single(api_name, params, fields, keyword_params, limit, offset)
        return self._page(query, self._send(request))

    # -- paged queries ------------------------------------------------------------

    def _resolve(self, plan: Plan) -> ValidQuery:
        """The query to page through: with ``end_date`` pinned to the data cutoff
        the service reports, when the plan asks for it (one membership request)."""
        return self._pin(plan.query, self.whoami()) if plan.pin else plan.query

    def _walk(self, query: ValidQuery, plan: Plan) -> Iterator[Page]:
        pages = walk(
            lambda at, want: self._page(
                query, self._send(self._query_request(query.body(limit=want, offset=at)))
            ),
            offset=plan.offset,
            page_size=plan.page_size,
            max_rows=plan.limit,
        )
        if plan.progress:
            pages = with_progress(pages, desc=query.api_name, total=plan.limit)
        return pages

    def _walk_csv(self, query: ValidQuery, plan: Plan) -> Iterator[CsvPage]:
        def fetch(at: int, want: int) -> CsvPage:
            request = self._query_request(query.body(limit=want, offset=at), csv=True)
            return self._exchange(request, lambda answer: self._read_csv(query, answer))

        pages = walk(fetch, offset=plan.offset, page_size=plan.page_size, max_rows=plan.limit)
        if plan.progress:
            pages = with_progress(pages, desc=query.api_name, total=plan.limit)
        return pages

    @overload
    def query(
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
    def query(
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
    def query(
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

    def query(
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
        """Runs a query and returns every matching row as one typed DataFrame (or,
        with ``format="csv"``, as the service's CSV text).

        Pages are followed while ``has_more`` (spec 4.3). Only data the key may see
        comes back: with ``index_code`` omitted, all visible indexes.

        Args:
            api_name: one of :meth:`datasets`.
            params: filters, e.g. ``{"index_code": "GPU_Index"}``; filters may also be
                given as keywords (``index_code="GPU_Index"``). ``None`` values are
                left out. Dates: ``YYYYMMDD``, ``YYYY-MM-DD`` or date objects.
                ``as_of`` / ``updated_since`` (``index_daily``, ``index_latest``,
                ``index_quote``): RFC 3339 text with an offset or an aware
                ``datetime``; ``as_of`` also a date (the end of that day in the
                service's time zone). A naive ``datetime`` is refused.
            fields: columns to return (a list or ``"a,b,c"``); default the dataset's
                default fields.
            limit: at most this many rows in total (default: all).
            offset: skip this many rows first.
            page_size: rows per request (default the client's, 5000; the service
                may cap it lower).
            decimals: ``"float"`` or ``"decimal"`` (default the client's).
            dates: ``"datetime"`` or ``"string"`` (default the client's).
            progress: show a tqdm progress bar (needs ``iq-client[progress]``).
            fixed_end_date: for ``index_daily`` / ``index_quote`` asked without
                ``end_date`` and ``trade_date``, pin ``end_date`` for the whole pull
                to the key's data cutoff, as ``GET /api/v1/membership`` reports it
                (one extra request, not counted against the quota). ``False``
                sends the query as given.
            format: ``"frame"`` (default) for a typed DataFrame; ``"csv"`` sends
                ``Accept: text/csv`` and returns the service's CSV (decision D18): a
                header row, then one line per row, RFC 4180 quoting, CRLF line ends,
                values exactly as in JSON (``null`` empty; not escaped for
                spreadsheets). The pages are joined under one header row.
                ``decimals`` and ``dates`` do not apply.

        Returns:
            The rows, in the service's order; an empty frame (with the columns and
            dtypes) when nothing matched. ``df.attrs`` holds ``api_name``,
            ``params`` (as sent) and ``request_ids``. With ``format="csv"``, text
            (only the header row when nothing matched).

        Raises:
            LocalValidationError: before any request: unknown parameter or field,
                ``trade_date`` with a range, a bad date...
            AuthenticationError, PermissionDenied, RateLimited, QuotaExhausted,
            InvalidRequest, ServerError, TransportError: see :mod:`iq_client.errors`.
        """
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
        query = self._resolve(plan)
        if plan.csv:
            text = CsvCollector(query)
            for csv_page in self._walk_csv(query, plan):
                text.add(csv_page)
            return text.text()
        collector = Collector(query, plan.modes)
        for page in self._walk(query, plan):
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
    ) -> Iterator[pd.DataFrame]: ...

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
    ) -> Iterator[str]: ...

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
    ) -> Union[Iterator[pd.DataFrame], Iterator[str]]: ...

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
    ) -> Union[Iterator[pd.DataFrame], Iterator[str]]:
        """Like :meth:`query`, but yields one DataFrame per page as it arrives, for
        pulls too large to hold at once. The query is validated now, before the first
        ``next()``; requests (the membership lookup for pinning included) are sent as
        the iterator is consumed. With ``format="csv"`` it yields each page's CSV
        text as the service sent it, each with its header row.
        """
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

    def _frames(self, plan: Plan) -> Iterator[pd.DataFrame]:
        query = self._resolve(plan)
        for page in self._walk(query, plan):
            yield page.to_frame(**plan.modes)

    def _texts(self, plan: Plan) -> Iterator[str]:
        query = self._resolve(plan)
        for page in self._walk_csv(query, plan):
            yield page.text

    # -- a local copy ---------------------------------------------------------------

    def sync(
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
        """Keeps a local copy of ``api_name`` (``index_daily``, ``index_latest`` or
        ``index_quote``) at ``path`` up to date, with a state file beside it
        (``<path>.sync.json``).

        The first run downloads every row (every field, ``published_at``
        included), each page asked ``as_of`` the moment the sync started, and
        records that instant. A later run asks only for the rows that became
        visible to the key since the recorded instant (``updated_since``, with a new
        ``as_of``) and merges them: ``index_daily`` rows replace those of their
        ``(trade_date, index_code)``, ``index_latest`` rows those of their
        ``index_code``, and ``index_quote`` answers replace whole ``(trade_date,
        index_code)`` days (a specification an import dropped disappears). See
        :mod:`iq_client.sync`.

        Args:
            api_name: the dataset.
            path: the data file. Its folder must exist.
            params: filters that define the copy, e.g. ``{"index_code":
                "GPU_Index", "start_date": "20250101"}`` (not ``as_of`` /
                ``updated_since``: sync sets them). Later runs must pass the same.
            format: ``"parquet"`` (needs ``pip install 'iq-client[parquet]'``) or
                ``"csv"`` (the service's CSV, values exactly as sent); default
                ``"csv"`` for a path ending ``.csv``, else ``"parquet"``.
            progress: a progress bar (tqdm when installed, else a line on stderr).
            full: download everything again, whatever the state file says.
            as_of: the instant to bring the copy to (RFC 3339 with an offset, or an
                aware ``datetime``); default: the end of the second the service's
                ``Date`` names, once the service's clock has passed it (the run waits
                about a second for that; this machine's clock without a ``Date``).
            page_size: rows per request (default the client's).

        Returns:
            A :class:`iq_client.SyncResult`: rows received, replaced, in the copy,
            the instants, whether it was a full download and why.

        Raises:
            LocalValidationError: bad arguments (before any request).
            SyncError: the state file belongs to another dataset, parameters,
                format or service (before any request).
            ImportError: ``format="parquet"`` without pyarrow.
            APIError, TransportError: as for :meth:`query`; the files are then
                left as they were.
        """
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
        envelope = self._send(self._membership_request())
        query = job.begin(self._membership(envelope), envelope.date)
        while job.wait_for_clock(query, envelope.date):
            self._sleep(SETTLE_POLL)
            envelope = self._send(self._membership_request())
        try:
            if query is not None:
                plan = job.plan(query)
                for page in self._walk(query, plan):
                    job.add(page)
        finally:
            job.close()
        return job.finish()

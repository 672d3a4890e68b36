"""The core of :class:`iq_client.Client` and :class:`iq_client.AsyncClient`, without I/O.

Everything but the I/O lives here, once: configuration and its checks, validation of
a query and its paging options, the requests to send, reading the answers (typed
exceptions, rate-limit headers, request ids), retries, paging, the decision to pin
``end_date`` and to what, and assembling pages into one typed DataFrame (or CSV text).

Each exchange with the service is a *flow* (see :mod:`iq_client._sansio`): a generator
that yields the requests to send and the waits, and is resumed with the answers.
:meth:`ClientCore._query` is a whole paged pull, :meth:`ClientCore._pages` the pages of
``iter_query`` one by one, :meth:`ClientCore._whoami` one membership request. The
paging rules are :class:`iq_client.paging.Pager`, the retry decisions
:meth:`iq_client.RetryPolicy.wait_for`; the clients only perform the steps with their
own I/O.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

import pandas as pd

from . import arrow
from ._sansio import Emit, Flow, Work
from ._version import __version__
from .catalogue import list_datasets, list_fields, list_params
from .credentials import check_api_key, check_base_url, key_hint
from .envelope import Envelope, read_envelope
from .errors import APIError, LocalValidationError
from .events import EventPage, check_after, parse_page, read_cursor, write_cursor
from .frames import DateMode, DecimalMode, check_modes, concat, to_frame
from .membership import Membership, parse_membership
from .paging import CsvPage, Page, Pager, csv_line, progress_bar
from .ratelimit import RateLimitInfo
from .retry import RetryPolicy, with_retries
from .transport import HTTPRequest, HTTPResponse
from .validation import (
    FieldsArg,
    ParamsArg,
    ValidQuery,
    check_int,
    merge_params,
    validate_query,
    yyyymmdd,
)

__all__ = [
    "ClientCore",
    "Plan",
    "Collector",
    "CsvCollector",
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT",
    "FORMATS",
    "check_format",
    "wire_for",
]

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT = 30.0
DEFAULT_PAGE_SIZE = 5000

log = logging.getLogger("iq_client")

#: What ``query()`` returns: ``"frame"``, a typed DataFrame (the default), ``"csv"``,
#: the service's own CSV text (``Accept: text/csv``, decision D18), or ``"arrow"``, a
#: ``pyarrow.Table`` (an Arrow stream, decision D29; needs ``iq-client[arrow]``).
FORMATS = ("frame", "csv", "arrow")

#: What the pages are asked as: ``Accept`` of each wire.
ACCEPT = {"json": "application/json", "csv": "text/csv", "arrow": arrow.MEDIA_TYPE}


def check_format(format: Any) -> str:
    """Refuses an unknown ``format`` option, and ``"arrow"`` without pyarrow."""
    if format not in FORMATS:
        raise LocalValidationError(f"format must be 'frame', 'csv' or 'arrow', got {format!r}")
    if format == "arrow":
        arrow.require("format='arrow'")
    return str(format)


def wire_for(format: str) -> str:
    """The wire a query of ``format`` is read in: CSV for ``"csv"``, Arrow for
    ``"arrow"``, and for ``"frame"`` Arrow when pyarrow is installed (no Python work per
    value), else JSON."""
    if format == "csv":
        return "csv"
    if format == "arrow" or arrow.available():
        return "arrow"
    return "json"


def _resolve_key(api_key: Optional[str]) -> Optional[str]:
    """The key to send: ``api_key``, else ``IQ_API_KEY``, checked; ``None`` only when
    neither is set (the anonymous visitor)."""
    if api_key is not None:
        return check_api_key(api_key, "api_key")
    from_env = os.environ.get("IQ_API_KEY")
    if from_env is not None:
        return check_api_key(from_env, "IQ_API_KEY")
    return None


@dataclasses.dataclass(frozen=True)
class Plan:
    """A validated paged query: what to ask for and how to page and convert it.

    ``pin`` tells whether ``end_date`` is still to be pinned to the caller's data
    cutoff (read from ``GET /api/v1/membership`` just before the first page).
    ``format`` is ``"frame"`` (typed DataFrames), ``"csv"`` (the service's CSV) or
    ``"arrow"`` (a ``pyarrow.Table``); ``wire`` what the pages are asked as
    (:func:`wire_for`).
    """

    query: ValidQuery
    modes: Dict[str, str]
    page_size: int
    limit: Optional[int]
    offset: int
    progress: bool
    pin: bool
    format: str = "frame"
    wire: str = "json"


class Collector:
    """Pages of one query turned into one DataFrame, page by page (so raw rows are
    not all held at once)."""

    def __init__(self, query: ValidQuery, modes: Mapping[str, str]) -> None:
        self.query = query
        self.modes = dict(modes)
        self.frames: List[pd.DataFrame] = []
        self.request_ids: List[str] = []

    def add(self, page: Page) -> None:
        self.frames.append(page.to_frame(**self.modes))
        if page.request_id:
            self.request_ids.append(page.request_id)

    def result(self) -> pd.DataFrame:
        query = self.query
        if self.frames:
            empty = self.frames[0].iloc[0:0]
        else:
            empty = to_frame(query.dataset, query.result_fields(), [], **self.modes)
        frame = concat(self.frames, empty)
        frame.attrs.update(
            {
                "api_name": query.api_name,
                "params": dict(query.params),
                "request_ids": list(self.request_ids),
            }
        )
        return frame


class CsvCollector:
    """CSV pages of one query joined into one text with one header row."""

    def __init__(self, query: ValidQuery) -> None:
        self.query = query
        self.parts: List[str] = []
        self.request_ids: List[str] = []

    def add(self, page: CsvPage) -> None:
        self.parts.append(page.text if not self.parts else page.body)
        if page.request_id:
            self.request_ids.append(page.request_id)

    def result(self) -> str:
        if self.parts:
            return "".join(self.parts)
        return csv_line(self.query.result_fields())


class ArrowCollector:
    """Arrow pages of one query joined into one ``pyarrow.Table``, or into one typed
    DataFrame: then each page is made the frame's columns as it arrives, and its answer
    let go, so the Arrow pages and the frame are never both held whole.

    A page is made columns on a thread of the collector's own while the next page is
    fetched (pyarrow's and numpy's work there releases the GIL, as waiting for the
    service does), so a bulk pull pays the conversion's time only for its last page.
    One page at most waits for its conversion: two pages are held, never more."""

    def __init__(self, query: ValidQuery, modes: Mapping[str, str], *, table: bool) -> None:
        self.query = query
        self.modes = dict(modes)
        self.table = table
        self.tables: List[Any] = []
        self.pieces: Dict[str, List[pd.Series]] = {}
        self.request_ids: List[str] = []
        self._worker: Optional[ThreadPoolExecutor] = None
        self._converting: Optional["Future[Dict[str, pd.Series]]"] = None

    def add(self, page: arrow.ArrowPage) -> None:
        if self.table:
            self.tables.append(page.table)
        else:
            self._take()
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="iq-arrow")
            self._converting = self._worker.submit(
                arrow.to_columns, self.query.dataset, page.table, **self.modes
            )
        if page.request_id:
            self.request_ids.append(page.request_id)

    def _take(self) -> None:
        """The columns of the page being converted, once made, added to the pieces (a
        failure to make them is raised here)."""
        converting, self._converting = self._converting, None
        if converting is not None:
            for name, series in converting.result().items():
                self.pieces.setdefault(name, []).append(series)

    def close(self) -> None:
        """Ends the conversion thread: the pull's flow calls it when it ends, whether
        with the frame or with an error (then a page may be left unconverted)."""
        if self._worker is not None:
            self._worker.shutdown(wait=True, cancel_futures=True)
            self._worker = None

    def result(self) -> Any:
        self._take()
        query = self.query
        pa = arrow.require("an Arrow answer")
        attrs: Dict[str, Any] = {
            "api_name": query.api_name,
            "params": dict(query.params),
            "request_ids": list(self.request_ids),
        }
        empty = arrow.schema(query.dataset, query.result_fields()).empty_table()
        if self.table:
            table = pa.concat_tables(self.tables) if self.tables else empty
            return arrow.with_attrs(table, attrs)
        if self.pieces:
            frame = arrow.join_columns(list(self.pieces), self.pieces)
        else:
            frame = arrow.to_frame(query.dataset, empty, **self.modes)
        for name, value in attrs.items():
            frame.attrs[name] = value
        return frame


class ClientCore:
    """Configuration, requests, answers, retries, paging and pinning of a client, as
    flows; no I/O (see the module's docstring)."""

    def __init__(
        self,
        api_key: Optional[str],
        *,
        base_url: Optional[str],
        timeout: float,
        max_retries: Optional[int],
        retry: Optional[RetryPolicy],
        random: Callable[[], float],
        page_size: int,
        decimals: DecimalMode,
        dates: DateMode,
    ) -> None:
        self._api_key: Optional[str] = _resolve_key(api_key)
        if self._api_key is None:
            log.info(
                "iq_client: no API key (api_key not given, IQ_API_KEY unset): querying "
                "as the anonymous visitor (public indexes, free-tier delay)"
            )
        base = base_url or os.environ.get("IQ_BASE_URL") or DEFAULT_BASE_URL
        base = check_base_url(base).rstrip("/")
        if base.endswith("/api/v1"):
            base = base[: -len("/api/v1")]
        self.base_url: str = base
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout: float = float(timeout)
        policy = retry or RetryPolicy()
        if max_retries is not None:
            if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
                raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
            policy = dataclasses.replace(policy, max_retries=max_retries)
        self.retry: RetryPolicy = policy
        self._random = random
        self.page_size: int = check_int("page_size", page_size, 1)
        check_modes(decimals, dates)
        self.decimals: str = decimals
        self.dates: str = dates
        #: Quota headers of the latest answer that carried them.
        self.last_rate_limit: Optional[RateLimitInfo] = None
        #: ``request_id`` of the latest answer (success or error).
        self.last_request_id: Optional[str] = None

    # -- housekeeping -------------------------------------------------------------

    @property
    def api_key(self) -> Optional[str]:
        """The key sent as ``X-API-Key`` (``None``: anonymous)."""
        return self._api_key

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self.base_url!r}, "
            f"api_key={key_hint(self._api_key)!r})"
        )

    # -- the catalogue, offline ---------------------------------------------------

    @staticmethod
    def datasets() -> List[str]:
        """Every dataset's ``api_name`` (no request is sent)."""
        return list_datasets()

    @staticmethod
    def params(api_name: str) -> pd.DataFrame:
        """The input parameters of ``api_name`` (no request is sent)."""
        return list_params(api_name)

    @staticmethod
    def fields(api_name: str) -> pd.DataFrame:
        """The fields of ``api_name``: type, default flag, pandas dtype (no request)."""
        return list_fields(api_name)

    # -- requests and answers -----------------------------------------------------

    def _headers(self, *, body: bool, wire: str = "json") -> Dict[str, str]:
        headers = {
            "Accept": ACCEPT[wire],
            "User-Agent": f"iq-client-python/{__version__}",
        }
        if body:
            headers["Content-Type"] = "application/json"
        if self._api_key is not None:
            headers["X-API-Key"] = self._api_key
        return headers

    def _query_request(self, body: Mapping[str, Any], *, wire: str = "json") -> HTTPRequest:
        """``POST /api/v1/query`` with ``body``, asking for the page as ``wire`` says:
        ``"json"``, ``"csv"`` (D18) or ``"arrow"`` (D29)."""
        return HTTPRequest(
            method="POST",
            url=f"{self.base_url}/api/v1/query",
            headers=self._headers(body=True, wire=wire),
            body=json.dumps(body, separators=(",", ":")).encode("utf-8"),
        )

    def _membership_request(self) -> HTTPRequest:
        """``GET /api/v1/membership`` (never counted against a quota)."""
        return HTTPRequest(
            method="GET",
            url=f"{self.base_url}/api/v1/membership",
            headers=self._headers(body=False),
        )

    def _events_request(
        self, after: Optional[str], limit: int, wait: int, filters: str = ""
    ) -> HTTPRequest:
        """``GET /api/v1/events`` after ``after``, holding an empty answer ``wait``
        seconds (never counted against a quota); ``filters`` is the ``types`` and
        ``index_code`` query text (``check_filters``)."""
        query = f"limit={limit}&wait={wait}" + ("" if after is None else f"&after={after}")
        query += filters
        return HTTPRequest(
            method="GET",
            url=f"{self.base_url}/api/v1/events?{query}",
            headers=self._headers(body=False),
            timeout=wait + self.timeout,
        )

    def _read(self, response: HTTPResponse) -> Envelope:
        """The success envelope of ``response``, remembering its request id and
        rate-limit headers; an error envelope raises its typed exception."""
        self.last_request_id = response.header("x-request-id")
        try:
            envelope = read_envelope(response)
        except APIError as error:
            self._remember(error.request_id, error.rate_limit)
            raise
        self._remember(envelope.request_id, envelope.rate_limit)
        return envelope

    def _read_csv(self, query: ValidQuery, response: HTTPResponse) -> CsvPage:
        """The CSV page of ``response`` (D18), remembering its request id and
        rate-limit headers. An error is a JSON envelope and raises its typed exception,
        as for JSON; a service that answered JSON anyway gets its page written as the
        service writes CSV."""
        content_type = (response.header("content-type") or "").split(";")[0].strip().lower()
        if 200 <= response.status < 300 and content_type == "text/csv":
            request_id = response.header("x-request-id")
            rate_limit = RateLimitInfo.from_headers(response.headers)
            self.last_request_id = request_id
            self._remember(request_id, rate_limit)
            return CsvPage.from_response(
                query.dataset, response, request_id=request_id, rate_limit=rate_limit
            )
        return CsvPage.from_page(self._page(query, self._read(response)))

    def _read_arrow(self, query: ValidQuery, response: HTTPResponse) -> arrow.ArrowPage:
        """The Arrow page of ``response`` (D29), as :meth:`_read_csv` reads CSV: an
        error is a JSON envelope and raises; a JSON page is made the table it holds."""
        content_type = (response.header("content-type") or "").split(";")[0].strip().lower()
        if 200 <= response.status < 300 and content_type == arrow.MEDIA_TYPE:
            request_id = response.header("x-request-id")
            rate_limit = RateLimitInfo.from_headers(response.headers)
            self.last_request_id = request_id
            self._remember(request_id, rate_limit)
            return arrow.ArrowPage.from_response(
                query.dataset, response, request_id=request_id, rate_limit=rate_limit
            )
        return arrow.ArrowPage.from_page(self._page(query, self._read(response)))

    def _remember(self, request_id: Optional[str], rate_limit: Optional[RateLimitInfo]) -> None:
        if request_id:
            self.last_request_id = request_id
        if rate_limit is not None:
            self.last_rate_limit = rate_limit

    @staticmethod
    def _page(query: ValidQuery, envelope: Envelope) -> Page:
        return Page.from_data(
            query.dataset,
            envelope.data,
            request_id=envelope.request_id,
            rate_limit=envelope.rate_limit,
        )

    @staticmethod
    def _membership(envelope: Envelope) -> Membership:
        return parse_membership(envelope.data, request_id=envelope.request_id)

    # -- validation ---------------------------------------------------------------

    def _plan(
        self,
        api_name: str,
        params: ParamsArg,
        fields: FieldsArg,
        keyword_params: Mapping[str, Any],
        *,
        limit: Optional[int],
        offset: int,
        page_size: Optional[int],
        decimals: Optional[str],
        dates: Optional[str],
        progress: bool,
        fixed_end_date: bool,
        format: str = "frame",
    ) -> Plan:
        """Checks a paged query and its options; raises before anything is sent."""
        check_format(format)
        if limit is not None:
            check_int("limit", limit, 1)
        check_int("offset", offset, 0)
        size = self.page_size if page_size is None else check_int("page_size", page_size, 1)
        modes = {"decimals": decimals or self.decimals, "dates": dates or self.dates}
        check_modes(modes["decimals"], modes["dates"])
        query = validate_query(api_name, merge_params(params, keyword_params), fields)
        return Plan(
            query=query,
            modes=modes,
            page_size=size,
            limit=limit,
            offset=offset,
            progress=bool(progress),
            pin=bool(fixed_end_date) and self._needs_pin(query),
            format=format,
            wire=wire_for(format),
        )

    # -- flows: what each call sends and waits for, without doing it ----------------

    def _send(self, request: HTTPRequest) -> Flow[Envelope]:
        """Sends ``request`` (with retries); returns the success envelope."""
        return with_retries(request, self._read, self.retry, self._random)

    def _whoami(self) -> Flow[Membership]:
        """``GET /api/v1/membership``: what the service knows of this client's key."""
        return self._membership((yield from self._send(self._membership_request())))

    def _fetch_page(self, query: ValidQuery, limit: Optional[int], offset: int) -> Flow[Page]:
        """One request for one raw page of ``query`` (no paging, no pinning); the
        options are checked when the flow starts."""
        size = self.page_size if limit is None else check_int("limit", limit, 1)
        body = query.body(limit=size, offset=check_int("offset", offset, 0))
        return self._page(query, (yield from self._send(self._query_request(body))))

    def _fetch(
        self, query: ValidQuery, request: HTTPRequest, wire: str
    ) -> Flow[Union[Page, CsvPage, arrow.ArrowPage]]:
        """Sends one page's ``request`` (with retries); returns the page, read as the
        ``wire`` it asks for."""
        if wire == "json":
            return self._page(query, (yield from self._send(request)))
        if wire == "csv":
            csv_read = functools.partial(self._read_csv, query)
            return (yield from with_retries(request, csv_read, self.retry, self._random))
        arrow_read = functools.partial(self._read_arrow, query)
        return (yield from with_retries(request, arrow_read, self.retry, self._random))

    def _resolve(self, plan: Plan) -> Flow[ValidQuery]:
        """The query to page through: with ``end_date`` pinned to the data cutoff
        the service reports, when the plan asks for it (one membership request)."""
        if not plan.pin:
            return plan.query
        return self._pin(plan.query, (yield from self._whoami()))

    def _walk(self, query: ValidQuery, plan: Plan, take: Callable[[Any], Any]) -> Flow[None]:
        """Pages through ``query`` as ``plan`` says (see :class:`iq_client.paging.Pager`),
        with a progress bar when it asks for one. Each page goes to ``take``; what
        ``take`` returns, unless ``None``, is emitted to the caller."""
        pager: Pager[Any] = Pager(offset=plan.offset, page_size=plan.page_size, max_rows=plan.limit)
        bar = progress_bar(query.api_name, plan.limit) if plan.progress else None
        try:
            ask = pager.next_request()
            while ask is not None:
                offset, limit = ask
                body = query.body(limit=limit, offset=offset)
                request = self._query_request(body, wire=plan.wire)
                page = pager.accept((yield from self._fetch(query, request, plan.wire)))
                if bar is not None:
                    bar.update(page.returned)
                value = take(page)
                if value is not None:
                    yield Emit(value)
                ask = pager.next_request()
        finally:
            if bar is not None:
                bar.close()

    def _events(
        self,
        after: Optional[str],
        wait: int,
        limit: int,
        follow: bool,
        cursor: Optional[Any],
        filters: str = "",
    ) -> Flow[None]:
        """``events()``: each event emitted as it arrives, long-polling; the id of each
        one the caller has taken written to ``cursor`` (when given), so the next run
        goes on after it. Ends at the first empty answer unless ``follow``."""
        if after is None and cursor is not None:
            after = check_after((yield Work(functools.partial(read_cursor, cursor))))
        while True:
            envelope = yield from self._send(self._events_request(after, limit, wait, filters))
            try:
                page: EventPage = parse_page(envelope.data)
            except (ValueError, KeyError, TypeError) as error:
                raise APIError(
                    f"the event feed's answer is not understood: {error}",
                    request_id=envelope.request_id,
                ) from None
            for event in page.events:
                yield Emit(event)
                if cursor is not None and event.id is not None:
                    yield Work(functools.partial(write_cursor, cursor, event.id))
            after = page.next
            if not page.events and not follow:
                return

    def _query(self, plan: Plan) -> Flow[Any]:
        """``query()``: every page of the plan's query, pinned when it asks for it, as
        one typed DataFrame (or one CSV text, or one ``pyarrow.Table``)."""
        query = yield from self._resolve(plan)
        collector: Union[Collector, CsvCollector, ArrowCollector]
        if plan.wire == "csv":
            collector = CsvCollector(query)
        elif plan.wire == "arrow":
            collector = ArrowCollector(query, plan.modes, table=plan.format == "arrow")
        else:
            collector = Collector(query, plan.modes)
        try:
            yield from self._walk(query, plan, collector.add)
            return collector.result()
        finally:
            if isinstance(collector, ArrowCollector):
                collector.close()

    def _pages(self, plan: Plan) -> Flow[None]:
        """``iter_query()``: each page emitted as it arrives, as a typed DataFrame (or
        its CSV text as sent, header row included, or its ``pyarrow.Table``)."""
        query = yield from self._resolve(plan)
        if plan.format == "csv":
            yield from self._walk(query, plan, lambda page: page.text)
        elif plan.format == "arrow":
            yield from self._walk(query, plan, lambda page: page.table)
        else:
            yield from self._walk(query, plan, lambda page: page.to_frame(**plan.modes))

    # -- pinning end_date for a bulk pull ------------------------------------------

    @staticmethod
    def _needs_pin(query: ValidQuery) -> bool:
        """Whether a bulk pull of ``query`` gets ``end_date`` pinned: a delayed
        dataset (``index_daily``, ``index_quote``) asked without ``end_date`` and
        without ``trade_date``."""
        ds = query.dataset
        if not ds.delayed or ds.param("end_date") is None:
            return False
        return "end_date" not in query.params and "trade_date" not in query.params

    def _pin(self, query: ValidQuery, membership: Membership) -> ValidQuery:
        """``query`` with ``end_date`` pinned to the data cutoff the service reports
        for this key: the latest trade date the key sees, in the service's own time
        zone and after the key's delay. No visible row is later, so none is lost, and
        rows that appear during the pull cannot shift the pages.

        Left unpinned (the pull still works, only without that guarantee) when the
        service reports no cutoff (no open day is old enough: nothing is visible), when
        ``start_date`` is after the cutoff (nothing is visible either), or when the
        membership is not the one of this client's key (a service that ignored the key
        there would report the visitor's earlier cutoff, and pinning to it would lose
        rows)."""
        expected = "key" if self._api_key is not None else None
        if (expected == "key") != (membership.identity == "key"):
            log.warning(
                "iq_client: the service described identity %r for this client's %s; "
                "end_date is not pinned",
                membership.identity,
                "key" if expected else "keyless requests",
            )
            return query
        if membership.data_cutoff is None:
            return query
        cutoff = yyyymmdd(membership.data_cutoff)
        if query.params.get("start_date", "") > cutoff:
            return query
        return dataclasses.replace(query, params={**query.params, "end_date": cutoff})

"""The :class:`Client`: queries in, typed DataFrames out."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import logging
import os
import random as _random
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Union

import pandas as pd

from ._version import __version__
from .catalogue import Dataset, list_datasets, list_fields, list_params
from .credentials import check_api_key, check_base_url, key_hint
from .envelope import Envelope, read_envelope
from .errors import APIError
from .frames import DateMode, DecimalMode, check_modes, concat, to_frame
from .paging import Page, walk, with_progress
from .ratelimit import RateLimitInfo
from .retry import RetryPolicy, call_with_retries
from .transport import HTTPRequest, RequestsTransport, Transport
from .validation import (
    FieldsArg,
    ParamsArg,
    ValidQuery,
    check_int,
    merge_params,
    validate_query,
    yyyymmdd,
)

__all__ = ["Client", "DateLike", "SERVICE_TZ"]

#: A date parameter: ``"20261120"``, ``"2026-11-20"``, a ``date``/``datetime`` or a
#: ``pandas.Timestamp``.
DateLike = Union[str, _dt.date, _dt.datetime, None]

#: The service's time zone (Asia/Shanghai, no daylight saving): "today" for pinning
#: ``end_date`` is taken here.
SERVICE_TZ = _dt.timezone(_dt.timedelta(hours=8), "Asia/Shanghai")

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT = 30.0
DEFAULT_PAGE_SIZE = 5000

log = logging.getLogger("iq_client")


def _today_in_service_tz() -> _dt.date:
    return _dt.datetime.now(SERVICE_TZ).date()


def _resolve_key(api_key: Optional[str]) -> Optional[str]:
    """The key to send: ``api_key``, else ``IQ_API_KEY``, checked; ``None`` only when
    neither is set (the anonymous visitor)."""
    if api_key is not None:
        return check_api_key(api_key, "api_key")
    from_env = os.environ.get("IQ_API_KEY")
    if from_env is not None:
        return check_api_key(from_env, "IQ_API_KEY")
    return None


class Client:
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
        today: "today" in the service's time zone, for pinning ``end_date``.
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
        today: Callable[[], _dt.date] = _today_in_service_tz,
        page_size: int = DEFAULT_PAGE_SIZE,
        decimals: DecimalMode = "float",
        dates: DateMode = "datetime",
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
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout: float = float(timeout)
        policy = retry or RetryPolicy()
        if max_retries is not None:
            if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
                raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
            policy = dataclasses.replace(policy, max_retries=max_retries)
        self.retry: RetryPolicy = policy
        self._owns_transport = transport is None
        self.transport: Transport = transport if transport is not None else RequestsTransport()
        self._sleep = sleep
        self._random = random
        self._today = today
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
        return f"Client(base_url={self.base_url!r}, api_key={key_hint(self._api_key)!r})"

    def close(self) -> None:
        """Releases the HTTP connections of the default transport."""
        if self._owns_transport and isinstance(self.transport, RequestsTransport):
            self.transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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

    # -- one request --------------------------------------------------------------

    def _headers(self) -> Dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"iq-client-python/{__version__}",
        }
        if self._api_key is not None:
            headers["X-API-Key"] = self._api_key
        return headers

    def _post_query(self, body: Mapping[str, Any]) -> Envelope:
        """Sends one query body (with retries) and returns the success envelope."""
        request = HTTPRequest(
            method="POST",
            url=f"{self.base_url}/api/v1/query",
            headers=self._headers(),
            body=json.dumps(body, separators=(",", ":")).encode("utf-8"),
        )

        def attempt() -> Envelope:
            response = self.transport.send(request, self.timeout)
            self.last_request_id = response.header("x-request-id")
            try:
                envelope = read_envelope(response)
            except APIError as error:
                self._remember(error.request_id, error.rate_limit)
                raise
            self._remember(envelope.request_id, envelope.rate_limit)
            return envelope

        return call_with_retries(attempt, self.retry, sleep=self._sleep, random=self._random)

    def _remember(self, request_id: Optional[str], rate_limit: Optional[RateLimitInfo]) -> None:
        if request_id:
            self.last_request_id = request_id
        if rate_limit is not None:
            self.last_rate_limit = rate_limit

    def _fetch(self, query: ValidQuery, offset: int, limit: int) -> Page:
        envelope = self._post_query(query.body(limit=limit, offset=offset))
        return Page.from_data(
            query.dataset,
            envelope.data,
            request_id=envelope.request_id,
            rate_limit=envelope.rate_limit,
        )

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
        query = validate_query(api_name, merge_params(params, keyword_params), fields)
        size = self.page_size if limit is None else check_int("limit", limit, 1)
        return self._fetch(query, check_int("offset", offset, 0), size)

    # -- paged queries ------------------------------------------------------------

    def _prepare(
        self,
        api_name: str,
        params: ParamsArg,
        fields: FieldsArg,
        keyword_params: Mapping[str, Any],
        fixed_end_date: bool,
    ) -> ValidQuery:
        query = validate_query(api_name, merge_params(params, keyword_params), fields)
        return self._pin_end_date(query) if fixed_end_date else query

    def _pin_end_date(self, query: ValidQuery) -> ValidQuery:
        """Spec 4.3: keep ``end_date`` fixed while paging. For a delayed dataset with
        no ``end_date``/``trade_date``, pin it to today in the service's time zone:
        the delay cutoff is never later, so no visible row is lost, and rows that
        appear during the pull cannot shift the pages."""
        ds: Dataset = query.dataset
        params = query.params
        if not ds.delayed or ds.param("end_date") is None:
            return query
        if "end_date" in params or "trade_date" in params:
            return query
        today = yyyymmdd(self._today())
        if params.get("start_date", "") > today:
            return query  # a future range: nothing to pin against
        return dataclasses.replace(query, params={**params, "end_date": today})

    def _pages(
        self,
        query: ValidQuery,
        *,
        limit: Optional[int],
        offset: int,
        page_size: Optional[int],
        progress: bool,
    ) -> Iterator[Page]:
        size = self.page_size if page_size is None else check_int("page_size", page_size, 1)
        pages = walk(
            lambda at, want: self._fetch(query, at, want),
            offset=offset,
            page_size=size,
            max_rows=limit,
        )
        if progress:
            pages = with_progress(pages, desc=query.api_name, total=limit)
        return pages

    def _options(
        self, limit: Optional[int], offset: int, decimals: Optional[str], dates: Optional[str]
    ) -> Dict[str, Any]:
        if limit is not None:
            check_int("limit", limit, 1)
        check_int("offset", offset, 0)
        modes = {"decimals": decimals or self.decimals, "dates": dates or self.dates}
        check_modes(modes["decimals"], modes["dates"])
        return modes

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
        **keyword_params: Any,
    ) -> pd.DataFrame:
        """Runs a query and returns every matching row as one typed DataFrame.

        Pages are followed while ``has_more`` (spec 4.3). Only data the key may see
        comes back: with ``index_code`` omitted, all visible indexes.

        Args:
            api_name: one of :meth:`datasets`.
            params: filters, e.g. ``{"index_code": "GPU_Index"}``; filters may also be
                given as keywords (``index_code="GPU_Index"``). ``None`` values are
                left out. Dates: ``YYYYMMDD``, ``YYYY-MM-DD`` or date objects.
            fields: columns to return (a list or ``"a,b,c"``); default the dataset's
                default fields.
            limit: at most this many rows in total (default: all).
            offset: skip this many rows first.
            page_size: rows per request (default the client's, 5000; the service
                may cap it lower).
            decimals: ``"float"`` or ``"decimal"`` (default the client's).
            dates: ``"datetime"`` or ``"string"`` (default the client's).
            progress: show a tqdm progress bar (needs ``iq-client[progress]``).
            fixed_end_date: pin ``end_date`` for the pull (see :meth:`_pin_end_date`).

        Returns:
            The rows, in the service's order; an empty frame (with the columns and
            dtypes) when nothing matched. ``df.attrs`` holds ``api_name``,
            ``params`` (as sent) and ``request_ids``.

        Raises:
            LocalValidationError: before any request: unknown parameter or field,
                ``trade_date`` with a range, a bad date...
            AuthenticationError, PermissionDenied, RateLimited, QuotaExhausted,
            InvalidRequest, ServerError, TransportError: see :mod:`iq_client.errors`.
        """
        modes = self._options(limit, offset, decimals, dates)
        query = self._prepare(api_name, params, fields, keyword_params, fixed_end_date)
        frames: List[pd.DataFrame] = []
        request_ids: List[str] = []
        pages = self._pages(
            query, limit=limit, offset=offset, page_size=page_size, progress=progress
        )
        for page in pages:
            frames.append(page.to_frame(**modes))
            if page.request_id:
                request_ids.append(page.request_id)
        empty = to_frame(query.dataset, query.result_fields(), [], **modes)
        if frames:
            empty = frames[0].iloc[0:0]
        frame = concat(frames, empty)
        frame.attrs.update(
            {"api_name": query.api_name, "params": dict(query.params), "request_ids": request_ids}
        )
        return frame

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
        **keyword_params: Any,
    ) -> Iterator[pd.DataFrame]:
        """Like :meth:`query`, but yields one DataFrame per page as it arrives, for
        pulls too large to hold at once. The query is validated now, before the first
        ``next()``; requests are sent as the iterator is consumed.
        """
        modes = self._options(limit, offset, decimals, dates)
        query = self._prepare(api_name, params, fields, keyword_params, fixed_end_date)
        pages = self._pages(
            query, limit=limit, offset=offset, page_size=page_size, progress=progress
        )
        return (page.to_frame(**modes) for page in pages)

    # -- one method per dataset ---------------------------------------------------
    # ``index_code`` may be given positionally; every other argument is keyword-only.

    def index_basic(
        self,
        index_code: Optional[str] = None,
        *,
        fields: FieldsArg = None,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
    ) -> pd.DataFrame:
        """Index basic information: code, name, sort_no, visibility, base date and
        value, unit, has_quotes, description. Sorted by ``sort_no, index_code``."""
        return self.query(
            "index_basic",
            {"index_code": index_code},
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
        )

    def index_daily(
        self,
        index_code: Optional[str] = None,
        *,
        trade_date: DateLike = None,
        start_date: DateLike = None,
        end_date: DateLike = None,
        fields: FieldsArg = None,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
    ) -> pd.DataFrame:
        """Daily index points and weighted price. Sorted by ``trade_date, index_code``.
        ``trade_date`` is one day; ``start_date``/``end_date`` an inclusive range."""
        return self.query(
            "index_daily",
            {
                "index_code": index_code,
                "trade_date": trade_date,
                "start_date": start_date,
                "end_date": end_date,
            },
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
        )

    def index_latest(
        self,
        index_code: Optional[str] = None,
        *,
        fields: FieldsArg = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
    ) -> pd.DataFrame:
        """The latest daily row of each visible index (after the key's delay).
        Sorted by ``sort_no, index_code``."""
        return self.query(
            "index_latest",
            {"index_code": index_code},
            fields,
            decimals=decimals,
            dates=dates,
        )

    def index_quote(
        self,
        index_code: Optional[str] = None,
        *,
        trade_date: DateLike = None,
        start_date: DateLike = None,
        end_date: DateLike = None,
        specification: Optional[str] = None,
        fields: FieldsArg = None,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
    ) -> pd.DataFrame:
        """Specification-level quotes (weight, price). Sorted by ``trade_date,
        index_code, specification``; ``specification`` matches exactly."""
        return self.query(
            "index_quote",
            {
                "index_code": index_code,
                "trade_date": trade_date,
                "start_date": start_date,
                "end_date": end_date,
                "specification": specification,
            },
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
        )

    def trade_calendar(
        self,
        *,
        trade_date: DateLike = None,
        start_date: DateLike = None,
        end_date: DateLike = None,
        fields: FieldsArg = None,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
    ) -> pd.DataFrame:
        """Open trading days and each one's previous open day. Sorted by
        ``trade_date``."""
        return self.query(
            "trade_calendar",
            {"trade_date": trade_date, "start_date": start_date, "end_date": end_date},
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            dates=dates,
            progress=progress,
        )

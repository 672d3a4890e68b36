"""The public methods of both clients, written once.

:class:`ClientMethods` is :meth:`query`, :meth:`iter_query`, :meth:`fetch_page`,
:meth:`whoami`, :meth:`sync` and one method per dataset. Each checks its arguments,
takes the flow of the call from the sans-I/O core (:class:`iq_client._core.ClientCore`)
and hands it to the client's driver: ``_run`` (the flow's result) or ``_iterate`` (what
it emits). :class:`iq_client.Client` drives with blocking I/O, so its methods return
values; :class:`iq_client.AsyncClient` with ``await``, so they return awaitables (and
``iter_query`` an async iterator). The type parameters of :class:`ClientMethods` say
which.

Each dataset method only names the dataset's parameters and hands everything to
``self.query``, so it takes exactly the paging and conversion options of :meth:`query`
(``fields``, ``limit``, ``offset``, ``page_size``, ``decimals``, ``dates``,
``progress``, ``fixed_end_date``, ``format``). For type checkers, each dataset's
filters and those options are declared once, as the keyword arguments of
:class:`_Options` and its subclasses, and each method's overloads only say what it
returns for each ``format``.

The market-data methods (``index_daily``, ``index_latest``, ``index_quote``) also take
``as_of`` and ``updated_since`` (decision D17), and ``revisions`` takes ``since``
(decision D21): see :data:`InstantLike`.
"""

from __future__ import annotations

import datetime as _dt
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    Generic,
    Literal,
    Mapping,
    Optional,
    Sequence,
    TypeVar,
    Union,
    cast,
    overload,
)

from ._core import ClientCore
from ._sansio import Flow
from .dataset_sync import PathArg, SyncFormat, SyncJob
from .errors import LocalValidationError
from .events import check_after, check_filters
from .frames import DateMode, DecimalMode
from .validation import FieldsArg, ParamsArg, merge_params, validate_query

if TYPE_CHECKING:
    from typing_extensions import TypedDict, Unpack

__all__ = ["ClientMethods", "DateLike", "InstantLike", "Format", "QUERY_OPTIONS"]

#: A date parameter: ``"20261120"``, ``"2026-11-20"``, a ``date``/``datetime`` or a
#: ``pandas.Timestamp``.
DateLike = Union[str, _dt.date, _dt.datetime, None]

#: An instant parameter (``as_of``, ``updated_since``, ``since``): an RFC 3339 string with an
#: offset (``"2026-11-20T18:00:00+08:00"``, ``"2026-11-20T10:00:00Z"``) or a
#: timezone-aware ``datetime`` / ``pandas.Timestamp`` (sent as RFC 3339 in UTC); a
#: naive ``datetime`` is refused. ``as_of`` also takes a date (``"20261120"``,
#: ``"2026-11-20"``, a ``datetime.date``: the end of that day in the service's time
#: zone).
InstantLike = Union[str, _dt.date, _dt.datetime, None]

#: What a query returns: ``"frame"``, a typed DataFrame, ``"csv"``, the service's
#: CSV text (decision D18), or ``"arrow"``, a ``pyarrow.Table`` (decision D29).
Format = Literal["frame", "csv", "arrow"]

#: The keyword-only options of ``query()`` that every dataset method takes too.
QUERY_OPTIONS = (
    "limit",
    "offset",
    "page_size",
    "decimals",
    "dates",
    "progress",
    "fixed_end_date",
    "format",
)
#: The arguments of a dataset method that are not the dataset's parameters.
_NOT_PARAMS = frozenset(("self", "fields") + QUERY_OPTIONS)

Fmt = TypeVar("Fmt")
F = TypeVar("F")
T = TypeVar("T")
FI = TypeVar("FI")
TI = TypeVar("TI")
P = TypeVar("P")
M = TypeVar("M")
S = TypeVar("S")

if TYPE_CHECKING:
    # The keyword arguments of the dataset methods, for type checkers; ``Fmt`` is the
    # type of ``format``, which tells an overload what the call returns.

    class _Options(TypedDict, Generic[Fmt], total=False):
        fields: FieldsArg
        limit: Optional[int]
        offset: int
        page_size: Optional[int]
        decimals: Optional[DecimalMode]
        dates: Optional[DateMode]
        progress: bool
        fixed_end_date: bool
        format: Fmt

    class _Range(_Options[Fmt], total=False):
        start_date: DateLike
        end_date: DateLike

    class _Calendar(_Range[Fmt], total=False):
        trade_date: DateLike

    class _Latest(_Options[Fmt], total=False):
        as_of: InstantLike
        updated_since: InstantLike

    # One parent only: a TypedDict with two parents that share fields is refused by
    # mypy --strict, so the point-in-time pair is written out again here.
    class _Daily(_Calendar[Fmt], total=False):
        as_of: InstantLike
        updated_since: InstantLike

    class _Quote(_Daily[Fmt], total=False):
        specification: Optional[str]

    class _Revisions(_Range[Fmt], total=False):
        since: InstantLike

    _Frame = Literal["frame"]
    _Csv = Literal["csv"]
    # pyarrow has no type information: a table is ``Any`` to a type checker.
    _Arrow = Literal["arrow"]


def _arguments(frame_locals: Mapping[str, Any]) -> Dict[str, Any]:
    """A method's arguments, from its ``locals()`` taken before anything else: all but
    ``self``."""
    return {name: value for name, value in frame_locals.items() if name != "self"}


class ClientMethods(ClientCore, Generic[F, T, FI, TI, P, M, S]):
    """The public methods of a client over the sans-I/O core. What they return:
    ``F`` a DataFrame (``query``), ``T`` CSV text (``query(format="csv")``), ``FI``
    and ``TI`` iterators of those (``iter_query``), ``P`` a :class:`iq_client.Page`
    (``fetch_page``), ``M`` a :class:`iq_client.Membership` (``whoami``), ``S`` a
    :class:`iq_client.SyncResult` (``sync``): the values themselves on
    :class:`iq_client.Client`, awaitables on :class:`iq_client.AsyncClient`.
    ``index_code`` may be given positionally; every other argument of a dataset
    method is keyword-only."""

    # -- the driver: each client performs a flow's steps with its own I/O -----------

    def _run(self, flow: Flow[Any]) -> Any:
        """The result of ``flow`` (on AsyncClient, an awaitable of it)."""
        raise NotImplementedError  # pragma: no cover - each client defines it

    def _iterate(self, flow: Flow[Any]) -> Any:
        """What ``flow`` emits, as an iterator (on AsyncClient, an async iterator)."""
        raise NotImplementedError  # pragma: no cover - each client defines it

    # -- the service ----------------------------------------------------------------

    def whoami(self) -> M:
        """What the service knows of this client's key: owner, tier, delay, data
        cutoff, visible indexes, the key (scopes, index range, expiry) and today's
        use against its limits (``GET /api/v1/membership``; never counted against
        the quota). Without a key, the anonymous visitor's view.

        Raises:
            AuthenticationError, PermissionDenied: a refused key, as a query would be.
        """
        return cast(M, self._run(self._whoami()))

    def fetch_page(
        self,
        api_name: str,
        params: ParamsArg = None,
        fields: FieldsArg = None,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        **keyword_params: Any,
    ) -> P:
        """Sends exactly one request and returns the raw :class:`Page` (wire values,
        ``has_more``, ``request_id``, rate-limit headers). No paging, no pinning. On
        :class:`iq_client.AsyncClient` the query is checked when the coroutine runs.

        Raises:
            LocalValidationError: before sending, for a query the service would refuse.
            APIError: a subclass per business code when the service refuses it.
        """
        query = validate_query(api_name, merge_params(params, keyword_params), fields)
        return cast(P, self._run(self._fetch_page(query, limit, offset)))

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
    ) -> F: ...

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
    ) -> T: ...

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
        format: Literal["arrow"],
        **keyword_params: Any,
    ) -> Any: ...

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
    ) -> Union[F, T]: ...

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
    ) -> Any:
        """Runs a query and returns every matching row as one typed DataFrame (or,
        with ``format="csv"``, as the service's CSV text). On
        :class:`iq_client.AsyncClient` it is a coroutine, and the query is checked
        when it runs.

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
                ``"arrow"`` (needs ``pip install 'iq-client[arrow]'``) returns a
                ``pyarrow.Table`` of every page as the service sent them (decision
                D29): decimals ``decimal128(38, scale)``, exact; dates ``date32``;
                instants ``timestamp[us, UTC]``; ``api_name``, ``params`` and
                ``request_ids`` as JSON in the schema's metadata under ``iq``.
                ``decimals`` and ``dates`` apply to frames only. With pyarrow
                installed, ``"frame"`` reads the pages as Arrow too (the same frame,
                built without Python work per value); without it, as JSON.

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
        return self._run(self._query(self._plan(**_arguments(locals()))))

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
    ) -> FI: ...

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
    ) -> TI: ...

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
        format: Literal["arrow"],
        **keyword_params: Any,
    ) -> Any: ...

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
    ) -> Union[FI, TI]: ...

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
    ) -> Any:
        """Like :meth:`query`, but yields one DataFrame per page as it arrives, for
        pulls too large to hold at once (on :class:`iq_client.AsyncClient`, an async
        iterator: ``async for``). The query is validated now, before the first
        ``next()``; requests (the membership lookup for pinning included) are sent as
        the iterator is consumed. With ``format="csv"`` it yields each page's CSV
        text as the service sent it, each with its header row.
        """
        return self._iterate(self._pages(self._plan(**_arguments(locals()))))

    # -- events ---------------------------------------------------------------------

    def events(
        self,
        after: Optional[str] = None,
        *,
        wait: int = 30,
        limit: int = 100,
        follow: bool = True,
        cursor: Optional[PathArg] = None,
        types: Optional[Sequence[str]] = None,
        index_code: Optional[str] = None,
    ) -> Any:
        """What the service tells this key's owner, oldest first: an iterator of
        :class:`iq_client.Event` (on :class:`iq_client.AsyncClient`, an async iterator:
        ``async for``), long-polling ``GET /api/v1/events`` so each event arrives
        within a second of its publication. Never counted against the quota.

        Args:
            after: the last event id already handled (``evt_...``); default the one
                remembered in ``cursor``, else the first event there is.
            wait: seconds each request holds an empty answer (0 to 30).
            limit: events per request (1 to 1000).
            follow: keep waiting for new events (default); ``False`` stops at the
                first empty answer, for a catch-up run.
            cursor: a file that remembers where the iteration stopped: after each
                event the caller has taken, its id is written there, and a later
                call with the same file goes on after it (an event being handled
                when the program stopped comes again: at least once).
            types: only events of these types (``["index.revised"]``, say).
            index_code: only events of this index.

        >>> for event in client.events(cursor="iq-events.cursor"):
        ...     if event.type == "index.revised":
        ...         client.index_daily(index_code=event.index_code)
        """
        check_after(after)
        if isinstance(wait, bool) or not isinstance(wait, int) or not 0 <= wait <= 30:
            raise LocalValidationError(f"wait must be an integer from 0 to 30, got {wait!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise LocalValidationError(f"limit must be an integer from 1 to 1000, got {limit!r}")
        filters = check_filters(types, index_code)
        return self._iterate(self._events(after, wait, limit, follow, cursor, filters))

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
    ) -> S:
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
        :mod:`iq_client.dataset_sync`. On :class:`iq_client.AsyncClient` it is a coroutine,
        and the merged files are written in a worker thread
        (:func:`asyncio.to_thread`), so the event loop goes on.

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
        job = SyncJob(self, **_arguments(locals()))
        return cast(S, self._run(job.run()))

    # -- one method per dataset -----------------------------------------------------

    def _dataset(self, api_name: str, arguments: Mapping[str, Any]) -> Any:
        """:meth:`query` of ``api_name`` with a dataset method's ``arguments`` (its
        ``locals()``): the dataset's parameters, ``fields`` and the options."""
        params = {name: value for name, value in arguments.items() if name not in _NOT_PARAMS}
        options = {name: arguments[name] for name in QUERY_OPTIONS}
        return self.query(api_name, params, arguments["fields"], **options)

    @overload
    def index_basic(
        self, index_code: Optional[str] = None, **options: Unpack[_Options[_Frame]]
    ) -> F: ...
    @overload
    def index_basic(
        self, index_code: Optional[str] = None, **options: Unpack[_Options[_Csv]]
    ) -> T: ...
    @overload
    def index_basic(
        self, index_code: Optional[str] = None, **options: Unpack[_Options[_Arrow]]
    ) -> Any: ...
    @overload
    def index_basic(
        self, index_code: Optional[str] = None, **options: Unpack[_Options[Format]]
    ) -> Union[F, T]: ...

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
        fixed_end_date: bool = True,
        format: Format = "frame",
    ) -> Any:
        """Index basic information: code, name, sort_no, visibility, base date and
        value, unit, has_quotes, description. Sorted by ``sort_no, index_code``.

        The options are those of :meth:`query`."""
        return self._dataset("index_basic", locals())

    @overload
    def index_daily(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[_Frame]]
    ) -> F: ...
    @overload
    def index_daily(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[_Csv]]
    ) -> T: ...
    @overload
    def index_daily(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[_Arrow]]
    ) -> Any: ...
    @overload
    def index_daily(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[Format]]
    ) -> Union[F, T]: ...

    def index_daily(
        self,
        index_code: Optional[str] = None,
        *,
        trade_date: DateLike = None,
        start_date: DateLike = None,
        end_date: DateLike = None,
        as_of: InstantLike = None,
        updated_since: InstantLike = None,
        fields: FieldsArg = None,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
    ) -> Any:
        """Daily index points and weighted price. Sorted by ``trade_date, index_code``.
        ``trade_date`` is one day; ``start_date``/``end_date`` an inclusive range.

        ``as_of``: the data as it stood at that instant (RFC 3339 with an offset, an
        aware ``datetime``, or a date: the end of that day in the service's time
        zone); the same ``as_of`` always gives the same answer. ``updated_since``
        (RFC 3339 with an offset, or an aware ``datetime``): only rows that became
        visible to the key after that instant. Ask ``fields`` with ``published_at``
        for when each row's current version was published.

        The options are those of :meth:`query`; without ``end_date`` and
        ``trade_date`` the pull's ``end_date`` is pinned to the key's data cutoff
        unless ``fixed_end_date=False``."""
        return self._dataset("index_daily", locals())

    @overload
    def index_weekly(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[_Frame]]
    ) -> F: ...
    @overload
    def index_weekly(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[_Csv]]
    ) -> T: ...
    @overload
    def index_weekly(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[_Arrow]]
    ) -> Any: ...
    @overload
    def index_weekly(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[Format]]
    ) -> Union[F, T]: ...

    def index_weekly(
        self,
        index_code: Optional[str] = None,
        *,
        trade_date: DateLike = None,
        start_date: DateLike = None,
        end_date: DateLike = None,
        as_of: InstantLike = None,
        updated_since: InstantLike = None,
        fields: FieldsArg = None,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
    ) -> Any:
        """Weekly values (decision D25): per index and ISO week (Monday to Sunday),
        ``index_value`` and ``trade_date`` of its last day with a value, ``open_value``,
        ``high_value``, ``low_value``, the previous week's value as ``pre_value``,
        ``change`` and ``pct_change``. The week in progress is included. Sorted by
        ``trade_date, index_code``; the date arguments bound ``trade_date``; ``as_of``
        and ``updated_since`` as for :meth:`index_daily`.

        The options are those of :meth:`query`."""
        return self._dataset("index_weekly", locals())

    @overload
    def index_monthly(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[_Frame]]
    ) -> F: ...
    @overload
    def index_monthly(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[_Csv]]
    ) -> T: ...
    @overload
    def index_monthly(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[_Arrow]]
    ) -> Any: ...
    @overload
    def index_monthly(
        self, index_code: Optional[str] = None, **options: Unpack[_Daily[Format]]
    ) -> Union[F, T]: ...

    def index_monthly(
        self,
        index_code: Optional[str] = None,
        *,
        trade_date: DateLike = None,
        start_date: DateLike = None,
        end_date: DateLike = None,
        as_of: InstantLike = None,
        updated_since: InstantLike = None,
        fields: FieldsArg = None,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
    ) -> Any:
        """Monthly values (decision D25): as :meth:`index_weekly`, per calendar month.

        The options are those of :meth:`query`."""
        return self._dataset("index_monthly", locals())

    @overload
    def index_latest(
        self, index_code: Optional[str] = None, **options: Unpack[_Latest[_Frame]]
    ) -> F: ...
    @overload
    def index_latest(
        self, index_code: Optional[str] = None, **options: Unpack[_Latest[_Csv]]
    ) -> T: ...
    @overload
    def index_latest(
        self, index_code: Optional[str] = None, **options: Unpack[_Latest[_Arrow]]
    ) -> Any: ...
    @overload
    def index_latest(
        self, index_code: Optional[str] = None, **options: Unpack[_Latest[Format]]
    ) -> Union[F, T]: ...

    def index_latest(
        self,
        index_code: Optional[str] = None,
        *,
        as_of: InstantLike = None,
        updated_since: InstantLike = None,
        fields: FieldsArg = None,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
    ) -> Any:
        """The latest daily row of each visible index (after the key's delay).
        Sorted by ``sort_no, index_code``. ``as_of`` and ``updated_since`` as for
        :meth:`index_daily`.

        The options are those of :meth:`query`."""
        return self._dataset("index_latest", locals())

    @overload
    def index_quote(
        self, index_code: Optional[str] = None, **options: Unpack[_Quote[_Frame]]
    ) -> F: ...
    @overload
    def index_quote(
        self, index_code: Optional[str] = None, **options: Unpack[_Quote[_Csv]]
    ) -> T: ...
    @overload
    def index_quote(
        self, index_code: Optional[str] = None, **options: Unpack[_Quote[_Arrow]]
    ) -> Any: ...
    @overload
    def index_quote(
        self, index_code: Optional[str] = None, **options: Unpack[_Quote[Format]]
    ) -> Union[F, T]: ...

    def index_quote(
        self,
        index_code: Optional[str] = None,
        *,
        trade_date: DateLike = None,
        start_date: DateLike = None,
        end_date: DateLike = None,
        specification: Optional[str] = None,
        as_of: InstantLike = None,
        updated_since: InstantLike = None,
        fields: FieldsArg = None,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
    ) -> Any:
        """Specification-level quotes (weight, price). Sorted by ``trade_date,
        index_code, specification``; ``specification`` matches exactly.

        ``as_of`` as for :meth:`index_daily`. With ``updated_since`` the unit is the
        day: when any quote of a ``(trade_date, index_code)`` changed after that
        instant, every current row of that day comes back, so replace the day whole
        (a specification an import dropped is then gone).

        The options are those of :meth:`query`; without ``end_date`` and
        ``trade_date`` the pull's ``end_date`` is pinned to the key's data cutoff
        unless ``fixed_end_date=False``."""
        return self._dataset("index_quote", locals())

    @overload
    def revisions(
        self, index_code: Optional[str] = None, **options: Unpack[_Revisions[_Frame]]
    ) -> F: ...
    @overload
    def revisions(
        self, index_code: Optional[str] = None, **options: Unpack[_Revisions[_Csv]]
    ) -> T: ...
    @overload
    def revisions(
        self, index_code: Optional[str] = None, **options: Unpack[_Revisions[_Arrow]]
    ) -> Any: ...
    @overload
    def revisions(
        self, index_code: Optional[str] = None, **options: Unpack[_Revisions[Format]]
    ) -> Union[F, T]: ...

    def revisions(
        self,
        index_code: Optional[str] = None,
        *,
        start_date: DateLike = None,
        end_date: DateLike = None,
        since: InstantLike = None,
        fields: FieldsArg = None,
        limit: Optional[int] = None,
        offset: int = 0,
        page_size: Optional[int] = None,
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
    ) -> Any:
        """The ``index_revisions`` dataset (decision D21): one row each time a
        published daily value was replaced by a different one, with the value before
        (``previous_value``, published at ``previous_published_at``), after
        (``index_value``, published at ``published_at``) and ``change``. Sorted newest
        publication first, then ``index_code``, ``trade_date``. A first publication is
        not a revision; the composite index is included.

        Name ``reason`` in ``fields`` for why each value was revised (the note of the
        import that revised it, or ``None``; decision D26).

        ``start_date``/``end_date`` bound ``trade_date``; ``since`` (an RFC 3339 instant
        with an offset, or an aware ``datetime``) keeps revisions published after it:
        pass the newest ``published_at`` you have seen to get only what is new. To see
        a revised day as it stood before, ask :meth:`index_daily` with ``as_of`` =
        its ``previous_published_at``.

        The options are those of :meth:`query`. The list is newest first, so a pull of
        several pages during which an import lands may return a row twice at a page
        boundary (never miss one): drop duplicates on ``index_code, trade_date,
        published_at``."""
        return self._dataset("index_revisions", locals())

    @overload
    def trade_calendar(self, **options: Unpack[_Calendar[_Frame]]) -> F: ...
    @overload
    def trade_calendar(self, **options: Unpack[_Calendar[_Csv]]) -> T: ...
    @overload
    def trade_calendar(self, **options: Unpack[_Calendar[_Arrow]]) -> Any: ...
    @overload
    def trade_calendar(self, **options: Unpack[_Calendar[Format]]) -> Union[F, T]: ...

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
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
        format: Format = "frame",
    ) -> Any:
        """Open trading days and each one's previous open day. Sorted by
        ``trade_date``.

        The options are those of :meth:`query` (``end_date`` is never pinned here:
        the calendar lists future days)."""
        return self._dataset("trade_calendar", locals())

"""One method per dataset, written once for both clients.

Each method only names the dataset's parameters and hands everything to
``self.query``, so it takes exactly the paging and conversion options of
:meth:`iq_client.Client.query` (``fields``, ``limit``, ``offset``, ``page_size``,
``decimals``, ``dates``, ``progress``, ``fixed_end_date``, ``format``). On
:class:`iq_client.Client` a method returns a DataFrame (the service's CSV text with
``format="csv"``); on :class:`iq_client.AsyncClient` it returns an awaitable of one
(``await client.index_daily(...)``).

The market-data methods (``index_daily``, ``index_latest``, ``index_quote``) also take
``as_of`` and ``updated_since`` (decision D17), and ``revisions`` takes ``since``
(decision D21): see :data:`InstantLike`.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Generic, Literal, Optional, TypeVar, Union, overload

from .frames import DateMode, DecimalMode
from .validation import FieldsArg, ParamsArg

__all__ = ["DatasetMethods", "DateLike", "InstantLike", "Format", "QUERY_OPTIONS"]

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

#: What a query returns: ``"frame"``, a typed DataFrame, or ``"csv"``, the service's
#: CSV text (decision D18).
Format = Literal["frame", "csv"]

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

R = TypeVar("R")
C = TypeVar("C")


class DatasetMethods(Generic[R, C]):
    """The typed dataset methods; ``R`` is what ``query`` returns (a DataFrame, or an
    awaitable of one) and ``C`` what it returns with ``format="csv"`` (text, or an
    awaitable of it). ``index_code`` may be given positionally; every other argument
    is keyword-only."""

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
    ) -> Any:  # each client narrows it by format (typing overloads)
        raise NotImplementedError  # pragma: no cover - each client defines it

    @overload
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
        format: Literal["frame"] = "frame",
    ) -> R: ...

    @overload
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
        format: Literal["csv"],
    ) -> C: ...

    @overload
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
    ) -> Union[R, C]: ...

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
            fixed_end_date=fixed_end_date,
            format=format,
        )

    @overload
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
        format: Literal["frame"] = "frame",
    ) -> R: ...

    @overload
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
        format: Literal["csv"],
    ) -> C: ...

    @overload
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
    ) -> Union[R, C]: ...

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
        return self.query(
            "index_daily",
            {
                "index_code": index_code,
                "trade_date": trade_date,
                "start_date": start_date,
                "end_date": end_date,
                "as_of": as_of,
                "updated_since": updated_since,
            },
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
            fixed_end_date=fixed_end_date,
            format=format,
        )

    @overload
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
        format: Literal["frame"] = "frame",
    ) -> R: ...

    @overload
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
        format: Literal["csv"],
    ) -> C: ...

    @overload
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
    ) -> Union[R, C]: ...

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
        return self.query(
            "index_latest",
            {
                "index_code": index_code,
                "as_of": as_of,
                "updated_since": updated_since,
            },
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
            fixed_end_date=fixed_end_date,
            format=format,
        )

    @overload
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
        format: Literal["frame"] = "frame",
    ) -> R: ...

    @overload
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
        format: Literal["csv"],
    ) -> C: ...

    @overload
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
    ) -> Union[R, C]: ...

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
        return self.query(
            "index_quote",
            {
                "index_code": index_code,
                "trade_date": trade_date,
                "start_date": start_date,
                "end_date": end_date,
                "specification": specification,
                "as_of": as_of,
                "updated_since": updated_since,
            },
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
            fixed_end_date=fixed_end_date,
            format=format,
        )

    @overload
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
        format: Literal["frame"] = "frame",
    ) -> R: ...

    @overload
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
        format: Literal["csv"],
    ) -> C: ...

    @overload
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
    ) -> Union[R, C]: ...

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

        ``start_date``/``end_date`` bound ``trade_date``; ``since`` (an RFC 3339 instant
        with an offset, or an aware ``datetime``) keeps revisions published after it:
        pass the newest ``published_at`` you have seen to get only what is new. To see
        a revised day as it stood before, ask :meth:`index_daily` with ``as_of`` =
        its ``previous_published_at``.

        The options are those of :meth:`query`. The list is newest first, so a pull of
        several pages during which an import lands may return a row twice at a page
        boundary (never miss one): drop duplicates on ``index_code, trade_date,
        published_at``."""
        return self.query(
            "index_revisions",
            {
                "index_code": index_code,
                "start_date": start_date,
                "end_date": end_date,
                "since": since,
            },
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
            fixed_end_date=fixed_end_date,
            format=format,
        )

    @overload
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
        format: Literal["frame"] = "frame",
    ) -> R: ...

    @overload
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
        format: Literal["csv"],
    ) -> C: ...

    @overload
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
    ) -> Union[R, C]: ...

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
        return self.query(
            "trade_calendar",
            {
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
            fixed_end_date=fixed_end_date,
            format=format,
        )

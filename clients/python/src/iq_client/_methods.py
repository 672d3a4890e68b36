"""One method per dataset, written once for both clients.

Each method only names the dataset's parameters and hands everything to
``self.query``, so it takes exactly the paging and conversion options of
:meth:`iq_client.Client.query` (``fields``, ``limit``, ``offset``, ``page_size``,
``decimals``, ``dates``, ``progress``, ``fixed_end_date``). On :class:`iq_client.Client`
a method returns a DataFrame; on :class:`iq_client.AsyncClient` it returns an
awaitable of one (``await client.index_daily(...)``).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Generic, Optional, TypeVar, Union

from .frames import DateMode, DecimalMode
from .validation import FieldsArg, ParamsArg

__all__ = ["DatasetMethods", "DateLike", "QUERY_OPTIONS"]

#: A date parameter: ``"20261120"``, ``"2026-11-20"``, a ``date``/``datetime`` or a
#: ``pandas.Timestamp``.
DateLike = Union[str, _dt.date, _dt.datetime, None]

#: The keyword-only options of ``query()`` that every dataset method takes too.
QUERY_OPTIONS = (
    "limit",
    "offset",
    "page_size",
    "decimals",
    "dates",
    "progress",
    "fixed_end_date",
)

R = TypeVar("R")


class DatasetMethods(Generic[R]):
    """The typed dataset methods; ``R`` is what ``query`` returns (a DataFrame, or an
    awaitable of one). ``index_code`` may be given positionally; every other argument
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
        **keyword_params: Any,
    ) -> R:
        raise NotImplementedError  # pragma: no cover - each client defines it

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
    ) -> R:
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
        fixed_end_date: bool = True,
    ) -> R:
        """Daily index points and weighted price. Sorted by ``trade_date, index_code``.
        ``trade_date`` is one day; ``start_date``/``end_date`` an inclusive range.

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
            },
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
            fixed_end_date=fixed_end_date,
        )

    def index_latest(
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
    ) -> R:
        """The latest daily row of each visible index (after the key's delay).
        Sorted by ``sort_no, index_code``.

        The options are those of :meth:`query`."""
        return self.query(
            "index_latest",
            {"index_code": index_code},
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
            fixed_end_date=fixed_end_date,
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
        fixed_end_date: bool = True,
    ) -> R:
        """Specification-level quotes (weight, price). Sorted by ``trade_date,
        index_code, specification``; ``specification`` matches exactly.

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
            },
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
            fixed_end_date=fixed_end_date,
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
        decimals: Optional[DecimalMode] = None,
        dates: Optional[DateMode] = None,
        progress: bool = False,
        fixed_end_date: bool = True,
    ) -> R:
        """Open trading days and each one's previous open day. Sorted by
        ``trade_date``.

        The options are those of :meth:`query` (``end_date`` is never pinned here:
        the calendar lists future days)."""
        return self.query(
            "trade_calendar",
            {"trade_date": trade_date, "start_date": start_date, "end_date": end_date},
            fields,
            limit=limit,
            offset=offset,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
            progress=progress,
            fixed_end_date=fixed_end_date,
        )

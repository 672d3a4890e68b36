"""Pages of a query and walking them (spec 4.3), as JSON (:class:`Page`) or, asked with
``Accept: text/csv`` (decision D18), as CSV (:class:`CsvPage`).

1. The first request uses ``offset`` as given (0 by default).
2. While ``has_more`` is true, the next request uses the offset just asked for plus
   ``returned`` (never the offset the service echoes).
3. The walk stops when ``has_more`` is false (or the caller's row limit is reached).

The parameters, ``end_date`` included, are the same on every page, so rows that
arrive during a bulk pull do not shift the pages (the client pins ``end_date``
for delayed datasets; see :meth:`iq_client.Client.query`).
"""

from __future__ import annotations

import csv
import dataclasses
import io
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, Iterable, List, Optional, Tuple, TypeVar

import pandas as pd

from .arrow import ArrowPage
from .catalogue import Dataset
from .envelope import header_place
from .errors import APIError
from .frames import to_frame
from .ratelimit import RateLimitInfo
from .transport import HTTPResponse

__all__ = [
    "Page",
    "CsvPage",
    "Pager",
    "progress_bar",
    "csv_cell",
    "csv_line",
    "join_csv",
]


@dataclass(frozen=True)
class Page:
    """One answer of ``POST /api/v1/query``.

    Attributes:
        dataset: the dataset queried.
        fields: column names, aligned with each row of ``items``.
        items: the rows, as on the wire (decimals as strings, dates ``YYYYMMDD``).
        limit: the effective page size the service used (``data.limit``).
        offset: the offset of the first row, as the service reports it (paging
            does not rely on it: the next offset is the one asked for + ``returned``).
        returned: the number of rows in this page.
        has_more: whether more rows follow.
        request_id: the service's trace id for this request.
        rate_limit: the quota headers of this answer, if any.
    """

    dataset: Dataset
    fields: List[str]
    items: List[List[Any]]
    limit: int
    offset: int
    returned: int
    has_more: bool
    request_id: Optional[str]
    rate_limit: Optional[RateLimitInfo] = None

    @classmethod
    def from_data(
        cls,
        dataset: Dataset,
        data: Any,
        *,
        request_id: Optional[str],
        rate_limit: Optional[RateLimitInfo],
    ) -> "Page":
        """A page from an envelope's ``data``; a malformed one raises APIError."""
        try:
            fields = [str(f) for f in data["fields"]]
            items = [list(row) for row in data["items"]]
            has_more = data["has_more"]
            if not isinstance(has_more, bool):  # "false" would be truthy
                raise TypeError(f"has_more is {type(has_more).__name__}, not a boolean")
            page = cls(
                dataset=dataset,
                fields=fields,
                items=items,
                limit=int(data["limit"]),
                offset=int(data["offset"]),
                returned=int(data["returned"]),
                has_more=has_more,
                request_id=request_id,
                rate_limit=rate_limit,
            )
        except (KeyError, TypeError, ValueError) as err:
            raise APIError(f"malformed query answer ({err!r})", request_id=request_id) from err
        if any(len(row) != len(fields) for row in items) or page.returned != len(items):
            raise APIError(
                "malformed query answer: rows do not match fields/returned",
                request_id=request_id,
            )
        return page

    def to_frame(self, *, decimals: str = "float", dates: str = "datetime") -> pd.DataFrame:
        """This page as a typed DataFrame (see :func:`iq_client.frames.to_frame`)."""
        return to_frame(self.dataset, self.fields, self.items, decimals=decimals, dates=dates)

    def cut(self, keep: int) -> "Page":
        """This page with only its first ``keep`` rows (``has_more`` then true)."""
        return dataclasses.replace(self, items=self.items[:keep], returned=keep, has_more=True)


def csv_cell(value: Any) -> str:
    """One JSON value as the service writes it in a CSV answer (D18): text as it is,
    ``null`` empty, booleans ``true``/``false``, numbers as digits; quoted (RFC 4180)
    when it holds a comma, a quote or a line break."""
    if value is None:
        text = ""
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, Decimal):
        text = format(value, "f")
    else:
        text = str(value)
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_line(values: Iterable[Any]) -> str:
    """One CSV line of the service's form: cells by :func:`csv_cell`, then CRLF."""
    return ",".join(csv_cell(v) for v in values) + "\r\n"


@dataclass(frozen=True)
class CsvPage:
    """One answer of ``POST /api/v1/query`` asked with ``Accept: text/csv`` (D18).

    Attributes:
        dataset: the dataset queried.
        text: the answer as sent: a header row of the fields, then one line per row
            (RFC 4180 quoting, CRLF line ends; decimals and dates exactly as in JSON,
            ``null`` as an empty cell).
        limit, offset, returned, has_more: the page's place (``X-Limit``,
            ``X-Offset``, ``X-Returned``, ``X-Has-More``).
        request_id: the service's trace id for this request.
        rate_limit: the quota headers of this answer, if any.
    """

    dataset: Dataset
    text: str
    limit: int
    offset: int
    returned: int
    has_more: bool
    request_id: Optional[str]
    rate_limit: Optional[RateLimitInfo] = None

    @property
    def header(self) -> str:
        """The header row, without its line end (field names are never quoted)."""
        return self.text.split("\r\n", 1)[0].split("\n", 1)[0]

    @property
    def fields(self) -> List[str]:
        """The column names."""
        return self.header.split(",") if self.header else []

    @property
    def body(self) -> str:
        """The text after the header row: the rows' lines only."""
        rest = self.text[len(self.header) :]
        for end in ("\r\n", "\n"):
            if rest.startswith(end):
                return rest[len(end) :]
        return rest

    def rows(self) -> List[List[str]]:
        """The rows as lists of cells (text; a ``null`` is an empty string)."""
        return list(csv.reader(io.StringIO(self.body, newline="")))

    def cut(self, keep: int) -> "CsvPage":
        """This page with only its first ``keep`` rows (``has_more`` then true)."""
        lines = [self.header + "\r\n"] + [csv_line(row) for row in self.rows()[:keep]]
        return dataclasses.replace(self, text="".join(lines), returned=keep, has_more=True)

    @classmethod
    def from_response(
        cls,
        dataset: Dataset,
        response: HTTPResponse,
        *,
        request_id: Optional[str],
        rate_limit: Optional[RateLimitInfo],
    ) -> "CsvPage":
        """The page of a ``text/csv`` answer; a malformed one raises APIError."""
        try:
            text = response.body.decode("utf-8")
            limit, offset, returned, has_more = header_place(response)
            page = cls(
                dataset=dataset,
                text=text,
                limit=limit,
                offset=offset,
                returned=0,
                has_more=has_more,
                request_id=request_id,
                rate_limit=rate_limit,
            )
            count = returned if returned is not None else len(page.rows())
        except (KeyError, TypeError, ValueError) as err:
            raise APIError(f"malformed CSV answer ({err!r})", request_id=request_id) from err
        return dataclasses.replace(page, returned=count)

    @classmethod
    def from_page(cls, page: Page) -> "CsvPage":
        """A JSON page written as the service writes CSV (for a service that answered
        JSON although CSV was asked for)."""
        text = csv_line(page.fields) + "".join(csv_line(row) for row in page.items)
        return cls(
            dataset=page.dataset,
            text=text,
            limit=page.limit,
            offset=page.offset,
            returned=page.returned,
            has_more=page.has_more,
            request_id=page.request_id,
            rate_limit=page.rate_limit,
        )


def join_csv(pages: Iterable[CsvPage], empty_header: str = "") -> str:
    """The pages' CSV as one text with one header row: the first page whole, then
    every later page without its header. ``empty_header`` (a header line) when there
    is no page."""
    parts: List[str] = []
    for page in pages:
        parts.append(page.text if not parts else page.body)
    return "".join(parts) if parts else empty_header


P = TypeVar("P", Page, CsvPage, ArrowPage)


class Pager(Generic[P]):
    """The paging rules of this module without any I/O (the clients' shared core pages
    with it): ask :meth:`next_request` what to fetch, hand the answer to
    :meth:`accept`, repeat until :meth:`next_request` returns ``None``.

    Args:
        offset: where to start.
        page_size: the ``limit`` to ask for (the service may use less).
        max_rows: stop after this many rows in total (``None``: all of them).
    """

    def __init__(self, *, offset: int = 0, page_size: int, max_rows: Optional[int] = None) -> None:
        self.offset = offset
        self.page_size = page_size
        self.max_rows = max_rows
        self.fetched = 0
        self._last: Optional[P] = None
        self._done = False

    def next_request(self) -> Optional[Tuple[int, int]]:
        """``(offset, limit)`` of the next request, or ``None`` when the walk is over.

        Raises:
            APIError: the previous page claimed ``has_more`` but held no row.
        """
        if self._done:
            return None
        last = self._last
        if last is not None and last.returned == 0:
            raise APIError(
                "the service reported has_more with an empty page; stopping",
                request_id=last.request_id,
            )
        left = None if self.max_rows is None else self.max_rows - self.fetched
        return self.offset, self.page_size if left is None else min(self.page_size, left)

    def accept(self, page: P) -> P:
        """Takes the answer to the request :meth:`next_request` named; returns it,
        cut to ``max_rows`` when it holds more than are still wanted."""
        if self.max_rows is not None and page.returned > self.max_rows - self.fetched:
            page = page.cut(self.max_rows - self.fetched)
        self.fetched += page.returned
        self._last = page
        if not page.has_more or (self.max_rows is not None and self.fetched >= self.max_rows):
            self._done = True
        else:
            self.offset += page.returned  # rule 2: the offset asked for + rows returned
        return page


def progress_bar(desc: str, total: Optional[int]) -> Any:
    """A tqdm progress bar counting rows (``pip install iq-client[progress]``)."""
    try:
        from tqdm.auto import tqdm
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("progress=True needs tqdm: pip install 'iq-client[progress]'") from err
    return tqdm(desc=desc, unit="row", total=total)

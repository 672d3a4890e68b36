"""Pages of a query and walking them (spec 4.3).

1. The first request uses ``offset`` as given (0 by default).
2. While ``has_more`` is true, the next request uses the offset just asked for plus
   ``returned`` (never the offset the service echoes).
3. The walk stops when ``has_more`` is false (or the caller's row limit is reached).

The parameters, ``end_date`` included, are the same on every page, so rows that
arrive during a bulk pull do not shift the pages (the client pins ``end_date``
for delayed datasets; see :meth:`iq_client.Client.query`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import (
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    List,
    Optional,
    Tuple,
)

import pandas as pd

from .catalogue import Dataset
from .errors import APIError
from .frames import to_frame
from .ratelimit import RateLimitInfo

__all__ = ["Page", "Pager", "walk", "awalk", "with_progress", "awith_progress"]


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


class Pager:
    """The paging rules of this module without any I/O, shared by the blocking and the
    asyncio clients: ask :meth:`next_request` what to fetch, hand the answer to
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
        self._last: Optional[Page] = None
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

    def accept(self, page: Page) -> Page:
        """Takes the answer to the request :meth:`next_request` named; returns it,
        cut to ``max_rows`` when it holds more than are still wanted."""
        if self.max_rows is not None and page.returned > self.max_rows - self.fetched:
            keep = self.max_rows - self.fetched
            page = dataclasses.replace(page, items=page.items[:keep], returned=keep, has_more=True)
        self.fetched += page.returned
        self._last = page
        if not page.has_more or (self.max_rows is not None and self.fetched >= self.max_rows):
            self._done = True
        else:
            self.offset += page.returned  # rule 2: the offset asked for + rows returned
        return page


def walk(
    fetch: Callable[[int, int], Page],
    *,
    offset: int = 0,
    page_size: int,
    max_rows: Optional[int] = None,
) -> Iterator[Page]:
    """Follows ``has_more`` from ``offset`` (see :class:`Pager`).

    Args:
        fetch: sends one request for ``(offset, limit)`` and returns its page.
    """
    pager = Pager(offset=offset, page_size=page_size, max_rows=max_rows)
    while True:
        ask = pager.next_request()
        if ask is None:
            return
        yield pager.accept(fetch(*ask))


async def awalk(
    fetch: Callable[[int, int], Awaitable[Page]],
    *,
    offset: int = 0,
    page_size: int,
    max_rows: Optional[int] = None,
) -> AsyncIterator[Page]:
    """:func:`walk` for an ``async`` ``fetch``."""
    pager = Pager(offset=offset, page_size=page_size, max_rows=max_rows)
    while True:
        ask = pager.next_request()
        if ask is None:
            return
        yield pager.accept(await fetch(*ask))


def _progress_bar(desc: str, total: Optional[int]) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("progress=True needs tqdm: pip install 'iq-client[progress]'") from err
    return tqdm(desc=desc, unit="row", total=total)


def with_progress(
    pages: Iterator[Page], *, desc: str, total: Optional[int] = None
) -> Iterator[Page]:
    """``pages``, counting rows on a tqdm progress bar (``pip install iq-client[progress]``)."""
    bar = _progress_bar(desc, total)
    try:
        for page in pages:
            bar.update(page.returned)
            yield page
    finally:
        bar.close()


async def awith_progress(
    pages: AsyncIterator[Page], *, desc: str, total: Optional[int] = None
) -> AsyncIterator[Page]:
    """:func:`with_progress` for an async iterator of pages."""
    bar = _progress_bar(desc, total)
    try:
        async for page in pages:
            bar.update(page.returned)
            yield page
    finally:
        bar.close()

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

from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional

import pandas as pd

from .catalogue import Dataset
from .errors import APIError
from .frames import to_frame
from .ratelimit import RateLimitInfo

__all__ = ["Page", "walk", "with_progress"]


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


def walk(
    fetch: Callable[[int, int], Page],
    *,
    offset: int = 0,
    page_size: int,
    max_rows: Optional[int] = None,
) -> Iterator[Page]:
    """Follows ``has_more`` from ``offset``.

    Args:
        fetch: sends one request for ``(offset, limit)`` and returns its page.
        offset: where to start.
        page_size: the ``limit`` to ask for (the service may use less).
        max_rows: stop after this many rows in total (``None``: all of them).
    """
    fetched = 0
    while True:
        want = page_size if max_rows is None else min(page_size, max_rows - fetched)
        page = fetch(offset, want)
        if max_rows is not None and page.returned > max_rows - fetched:
            keep = max_rows - fetched
            page = Page(
                dataset=page.dataset,
                fields=page.fields,
                items=page.items[:keep],
                limit=page.limit,
                offset=page.offset,
                returned=keep,
                has_more=True,
                request_id=page.request_id,
                rate_limit=page.rate_limit,
            )
        yield page
        fetched += page.returned
        if not page.has_more or (max_rows is not None and fetched >= max_rows):
            return
        if page.returned == 0:
            raise APIError(
                "the service reported has_more with an empty page; stopping",
                request_id=page.request_id,
            )
        offset += page.returned  # spec 4.3 rule 2: the offset asked for + rows returned


def with_progress(
    pages: Iterator[Page], *, desc: str, total: Optional[int] = None
) -> Iterator[Page]:
    """``pages``, counting rows on a tqdm progress bar (``pip install iq-client[progress]``)."""
    try:
        from tqdm.auto import tqdm
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("progress=True needs tqdm: pip install 'iq-client[progress]'") from err
    bar = tqdm(desc=desc, unit="row", total=total)
    try:
        for page in pages:
            bar.update(page.returned)
            yield page
    finally:
        bar.close()

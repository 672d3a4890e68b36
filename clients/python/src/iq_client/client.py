"""The :class:`Client`: queries in, typed DataFrames out (blocking; see
:class:`iq_client.AsyncClient` for asyncio).

Its methods are those of :class:`iq_client._methods.ClientMethods`, written once for
both clients over the sans-I/O core; this module is only the blocking driver: it sends
the flows' requests with a :class:`iq_client.Transport` and waits with ``sleep``.
"""

from __future__ import annotations

import random as _random
import time
from typing import Any, Callable, Iterator, Optional, TypeVar

import pandas as pd

from ._core import DEFAULT_BASE_URL, DEFAULT_PAGE_SIZE, DEFAULT_TIMEOUT
from ._methods import ClientMethods, DateLike, InstantLike
from ._sansio import Action, Emit, Flow, Runner, Sleep
from .dataset_sync import SyncResult
from .frames import DateMode, DecimalMode
from .membership import Membership
from .paging import Page
from .retry import RetryPolicy
from .transport import HTTPRequest, RequestsTransport, Transport

__all__ = ["Client", "DateLike", "InstantLike", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT"]

T = TypeVar("T")


class Client(
    ClientMethods[
        pd.DataFrame, str, Iterator[pd.DataFrame], Iterator[str], Page, Membership, SyncResult
    ]
):
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
            random=random,
            page_size=page_size,
            decimals=decimals,
            dates=dates,
        )
        self._owns_transport = transport is None
        self.transport: Transport = transport if transport is not None else RequestsTransport()
        self._sleep = sleep

    def close(self) -> None:
        """Releases the HTTP connections of the default transport."""
        if self._owns_transport and isinstance(self.transport, RequestsTransport):
            self.transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the driver -------------------------------------------------------------------

    def _perform(self, step: Action) -> Any:
        """Does one step of a flow, blocking: sends a request, sleeps, or runs work."""
        if isinstance(step, HTTPRequest):
            return self.transport.send(step, max(self.timeout, step.timeout or 0))
        if isinstance(step, Sleep):
            return self._sleep(step.seconds)
        return step.function()

    def _drive(self, run: Runner[Any]) -> Iterator[Any]:
        for step in run:
            if isinstance(step, Emit):
                yield step.value
                continue
            try:
                run.reply(self._perform(step))
            except BaseException as error:
                run.fail(error)

    def _run(self, flow: Flow[T]) -> T:
        run = Runner(flow)
        for _ in self._drive(run):
            pass
        return run.result

    def _iterate(self, flow: Flow[Any]) -> Iterator[Any]:
        return self._drive(Runner(flow))

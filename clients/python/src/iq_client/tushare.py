"""Tushare-style access, so code written for Tushare Pro runs against this service with
two lines changed::

    import iq_client.tushare as ts              # was: import tushare as ts
    pro = ts.pro_api("iq_...")                  # your key, where the token was
    df = pro.index_daily(ts_code="GPU_Index", start_date="20260101")
    df = pro.query("index_basic", fields="index_code,index_name")

:func:`pro_api` answers a :class:`DataApi`, whose ``query(api_name, fields="",
**params)`` and ``<dataset>(**params)`` return a DataFrame as Tushare's ``DataApi``
does: the columns in ``fields`` (a comma-separated string or a list; empty for the
dataset's defaults), dates as ``YYYYMMDD`` text and numbers as floats. ``ts_code`` is
taken as ``index_code``; ``limit`` and ``offset`` page as in Tushare. Errors raise with
the service's message (:class:`iq_client.APIError` and its subclasses, and
:class:`iq_client.LocalValidationError` for a query refused before it is sent).

Underneath is an ordinary :class:`iq_client.Client` (``DataApi.client``): every answer
goes through ``POST /api/v1/query`` exactly as the client's own methods do, page by
page, so the same key sees the same rows. It never posts to ``{url}/{api_name}`` as
Tushare's SDK does; this service has no such endpoints.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Sequence, Union

import pandas as pd

from .client import DEFAULT_TIMEOUT, Client

__all__ = ["pro_api", "DataApi"]

#: Tushare's name for an index code, and this service's.
_TS_CODE, _INDEX_CODE = "ts_code", "index_code"


class DataApi:
    """Tushare's ``DataApi`` over an :class:`iq_client.Client`.

    Args:
        token: the API key, as Tushare's token. Empty: ``IQ_API_KEY`` when it is set
            (as Tushare falls back to the token ``set_token`` saved), else the anonymous
            visitor (public indexes, the free tier's delay).
        timeout: seconds per socket operation (default 30).
        base_url: where the service is; default ``IQ_BASE_URL`` or
            ``http://127.0.0.1:8080``.
    """

    def __init__(
        self, token: str = "", timeout: float = DEFAULT_TIMEOUT, base_url: Optional[str] = None
    ) -> None:
        self.client = Client(api_key=token or None, base_url=base_url, timeout=timeout)

    def query(
        self, api_name: str, fields: Union[str, Sequence[str]] = "", **params: Any
    ) -> pd.DataFrame:
        """Every row of ``api_name`` matching ``params``, with ``fields``.

        ``limit`` and ``offset`` among ``params`` page as Tushare's do; a ``None`` value
        leaves its parameter out."""
        if isinstance(fields, str):
            names = [f.strip() for f in fields.split(",") if f.strip()]
        else:
            names = list(fields)
        limit = params.pop("limit", None)
        offset = params.pop("offset", None)
        if _TS_CODE in params and _INDEX_CODE not in params:
            params[_INDEX_CODE] = params.pop(_TS_CODE)
        return self.client.query(
            api_name,
            {name: value for name, value in params.items() if value is not None},
            names or None,
            limit=None if limit is None else int(limit),
            offset=0 if offset is None else int(offset),
            decimals="float",
            dates="string",
        )

    def __getattr__(self, api_name: str) -> Callable[..., pd.DataFrame]:
        # `pro.index_daily(...)`: any public name is a dataset, as in Tushare; the
        # service's catalogue refuses an unknown one with the names it knows.
        if api_name.startswith("_"):
            raise AttributeError(api_name)
        return functools.partial(self.query, api_name)

    def close(self) -> None:
        """Closes the underlying client's connections."""
        self.client.close()


def pro_api(
    token: str = "", timeout: float = DEFAULT_TIMEOUT, base_url: Optional[str] = None
) -> DataApi:
    """A :class:`DataApi` for ``token`` (your API key), as ``tushare.pro_api``."""
    return DataApi(token, timeout=timeout, base_url=base_url)

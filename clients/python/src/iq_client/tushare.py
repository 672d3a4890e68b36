"""Tushare Pro's SDK, for this service: code written for Tushare Pro runs here with one
line changed::

    import iq_client.tushare as ts              # was: import tushare as ts
    pro = ts.pro_api("iq_...")                  # your API key, where the token was
    df = pro.index_daily(ts_code="GPU_Index", start_date="20260101")
    df = pro.query("index_basic", fields="ts_code,name")
    df = ts.pro_bar(ts_code="gpu_index", api=pro, asset="I", freq="W")

(or keep the official ``tushare`` package and change its URL to ``<service>/tushare``:
both get the same frames).

Each call posts Tushare's own body, ``{"api_name", "token", "params", "fields"}``, to
``POST {base_url}/tushare/{api_name}``, the service's Tushare wire, and answers what
the official SDK makes of the answer: ``pd.DataFrame(items, columns=fields)``. The
columns are Tushare's (``ts_code``, ``trade_date``, ``close``, ``pre_close``,
``change``, ``pct_chg``...), named and ordered by the service, in the order of
``fields`` when given; numbers are floats (``NaN`` for a null), dates ``YYYYMMDD``
text. Nothing is renamed or converted here.

Where it differs from the SDK, it is in what surrounds a call, never in a frame:

* a refusal raises the package's exception for its code (:class:`iq_client.APIError`
  and its subclasses: :class:`iq_client.PermissionDenied` for 40301...) with the
  service's ``msg``, ``code`` and ``request_id``, where the SDK raises a bare
  ``Exception(msg)``; an answer that is not the service's (a proxy's error page) raises
  too, where the SDK returns an empty frame;
* requests go through the package's :class:`iq_client.Client` (``DataApi.client``):
  its transport, timeout, ``User-Agent``, and its retries of a 429 / 42901 (after
  ``Retry-After``) and of a 5xx or a network failure;
* the token travels only in the body, as the SDK sends it (no ``X-API-Key`` header);
* :func:`set_token` keeps the token in this process, not in a file in your home
  directory; without one, ``IQ_API_KEY`` is used, else the anonymous visitor;
* the SDK's ``ts_type_name`` param (its own URL, which the service ignores) is not
  sent; a ``None`` param is sent as ``null``, as the SDK sends it, which the service
  takes as absent.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Union
from urllib.parse import quote

import pandas as pd

from .client import DEFAULT_TIMEOUT, Client
from .credentials import key_hint
from .envelope import _snippet
from .errors import APIError, error_for
from .ratelimit import RateLimitInfo
from .retry import with_retries
from .transport import HTTPRequest, HTTPResponse

__all__ = ["pro_api", "pro_bar", "set_token", "get_token", "DataApi"]

log = logging.getLogger("iq_client")

#: ``fields`` of a call: a comma-separated string or a list of names; empty for the
#: dataset's defaults.
Fields = Union[str, Sequence[str]]

#: The path of the service's Tushare wire, under ``base_url``.
TUSHARE_PATH = "/tushare"

#: ``pro_bar``'s ``freq`` for indexes, and the dataset it reads.
_BARS: Dict[str, str] = {"D": "index_daily", "W": "index_weekly", "M": "index_monthly"}

#: The token :func:`set_token` remembered (``None``: none).
_saved_token: Optional[str] = None


def set_token(token: str) -> None:
    """Remembers ``token`` (your API key) for the :func:`pro_api` calls of this process
    that pass none, as ``tushare.set_token`` does. Nothing is written to disk; an
    empty token forgets it."""
    global _saved_token
    if not isinstance(token, str):
        raise TypeError(f"token must be a string, got {type(token).__name__}")
    _saved_token = token or None


def get_token() -> Optional[str]:
    """The token :func:`pro_api` uses when given none: the one :func:`set_token`
    remembered, else ``IQ_API_KEY``, else ``None`` (the anonymous visitor)."""
    return _saved_token or os.environ.get("IQ_API_KEY") or None


class DataApi:
    """Tushare's ``DataApi``, posting to this service's Tushare wire.

    Args:
        token: the API key, as Tushare's token. Empty: the one :func:`set_token`
            remembered, else ``IQ_API_KEY``, else the anonymous visitor (public
            indexes, the free tier's delay). A key not of the service's shape raises
            :class:`iq_client.AuthenticationError` here, before any request.
        timeout: seconds per socket operation (default 30).
        base_url: where the service is; default ``IQ_BASE_URL`` or
            ``http://127.0.0.1:8080``. The SDK's URL, ``<service>/tushare``, is
            taken as ``<service>``.

    Attributes:
        client: the :class:`iq_client.Client` whose transport, timeout and retries
            send the calls (its ``last_request_id`` and ``last_rate_limit`` are those
            of the latest call). Its key is the token.
    """

    def __init__(
        self,
        token: Optional[str] = "",
        timeout: float = DEFAULT_TIMEOUT,
        base_url: Optional[str] = None,
    ) -> None:
        key = token or _saved_token or None
        if base_url is not None and base_url.rstrip("/").endswith(TUSHARE_PATH):
            # The SDK's URL (`<service>/tushare`) names the same service.
            base_url = base_url.rstrip("/")[: -len(TUSHARE_PATH)]
        self.client = Client(api_key=key, base_url=base_url, timeout=timeout)

    @property
    def token(self) -> str:
        """The token sent in each body (the client's key; empty: the visitor)."""
        return self.client.api_key or ""

    @property
    def url(self) -> str:
        """Where calls are posted, as the SDK's ``http_url``: ``{base_url}/tushare``."""
        return self.client.base_url + TUSHARE_PATH

    def query(self, api_name: str, fields: Optional[Fields] = "", **params: Any) -> pd.DataFrame:
        """The rows of ``api_name`` matching ``params``, with ``fields``, as the SDK's
        ``DataApi.query``: one request, ``pd.DataFrame(items, columns=fields)``.

        ``params`` go as they are (the service reads ``ts_code`` with up to 8 codes in
        any letter case; ``limit`` and ``offset`` page; ``None`` is sent as ``null``,
        i.e. absent). Without ``limit`` the answer holds as many rows as a page may;
        when the service says more are left, a warning is logged.

        Raises:
            APIError: the service's refusal (a subclass chosen by its ``code``), once
                the client's retries, if any apply, are used up.
        """
        body: Dict[str, Any] = {
            "api_name": api_name,
            "token": self.token,
            "params": params,
            "fields": _fields(fields),
        }
        client = self.client
        request = self._request(api_name, body)
        data = client._run(with_retries(request, self._read, client.retry, client._random))
        frame = pd.DataFrame(data["items"], columns=data["fields"])
        if data.get("has_more") is True and params.get("limit") is None:
            log.warning(
                "iq_client.tushare: %s answered %d rows and has more; ask for the rest "
                "with limit and offset",
                api_name,
                len(frame),
            )
        return frame

    def __getattr__(self, api_name: str) -> Callable[..., pd.DataFrame]:
        # `pro.index_daily(...)`: any public name is a dataset, as in Tushare; the
        # service refuses an unknown one with the names it knows. (`client` is only
        # missing from an object whose __init__ did not run.)
        if api_name.startswith("_") or api_name == "client":
            raise AttributeError(api_name)
        return functools.partial(self.query, api_name)

    def close(self) -> None:
        """Closes the underlying client's connections."""
        self.client.close()

    def __enter__(self) -> "DataApi":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DataApi(url={self.url!r}, token={key_hint(self.client.api_key)!r})"

    # -- the request and its answer --------------------------------------------------

    def _request(self, api_name: str, body: Dict[str, Any]) -> HTTPRequest:
        """``POST {base_url}/tushare/{api_name}`` (``/tushare`` for an empty name)
        with ``body``, and the client's headers but for its key: the key is the body's
        token, and the service refuses a call that carries it twice."""
        url = self.url + (f"/{quote(api_name, safe='')}" if api_name else "")
        headers = {
            name: value
            for name, value in self.client._headers(body=True).items()
            if name.lower() not in ("x-api-key", "authorization")
        }
        return HTTPRequest(
            method="POST",
            url=url,
            headers=headers,
            body=json.dumps(body, separators=(",", ":")).encode("utf-8"),
        )

    def _read(self, response: HTTPResponse) -> Dict[str, Any]:
        """The ``data`` of a Tushare answer (``code`` 0); any other answer raises the
        exception its code (else its HTTP status) calls for, with the service's ``msg``
        and ``request_id``. The request id and the rate-limit headers are remembered
        on the client."""
        client = self.client
        rate_limit = RateLimitInfo.from_headers(response.headers)
        header_id = response.header("x-request-id")
        client.last_request_id = header_id
        try:
            document = json.loads(response.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            document = None
        code = document.get("code") if isinstance(document, dict) else None
        if not isinstance(document, dict) or not isinstance(code, int) or isinstance(code, bool):
            client._remember(header_id, rate_limit)
            content_type = response.header("content-type") or "no content type"
            raise error_for(
                None,
                f"unexpected answer from the service's Tushare wire (HTTP {response.status}, "
                f"{content_type}): {_snippet(response.body)!r}",
                request_id=header_id,
                http_status=response.status,
                rate_limit=rate_limit,
            )
        request_id = document.get("request_id") or header_id
        client._remember(request_id, rate_limit)
        if code == 0 and 200 <= response.status < 300:
            data = document.get("data")
            if (
                isinstance(data, dict)
                and isinstance(data.get("fields"), list)
                and isinstance(data.get("items"), list)
            ):
                return data
            raise APIError(
                "the service's Tushare answer has no data.fields and data.items",
                code=code,
                request_id=request_id,
                http_status=response.status,
                rate_limit=rate_limit,
            )
        # Tushare's envelope says `msg`; a service's own envelope (a 404 from a service
        # without the Tushare wire) says `message`.
        message = document.get("msg") or document.get("message")
        raise error_for(
            code,
            str(message) if message else f"request failed with code {code}",
            request_id=request_id,
            http_status=response.status,
            rate_limit=rate_limit,
        )


def _fields(fields: Optional[Fields]) -> Union[str, List[str]]:
    """``fields`` as the body carries it: the string as it is, a sequence as a list."""
    if fields is None:
        return ""
    if isinstance(fields, str):
        return fields
    return [str(name) for name in fields]


def _names(fields: Fields) -> List[str]:
    """The column names ``fields`` lists (stripped; empty ones left out)."""
    parts = fields.split(",") if isinstance(fields, str) else [str(name) for name in fields]
    return [name.strip() for name in parts if name.strip()]


def pro_api(
    token: Optional[str] = "", timeout: float = DEFAULT_TIMEOUT, base_url: Optional[str] = None
) -> DataApi:
    """A :class:`DataApi` for ``token`` (your API key), as ``tushare.pro_api``. Empty:
    the one :func:`set_token` remembered, else ``IQ_API_KEY``, else the anonymous
    visitor (where the SDK raises)."""
    return DataApi(token, timeout=timeout, base_url=base_url)


def pro_bar(
    ts_code: Optional[str] = "",
    api: Optional[DataApi] = None,
    start_date: Optional[str] = "",
    end_date: Optional[str] = "",
    freq: str = "D",
    asset: str = "I",
    offset: Optional[int] = None,
    limit: Optional[int] = None,
    fields: Optional[Fields] = "",
) -> pd.DataFrame:
    """An index's bars, as ``tushare.pro_bar(..., asset="I")``: ``index_daily``,
    ``index_weekly`` or ``index_monthly`` for ``freq`` ``"D"``, ``"W"`` or ``"M"``
    (any letter case), called with ``ts_code`` upper-cased (one code, or up to 8
    comma-separated), ``start_date``, ``end_date``, ``offset`` and ``limit``; then
    the columns ``fields`` names (a comma-separated string or a list; empty: all), in
    that order, as the SDK selects them.

    ``api`` is a :class:`DataApi` (default: ``pro_api()``). An empty ``end_date`` is
    sent empty, so the newest rows the key sees come back; the SDK sends this
    machine's date instead, which misses the newest day when the service's day is
    ahead. Refusals raise (the SDK prints them and retries).

    Raises:
        ValueError: ``asset`` is not ``"I"`` (this service has indexes only) or
            ``freq`` is not D, W or M.
        KeyError: ``fields`` names a column the frame does not have.
    """
    kind = str(asset).strip().upper() if asset is not None else ""
    if kind != "I":
        raise ValueError(
            f"pro_bar: asset={asset!r} is not served here; this service has indexes only: asset='I'"
        )
    period = str(freq).strip().upper() if freq is not None else ""
    api_name = _BARS.get(period)
    if api_name is None:
        raise ValueError(f"pro_bar: freq={freq!r} is not served for indexes; use 'D', 'W' or 'M'")
    source = api if api is not None else pro_api()
    method: Callable[..., pd.DataFrame] = getattr(source, api_name)
    frame = method(
        ts_code=(ts_code or "").strip().upper(),
        start_date=start_date,
        end_date=end_date,
        offset=offset,
        limit=limit,
    )
    names = _names(fields) if fields else []
    if not names:
        return frame
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise KeyError(
            f"pro_bar: {api_name} has no column {', '.join(missing)}; "
            f"it has {', '.join(map(str, frame.columns))}"
        )
    return frame[names]

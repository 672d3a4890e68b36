"""Calls to the service's query endpoint (``POST /api/v1/query``) for the fetchers.

One page after another while ``has_more`` (``offset`` moving on by ``returned``), each
row a dict of the page's fields with the wire's values (decimals and dates as text).
A refusal raises the service's own message with its ``code`` and ``request_id``; a
wrong or missing key is OpenBB's ``UnauthorizedError``. Never logs or repeats the key.
"""

from __future__ import annotations

from typing import Any

import requests
from openbb_core.app.model.abstract.error import OpenBBError
from openbb_core.provider.utils.errors import UnauthorizedError

#: Rows a page asks for: the service's cap.
PAGE = 5000
#: Seconds one call may take.
TIMEOUT = 60


def _base_url(credentials: dict[str, str] | None) -> str:
    base = (credentials or {}).get("iq_base_url") or ""
    if not base.startswith(("http://", "https://")):
        raise OpenBBError(
            "iq_base_url must be the service's address, http:// or https://, such as "
            "https://indexes.example.com (set it in the Platform's credentials)"
        )
    return base.rstrip("/")


def query(
    credentials: dict[str, str] | None,
    api_name: str,
    params: dict[str, str] | None = None,
    fields: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Every row of ``api_name`` with ``params``, as dicts of ``fields``."""
    url = f"{_base_url(credentials)}/api/v1/query"
    headers = {"Accept": "application/json", "User-Agent": "openbb-iq"}
    key = (credentials or {}).get("iq_api_key")
    if key:
        headers["X-API-Key"] = str(key)
    rows: list[dict[str, Any]] = []
    offset = 0
    while True:
        body: dict[str, Any] = {"api_name": api_name, "limit": PAGE, "offset": offset}
        if params:
            body["params"] = params
        if fields:
            body["fields"] = fields
        answer = requests.post(url, json=body, headers=headers, timeout=TIMEOUT)
        data = _data(answer)
        names = data["fields"]
        rows.extend(dict(zip(names, item)) for item in data["items"])
        if not data["has_more"] or not data["returned"]:
            return rows
        offset += data["returned"]


def _data(answer: requests.Response) -> dict[str, Any]:
    """The ``data`` of a success envelope; a refusal raised with what the service said."""
    try:
        envelope = answer.json()
    except ValueError:
        raise OpenBBError(
            f"the service answered HTTP {answer.status_code} without its JSON envelope"
        ) from None
    code = envelope.get("code")
    if code == 0 and isinstance(envelope.get("data"), dict):
        return dict(envelope["data"])
    said = (
        f"{envelope.get('message', 'refused')} (code {code}, request_id "
        f"{envelope.get('request_id')})"
    )
    if answer.status_code in (401, 403):
        raise UnauthorizedError(said)
    raise OpenBBError(said)


def index_codes(credentials: dict[str, str] | None) -> dict[str, str]:
    """The indexes the caller sees, by upper-case code: OpenBB upper-cases symbols, the
    service's codes are mixed case (``GPU_Index``)."""
    rows = query(credentials, "index_basic", fields=["index_code"])
    return {row["index_code"].upper(): row["index_code"] for row in rows}


def index_code(credentials: dict[str, str] | None, symbol: str) -> str:
    """The service's code of ``symbol`` (any letter case); an unknown one is refused
    with the codes there are."""
    codes = index_codes(credentials)
    found = codes.get(symbol.upper())
    if found is None:
        raise OpenBBError(
            f"no index {symbol!r} for this key; the indexes are {', '.join(codes.values())}"
        )
    return found


def wire_date(value: Any) -> str | None:
    """A date as the service takes it, ``YYYYMMDD``."""
    return None if value is None else value.strftime("%Y%m%d")

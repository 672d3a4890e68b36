"""The ``iq`` provider's fetchers against a running service, as OpenBB's own fetcher
tests run them (``Fetcher.test``: transform, extract, transform), and their answers
compared with the service's own API. Needs ``IQ_TEST_BASE_URL`` and ``IQ_TEST_KEY`` (a
key that sees every index); the service's test suite sets them (tests/api/openbb.rs).
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import pytest
import requests
from openbb_core.app.model.abstract.error import OpenBBError
from openbb_core.provider.utils.errors import UnauthorizedError

from openbb_iq import iq_provider
from openbb_iq.models.available_indices import IqAvailableIndicesFetcher
from openbb_iq.models.index_constituents import IqIndexConstituentsFetcher
from openbb_iq.models.index_historical import IqIndexHistoricalFetcher

BASE_URL = os.environ.get("IQ_TEST_BASE_URL", "")
KEY = os.environ.get("IQ_TEST_KEY", "")
if not BASE_URL or not KEY:
    if os.environ.get("IQ_TEST_REQUIRE_SERVICE"):
        raise RuntimeError("IQ_TEST_BASE_URL and IQ_TEST_KEY must be set")
    pytest.skip(
        "needs a running service: IQ_TEST_BASE_URL and IQ_TEST_KEY", allow_module_level=True
    )

CREDENTIALS = {"iq_api_key": KEY, "iq_base_url": BASE_URL}


def api(api_name: str, params: dict[str, Any], fields: list[str]) -> list[dict[str, Any]]:
    """Every row the service's own API answers, as dicts of wire values."""
    answer = requests.post(
        f"{BASE_URL}/api/v1/query",
        json={"api_name": api_name, "params": params, "fields": fields, "limit": 5000},
        headers={"X-API-Key": KEY},
        timeout=30,
    )
    envelope = answer.json()
    assert envelope["code"] == 0, envelope
    assert not envelope["data"]["has_more"]
    return [dict(zip(envelope["data"]["fields"], row)) for row in envelope["data"]["items"]]


def fetch(fetcher: Any, params: dict[str, Any], credentials: Any = CREDENTIALS) -> Any:
    """What the Platform's command would return (``Fetcher.fetch_data``)."""
    import asyncio

    return asyncio.run(fetcher.fetch_data(params, credentials))


def test_the_provider_is_registered_with_its_credentials() -> None:
    assert iq_provider.name == "iq"
    assert iq_provider.credentials == ["iq_api_key", "iq_base_url"]
    assert set(iq_provider.fetcher_dict) == {
        "IndexHistorical",
        "AvailableIndices",
        "IndexConstituents",
    }
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group="openbb_provider_extension") if e.name == "iq"]
    assert [e.load() for e in found] == [iq_provider]


def test_index_historical_passes_openbbs_fetcher_test() -> None:
    IqIndexHistoricalFetcher.test({"symbol": "GPU_INDEX"}, CREDENTIALS)
    IqIndexHistoricalFetcher.test({"symbol": "GPU_INDEX", "interval": "1W"}, CREDENTIALS)


@pytest.mark.parametrize(
    ("interval", "api_name"),
    [("1d", "index_daily"), ("1W", "index_weekly"), ("1M", "index_monthly")],
)
def test_index_historical_is_the_apis_values_to_six_decimals(interval: str, api_name: str) -> None:
    rows = fetch(IqIndexHistoricalFetcher, {"symbol": "gpu_index", "interval": interval})
    expected = api(
        api_name, {"index_code": "GPU_Index"}, ["trade_date", "index_code", "index_value"]
    )
    assert len(rows) == len(expected) > 0
    for row, want in zip(rows, expected):
        assert row.symbol == "GPU_Index"
        assert row.date == dt.date(
            int(want["trade_date"][:4]), int(want["trade_date"][4:6]), int(want["trade_date"][6:])
        )
        # The float keeps the service's six decimals exactly.
        assert f"{row.close:.6f}" == want["index_value"], (row, want)


def test_index_historical_takes_a_range() -> None:
    every = fetch(IqIndexHistoricalFetcher, {"symbol": "GPU_INDEX"})
    start, end = every[1].date, every[-2].date
    some = fetch(
        IqIndexHistoricalFetcher, {"symbol": "GPU_INDEX", "start_date": start, "end_date": end}
    )
    assert [r.date for r in some] == [r.date for r in every[1:-1]]


def test_available_indices_are_index_basic() -> None:
    IqAvailableIndicesFetcher.test({}, CREDENTIALS)
    rows = fetch(IqAvailableIndicesFetcher, {})
    expected = api("index_basic", {}, ["index_code", "index_name", "currency", "base_value"])
    assert [(r.symbol, r.name, r.currency) for r in rows] == [
        (e["index_code"], e["index_name"], e["currency"]) for e in expected
    ]
    assert [f"{r.base_value:.6f}" for r in rows] == [e["base_value"] for e in expected]


def test_index_constituents_are_the_latest_days_quotes() -> None:
    IqIndexConstituentsFetcher.test({"symbol": "GPU_INDEX"}, CREDENTIALS)
    rows = fetch(IqIndexConstituentsFetcher, {"symbol": "GPU_INDEX"})
    latest = api("index_basic", {"index_code": "GPU_Index"}, ["latest_trade_date"])[0]
    day = latest["latest_trade_date"]
    expected = api(
        "index_quote",
        {"index_code": "GPU_Index", "trade_date": day},
        ["specification", "weight", "price"],
    )
    assert len(rows) == len(expected) > 0
    for row, want in zip(rows, expected):
        assert row.symbol == row.name == want["specification"]
        assert row.trade_date.strftime("%Y%m%d") == day
        assert f"{row.price:.6f}" == want["price"]
        assert f"{row.weight:.8f}" == want["weight"]
    assert abs(sum(r.weight for r in rows) - 1) < 1e-9
    earlier = fetch(IqIndexConstituentsFetcher, {"symbol": "GPU_INDEX", "date": rows[0].trade_date})
    assert [r.symbol for r in earlier] == [r.symbol for r in rows]


def test_refusals_say_what_is_wrong() -> None:
    with pytest.raises(OpenBBError, match="no index 'NOPE_INDEX'.*GPU_Index"):
        fetch(IqIndexHistoricalFetcher, {"symbol": "NOPE_INDEX"})
    with pytest.raises(OpenBBError, match="made of other indexes"):
        fetch(IqIndexConstituentsFetcher, {"symbol": "HARDWARE_INDEX"})
    with pytest.raises(UnauthorizedError, match="request_id"):
        fetch(IqAvailableIndicesFetcher, {}, {**CREDENTIALS, "iq_api_key": "iq_" + "0" * 40})
    with pytest.raises(OpenBBError, match="iq_base_url"):
        fetch(IqAvailableIndicesFetcher, {}, {"iq_api_key": KEY})

"""The offline catalogue: five datasets, their parameters and fields, no request."""

from __future__ import annotations

import json
from importlib import resources

import pytest

import iq_client
from iq_client import Client, LocalValidationError
from iq_client.catalogue import catalogue, dataset, parse_catalogue

from fakes import FULL_DAILY, INDEX_FACTS, documented_defaults, make_client

DATASETS = [
    "index_basic",
    "index_daily",
    "index_weekly",
    "index_monthly",
    "index_latest",
    "index_quote",
    "index_revisions",
    "trade_calendar",
]


def test_every_dataset_is_listed_in_service_order() -> None:
    assert iq_client.list_datasets() == DATASETS
    assert Client.datasets() == DATASETS


@pytest.mark.parametrize(
    "api_name, params",
    [
        ("index_basic", ["index_code"]),
        (
            "index_daily",
            ["index_code", "trade_date", "start_date", "end_date", "as_of", "updated_since"],
        ),
        ("index_latest", ["index_code", "as_of", "updated_since"]),
        (
            "index_quote",
            [
                "index_code",
                "trade_date",
                "start_date",
                "end_date",
                "specification",
                "as_of",
                "updated_since",
            ],
        ),
        ("trade_calendar", ["trade_date", "start_date", "end_date"]),
    ],
)
def test_params_of_each_dataset(api_name: str, params: list) -> None:
    frame = iq_client.list_params(api_name)
    assert frame["name"].tolist() == params
    assert list(frame.columns) == ["name", "role", "description"]
    assert frame["description"].str.len().min() > 0


#: ``index_basic``'s default fields (the first of its fields).
BASIC = documented_defaults("index_basic")


@pytest.mark.parametrize(
    "api_name, fields",
    [
        ("index_basic", BASIC + INDEX_FACTS),
        ("index_daily", FULL_DAILY),
        ("index_latest", FULL_DAILY),
        (
            "index_quote",
            ["trade_date", "index_code", "specification", "weight", "price", "published_at"],
        ),
        ("trade_calendar", ["trade_date", "pretrade_date"]),
    ],
)
def test_fields_and_defaults_of_each_dataset(api_name: str, fields: list) -> None:
    frame = Client.fields(api_name)
    assert frame["name"].tolist() == fields
    # The defaults as the README's table of the datasets lists them.
    defaults = documented_defaults(api_name)
    assert frame.loc[frame["default"], "name"].tolist() == defaults
    assert list(dataset(api_name).default_fields) == defaults


def test_field_types_and_resulting_dtypes() -> None:
    quote = dataset("index_quote")
    assert quote.field("weight").type == "decimal" and quote.field("weight").scale == 8
    assert quote.field("price").scale == 6
    assert quote.field("trade_date").dtype == "datetime64[ns]"
    assert quote.field("price").dtype == "float64"
    basic = dataset("index_basic")
    assert basic.field("sort_no").dtype == "int64"
    assert basic.field("has_quotes").dtype == "bool"
    assert quote.param("specification").role == "exact"
    assert quote.param("trade_date").is_date and not quote.param("index_code").is_date
    # D17: the instants, and when each row's current version was published.
    for name in ("index_daily", "index_latest", "index_quote"):
        ds = dataset(name)
        assert ds.param("as_of").role == "as_of" and ds.param("as_of").is_instant
        assert ds.param("updated_since").role == "updated_since"
        assert not ds.param("as_of").is_date
        published = ds.field("published_at")
        assert published.type == "timestamp" and published.dtype == "datetime64[ns, UTC]"
        assert not published.default and ds.field_names[-1] == "published_at"
    for name in ("index_basic", "trade_calendar"):
        assert dataset(name).param("as_of") is None
        assert dataset(name).field("published_at") is None


def test_dataset_metadata() -> None:
    assert dataset("index_quote").scope == "quote:read"
    assert dataset("trade_calendar").scope == "calendar:read"
    assert dataset("index_daily").delayed and not dataset("index_basic").delayed
    assert list(dataset("index_quote").sort_key) == ["trade_date", "index_code", "specification"]


def test_unknown_dataset_is_refused_locally() -> None:
    with pytest.raises(LocalValidationError, match="index_hourly"):
        iq_client.list_fields("index_hourly")


def test_the_helpers_send_no_request() -> None:
    client, transport, _ = make_client()  # no scripted reply: any request fails
    for name in client.datasets():
        client.params(name)
        client.fields(name)
    assert transport.requests == []


def test_the_packaged_file_is_the_service_catalogue_format() -> None:
    text = resources.files("iq_client").joinpath("catalogue.json").read_text("utf-8")
    raw = json.loads(text)
    assert [d["api_name"] for d in raw] == DATASETS
    assert set(raw[0]) == {
        "api_name",
        "description",
        "scope",
        "delayed",
        "detail_only",
        "params",
        "fields",
        "default_fields",
        "sort_key",
    }
    assert parse_catalogue(text) == dict(catalogue())

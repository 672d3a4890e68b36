"""Every typed dataset method takes the paging and conversion options of query(),
on Client and AsyncClient alike."""

from __future__ import annotations

import inspect

import pytest

from iq_client import AsyncClient, Client
from iq_client._methods import QUERY_OPTIONS

from fakes import DAILY, make_client, ok

#: One method per dataset: named for it, but ``revisions`` for ``index_revisions``.
DATASET_METHODS = [
    "index_basic",
    "index_daily",
    "index_latest",
    "index_quote",
    "revisions",
    "trade_calendar",
]


def keyword_only(function) -> dict:
    return {
        name: p.default
        for name, p in inspect.signature(function).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


@pytest.mark.parametrize("cls", [Client, AsyncClient])
def test_query_options_are_the_documented_set(cls) -> None:
    assert set(keyword_only(cls.query)) == set(QUERY_OPTIONS)
    assert set(keyword_only(cls.iter_query)) == set(QUERY_OPTIONS)


@pytest.mark.parametrize("cls", [Client, AsyncClient])
@pytest.mark.parametrize("method", DATASET_METHODS)
def test_every_dataset_method_takes_every_query_option(cls, method) -> None:
    options = keyword_only(getattr(cls, method))
    query = keyword_only(cls.query)
    for name in list(QUERY_OPTIONS) + ["fields"]:
        assert name in options, f"{cls.__name__}.{method} lacks {name}"
        if name in query:
            assert options[name] == query[name], f"{method}: default of {name}"


@pytest.mark.parametrize("method", DATASET_METHODS)
def test_fixed_end_date_false_is_accepted_everywhere(method) -> None:
    client, transport, _ = make_client(ok(["trade_date"], []), membership=None)
    getattr(client, method)(fixed_end_date=False)  # no membership lookup, no TypeError
    assert transport.bodies[0].get("params") is None


def test_the_options_reach_the_requests() -> None:
    pages = [
        ok(
            DAILY,
            [["20261118", "GPU_Index", "1.000000", "2.000000", "3.000000", "4.000000"]] * 2,
            offset=1,
            limit=2,
            has_more=True,
        ),
        ok(
            DAILY,
            [["20261119", "GPU_Index", "1.000000", "2.000000", "3.000000", "4.000000"]],
            offset=3,
            limit=1,
            has_more=True,
        ),
    ]
    client, transport, _ = make_client(*pages, membership=None)
    frame = client.index_latest(
        limit=3, offset=1, page_size=2, dates="string", decimals="decimal", fixed_end_date=False
    )
    assert [(b["offset"], b["limit"]) for b in transport.bodies] == [(1, 2), (3, 1)]
    assert frame["trade_date"].tolist() == ["20261118", "20261118", "20261119"]
    assert str(frame["index_value"][0]) == "1.000000"
    client, transport, _ = make_client(ok(["trade_date", "pretrade_date"], []), membership=None)
    client.trade_calendar(start_date="20261101", page_size=10, progress=False, decimals="float")
    assert transport.bodies[0]["limit"] == 10

"""``revisions()`` (decision D21): the ``index_revisions`` dataset's parameters sent as
the service reads them, ``since`` checked locally as an instant with an offset, and the
answer typed as every other dataset's (dates, UTC timestamps, float64 or Decimal)."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal

import pytest
from test_async import make as make_async

from iq_client import LocalValidationError
from iq_client.catalogue import dataset

from fakes import documented_defaults, make_client, ok

FIELDS = list(dataset("index_revisions").default_fields)
ROW = [
    "GPU_Index",
    "20261103",
    "2026-11-24T10:00:00.123456Z",
    "2026-11-03T10:00:00Z",
    "1012.345678",
    "1012.5",
    "0.154322",
]
SHANGHAI = dt.timezone(dt.timedelta(hours=8))


def test_the_default_fields_are_the_decisions() -> None:
    # D21's columns, as the README's table of the datasets lists them.
    assert FIELDS == documented_defaults("index_revisions")


def test_parameters_are_sent_as_the_service_reads_them() -> None:
    client, transport, _ = make_client(ok(FIELDS, [ROW]))
    client.revisions(
        "GPU_Index",
        start_date=dt.date(2026, 11, 1),
        end_date="2026-11-20",
        since=dt.datetime(2026, 11, 24, 18, 0, tzinfo=SHANGHAI),
    )
    body = transport.bodies[0]
    assert body["api_name"] == "index_revisions"
    assert body["params"] == {
        "index_code": "GPU_Index",
        "start_date": "20261101",
        "end_date": "20261120",
        "since": "2026-11-24T10:00:00Z",
    }


def test_the_answer_is_typed_like_every_dataset() -> None:
    client, _, _ = make_client(ok(FIELDS, [ROW]))
    frame = client.revisions(fixed_end_date=False)
    assert str(frame["trade_date"].dtype) == "datetime64[ns]"
    assert str(frame["published_at"].dtype) == "datetime64[ns, UTC]"
    assert str(frame["previous_published_at"].dtype) == "datetime64[ns, UTC]"
    for column in ("previous_value", "index_value", "change"):
        assert str(frame[column].dtype) == "float64"
    client, _, _ = make_client(ok(FIELDS, [ROW]))
    exact = client.revisions(fixed_end_date=False, decimals="decimal")
    row = exact.iloc[0]
    assert row["change"] == Decimal("0.154322")
    assert row["index_value"] - row["previous_value"] == row["change"]


@pytest.mark.parametrize(
    "value", ["20261124", "2026-11-24", dt.date(2026, 11, 24), dt.datetime(2026, 11, 24, 18)]
)
def test_since_is_an_instant_with_an_offset(value) -> None:
    client, transport, _ = make_client()
    with pytest.raises(LocalValidationError) as caught:
        client.revisions(since=value)
    assert "since" in str(caught.value)
    assert transport.requests == [] and transport.membership_requests == []


def test_parameters_of_other_datasets_are_refused_locally() -> None:
    client, transport, _ = make_client()
    with pytest.raises(LocalValidationError) as caught:
        client.query("index_revisions", {"as_of": "2026-11-24T00:00:00Z"})
    assert "as_of" in str(caught.value) and "since" in str(caught.value)
    assert transport.requests == []


def test_the_async_client_has_it_too() -> None:
    client, service, _ = make_async(ok(FIELDS, [ROW]))

    async def go():
        async with client:
            return await client.revisions("GPU_Index", fixed_end_date=False)

    frame = asyncio.run(go())
    assert frame["index_code"].tolist() == ["GPU_Index"]
    assert service.bodies[0]["params"] == {"index_code": "GPU_Index"}

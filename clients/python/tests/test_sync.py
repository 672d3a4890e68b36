"""``Client.sync``: a local copy kept up to date with ``as_of`` / ``updated_since``
(decision D17), against a fake service that keeps every published version."""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import json
import os
import sys
from decimal import Decimal
from typing import Any, Dict, List, Optional, Tuple

import pandas as pd
import pytest

import iq_client
from iq_client import (
    AsyncClient,
    HTTPRequest,
    HTTPResponse,
    LocalValidationError,
    PermissionDenied,
    SyncError,
    read_synced,
)
from iq_client.catalogue import dataset
from iq_client.dataset_sync import merge, parse_rfc3339

from fakes import TEST_KEY, FakeTransport, error, make_client, membership, membership_data, ok

QUOTE_FIELDS = dataset("index_quote").field_names
DAILY_FIELDS = dataset("index_daily").field_names

T1 = "2026-11-20T02:00:00.000000Z"  # the first import
T2 = "2026-11-21T02:00:00.000000Z"  # the first sync
T3 = "2026-11-21T09:30:00.123456Z"  # a correcting import
T4 = "2026-11-22T02:00:00.000000Z"  # the second sync
T5 = "2026-11-22T08:00:00.000000Z"  # another import
T6 = "2026-11-23T02:00:00.000000Z"  # the third sync

Key = Tuple[str, ...]


class HistoryService:
    """A service that keeps every version of every row, for a key without delay.

    ``events`` are ``(published_at, key, values)``; ``values`` ``None`` drops the
    row. It answers ``as_of`` with the rows current at that instant and
    ``updated_since`` with the rows published in ``(updated_since, as_of]``; for
    ``index_quote`` with every current row of each day that changed there.
    """

    def __init__(self, api_name: str, events: List[Tuple[str, Key, Optional[List[str]]]]):
        self.ds = dataset(api_name)
        self.events = events
        self.key_size = 3 if api_name == "index_quote" else 2
        self.asked: List[Dict[str, Any]] = []

    def current(self, at: str) -> Dict[Key, List[Any]]:
        rows: Dict[Key, List[Any]] = {}
        for published, key, values in sorted(self.events, key=lambda e: e[0]):
            if published > at:
                break
            if values is None:
                rows.pop(key, None)
            else:
                rows[key] = list(key) + list(values) + [published]
        return rows

    def __call__(self, request: HTTPRequest) -> HTTPResponse:
        body = json.loads(request.body)
        params = body.get("params", {})
        self.asked.append(body)
        assert body["fields"] == self.ds.field_names  # sync asks every field
        as_of = params.get("as_of", "9999")
        since = params.get("updated_since")
        rows = self.current(as_of)
        if since is not None:
            if self.ds.api_name == "index_quote":
                days = {e[1][:2] for e in self.events if since < e[0] <= as_of}
                rows = {k: r for k, r in rows.items() if k[:2] in days}
            else:
                rows = {k: r for k, r in rows.items() if r[-1] > since}
        end = params.get("end_date")
        items = [rows[k] for k in sorted(rows) if end is None or k[0] <= end]
        page = items[body["offset"] : body["offset"] + body["limit"]]
        more = body["offset"] + len(page) < len(items)
        return ok(
            self.ds.field_names,
            page,
            offset=body["offset"],
            limit=body["limit"],
            has_more=more,
            request_id=f"req_{len(self.asked)}",
        )


def quote_events() -> List[Tuple[str, Key, Optional[List[str]]]]:
    return [
        (T1, ("20261119", "GPU_Index", "A100"), ["0.50000000", "10.000000"]),
        (T1, ("20261119", "GPU_Index", "H100"), ["0.50000000", "20.000000"]),
        (T1, ("20261120", "GPU_Index", "A100"), ["0.40000000", "11.000000"]),
        (T1, ("20261120", "GPU_Index", "H100"), ["0.60000000", "21.000000"]),
        (T1, ("20261120", "Server_Index", "R760"), ["1.00000000", "99.000000"]),
    ]


def quote_client(service: HistoryService, **options: Any):
    options.setdefault("page_size", 2)
    return make_client(service, repeat_last=True, **options)


def read_csv_rows(path) -> List[List[str]]:
    with open(path, encoding="utf-8", newline="") as file:
        return list(csv.reader(file))


# -- first run and incremental merge -------------------------------------------------


def test_the_first_run_downloads_everything_as_of_one_instant(tmp_path) -> None:
    service = HistoryService("index_quote", quote_events())
    client, transport, _ = quote_client(service)
    path = tmp_path / "quotes.csv"
    result = client.sync("index_quote", path, as_of=T2, progress=False)
    assert result.full and result.reason == "no local copy yet"
    assert (result.received, result.replaced, result.rows) == (5, 0, 5)
    assert result.as_of == T2 and result.updated_since is None
    assert result.format == "csv" and result.path == str(path)
    # three pages, each asked as_of the same instant, end_date pinned to the cutoff
    assert [b["offset"] for b in transport.bodies] == [0, 2, 4]
    for body in transport.bodies:
        assert body["params"] == {"as_of": T2, "end_date": "20261120"}
        assert body["fields"] == QUOTE_FIELDS  # published_at included
    assert len(transport.membership_requests) == 1
    rows = read_csv_rows(path)
    assert rows[0] == QUOTE_FIELDS
    assert rows[1] == ["20261119", "GPU_Index", "A100", "0.50000000", "10.000000", T1]
    assert len(rows) == 6
    assert path.read_bytes().count(b"\r\n") == 6  # the service's CSV: CRLF
    assert result.request_ids == ("req_1", "req_2", "req_3")


def test_the_state_file(tmp_path) -> None:
    service = HistoryService("index_quote", quote_events())
    client, _, _ = quote_client(service)
    path = tmp_path / "quotes.csv"
    client.sync("index_quote", path, params={"index_code": "GPU_Index"}, as_of=T2, progress=False)
    state = json.loads((tmp_path / "quotes.csv.sync.json").read_text())
    assert state["version"] == 1
    assert state["api_name"] == "index_quote"
    assert state["params"] == {"index_code": "GPU_Index"}  # as given: no as_of, no end_date
    assert state["fields"] == QUOTE_FIELDS
    assert state["format"] == "csv"
    assert state["as_of"] == T2
    assert state["base_url"] == "http://iq.test"
    assert state["entitlements"] == {
        "identity": "key",
        "tier": "pro",
        "delay_days": 0,
        "indexes": ["Server_Index", "GPU_Index"],
    }
    assert state["last_run"]["kind"] == "full" and state["client"].startswith("iq-client ")
    assert state["data_file"] == "quotes.csv" and state["rows"] == 5  # the fake ignores index_code
    # nothing else is left in the folder (temporary files renamed away)
    assert sorted(os.listdir(tmp_path)) == ["quotes.csv", "quotes.csv.sync.json"]


def test_a_quote_day_is_replaced_whole_and_a_dropped_specification_disappears(tmp_path) -> None:
    events = quote_events()
    service = HistoryService("index_quote", events)
    client, transport, _ = quote_client(service)
    path = tmp_path / "quotes.csv"
    client.sync("index_quote", path, as_of=T2, progress=False)
    # A correcting import at T3: GPU_Index on 2026-11-20 loses A100, H100 is revised,
    # and B200 appears. The other days do not change.
    events += [
        (T3, ("20261120", "GPU_Index", "A100"), None),
        (T3, ("20261120", "GPU_Index", "H100"), ["0.70000000", "22.000000"]),
        (T3, ("20261120", "GPU_Index", "B200"), ["0.30000000", "40.000000"]),
    ]
    asked = len(transport.bodies)
    result = client.sync("index_quote", path, as_of=T4, progress=False)
    assert not result.full and result.reason == "incremental"
    assert (result.updated_since, result.as_of) == (T2, T4)
    for body in transport.bodies[asked:]:
        assert body["params"] == {"as_of": T4, "updated_since": T2, "end_date": "20261120"}
    assert result.received == 2  # the day's current rows: B200 and H100
    assert result.replaced == 2  # the day's old rows: A100 and H100
    assert result.rows == 5
    rows = read_csv_rows(path)[1:]
    assert rows == [
        ["20261119", "GPU_Index", "A100", "0.50000000", "10.000000", T1],
        ["20261119", "GPU_Index", "H100", "0.50000000", "20.000000", T1],
        ["20261120", "GPU_Index", "B200", "0.30000000", "40.000000", T3],
        ["20261120", "GPU_Index", "H100", "0.70000000", "22.000000", T3],
        ["20261120", "Server_Index", "R760", "1.00000000", "99.000000", T1],
    ]
    # the copy is what a full download as of T4 gives
    fresh = tmp_path / "fresh.csv"
    quote_client(service)[0].sync("index_quote", fresh, as_of=T4, progress=False)
    assert read_csv_rows(fresh) == read_csv_rows(path)
    assert json.loads((tmp_path / "quotes.csv.sync.json").read_text())["as_of"] == T4


def test_an_update_with_nothing_new_leaves_the_data_file_alone(tmp_path) -> None:
    service = HistoryService("index_quote", quote_events())
    client, _, _ = quote_client(service)
    path = tmp_path / "quotes.csv"
    client.sync("index_quote", path, as_of=T2, progress=False)
    before = path.stat().st_mtime_ns, path.read_bytes()
    result = client.sync("index_quote", path, as_of=T4, progress=False)
    assert (result.received, result.replaced, result.rows) == (0, 0, 5)
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before
    assert json.loads((tmp_path / "quotes.csv.sync.json").read_text())["as_of"] == T4


def test_daily_rows_are_replaced_by_key(tmp_path) -> None:
    def values(v: str) -> List[Any]:
        return [v, "1.000000", None, "0.000000", "0.000000"]

    events: List[Tuple[str, Key, Optional[List[Any]]]] = [
        (T1, ("20261119", "GPU_Index"), values("100.000000")),
        (T1, ("20261120", "GPU_Index"), values("101.000000")),
        (T1, ("20261120", "SSD_Index"), values("50.000000")),
    ]
    service = HistoryService("index_daily", events)
    client, _, _ = quote_client(service)
    path = tmp_path / "daily.csv"
    client.sync("index_daily", path, as_of=T2, progress=False)
    events += [
        (T3, ("20261120", "GPU_Index"), values("101.500000")),  # a revision
        (T5, ("20261118", "GPU_Index"), values("99.000000")),  # a back-filled day
    ]
    result = client.sync("index_daily", path, as_of=T6, progress=False)
    assert (result.received, result.replaced, result.rows) == (2, 1, 4)
    rows = read_csv_rows(path)
    assert rows[0] == DAILY_FIELDS
    assert [(r[0], r[1], r[2], r[-1]) for r in rows[1:]] == [
        ("20261118", "GPU_Index", "99.000000", T5),
        ("20261119", "GPU_Index", "100.000000", T1),
        ("20261120", "GPU_Index", "101.500000", T3),
        ("20261120", "SSD_Index", "50.000000", T1),
    ]
    assert rows[1][4] == ""  # pre_value null: an empty cell, as the service writes it


def test_merge_rules() -> None:
    fields = ["trade_date", "index_code", "index_value", "published_at"]
    old = [["20261119", "B", "1", T1], ["20261119", "A", "2", T1]]
    new = [["20261120", "B", "3", T3]]
    # index_latest: one row per index, replaced in place, order kept
    rows, replaced = merge("index_latest", fields, old, new)
    assert rows == [["20261120", "B", "3", T3], ["20261119", "A", "2", T1]] and replaced == 1
    # index_daily: by (trade_date, index_code), sorted
    rows, replaced = merge("index_daily", fields, old, new)
    assert [r[:2] for r in rows] == [["20261119", "A"], ["20261119", "B"], ["20261120", "B"]]
    assert replaced == 0


def test_parse_rfc3339() -> None:
    assert parse_rfc3339("2026-11-22T18:00:00.5+08:00") == dt.datetime(
        2026, 11, 22, 10, 0, 0, 500000, tzinfo=dt.timezone.utc
    )
    assert parse_rfc3339("2026-12-31T23:59:60Z").second == 59
    with pytest.raises(ValueError):
        parse_rfc3339("2026-11-22")


# -- the instant ---------------------------------------------------------------------


def test_as_of_defaults_to_the_moment_the_sync_started(tmp_path, monkeypatch) -> None:
    started = dt.datetime(2026, 11, 21, 2, 0, 0, 123456, tzinfo=dt.timezone.utc)
    monkeypatch.setattr(iq_client.dataset_sync, "_utcnow", lambda: started)
    service = HistoryService("index_quote", quote_events())
    client, transport, _ = quote_client(service)
    result = client.sync("index_quote", tmp_path / "q.csv", progress=False)
    assert result.as_of == "2026-11-21T02:00:00.123456Z"
    assert {b["params"]["as_of"] for b in transport.bodies} == {result.as_of}


def dated_membership(*dates: str) -> Any:
    """A membership answer whose ``Date`` is each of ``dates`` in turn, then the last."""
    answer = membership()
    seen = []

    def reply(request: HTTPRequest) -> HTTPResponse:
        date = dates[min(len(seen), len(dates) - 1)]
        seen.append(date)
        return HTTPResponse.build(200, {**answer.headers, "Date": date}, answer.body)

    return reply


def test_as_of_is_the_end_of_the_services_second_once_that_has_passed(
    tmp_path, monkeypatch
) -> None:
    """The service's clock, not this machine's: ``as_of`` is the end of the second its
    ``Date`` names, so a row published within that second is in (an import at
    02:00:00.141646 was missed when as_of was 02:00:00), and the pages are asked once
    the service says a later second, when the data as of it can no longer change."""
    for local in (
        dt.datetime(2026, 11, 21, 2, 5, 0, tzinfo=dt.timezone.utc),  # ahead
        dt.datetime(2026, 11, 21, 1, 0, 0, tzinfo=dt.timezone.utc),  # behind
    ):
        monkeypatch.setattr(iq_client.dataset_sync, "_utcnow", lambda: local)
        events = quote_events() + [
            (
                "2026-11-21T02:00:00.141646Z",
                ("20261120", "GPU_Index", "B200"),
                ["1.00000000", "333.000000"],
            )
        ]
        service = HistoryService("index_quote", events)
        dates = dated_membership(
            "Sat, 21 Nov 2026 02:00:00 GMT",
            "Sat, 21 Nov 2026 02:00:00 GMT",
            "Sat, 21 Nov 2026 02:00:01 GMT",
        )
        client, transport, sleeps = quote_client(service, membership=dates)
        path = tmp_path / f"q{local.hour}.csv"
        result = client.sync("index_quote", path, progress=False)
        assert result.as_of == "2026-11-21T02:00:00.999999Z"
        assert {b["params"]["as_of"] for b in transport.bodies} == {result.as_of}
        b200 = [r for r in read_csv_rows(path) if r[1:3] == ["GPU_Index", "B200"]]
        assert [r[:5] for r in b200] == [
            ["20261120", "GPU_Index", "B200", "1.00000000", "333.000000"]
        ]
        # Asked the service's clock until it said 02:00:01, a quarter second apart.
        assert len(transport.membership_requests) == 3
        assert sleeps.calls == [iq_client.dataset_sync.SETTLE_POLL] * 2


def test_a_service_clock_that_does_not_move_delays_a_sync_a_few_seconds_at_most(
    tmp_path,
) -> None:
    service = HistoryService("index_quote", quote_events())
    stuck = dated_membership("Sat, 21 Nov 2026 02:00:00 GMT")
    client, transport, sleeps = quote_client(service, membership=stuck)
    result = client.sync("index_quote", tmp_path / "q.csv", progress=False)
    assert result.as_of == "2026-11-21T02:00:00.999999Z" and result.rows > 0
    assert sum(sleeps.calls) == pytest.approx(iq_client.dataset_sync.SETTLE_LIMIT)


def test_an_as_of_in_the_services_past_asks_at_once(tmp_path) -> None:
    service = HistoryService("index_quote", quote_events())
    dates = dated_membership("Sun, 22 Nov 2026 02:00:00 GMT")
    client, transport, sleeps = quote_client(service, membership=dates)
    result = client.sync("index_quote", tmp_path / "q.csv", as_of=T2, progress=False)
    assert result.as_of == T2 and sleeps.calls == []
    assert len(transport.membership_requests) == 1


def test_a_clock_set_back_asks_nothing(tmp_path, caplog) -> None:
    service = HistoryService("index_quote", quote_events())
    client, transport, _ = quote_client(service)
    path = tmp_path / "q.csv"
    client.sync("index_quote", path, as_of=T4, progress=False)
    asked = len(transport.bodies)
    result = client.sync("index_quote", path, as_of=T2, progress=False)
    assert len(transport.bodies) == asked and result.received == 0
    assert result.as_of == T4  # the copy never moves back
    assert "nothing asked" in caplog.text


# -- when a full download is needed, and refusals ---------------------------------------


def test_changed_entitlements_download_everything_again(tmp_path) -> None:
    service = HistoryService("index_quote", quote_events())
    client, _, _ = quote_client(service)
    path = tmp_path / "q.csv"
    client.sync("index_quote", path, as_of=T2, progress=False)
    wider = membership(indexes=["Server_Index", "GPU_Index", "SSD_Index"])
    client, transport, _ = quote_client(service, membership=wider)
    result = client.sync("index_quote", path, as_of=T4, progress=False)
    assert result.full and result.reason == "what the key may see changed"
    assert all("updated_since" not in b["params"] for b in transport.bodies)


def test_a_missing_data_file_or_full_true_downloads_everything(tmp_path) -> None:
    service = HistoryService("index_quote", quote_events())
    client, _, _ = quote_client(service)
    path = tmp_path / "q.csv"
    client.sync("index_quote", path, as_of=T2, progress=False)
    path.unlink()
    result = client.sync("index_quote", path, as_of=T4, progress=False)
    assert result.full and result.reason == "the data file is missing" and result.rows == 5
    result = client.sync("index_quote", path, as_of=T6, progress=False, full=True)
    assert result.full and result.reason == "full=True"


def test_a_copy_of_other_parameters_is_refused_before_any_request(tmp_path) -> None:
    service = HistoryService("index_quote", quote_events())
    client, _, _ = quote_client(service)
    path = tmp_path / "q.csv"
    client.sync("index_quote", path, as_of=T2, progress=False)
    for kwargs in (
        {"params": {"index_code": "GPU_Index"}},
        {"format": "parquet"} if _has_pyarrow() else {"params": {"start_date": "20260101"}},
    ):
        other, transport, _ = make_client()
        with pytest.raises(SyncError, match="full=True"):
            other.sync("index_quote", path, as_of=T4, progress=False, **kwargs)
        assert transport.requests == [] and transport.membership_requests == []
    elsewhere, transport, _ = make_client(base_url="http://other.test")
    with pytest.raises(SyncError, match="base_url"):
        elsewhere.sync("index_quote", path, as_of=T4, progress=False)


def test_a_broken_state_file_is_refused(tmp_path) -> None:
    path = tmp_path / "q.csv"
    (tmp_path / "q.csv.sync.json").write_text("{not json")
    client, transport, _ = make_client()
    with pytest.raises(SyncError, match="cannot read"):
        client.sync("index_quote", path, as_of=T4, progress=False)
    (tmp_path / "q.csv.sync.json").write_text('{"version": 99}')
    with pytest.raises(SyncError, match="version"):
        client.sync("index_quote", path, as_of=T4, progress=False)
    assert transport.membership_requests == []


@pytest.mark.parametrize(
    "api_name, kwargs, match",
    [
        ("index_basic", {}, "sync keeps"),
        ("trade_calendar", {}, "sync keeps"),
        ("index_quote", {"params": {"as_of": "2026-11-20"}}, "sync sets as_of"),
        ("index_quote", {"params": {"updated_since": T1}}, "sync sets updated_since"),
        ("index_quote", {"params": {"ts_code": "x"}}, "unknown parameter"),
        ("index_quote", {"as_of": dt.datetime(2026, 11, 20)}, "naive"),
        ("index_quote", {"as_of": "2026-11-20"}, "not a date"),
        ("index_quote", {"format": "xlsx"}, "format"),
        ("index_quote", {"page_size": 0}, "page_size"),
    ],
)
def test_bad_arguments_are_refused_locally(tmp_path, api_name, kwargs, match) -> None:
    client, transport, _ = make_client()
    with pytest.raises(LocalValidationError, match=match):
        client.sync(api_name, tmp_path / "x.csv", progress=False, **kwargs)
    assert transport.requests == [] and transport.membership_requests == []
    assert os.listdir(tmp_path) == []


def test_a_failed_download_leaves_the_copy_as_it_was(tmp_path) -> None:
    service = HistoryService("index_quote", quote_events())
    client, _, _ = quote_client(service)
    path = tmp_path / "q.csv"
    client.sync("index_quote", path, as_of=T2, progress=False)
    files = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    row = ["20261120", "GPU_Index", "A100", "0.40000000", "11.000000", T1]
    failing, _, _ = make_client(
        ok(QUOTE_FIELDS, [row], has_more=True), error(403, 40301, "scope"), page_size=2
    )
    with pytest.raises(PermissionDenied):
        failing.sync("index_quote", path, as_of=T4, progress=False, full=True)
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == files


# -- progress, formats, reading back ----------------------------------------------------


def test_progress_without_tqdm_is_a_line_on_stderr(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    service = HistoryService("index_quote", quote_events())
    client, _, _ = quote_client(service)
    client.sync("index_quote", tmp_path / "q.csv", as_of=T2)
    assert "index_quote (no local copy yet): 5 rows" in capsys.readouterr().err


def test_progress_with_tqdm(tmp_path, capsys) -> None:
    pytest.importorskip("tqdm")
    service = HistoryService("index_quote", quote_events())
    client, _, _ = quote_client(service)
    client.sync("index_quote", tmp_path / "q.csv", as_of=T2)
    assert "5" in capsys.readouterr().err


def test_read_synced_gives_the_frame_a_query_gives(tmp_path) -> None:
    service = HistoryService("index_quote", quote_events())
    client, _, _ = quote_client(service)
    path = tmp_path / "q.csv"
    client.sync("index_quote", path, as_of=T2, progress=False)
    frame = read_synced(path)
    queried = quote_client(service)[0].index_quote(fields=QUOTE_FIELDS, as_of=T2)
    pd.testing.assert_frame_equal(frame, queried, check_like=False)
    assert str(frame["published_at"].dtype) == "datetime64[ns, UTC]"
    assert frame.attrs["as_of"] == T2 and frame.attrs["api_name"] == "index_quote"
    exact = read_synced(path, decimals="decimal", dates="string")
    assert str(exact.loc[0, "weight"]) == "0.50000000" and exact.loc[0, "trade_date"] == "20261119"
    with pytest.raises(SyncError):
        read_synced(tmp_path / "nothing.csv")


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    client, transport, _ = make_client()
    with pytest.raises(ImportError, match=r"iq-client\[arrow\]"):
        client.sync("index_quote", tmp_path / "q.parquet", progress=False)
    assert transport.membership_requests == []


def test_parquet_keeps_exact_types_and_merges(tmp_path) -> None:
    pa = pytest.importorskip("pyarrow", reason="format='parquet' needs pyarrow")
    import pyarrow.parquet as pq

    events = quote_events()
    service = HistoryService("index_quote", events)
    client, _, _ = quote_client(service)
    path = tmp_path / "quotes.parquet"
    first = client.sync("index_quote", path, as_of=T2, progress=False)
    assert first.format == "parquet"
    table = pq.read_table(path)
    assert table.column_names == QUOTE_FIELDS
    assert table.schema.field("trade_date").type == pa.date32()
    assert table.schema.field("weight").type == pa.decimal128(38, 8)
    assert table.schema.field("price").type == pa.decimal128(38, 6)
    assert table.schema.field("published_at").type == pa.timestamp("us", tz="UTC")
    events += [
        (T3, ("20261120", "GPU_Index", "A100"), None),
        (T3, ("20261120", "GPU_Index", "H100"), ["0.00000001", "22.000000"]),
    ]
    result = client.sync("index_quote", path, as_of=T4, progress=False)
    assert (result.received, result.replaced, result.rows) == (1, 2, 4)
    frame = read_synced(path, decimals="decimal", dates="string")
    assert frame["specification"].tolist() == ["A100", "H100", "H100", "R760"]
    h100 = frame.iloc[2]
    assert h100["weight"] == Decimal("0.00000001") and h100["published_at"] == T3
    # pandas reads the file directly too
    plain = pd.read_parquet(path)
    assert plain["published_at"].iloc[2] == pd.Timestamp(T3)
    # the same copy as CSV holds the same rows
    csv_copy = tmp_path / "quotes.csv"
    quote_client(service)[0].sync("index_quote", csv_copy, as_of=T4, progress=False)
    pd.testing.assert_frame_equal(read_synced(csv_copy), read_synced(path))


# -- the asyncio client ----------------------------------------------------------------


def test_the_async_client_syncs_the_same(tmp_path) -> None:
    events = quote_events()
    service = HistoryService("index_quote", events)
    transport = FakeTransport(service, repeat_last=True, membership=membership())

    class Async:
        async def send(self, request, timeout):
            return transport.send(request, timeout)

    async def go(as_of: str):
        async with AsyncClient(
            TEST_KEY, base_url="http://iq.test", transport=Async(), page_size=2
        ) as client:
            return await client.sync("index_quote", tmp_path / "q.csv", as_of=as_of, progress=False)

    first = asyncio.run(go(T2))
    assert first.full and first.rows == 5
    events.append((T3, ("20261120", "GPU_Index", "A100"), None))
    second = asyncio.run(go(T4))
    assert not second.full and (second.received, second.replaced, second.rows) == (1, 2, 4)
    assert [r[2] for r in read_csv_rows(tmp_path / "q.csv")[1:]] == ["A100", "H100", "H100", "R760"]


def test_membership_data_fixture_is_used() -> None:
    # the fakes' membership helper takes overrides (used above for wider indexes)
    assert membership_data(indexes=["X"])["indexes"] == ["X"]


def test_a_future_as_of_is_brought_back_to_now(tmp_path, monkeypatch, caplog) -> None:
    now = dt.datetime(2026, 11, 21, 2, 0, tzinfo=dt.timezone.utc)
    monkeypatch.setattr(iq_client.dataset_sync, "_utcnow", lambda: now)
    service = HistoryService("index_quote", quote_events())
    client, transport, _ = quote_client(service)
    result = client.sync("index_quote", tmp_path / "q.csv", as_of=T6, progress=False)
    assert result.as_of == "2026-11-21T02:00:00.000000Z" and "in the future" in caplog.text


def test_a_damaged_csv_copy_is_refused(tmp_path) -> None:
    service = HistoryService("index_quote", quote_events())
    client, _, _ = quote_client(service)
    path = tmp_path / "q.csv"
    client.sync("index_quote", path, as_of=T2, progress=False)
    with open(path, "a", encoding="utf-8", newline="") as file:
        file.write("20261120,GPU_Index\r\n")
    with pytest.raises(SyncError, match="line 7"):
        client.sync("index_quote", path, as_of=T4, progress=False)

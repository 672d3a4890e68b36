"""Against the real service, started by the Rust test ``tests/api/python_client.rs``
(``cargo test --test api python_client``) on demo data in a fresh PostgreSQL database,
with its clock fixed at 2026-11-20 12:00 Asia/Shanghai.

The harness passes, as environment variables:

=============================  ====================================================
IQ_TEST_BASE_URL               the service, ``http://127.0.0.1:<port>``
IQ_TEST_TODAY                  the service's today, ``YYYYMMDD``
IQ_TEST_KEY_ALL                a professional member's key: all 8 indexes, no delay
IQ_TEST_KEY_FREE               a free user's key: 7 public indexes, 7-day delay
IQ_TEST_KEY_RESTRICTED         a professional key limited to some indexes ...
IQ_TEST_RESTRICTED_INDEXES     ... these, comma-separated
IQ_TEST_KEY_NO_SCOPE           a key holding only ``calendar:read``
IQ_TEST_KEY_MINUTE             a key allowed IQ_TEST_MINUTE_LIMIT calls a minute
IQ_TEST_KEY_DAY                a key allowed IQ_TEST_DAY_LIMIT calls a day
IQ_TEST_REQUIRE_SERVICE        set by the harness: a missing variable fails the run
=============================  ====================================================

Without them every test here is skipped, so ``pytest`` alone runs the unit tests.
No test sleeps: clients get a recording ``sleep``.
"""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import io
import os
import subprocess
import sys
import time
from decimal import Decimal
from typing import Any, Dict, List

import pandas as pd
import pytest
import requests

import iq_client
from iq_client import (
    AsyncClient,
    AuthenticationError,
    Client,
    LocalValidationError,
    PermissionDenied,
    QuotaExhausted,
    RateLimited,
    read_synced,
)
from iq_client.catalogue import dataset
from iq_client.paging import csv_line

from fakes import INDEX_FACTS

REQUIRED = [
    "IQ_TEST_BASE_URL",
    "IQ_TEST_TODAY",
    "IQ_TEST_KEY_ALL",
    "IQ_TEST_KEY_FREE",
    "IQ_TEST_KEY_RESTRICTED",
    "IQ_TEST_RESTRICTED_INDEXES",
    "IQ_TEST_KEY_NO_SCOPE",
    "IQ_TEST_KEY_MINUTE",
    "IQ_TEST_MINUTE_LIMIT",
    "IQ_TEST_KEY_DAY",
    "IQ_TEST_DAY_LIMIT",
    "IQ_TEST_ADMIN_COOKIE",
    "IQ_TEST_ADMIN_CSRF",
]
MISSING = [name for name in REQUIRED if not os.environ.get(name)]
if MISSING:
    if os.environ.get("IQ_TEST_REQUIRE_SERVICE"):
        # The Rust harness sets this: a missing variable there is a bug, not a skip.
        raise RuntimeError("IQ_TEST_* variables missing: " + ", ".join(MISSING))
    pytest.skip(
        "integration tests need the service and its test keys: run them with "
        "`cargo test --test api python_client` (no IQ_TEST_BASE_URL etc. here)",
        allow_module_level=True,
    )

pytestmark = pytest.mark.integration

ENV: Dict[str, str] = {name: os.environ.get(name, "") for name in REQUIRED}
ALL_INDEXES = {
    "Server_Index",
    "Server_Rental_Index",
    "GPU_Index",
    "DRAM_Index",
    "SSD_Index",
    "CPU_Index",
    "OI_Index",
    "Hardware_Index",
}


class Sleeps(list):
    """A ``sleep`` that records the waits instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def today() -> dt.date:
    return dt.datetime.strptime(ENV["IQ_TEST_TODAY"], "%Y%m%d").date()


def client_for(key_var: str, **options: Any) -> Client:
    options.setdefault("sleep", Sleeps())
    options.setdefault("random", lambda: 0.0)
    return Client(ENV[key_var], base_url=ENV["IQ_TEST_BASE_URL"], timeout=10, **options)


@pytest.fixture(scope="module")
def pro() -> Client:
    return client_for("IQ_TEST_KEY_ALL")


def assert_typed(frame: pd.DataFrame, api_name: str) -> None:
    """Columns are the dataset's defaults, with the catalogue's dtypes."""
    ds = dataset(api_name)
    assert list(frame.columns) == list(ds.default_fields)
    for name in frame.columns:
        kind = ds.field(name).type
        if kind == "date":
            assert str(frame[name].dtype) == "datetime64[ns]", name
        elif kind == "decimal":
            assert frame[name].dtype == "float64", name


# -- every dataset ----------------------------------------------------------------


def test_index_basic(pro: Client) -> None:
    frame = pro.index_basic()
    assert_typed(frame, "index_basic")
    assert set(frame["index_code"]) == ALL_INDEXES
    assert frame["sort_no"].dtype == "int64" and frame["has_quotes"].dtype == bool
    assert frame["sort_no"].is_monotonic_increasing
    hardware = frame.set_index("index_code").loc["Hardware_Index"]
    assert hardware["visibility"] == "member" and not hardware["has_quotes"]


def test_index_daily(pro: Client) -> None:
    frame = pro.index_daily(index_code="GPU_Index", start_date="2026-11-01", end_date="20261120")
    assert_typed(frame, "index_daily")
    assert set(frame["index_code"]) == {"GPU_Index"}
    assert frame["trade_date"].min() >= pd.Timestamp("2026-11-02")
    assert frame["trade_date"].max() == pd.Timestamp("2026-11-20")
    assert frame["trade_date"].is_monotonic_increasing
    assert frame["index_value"].notna().all()
    one = pro.index_daily(index_code="GPU_Index", trade_date=dt.date(2026, 11, 20))
    assert len(one) == 1 and one.loc[0, "index_value"] == frame["index_value"].iloc[-1]


def test_index_weekly_and_monthly(pro: Client) -> None:
    """D25: the periods' closes are daily values, dated by their last day."""
    daily = pro.index_daily(index_code="GPU_Index", start_date="2026-11-01")
    for api_name in ("index_weekly", "index_monthly"):
        frame = getattr(pro, api_name)("GPU_Index", start_date="2026-11-01")
        assert_typed(frame, api_name)
        assert len(frame) >= 1 and frame["trade_date"].is_monotonic_increasing
        last = frame.iloc[-1]
        assert last["trade_date"] == daily["trade_date"].iloc[-1]
        assert last["index_value"] == daily["index_value"].iloc[-1]
        assert (frame["high_value"] >= frame["low_value"]).all()


def test_index_latest(pro: Client) -> None:
    frame = pro.index_latest()
    assert_typed(frame, "index_latest")
    assert set(frame["index_code"]) == ALL_INDEXES
    assert (frame["trade_date"] == pd.Timestamp(today())).all()
    hardware = frame.set_index("index_code").loc["Hardware_Index"]
    assert pd.isna(hardware["weighted_price"])  # it has no quotes


def test_index_quote(pro: Client) -> None:
    frame = pro.index_quote(index_code="Server_Index", trade_date="20261105")
    assert_typed(frame, "index_quote")
    assert len(frame) > 1 and set(frame["index_code"]) == {"Server_Index"}
    assert frame["weight"].dtype == "float64" and frame["price"].dtype == "float64"
    assert frame["specification"].tolist() == sorted(frame["specification"])


def test_trade_calendar(pro: Client) -> None:
    frame = pro.trade_calendar(start_date="20261101", end_date="20261130")
    assert_typed(frame, "trade_calendar")
    assert len(frame) > 15
    assert (frame["trade_date"].dt.day_of_week < 5).all()
    assert (frame["pretrade_date"].iloc[1:].values == frame["trade_date"].iloc[:-1].values).all()


def test_exact_decimals_on_request(pro: Client) -> None:
    quotes = pro.index_quote(index_code="Server_Index", trade_date="20261105", decimals="decimal")
    assert all(isinstance(w, Decimal) for w in quotes["weight"])
    assert sum(quotes["weight"]) == Decimal(1)  # spec part 2, rule 1: exactly 1
    daily = pro.index_daily(index_code="Server_Index", trade_date="20261105", decimals="decimal")
    expected = sum(w * p for w, p in zip(quotes["weight"], quotes["price"]))
    assert daily.loc[0, "weighted_price"] == expected.quantize(Decimal("0.000001"))


def test_fields_selection(pro: Client) -> None:
    frame = pro.index_daily(
        index_code="SSD_Index", fields=["trade_date", "pre_value"], end_date="20261120"
    )
    assert list(frame.columns) == ["trade_date", "pre_value"]
    assert frame["pre_value"].dtype == "float64"


# -- paging ------------------------------------------------------------------------


def test_paging_across_pages_equals_one_big_page(pro: Client) -> None:
    params = {"start_date": "20260801", "end_date": "20261031"}
    whole = pro.fetch_page("index_quote", params, limit=5000)
    assert not whole.has_more and whole.returned > 500
    paged = pro.query("index_quote", params, page_size=250, dates="string", decimals="decimal")
    assert len(paged.attrs["request_ids"]) == -(-whole.returned // 250)
    rows: List[List[Any]] = [
        [d, c, s, str(w), str(p)] for d, c, s, w, p in paged.itertuples(index=False, name=None)
    ]
    assert rows == whole.items


def test_a_bulk_pull_follows_has_more_with_a_fixed_end_date(pro: Client) -> None:
    frame = pro.index_quote()  # every quote the key may see: more than one 5000-row page
    assert len(frame.attrs["request_ids"]) >= 2
    assert frame.attrs["params"] == {"end_date": ENV["IQ_TEST_TODAY"]}
    keys = frame[["trade_date", "index_code", "specification"]]
    assert not keys.duplicated().any()
    assert "Hardware_Index" not in set(frame["index_code"])
    pages = list(pro.iter_query("index_quote", page_size=3000))
    assert [len(p) for p in pages[:-1]] == [3000] * (len(pages) - 1)
    assert sum(len(p) for p in pages) == len(frame)


def test_a_bulk_pull_is_pinned_to_the_cutoff_the_service_reports() -> None:
    """end_date comes from GET /api/v1/membership, never from a zone in the client:
    for the free key it is its delayed cutoff, not today."""
    client = client_for("IQ_TEST_KEY_FREE")
    who = client.whoami()
    assert who.tier == "free" and who.delay_days == 7
    assert who.data_cutoff is not None and who.data_cutoff < today()
    frame = client.index_daily(start_date="20261101")
    assert frame.attrs["params"] == {"start_date": "20261101", "end_date": who.data_cutoff_str}
    assert frame["trade_date"].max() == pd.Timestamp(who.data_cutoff)
    # The visitor has the free tier's delay: the same cutoff.
    assert Client(base_url=ENV["IQ_TEST_BASE_URL"]).whoami().data_cutoff == who.data_cutoff


# -- whoami ----------------------------------------------------------------------------


def test_whoami_describes_the_key_its_owner_and_its_use(pro: Client) -> None:
    who = pro.whoami()
    assert who.identity == "key" and who.tier == "pro" and who.delay_days == 0
    assert who.user is not None and who.user.username == "py_pro"
    assert who.data_cutoff_str == ENV["IQ_TEST_TODAY"]
    assert set(who.indexes) == ALL_INDEXES
    assert who.key is not None and who.key.name == "all" and who.key.index_codes is None
    assert "quote:read" in who.key.scopes and who.key.expires_at is None
    assert who.request_id and who.request_id.startswith("req_")
    used = who.quota.used_day
    assert used is not None and who.quota.remaining_day == who.quota.per_day - used
    assert pro.whoami().quota.used_day == used  # asking is never counted
    pro.trade_calendar(trade_date="20261120")
    assert pro.whoami().quota.used_day == used + 1


def test_whoami_of_a_restricted_key_and_of_the_visitor() -> None:
    allowed = ENV["IQ_TEST_RESTRICTED_INDEXES"].split(",")
    who = client_for("IQ_TEST_KEY_RESTRICTED").whoami()
    assert who.key is not None and set(who.key.index_codes or ()) == set(allowed)
    assert set(who.indexes) == set(allowed)
    visitor = Client(base_url=ENV["IQ_TEST_BASE_URL"]).whoami()
    assert visitor.identity == "visitor" and visitor.user is None and visitor.key is None
    assert visitor.protection is not None and visitor.protection.per_minute >= 0
    assert visitor.quota.used_day is None


def test_whoami_with_a_refused_key() -> None:
    client = Client("iq_thisIsNotAValidKeyAtAll00000000000000000", base_url=ENV["IQ_TEST_BASE_URL"])
    with pytest.raises(AuthenticationError) as caught:
        client.whoami()
    assert (caught.value.code, caught.value.http_status) == (40102, 401)


# -- the asyncio client ----------------------------------------------------------------


def test_the_async_client_against_the_service() -> None:
    async def go() -> None:
        sleeps = Sleeps()
        async with AsyncClient(
            ENV["IQ_TEST_KEY_ALL"],
            base_url=ENV["IQ_TEST_BASE_URL"],
            timeout=10,
            sleep=sleeps,
            random=lambda: 0.0,
        ) as client:
            who = await client.whoami()
            assert who.identity == "key" and who.data_cutoff_str == ENV["IQ_TEST_TODAY"]
            daily = await client.index_daily("GPU_Index", start_date="20261101")
            assert_typed(daily, "index_daily")
            assert daily.attrs["params"]["end_date"] == ENV["IQ_TEST_TODAY"]
            assert daily["trade_date"].max() == pd.Timestamp(today())
            blocking = client_for("IQ_TEST_KEY_ALL").index_daily(
                "GPU_Index", start_date="20261101", end_date=ENV["IQ_TEST_TODAY"]
            )
            pd.testing.assert_frame_equal(daily, blocking)
            sizes = [
                len(page)
                async for page in client.iter_query(
                    "index_quote", start_date="20261101", page_size=100
                )
            ]
            assert len(sizes) > 1 and all(size == 100 for size in sizes[:-1])
            quotes = await client.index_quote(
                index_code="Server_Index", trade_date="20261105", decimals="decimal"
            )
            assert sum(quotes["weight"]) == Decimal(1)
        async with AsyncClient(
            ENV["IQ_TEST_KEY_RESTRICTED"], base_url=ENV["IQ_TEST_BASE_URL"], timeout=10
        ) as restricted:
            outside = next(iter(ALL_INDEXES - set(ENV["IQ_TEST_RESTRICTED_INDEXES"].split(","))))
            with pytest.raises(PermissionDenied) as caught:
                await restricted.index_daily(index_code=outside)
            assert (caught.value.code, caught.value.http_status) == (40302, 403)
            assert caught.value.request_id.startswith("req_")
        assert sleeps == []

    asyncio.run(go())


# -- who sees what -------------------------------------------------------------------


def test_without_index_code_only_indexes_visible_to_the_key_are_returned() -> None:
    allowed = set(ENV["IQ_TEST_RESTRICTED_INDEXES"].split(","))
    client = client_for("IQ_TEST_KEY_RESTRICTED")
    daily = client.index_daily(start_date="20261001", page_size=7)
    assert len(daily.attrs["request_ids"]) > 2  # it paged
    assert set(daily["index_code"]) == allowed
    assert set(client.index_basic()["index_code"]) == allowed
    assert set(client.index_latest()["index_code"]) == allowed


def test_a_free_key_sees_public_indexes_with_the_delay() -> None:
    client = client_for("IQ_TEST_KEY_FREE")
    latest = client.index_latest()
    assert set(latest["index_code"]) == ALL_INDEXES - {"Hardware_Index"}
    assert (latest["trade_date"] < pd.Timestamp(today())).all()
    with pytest.raises(PermissionDenied) as caught:
        client.index_daily(index_code="Hardware_Index")
    assert (caught.value.code, caught.value.http_status) == (40301, 403)


# -- errors --------------------------------------------------------------------------


def test_an_invalid_key_raises_authentication_error() -> None:
    # The key's shape (iq_ + 40 letters and digits) passes the local check; its
    # checksum does not, so the service refuses it.
    client = Client("iq_thisIsNotAValidKeyAtAll00000000000000000", base_url=ENV["IQ_TEST_BASE_URL"])
    with pytest.raises(AuthenticationError) as caught:
        client.index_daily(index_code="GPU_Index")
    err = caught.value
    assert (err.code, err.http_status) == (40102, 401)
    assert err.request_id and err.request_id.startswith("req_")


def test_a_malformed_key_is_refused_before_any_request() -> None:
    with pytest.raises(AuthenticationError) as caught:
        Client(ENV["IQ_TEST_KEY_ALL"] + "\n", base_url=ENV["IQ_TEST_BASE_URL"])
    assert caught.value.request_id is None and ENV["IQ_TEST_KEY_ALL"] not in str(caught.value)


def test_an_index_outside_the_key_range_raises_permission_denied() -> None:
    client = client_for("IQ_TEST_KEY_RESTRICTED")
    outside = next(iter(ALL_INDEXES - set(ENV["IQ_TEST_RESTRICTED_INDEXES"].split(","))))
    with pytest.raises(PermissionDenied) as caught:
        client.index_daily(index_code=outside)
    assert (caught.value.code, caught.value.http_status) == (40302, 403)
    assert caught.value.request_id.startswith("req_")


def test_a_key_without_the_scope_raises_permission_denied() -> None:
    client = client_for("IQ_TEST_KEY_NO_SCOPE")
    for call in (client.index_latest, client.index_quote):
        with pytest.raises(PermissionDenied) as caught:
            call()
        assert caught.value.code == 40301
    assert len(client.trade_calendar(trade_date="20261120")) == 1  # calendar:read it has


def test_local_refusal_sends_nothing(pro: Client) -> None:
    pro.index_latest()
    before = pro.last_rate_limit.remaining
    for bad in (
        lambda: pro.query("index_daily", {"ts_code": "GPU_Index"}),
        lambda: pro.index_daily(fields=["close"]),
        lambda: pro.index_daily(trade_date="20261105", start_date="20261101"),
    ):
        with pytest.raises(LocalValidationError):
            bad()
    pro.index_latest()
    assert pro.last_rate_limit.remaining == before - 1  # only the second query counted


def test_quota_headers_are_exposed(pro: Client) -> None:
    pro.trade_calendar(trade_date="20261120")
    info = pro.last_rate_limit
    assert info.limit and info.remaining is not None and info.reset and info.reset >= 1
    assert '"minute"' in info.policy and '"day"' in info.policy


# -- 429 ---------------------------------------------------------------------------


def _spent(key_env: str, limit_env: str, sleeps: Sleeps) -> Client:
    """A client on the key ``key_env`` that has made the ``limit_env`` calls it may."""
    client = client_for(key_env, sleep=sleeps)
    for _ in range(int(ENV[limit_env])):
        client.trade_calendar(trade_date="20261120")
    return client


def test_per_minute_429_is_retried_with_backoff_then_raised() -> None:
    sleeps = Sleeps()
    client = _spent("IQ_TEST_KEY_MINUTE", "IQ_TEST_MINUTE_LIMIT", sleeps)
    # The service's clock stands still, so the minute never rolls over: every retry
    # is refused and the client gives up after 5, without really sleeping.
    with pytest.raises(RateLimited) as caught:
        client.trade_calendar(trade_date="20261120")
    err = caught.value
    assert type(err) is RateLimited
    assert (err.code, err.http_status) == (42901, 429)
    assert err.retry_after is not None and 1 <= err.retry_after <= 60
    assert len(sleeps) == 5
    for waited, backoff in zip(sleeps, [1, 2, 4, 8, 16]):
        assert waited == max(backoff, err.retry_after)  # jitter is 0 here


def test_daily_quota_429_is_not_retried() -> None:
    sleeps = Sleeps()
    client = _spent("IQ_TEST_KEY_DAY", "IQ_TEST_DAY_LIMIT", sleeps)
    with pytest.raises(QuotaExhausted) as caught:
        client.trade_calendar(trade_date="20261120")
    assert (caught.value.code, caught.value.http_status) == (42902, 429)
    assert caught.value.retry_after and caught.value.retry_after > 60
    assert sleeps == []


# -- the command line ----------------------------------------------------------------


def test_the_cli_against_the_service() -> None:
    env = dict(os.environ, IQ_API_KEY=ENV["IQ_TEST_KEY_ALL"], IQ_BASE_URL=ENV["IQ_TEST_BASE_URL"])
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "iq_client",
            "query",
            "index_daily",
            "--index-code",
            "GPU_Index",
            "--end-date",
            ENV["IQ_TEST_TODAY"],
            "--csv",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "trade_date,index_code,index_value,weighted_price,change,pct_change"
    assert lines[-1].startswith("2026-11-20,GPU_Index,")
    version = subprocess.run(
        [sys.executable, "-m", "iq_client", "--version"], capture_output=True, text=True
    )
    assert version.stdout == f"iq-client {iq_client.__version__}\n"
    who = subprocess.run(
        [sys.executable, "-m", "iq_client", "whoami"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert who.returncode == 0, who.stderr
    assert "data_cutoff" in who.stdout and "2026-11-20" in who.stdout


# -- CSV answers (D18) ------------------------------------------------------------------


def test_csv_answers_are_the_json_answers_cell_for_cell(pro: Client) -> None:
    params = {"index_code": "Server_Index", "trade_date": "20261105"}
    text = pro.query("index_quote", params, format="csv")
    page = pro.fetch_page("index_quote", params)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == page.fields and len(rows) == len(page.items) + 1
    assert rows[1:] == [["" if v is None else str(v) for v in item] for item in page.items]
    # byte for byte what the client writes for a JSON page
    assert text == csv_line(page.fields) + "".join(csv_line(item) for item in page.items)
    assert text.endswith("\r\n") and pro.last_request_id.startswith("req_")


def test_csv_pages_join_under_one_header(pro: Client) -> None:
    params = {"start_date": "20261101", "end_date": ENV["IQ_TEST_TODAY"]}
    whole = pro.query("index_quote", params, format="csv")
    paged = pro.query("index_quote", params, format="csv", page_size=100)
    assert paged == whole and whole.count("trade_date,index_code,specification") == 1
    assert len(list(pro.iter_query("index_quote", params, format="csv", page_size=100))) > 1
    empty = pro.index_quote(trade_date="20261121", format="csv")  # a Saturday
    assert empty == "trade_date,index_code,specification,weight,price\r\n"


def test_csv_refusals_stay_typed_exceptions() -> None:
    client = client_for("IQ_TEST_KEY_RESTRICTED")
    outside = next(iter(ALL_INDEXES - set(ENV["IQ_TEST_RESTRICTED_INDEXES"].split(","))))
    with pytest.raises(PermissionDenied) as caught:
        client.index_daily(index_code=outside, format="csv")
    assert (caught.value.code, caught.value.http_status) == (40302, 403)

    async def go() -> str:
        async with AsyncClient(
            ENV["IQ_TEST_KEY_ALL"], base_url=ENV["IQ_TEST_BASE_URL"], timeout=10
        ) as client:
            return await client.index_latest(format="csv")

    assert asyncio.run(go()).splitlines()[0] == ",".join(dataset("index_latest").default_fields)


# -- point-in-time history (D17) --------------------------------------------------------
#
# Until the service has D17 (its catalogue, in GET /api/v1/openapi.json, lists no
# as_of parameter), these skip, and the Rust harness, which fails on any skipped test,
# says so.


@pytest.fixture(scope="module")
def history() -> None:
    answer = requests.get(f"{ENV['IQ_TEST_BASE_URL']}/api/v1/openapi.json", timeout=10)
    answer.raise_for_status()
    live = {d["api_name"]: d for d in answer.json().get("x-datasets", [])}
    for name in ("index_daily", "index_latest", "index_quote"):
        params = live.get(name, {}).get("params", [])
        roles = {p["role"] for p in params if isinstance(p.get("role"), str)}
        if not {"as_of", "updated_since"} <= roles:
            pytest.skip(f"the service has no point-in-time history yet ({name} has no as_of)")


def all_fields(api_name: str) -> List[str]:
    return dataset(api_name).field_names


def test_as_of_gives_the_data_as_it_stood(pro: Client, history: None) -> None:
    params = {"index_code": "GPU_Index", "start_date": "20261101", "end_date": ENV["IQ_TEST_TODAY"]}
    today_ = pro.query("index_daily", params, all_fields("index_daily"))
    assert str(today_["published_at"].dtype) == "datetime64[ns, UTC]"
    assert len(today_) > 10 and today_["published_at"].notna().all()
    newest = today_["published_at"].max().to_pydatetime()
    at_newest = pro.query("index_daily", params, all_fields("index_daily"), as_of=newest)
    pd.testing.assert_frame_equal(at_newest, today_)
    again = pro.query("index_daily", params, all_fields("index_daily"), as_of=newest)
    pd.testing.assert_frame_equal(again, at_newest)  # repeatable
    future = pro.query(
        "index_daily", params, all_fields("index_daily"), as_of="2100-01-01T00:00:00Z"
    )
    pd.testing.assert_frame_equal(future, today_)
    before = pro.query("index_daily", params, all_fields("index_daily"), as_of="2000-01-01")
    assert before.empty and list(before.columns) == all_fields("index_daily")
    # default fields do not change
    plain = pro.index_daily("GPU_Index", start_date="20261101", as_of=dt.date(2100, 1, 1))
    assert list(plain.columns) == list(dataset("index_daily").default_fields)
    latest = pro.index_latest(as_of="2000-01-01T00:00:00+08:00")
    assert latest.empty


def test_updated_since_gives_what_became_visible_after(pro: Client, history: None) -> None:
    params = {
        "index_code": "Server_Index",
        "start_date": "20261101",
        "end_date": ENV["IQ_TEST_TODAY"],
    }
    quotes = pro.query("index_quote", params, all_fields("index_quote"))
    newest = quotes["published_at"].max().to_pydatetime()
    oldest = quotes["published_at"].min().to_pydatetime()
    nothing = pro.query("index_quote", params, all_fields("index_quote"), updated_since=newest)
    assert nothing.empty  # no delay: visible when published
    everything = pro.query(
        "index_quote",
        params,
        all_fields("index_quote"),
        updated_since=oldest - dt.timedelta(seconds=1),
        as_of=newest,
    )
    pd.testing.assert_frame_equal(everything, quotes)


def test_sync_keeps_a_local_copy(pro: Client, history: None, tmp_path) -> None:
    params = {"index_code": "Server_Index", "start_date": "20261101"}
    path = tmp_path / "quotes.csv"
    first = pro.sync("index_quote", path, params=params, progress=False)
    assert first.full and first.rows > 0 and first.received == first.rows
    expected = pro.query("index_quote", params, all_fields("index_quote"), as_of=first.as_of)
    pd.testing.assert_frame_equal(read_synced(path), expected)
    content = path.read_bytes()
    second = pro.sync("index_quote", path, params=params, progress=False)
    assert not second.full and second.updated_since == first.as_of
    assert second.as_of >= first.as_of  # equal within the second of the service's Date
    assert (second.received, second.rows) == (0, first.rows)
    assert path.read_bytes() == content

    async def go() -> Any:
        async with AsyncClient(
            ENV["IQ_TEST_KEY_ALL"], base_url=ENV["IQ_TEST_BASE_URL"], timeout=10
        ) as client:
            return await client.sync("index_latest", tmp_path / "latest.csv", progress=False)

    latest = asyncio.run(go())
    assert latest.rows == len(ALL_INDEXES)


def test_sync_to_parquet(pro: Client, history: None, tmp_path) -> None:
    pytest.importorskip("pyarrow", reason="format='parquet' needs pyarrow (iq-client[parquet])")
    path = tmp_path / "daily.parquet"
    first = pro.sync("index_daily", path, params={"start_date": "20261101"}, progress=False)
    expected = pro.query(
        "index_daily", {"start_date": "20261101"}, all_fields("index_daily"), as_of=first.as_of
    )
    pd.testing.assert_frame_equal(read_synced(path), expected)
    assert not pro.sync("index_daily", path, params={"start_date": "20261101"}, progress=False).full


def test_index_facts_come_when_asked(pro: Client) -> None:
    """D20: the facts of every index, typed, only when named in ``fields``."""
    plain = pro.index_basic()
    assert "currency" not in plain.columns
    facts = pro.index_basic(fields=["index_code", *INDEX_FACTS])
    assert len(facts) == len(plain)
    # Every price is in dollars; the composite has points only and names no currency.
    priced = facts["index_code"] != "Hardware_Index"
    assert (facts.loc[priced, "currency"] == "USD").all()
    assert facts.loc[~priced, "currency"].isna().all()
    assert facts["publish_time"].str.fullmatch(r"\d\d:\d\d").all()
    assert str(facts["latest_trade_date"].dtype) == "datetime64[ns]"
    assert str(facts["next_publication_at"].dtype) == "datetime64[ns, UTC]"
    assert facts["latest_trade_date"].notna().all()


def test_tushare_style_code_runs_unchanged(pro: Client) -> None:
    """``iq_client.tushare``: Tushare code with its import and token changed, against
    the service's Tushare wire (``POST /tushare/{api_name}``): the client's rows under
    Tushare's names, newest first; fields as a string; paging; pro_bar; errors with the
    service's message and code; an empty token as the visitor."""
    import iq_client.tushare as ts

    url, end = ENV["IQ_TEST_BASE_URL"], ENV["IQ_TEST_TODAY"]
    api = ts.pro_api(ENV["IQ_TEST_KEY_ALL"], timeout=10, base_url=url)
    daily = api.index_daily(ts_code="GPU_Index", start_date="20261101", end_date=end)
    columns = ["ts_code", "trade_date", "close", "pre_close", "change", "pct_chg"]
    assert list(daily.columns) == columns
    native = pro.index_daily(
        "GPU_Index",
        start_date="20261101",
        end_date=end,
        dates="string",
        fields=["index_code", "trade_date", "index_value", "pre_value", "change", "pct_change"],
    )
    expected = native.iloc[::-1].reset_index(drop=True)
    expected.columns = columns
    pd.testing.assert_frame_equal(daily, expected, check_dtype=False)
    assert str(daily["close"].dtype) == "float64"
    assert len(daily) > 10 and daily["trade_date"].str.fullmatch(r"\d{8}").all()
    assert daily["trade_date"].is_monotonic_decreasing
    basic = api.query("index_basic", fields="ts_code,name")
    assert list(basic.columns) == ["ts_code", "name"]
    assert set(basic["ts_code"]) == ALL_INDEXES
    whole = api.index_daily(ts_code="GPU_Index", end_date=end)
    page = api.index_daily(ts_code="GPU_Index", end_date=end, limit=3, offset=2)
    assert page["trade_date"].tolist() == whole["trade_date"].tolist()[2:5]
    weekly = ts.pro_bar(ts_code="gpu_index", api=api, freq="W", end_date=end)
    assert list(weekly.columns) == [
        "ts_code",
        "trade_date",
        "close",
        "open",
        "high",
        "low",
        "pre_close",
        "change",
        "pct_chg",
    ]
    assert set(weekly["ts_code"]) == {"GPU_Index"}
    free = ts.pro_api(ENV["IQ_TEST_KEY_FREE"], timeout=10, base_url=url)
    with pytest.raises(PermissionDenied) as caught:
        free.index_daily(ts_code="Hardware_Index", end_date=end)
    assert caught.value.code == 40301 and "Hardware_Index" in str(caught.value)
    assert caught.value.request_id
    visitor = ts.pro_api(base_url=url)
    assert set(visitor.index_basic()["ts_code"]) == ALL_INDEXES - {"Hardware_Index"}


def test_a_sync_right_after_an_import_receives_it(history: None, tmp_path) -> None:
    """The sequence that once received nothing: an import, then at once an
    incremental sync. Its ``as_of`` came from the service's ``Date`` (whole seconds),
    before the import's ``published_at`` within that second. Last in this file: the
    import revises one demo quote. (A client that really waits: the sync waits for
    the service's clock to pass its ``as_of``.)"""
    pro = client_for("IQ_TEST_KEY_ALL", sleep=time.sleep)
    params = {"index_code": "GPU_Index", "start_date": "20261101"}
    path = tmp_path / "quotes.csv"
    first = pro.sync("index_quote", path, params=params, progress=False)
    assert first.rows > 0
    day = min(read_csv_rows_of(path, "trade_date"))
    quotes = pro.query(
        "index_quote",
        {"index_code": "GPU_Index", "trade_date": day},
        ["trade_date", "index_code", "specification", "weight", "price"],
        decimals="decimal",
        dates="string",
    )
    lines = ["trade_date,index_code,specification,weight,price"]
    for i, row in enumerate(quotes.itertuples(index=False)):
        price = row.price + (Decimal("0.01") if i == 0 else 0)
        lines.append(
            f'{row.trade_date},{row.index_code},"{row.specification}",{row.weight},{price}'
        )
    answer = requests.post(
        f"{ENV['IQ_TEST_BASE_URL']}/api/v1/admin/imports",
        files={"file": ("revision.csv", "\n".join(lines).encode())},
        headers={"Cookie": ENV["IQ_TEST_ADMIN_COOKIE"], "X-CSRF-Token": ENV["IQ_TEST_ADMIN_CSRF"]},
        timeout=60,
    )
    assert answer.json()["code"] == 0, answer.text
    second = pro.sync("index_quote", path, params=params, progress=False)
    assert not second.full and second.received == len(quotes), second
    assert second.as_of > first.as_of
    check_the_revision_is_listed(pro, day, answer.json()["data"]["published_at"], first.as_of)


def check_the_revision_is_listed(pro: Client, day: str, published_at: str, before) -> None:
    """D21: the import just made revised ``day`` of GPU_Index; ``revisions()`` lists it,
    typed as every other dataset, sync and async, and exact with ``decimals="decimal"``."""
    revs = pro.revisions("GPU_Index", since=before)
    assert list(revs.columns) == list(dataset("index_revisions").default_fields)
    assert str(revs["trade_date"].dtype) == "datetime64[ns]"
    assert str(revs["published_at"].dtype) == "datetime64[ns, UTC]"
    assert str(revs["previous_published_at"].dtype) == "datetime64[ns, UTC]"
    for column in ("previous_value", "index_value", "change"):
        assert str(revs[column].dtype) == "float64"
    mine = revs[revs["trade_date"] == pd.Timestamp(day)]
    assert len(mine) == 1, revs
    assert mine["published_at"].iloc[0] == pd.Timestamp(published_at)
    assert mine["previous_published_at"].iloc[0] < mine["published_at"].iloc[0]
    assert (revs["index_code"] == "GPU_Index").all()
    exact = pro.revisions("GPU_Index", since=before, decimals="decimal")
    assert all(isinstance(v, Decimal) for v in exact["change"])
    assert all(exact["change"] == exact["index_value"] - exact["previous_value"])
    assert pro.revisions("GPU_Index", since=published_at).empty

    async def go() -> Any:
        async with AsyncClient(
            ENV["IQ_TEST_KEY_ALL"], base_url=ENV["IQ_TEST_BASE_URL"], timeout=10
        ) as client:
            return await client.revisions("GPU_Index", since=before)

    pd.testing.assert_frame_equal(asyncio.run(go()), revs)


def read_csv_rows_of(path, column: str) -> List[str]:
    with open(path, encoding="utf-8", newline="") as file:
        return [row[column] for row in csv.DictReader(file)]


def test_events_tell_each_account_what_it_may_see(tmp_path: Any) -> None:
    """The demo data's import told every tier of its days: a pro key hears of all eight
    indexes, a free key never of the member index; a cursor file resumes after the
    last event taken."""
    pro_events = list(client_for("IQ_TEST_KEY_ALL").events(follow=False, wait=0))
    published = {e.index_code for e in pro_events if e.type == "index.published"}
    assert published == ALL_INDEXES
    assert all(e.type in ("index.published", "index.revised") for e in pro_events)
    assert all(e.trade_dates for e in pro_events)
    free_events = list(client_for("IQ_TEST_KEY_FREE").events(follow=False, wait=0))
    assert free_events and "Hardware_Index" not in {e.index_code for e in free_events}
    cursor = tmp_path / "cursor"
    first = client_for("IQ_TEST_KEY_ALL").events(follow=False, wait=0, limit=1, cursor=cursor)
    taken = next(first)
    next(first)
    rest = list(client_for("IQ_TEST_KEY_ALL").events(follow=False, wait=0, cursor=cursor))
    assert [e.id for e in rest] == [e.id for e in pro_events][1:]
    assert taken.id == pro_events[0].id


# -- Arrow pages (D29) ----------------------------------------------------------------


@pytest.mark.parametrize("api_name", iq_client.list_datasets())
@pytest.mark.parametrize("decimals", ["float", "decimal"])
def test_arrow_pages_make_the_json_frames(
    pro: Client, monkeypatch: pytest.MonkeyPatch, api_name: str, decimals: str
) -> None:
    """With pyarrow the pages travel as Arrow; the frame is the JSON path's, exactly,
    over several pages, every field; ``format="arrow"`` holds the same rows."""
    pytest.importorskip("pyarrow", reason="the Arrow path needs pyarrow (iq-client[arrow])")
    options: Dict[str, Any] = dict(fields=all_fields(api_name), limit=2500, page_size=1000)
    by_arrow = pro.query(api_name, decimals=decimals, **options)
    table = pro.query(api_name, format="arrow", **options)
    monkeypatch.setattr(iq_client.arrow, "available", lambda: False)
    by_json = pro.query(api_name, decimals=decimals, **options)
    assert len(by_json) > 0, api_name
    pd.testing.assert_frame_equal(by_arrow, by_json, check_exact=True)
    assert table.num_rows == len(by_json)
    assert table.column_names == list(by_json.columns)


def test_the_service_answers_arrow_itself(pro: Client) -> None:
    """The Arrow path above is the service's Arrow, not the client reading JSON."""
    answer = requests.post(
        f"{ENV['IQ_TEST_BASE_URL']}/api/v1/query",
        json={"api_name": "index_quote", "limit": 10},
        headers={"X-API-Key": ENV["IQ_TEST_KEY_ALL"], "Accept": iq_client.arrow.MEDIA_TYPE},
        timeout=10,
    )
    assert answer.status_code == 200
    assert answer.headers["content-type"] == iq_client.arrow.MEDIA_TYPE
    assert answer.headers["x-returned"] == "10"

"""The command line: python -m iq_client ..."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any, List

import pytest

from iq_client import Client

from fakes import DAILY, DEFAULT_MEMBERSHIP, FULL_DAILY, TEST_KEY, FakeTransport, error, ok

ROWS = [
    ["20261119", "GPU_Index", "1007.074318", "23185.671000", "-1.608992", "-0.159514"],
    ["20261120", "GPU_Index", "1009.305519", "23237.039500", "2.231201", "0.221553"],
]


def run(argv: List[str], *replies: Any, membership: Any = DEFAULT_MEMBERSHIP):
    transport = FakeTransport(*replies, membership=membership)
    made = {}

    def factory(**options: Any) -> Client:
        made.update(options)
        return Client(transport=transport, sleep=lambda s: None, **options)

    out, err = io.StringIO(), io.StringIO()
    status = main_(argv, factory, out, err)
    return status, out.getvalue(), err.getvalue(), transport, made


def main_(argv, factory, out, err) -> int:
    from iq_client.cli import main

    return main(argv, client_factory=factory, stdout=out, stderr=err)


def test_query_as_csv_keeps_exact_decimals() -> None:
    status, out, _, transport, made = run(
        ["query", "index_daily", "--index-code", "GPU_Index", "--csv", "--api-key", TEST_KEY],
        ok(DAILY, ROWS),
    )
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == ",".join(DAILY)
    assert lines[2] == "2026-11-20,GPU_Index,1009.305519,23237.039500,2.231201,0.221553"
    assert transport.bodies[0]["params"]["index_code"] == "GPU_Index"
    assert made["api_key"] == TEST_KEY


def test_query_as_json() -> None:
    status, out, _, _, _ = run(
        ["query", "index_daily", "--json", "--end-date", "20261120"],
        ok(DAILY, [ROWS[0][:4] + [None, None]]),
    )
    assert status == 0
    assert json.loads(out) == [
        {
            "trade_date": "2026-11-19",
            "index_code": "GPU_Index",
            "index_value": "1007.074318",
            "weighted_price": "23185.671000",
            "change": None,
            "pct_change": None,
        }
    ]


def test_generic_params_and_fields() -> None:
    status, out, _, transport, _ = run(
        [
            "query",
            "index_quote",
            "-p",
            "specification=H100 SXM5 80GB",
            "--trade-date",
            "2026-11-10",
            "--fields",
            "trade_date,price",
        ],
        ok(["trade_date", "price"], [["20261110", "29700.000000"]]),
    )
    assert status == 0 and "29700.000000" in out
    assert transport.bodies[0]["params"] == {
        "specification": "H100 SXM5 80GB",
        "trade_date": "20261110",
    }
    assert transport.bodies[0]["fields"] == ["trade_date", "price"]


def test_a_local_refusal_exits_2_without_a_request() -> None:
    status, _, err, transport, _ = run(["query", "index_daily", "--specification", "x"])
    assert status == 2 and "specification" in err and transport.requests == []
    status, _, err, _, _ = run(
        ["query", "index_daily", "--trade-date", "20261105", "--start-date", "20261101"]
    )
    assert status == 2 and "trade_date" in err


def test_a_refusal_by_the_service_exits_1_with_code_and_request_id() -> None:
    status, out, err, _, _ = run(
        ["query", "index_latest"], error(401, 40102, "invalid API key", request_id="req_cli")
    )
    assert status == 1 and out == ""
    assert "40102" in err and "req_cli" in err


def test_a_bad_key_or_base_url_exits_2_without_showing_the_key() -> None:
    status, out, err, transport, _ = run(["query", "index_latest", "--api-key", TEST_KEY + "\n"])
    assert status == 2 and out == "" and transport.requests == []
    assert "whitespace" in err and TEST_KEY not in err
    status, _, err, _, _ = run(["query", "index_latest", "--api-key", ""])
    assert status == 2 and "empty" in err
    status, _, err, _, _ = run(["query", "index_latest", "--base-url", "localhost:8080"])
    assert status == 2 and "scheme" in err


def test_the_api_key_help_recommends_the_environment_variable(
    capsys: pytest.CaptureFixture,
) -> None:
    assert main_(["query", "--help"], Client, io.StringIO(), io.StringIO()) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "--api-key API_KEY API key (default: $IQ_API_KEY, recommended:" in shown
    assert "visible in ps and the shell history" in shown


def test_datasets_and_describe_are_offline() -> None:
    status, out, _, transport, _ = run(["datasets"])
    assert status == 0 and out.splitlines()[0].startswith("index_basic")
    assert len(out.splitlines()) == len(Client.datasets())
    status, out, _, _, _ = run(["describe", "index_quote"])
    assert status == 0 and "specification" in out and "quote:read" in out
    assert transport.requests == []


def test_python_dash_m_entry_point() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "iq_client", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0 and "query" in result.stdout
    result = subprocess.run(
        [sys.executable, "-m", "iq_client", "query", "nope"], capture_output=True, text=True
    )
    assert result.returncode == 2


def test_the_plain_table_shows_dates_and_blanks() -> None:
    status, out, _, _, _ = run(
        ["query", "index_latest"],
        ok(DAILY, [["20261120", "Hardware_Index", "1009.853300", None, "1.206755", "0.119641"]]),
    )
    assert status == 0
    header, row = out.splitlines()
    assert header.split() == DAILY
    assert row.split() == ["2026-11-20", "Hardware_Index", "1009.853300", "1.206755", "0.119641"]
    status, out, _, _, _ = run(["query", "index_latest"], ok(DAILY, []))
    assert out == "(no rows)\n"


class _ClosedPipe(io.StringIO):
    """A stdout whose reader has gone away, as with `... | head`."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_ends_quietly() -> None:
    from iq_client.cli import main

    transport = FakeTransport(ok(DAILY, ROWS), membership=DEFAULT_MEMBERSHIP)
    err = io.StringIO()
    status = main(
        ["query", "index_daily", "--csv", "--api-key", TEST_KEY],
        client_factory=lambda **o: Client(transport=transport, sleep=lambda s: None, **o),
        stdout=_ClosedPipe(),
        stderr=err,
    )
    assert status == 0
    assert err.getvalue() == ""


# -- spreadsheet-safe CSV, --version, whoami -------------------------------------------

QUOTE = ["trade_date", "index_code", "specification", "weight", "price"]
HOSTILE_ROWS = [
    ["20261105", "GPU_Index", '=HYPERLINK("http://x.test")', "0.50000000", "-1.500000"],
    ["20261105", "GPU_Index", "@SUM(A1:A2)", "0.50000000", "29700.000000"],
]


def test_csv_is_spreadsheet_safe_by_default() -> None:
    status, out, _, _, _ = run(
        ["query", "index_quote", "--trade-date", "20261105", "--csv"], ok(QUOTE, HOSTILE_ROWS)
    )
    assert status == 0
    lines = out.split("\r\n")
    assert lines[1] == '2026-11-05,GPU_Index,"\'=HYPERLINK(""http://x.test"")",0.50000000,-1.500000'
    assert lines[2] == "2026-11-05,GPU_Index,'@SUM(A1:A2),0.50000000,29700.000000"


def test_raw_csv_turns_the_escaping_off() -> None:
    status, out, _, _, _ = run(
        ["query", "index_quote", "--trade-date", "20261105", "--raw-csv"],
        ok(QUOTE, HOSTILE_ROWS),
    )
    assert status == 0
    lines = out.split("\n")
    assert lines[1] == '2026-11-05,GPU_Index,"=HYPERLINK(""http://x.test"")",0.50000000,-1.500000'
    assert lines[2] == "2026-11-05,GPU_Index,@SUM(A1:A2),0.50000000,29700.000000"


def test_csv_flags_are_exclusive(capsys: pytest.CaptureFixture) -> None:
    status, _, _, transport, _ = run(["query", "index_latest", "--csv", "--raw-csv"])
    assert status == 2 and transport.requests == []
    assert "not allowed with" in capsys.readouterr().err


def test_csv_to_a_file_is_spreadsheet_safe(tmp_path) -> None:
    path = tmp_path / "quotes.csv"
    status, out, _, _, _ = run(
        ["query", "index_quote", "--trade-date", "20261105", "--csv", "-o", str(path)],
        ok(QUOTE, HOSTILE_ROWS),
    )
    assert status == 0 and out == ""
    assert "'@SUM(A1:A2)" in path.read_bytes().decode("utf-8")


def test_version() -> None:
    from iq_client import __version__

    status, out, err, transport, _ = run(["--version"])
    assert (status, out, err) == (0, f"iq-client {__version__}\n", "")
    result = subprocess.run(
        [sys.executable, "-m", "iq_client", "--version"], capture_output=True, text=True
    )
    assert result.returncode == 0 and result.stdout == f"iq-client {__version__}\n"


def test_no_command_is_a_usage_error() -> None:
    result = subprocess.run([sys.executable, "-m", "iq_client"], capture_output=True, text=True)
    assert result.returncode == 2 and "COMMAND" in result.stderr


def test_whoami() -> None:
    from fakes import membership

    status, out, _, transport, made = run(
        ["whoami", "--api-key", TEST_KEY], membership(), membership=None
    )
    assert status == 0 and made["api_key"] == TEST_KEY
    shown = {line.split("  ")[0]: line.split("  ", 1)[1].strip() for line in out.splitlines()}
    assert shown["identity"] == "key" and shown["tier"] == "pro"
    assert shown["data_cutoff"] == "2026-11-20"
    assert shown["calls a day"] == "40 of 10000 used"
    assert transport.requests[0].url.endswith("/api/v1/membership")
    status, out, _, _, _ = run(["whoami", "--json"], membership(), membership=None)
    assert status == 0 and json.loads(out)["data_cutoff"] == "20261120"
    status, _, err, _, _ = run(["whoami"], error(401, 40102, "invalid API key"), membership=None)
    assert status == 1 and "40102" in err


# -- as_of, published_at and sync (D17) -------------------------------------------------

PUBLISHED = "2026-11-20T10:15:30.123456Z"


def test_query_as_of_and_updated_since_flags() -> None:
    status, _, err, transport, _ = run(
        [
            "query",
            "index_daily",
            "--as-of",
            "2026-11-22T18:00:00+08:00",
            "--updated-since",
            "2026-11-21T00:00:00Z",
            "--end-date",
            "20261120",
            "--csv",
        ],
        ok(DAILY, ROWS),
    )
    assert status == 0, err
    assert transport.bodies[0]["params"] == {
        "as_of": "2026-11-22T18:00:00+08:00",
        "updated_since": "2026-11-21T00:00:00Z",
        "end_date": "20261120",
    }
    status, _, err, transport, _ = run(["query", "index_daily", "--as-of", "2026-11-22T18:00"])
    assert status == 2 and "no offset" in err and transport.requests == []


def test_published_at_is_shown_as_rfc_3339() -> None:
    row = ROWS[1][:4] + [None] + ROWS[1][4:] + [PUBLISHED]
    for flag in ("--json", "--csv", None):
        argv = ["query", "index_daily", "--fields", ",".join(FULL_DAILY), "--end-date", "20261120"]
        status, out, err, _, _ = run(argv + ([flag] if flag else []), ok(FULL_DAILY, [row]))
        assert status == 0, err
        assert PUBLISHED in out, flag


def test_sync_command(tmp_path) -> None:
    fields = ["trade_date", "index_code", "specification", "weight", "price", "published_at"]
    rows = [["20261120", "GPU_Index", "H100", "1.00000000", "20.000000", PUBLISHED]]
    path = tmp_path / "quotes.csv"
    status, out, err, transport, _ = run(
        [
            "sync",
            "index_quote",
            str(path),
            "--index-code",
            "GPU_Index",
            "--as-of",
            "2026-11-21T00:00:00Z",
            "--no-progress",
            "--api-key",
            TEST_KEY,
        ],
        ok(fields, rows),
    )
    assert status == 0, err
    assert transport.bodies[0]["params"] == {
        "index_code": "GPU_Index",
        "as_of": "2026-11-21T00:00:00.000000Z",
        "end_date": "20261120",
    }
    assert "full download (no local copy yet)" in out and "rows           1" in out
    assert path.read_text(encoding="utf-8").splitlines()[1].endswith(PUBLISHED)
    # a copy of other parameters: a usage error, nothing sent
    status, _, err, transport, _ = run(["sync", "index_quote", str(path), "--no-progress"])
    assert status == 2 and "full=True" in err and transport.requests == []
    # sync takes no --updated-since: it sets it
    status, _, _, _, _ = run(["sync", "index_quote", str(path), "--updated-since", "x"])
    assert status == 2

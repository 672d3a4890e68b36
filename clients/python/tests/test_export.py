"""CSV export: spreadsheet-safe by default, numbers never touched."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pandas as pd
import pytest

from iq_client import escape_formulas, to_csv

from fakes import DAILY, make_client, ok

QUOTE = ["trade_date", "index_code", "specification", "weight", "price"]
HOSTILE = [
    '=HYPERLINK("http://x.test","click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
    "H100 = fast",  # not at the start: harmless
]


def quotes(decimals: str = "float") -> pd.DataFrame:
    rows = [["20261105", "GPU_Index", spec, "0.100000", "-1.500000"] for spec in HOSTILE]
    client, _, _ = make_client(ok(QUOTE, rows))
    return client.index_quote(trade_date="20261105", decimals=decimals)


def cells(text: str) -> list:
    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("decimals", ["float", "decimal"])
def test_text_cells_are_escaped_numbers_are_not(decimals: str) -> None:
    frame = quotes(decimals)
    rows = cells(to_csv(frame))
    assert rows[0] == QUOTE
    assert [r[2] for r in rows[1:]] == ["'" + s for s in HOSTILE[:-1]] + ["H100 = fast"]
    for row in rows[1:]:
        assert row[0] == "2026-11-05" and row[1] == "GPU_Index"
        assert float(row[4]) == -1.5 and not row[4].startswith("'")  # a number stays one
    assert frame["specification"].tolist() == HOSTILE  # the frame itself is unchanged


def test_a_carriage_return_cannot_start_a_new_row() -> None:
    text = to_csv(quotes())
    assert text.count("\r\n") == len(HOSTILE) + 1  # CRLF line ends (RFC 4180)
    assert '"\'\r=1+1"' in text  # the cell holding a CR is quoted
    assert len(cells(text)) == len(HOSTILE) + 1


def test_raw_csv_keeps_every_value_as_sent() -> None:
    frame = quotes()
    frame = frame[~frame["specification"].str.contains("\r")]  # raw CSV: \n line ends
    text = to_csv(frame, spreadsheet_safe=False)
    assert "\r" not in text
    assert [r[2] for r in cells(text)[1:]] == [s for s in HOSTILE if "\r" not in s]


def test_negative_numbers_in_numeric_columns_stay_numbers() -> None:
    rows = [["20261119", "GPU_Index", "1007.074318", "23185.671000", "-1.608992", "-0.159514"]]
    for decimals in ("float", "decimal"):
        client, _, _ = make_client(ok(DAILY, rows))
        frame = client.index_daily(index_code="GPU_Index", decimals=decimals)
        escaped = escape_formulas(frame)
        assert escaped["change"].tolist() == frame["change"].tolist()
        line = to_csv(frame).splitlines()[1]
        assert line.endswith(",-1.608992,-0.159514"), line


def test_any_frame_text_columns_only() -> None:
    frame = pd.DataFrame(
        {
            "name": ["-minus", "=x", None, "plain", "@at"],
            "amount": [-1.5, 2.0, -3.0, 4.0, float("nan")],
            "count": [-1, 2, 3, 4, 5],
            "exact": [Decimal("-1.5")] * 5,
            "flag": [True, False, True, False, True],
        }
    )
    escaped = escape_formulas(frame)
    assert escaped["name"].tolist()[:2] == ["'-minus", "'=x"]
    assert escaped["name"].isna().tolist() == [False, False, True, False, False]
    assert escaped["name"].tolist()[3:] == ["plain", "'@at"]
    for name in ("amount", "count", "exact", "flag"):
        pd.testing.assert_series_equal(escaped[name], frame[name])
    assert to_csv(frame).splitlines()[1] == "'-minus,-1.5,-1,-1.5,True"


def test_to_csv_writes_to_a_file(tmp_path) -> None:
    path = tmp_path / "q.csv"
    assert to_csv(quotes(), str(path)) is None
    assert "'=HYPERLINK" in path.read_text(encoding="utf-8")

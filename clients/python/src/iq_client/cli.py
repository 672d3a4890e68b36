"""A small command line: list datasets, describe one, run a query.

Examples::

    python -m iq_client --version
    python -m iq_client whoami
    python -m iq_client datasets
    python -m iq_client describe index_daily
    python -m iq_client query index_daily --index-code GPU_Index --csv
    python -m iq_client query index_quote --trade-date 2026-11-05 --json -o quotes.json
    python -m iq_client query index_daily --as-of 2026-11-22T18:00:00+08:00 --csv
    python -m iq_client sync index_quote quotes.parquet --start-date 20250101

``--csv`` is spreadsheet-safe: text cells that a spreadsheet would run as a formula
(starting with ``=``, ``+``, ``-``, ``@``, tab or CR) get a leading ``'``; numbers are
never changed. ``--raw-csv`` writes every value exactly as sent.

The key comes from ``IQ_API_KEY`` (or ``--api-key``, which other users can see in
``ps`` and which lands in the shell history), the service from ``--base-url`` or
``IQ_BASE_URL``. Values are printed exactly as the service sent them (decimals are
never rounded through floats); dates as ``YYYY-MM-DD``; instants (``published_at``)
as RFC 3339 in UTC with microseconds.

``sync`` keeps a local copy of ``index_daily``, ``index_latest`` or ``index_quote``
up to date (see :meth:`iq_client.Client.sync`): the first run downloads everything,
later runs only what changed; it prints what it did.

Exit status: 0 success, 1 the service refused the query or could not be reached,
2 a usage error, a bad setting (a malformed key, a base URL without a scheme) or a
query refused locally.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from decimal import Decimal
from typing import IO, Any, Callable, Dict, List, Optional, Sequence

import pandas as pd

from ._version import __version__
from .catalogue import catalogue, dataset
from .client import DEFAULT_TIMEOUT, Client
from .dataset_sync import SYNC_DATASETS, SyncError, SyncResult
from .errors import IQError, LocalValidationError
from .export import to_csv
from .frames import TIMESTAMP_FORMAT
from .membership import Membership

__all__ = ["main", "build_parser"]

ClientFactory = Callable[..., Client]


def _all_param_names(datasets: Optional[Sequence[str]] = None) -> List[str]:
    names: List[str] = []
    for ds in catalogue().values():
        if datasets is not None and ds.api_name not in datasets:
            continue
        for param in ds.params:
            if param.name not in names:
                names.append(param.name)
    return names


def _sync_param_names() -> List[str]:
    """The filters a sync may be given: all but the instants, which it sets."""
    return [
        name for name in _all_param_names(SYNC_DATASETS) if name not in ("as_of", "updated_since")
    ]


def _connection_options() -> argparse.ArgumentParser:
    """The options that say how to reach the service (query, whoami)."""
    parent = argparse.ArgumentParser(add_help=False)
    connection = parent.add_argument_group("connection")
    connection.add_argument(
        "--api-key",
        help="API key (default: $IQ_API_KEY, recommended: a key given here is visible "
        "in ps and the shell history)",
    )
    connection.add_argument("--base-url", help="service URL (default: $IQ_BASE_URL)")
    connection.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per request"
    )
    connection.add_argument(
        "--max-retries", type=int, default=None, help="retries on 429/5xx (default 5)"
    )
    return parent


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(
        prog="python -m iq_client",
        description="Query the AI-hardware price index service.",
    )
    parser.add_argument(
        "--version", action="store_true", help="print the client's version and exit"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    connection = _connection_options()

    commands.add_parser("datasets", help="list the datasets (offline)")
    describe = commands.add_parser("describe", help="parameters and fields of a dataset (offline)")
    describe.add_argument("api_name", choices=list(catalogue()))

    whoami = commands.add_parser(
        "whoami",
        parents=[connection],
        help="the key's owner, tier, data cutoff, scopes and quota use (not counted)",
    )
    whoami.add_argument("--json", action="store_true", help="print the service's answer as JSON")

    query = commands.add_parser(
        "query", parents=[connection], help="run a query and print the rows"
    )
    query.add_argument("api_name", choices=list(catalogue()))
    filters = query.add_argument_group("filters (each dataset accepts its own)")
    _add_param_options(filters, _all_param_names())
    filters.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="any parameter by name (repeatable)",
    )
    query.add_argument("--fields", help="comma-separated columns (default: the dataset's)")
    query.add_argument("--limit", type=int, help="at most this many rows (default: all)")
    query.add_argument("--offset", type=int, default=0, help="skip this many rows")
    query.add_argument("--page-size", type=int, help="rows per request")
    output = query.add_mutually_exclusive_group()
    output.add_argument(
        "--csv",
        action="store_true",
        help="print CSV, spreadsheet-safe: text cells starting with = + - @ (or a tab "
        "or CR) get a leading ' so a spreadsheet does not run them as formulas",
    )
    output.add_argument(
        "--raw-csv",
        action="store_true",
        help="print CSV with every value exactly as sent (no ' escaping): for programs, "
        "not spreadsheets",
    )
    output.add_argument("--json", action="store_true", help="print a JSON array of rows")
    query.add_argument("-o", "--output", help="write to this file instead of stdout")
    query.add_argument("--progress", action="store_true", help="show a progress bar (tqdm)")

    sync = commands.add_parser(
        "sync",
        parents=[connection],
        help="keep a local copy of a dataset up to date (first run: everything; "
        "later runs: what changed)",
    )
    sync.add_argument("api_name", choices=list(SYNC_DATASETS))
    sync.add_argument("path", help="the data file; its state goes to PATH.sync.json")
    sync_filters = sync.add_argument_group("filters that define the copy")
    _add_param_options(sync_filters, _sync_param_names())
    sync.add_argument(
        "--format",
        choices=["parquet", "csv"],
        help="file format (default: csv for a .csv path, else parquet, which needs pyarrow)",
    )
    sync.add_argument(
        "--as-of", help="bring the copy to this instant (RFC 3339 with an offset; default now)"
    )
    sync.add_argument("--full", action="store_true", help="download everything again")
    sync.add_argument("--page-size", type=int, help="rows per request")
    sync.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    return parser


def _add_param_options(group: Any, names: Sequence[str]) -> None:
    """One ``--name`` option per parameter, read back by :func:`_params`."""
    for name in names:
        group.add_argument(
            "--" + name.replace("_", "-"),
            dest="param_" + name,
            metavar="VALUE",
            help=f"the {name} parameter",
        )


def _params(args: argparse.Namespace, names: Sequence[str]) -> Dict[str, str]:
    params: Dict[str, str] = {}
    for name in names:
        value = getattr(args, "param_" + name)
        if value is not None:
            params[name] = value
    for pair in getattr(args, "param", []):
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise LocalValidationError(f"--param wants NAME=VALUE, got {pair!r}")
        if name in params:
            raise LocalValidationError(f"parameter {name!r} is given twice")
        params[name] = value
    return params


def _plain(value: Any) -> Any:
    """A cell as JSON: exact decimal strings, ISO dates, null for missing values."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, pd.Timestamp):
        if value.tzinfo is not None:  # an instant: published_at
            return value.tz_convert("UTC").strftime(TIMESTAMP_FORMAT)
        return value.strftime("%Y-%m-%d")
    if isinstance(value, float) and value != value:
        return None
    if value is pd.NaT or value is pd.NA:
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def _for_display(frame: pd.DataFrame) -> pd.DataFrame:
    """Dates as YYYY-MM-DD, instants as RFC 3339 (UTC) and missing values as blanks,
    for the plain table."""
    shown = frame.copy()
    for name in shown.columns:
        if isinstance(shown[name].dtype, pd.DatetimeTZDtype):
            shown[name] = shown[name].dt.tz_convert("UTC").dt.strftime(TIMESTAMP_FORMAT)
        elif pd.api.types.is_datetime64_any_dtype(shown[name]):
            shown[name] = shown[name].dt.strftime("%Y-%m-%d")
    return shown.astype(object).where(shown.notna(), "")


def _write(frame: pd.DataFrame, args: argparse.Namespace, out: IO[str]) -> None:
    if args.csv or args.raw_csv:
        to_csv(frame, out, spreadsheet_safe=not args.raw_csv)
    elif args.json:
        rows = [
            {name: _plain(value) for name, value in zip(frame.columns, row)}
            for row in frame.itertuples(index=False, name=None)
        ]
        json.dump(rows, out, ensure_ascii=False, indent=1)
        out.write("\n")
    elif frame.empty:
        out.write("(no rows)\n")
    else:
        out.write(_for_display(frame).to_string(index=False) + "\n")


def _describe(api_name: str, out: IO[str]) -> None:
    ds = dataset(api_name)
    out.write(f"{ds.api_name}: {ds.description}\n")
    out.write(f"scope {ds.scope}; sorted by {', '.join(ds.sort_key)}; ")
    out.write("member delay applies\n" if ds.delayed else "no member delay\n")
    out.write("\nparameters:\n")
    out.write(ds.params_frame().to_string(index=False) + "\n")
    out.write("\nfields:\n")
    out.write(ds.fields_frame().to_string(index=False) + "\n")


def _show_sync(result: SyncResult, out: IO[str]) -> None:
    kind = "full download" if result.full else "update"
    out.write(
        f"{result.api_name}: {kind} ({result.reason}) to {result.path}\n"
        f"as_of          {result.as_of}\n"
    )
    if result.updated_since is not None:
        out.write(f"updated_since  {result.updated_since}\n")
    out.write(
        f"received       {result.received}\n"
        f"replaced       {result.replaced}\n"
        f"rows           {result.rows}\n"
    )


def _show_membership(who: Membership, as_json: bool, out: IO[str]) -> None:
    if as_json:
        json.dump(who.raw, out, ensure_ascii=False, indent=1)
        out.write("\n")
        return
    rows: List[Any] = [("identity", who.identity)]
    if who.user is not None:
        rows.append(("user", f"{who.user.username} ({who.user.role}, id {who.user.id})"))
    rows += [
        ("tier", who.tier),
        ("delay_days", who.delay_days),
        ("data_cutoff", who.data_cutoff.isoformat() if who.data_cutoff else "none"),
        ("indexes", ", ".join(who.indexes) or "none"),
    ]
    if who.key is not None:
        key = who.key
        rows += [
            ("key", f"{key.name} (id {key.id})"),
            ("scopes", ", ".join(key.scopes) or "none"),
            (
                "index_codes",
                "all of the tier" if key.index_codes is None else ", ".join(key.index_codes),
            ),
            ("expires_at", key.expires_at.isoformat() if key.expires_at else "never"),
        ]
    q = who.quota
    minute = (
        f"{q.per_minute}" if q.used_minute is None else f"{q.used_minute} of {q.per_minute} used"
    )
    day = f"{q.per_day}" if q.used_day is None else f"{q.used_day} of {q.per_day} used"
    rows += [("calls a minute", minute), ("calls a day", day), ("rows a page", q.max_rows)]
    if who.protection is not None:
        rows.append(("keyless limit a minute", who.protection.per_minute))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        out.write(f"{name:<{width}}  {value}\n")


def main(
    argv: Optional[Sequence[str]] = None,
    *,
    client_factory: ClientFactory = Client,
    stdout: Optional[IO[str]] = None,
    stderr: Optional[IO[str]] = None,
) -> int:
    """Runs the command line; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.version:
            out.write(f"iq-client {__version__}\n")
            return 0
        if args.command is None:
            parser.error("a COMMAND is required (datasets, describe, whoami, query, sync)")
    except SystemExit as stop:  # --help, or a usage error argparse already printed
        return int(stop.code or 0)
    if args.command == "datasets":
        for ds in catalogue().values():
            out.write(f"{ds.api_name:<16} {ds.description}\n")
        return 0
    if args.command == "describe":
        _describe(args.api_name, out)
        return 0
    try:  # building the client sends nothing: a failure here is a bad setting
        client = client_factory(
            api_key=args.api_key,
            base_url=args.base_url,
            timeout=args.timeout,
            max_retries=args.max_retries,
        )
    except (IQError, ValueError) as error:
        err.write(f"error: {error}\n")
        return 2
    try:
        with client:
            if args.command == "whoami":
                _show_membership(client.whoami(), args.json, out)
                return 0
            if args.command == "sync":
                result = client.sync(
                    args.api_name,
                    args.path,
                    params=_params(args, _sync_param_names()),
                    format=args.format,
                    full=args.full,
                    as_of=args.as_of,
                    page_size=args.page_size,
                    progress=not args.no_progress,
                )
                _show_sync(result, out)
                return 0
            frame = client.query(
                args.api_name,
                _params(args, _all_param_names()),
                args.fields,
                limit=args.limit,
                offset=args.offset,
                page_size=args.page_size,
                decimals="decimal",
                progress=args.progress,
            )
    except LocalValidationError as error:
        err.write(f"error: {error.message}\n")
        return 2
    except (SyncError, ImportError) as error:
        err.write(f"error: {error}\n")
        return 2
    except OSError as error:  # the local copy could not be read or written
        err.write(f"error: {error}\n")
        return 1
    except IQError as error:
        err.write(f"error: {error}\n")
        return 1
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as file:
            _write(frame, args, file)
    else:
        try:
            _write(frame, args, out)
        except BrokenPipeError:
            # The reader went away (`... | head`): stop quietly, as Unix tools do, and
            # keep Python from complaining again when it flushes stdout at exit.
            if out is sys.stdout:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    return 0

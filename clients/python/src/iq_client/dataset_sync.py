"""Keeping a local copy of a dataset up to date (decision D17): :meth:`Client.sync`.

The first run downloads the whole dataset (every field, ``published_at`` included),
every page asked ``as_of`` one instant, so rows that arrive during the pull cannot
shift the pages, and writes the rows and a small state file beside them
(``<path>.sync.json``) that records that instant. Each later run asks only for what
became visible to the key in ``(as_of of the last run, now]`` (``updated_since`` and
``as_of``) and merges it in:

* ``index_daily``: a returned row replaces the local row of its ``(trade_date,
  index_code)``;
* ``index_latest``: a returned row replaces the local row of its ``index_code`` (the
  copy holds each index's latest day, as the dataset does);
* ``index_quote``: the unit is the day. A returned ``(trade_date, index_code)`` day
  replaces that day's local rows whole, so a specification an import dropped
  disappears.

The service counts a row visible at the later of its publication and, for a key
with a delay, the moment its ``trade_date`` entered the key's window, so a key with a
delay misses nothing either. What a key may see (tier, delay, indexes) is recorded
too: when it changes, rows published long ago may become visible, and the next run
downloads everything again.

Files are written atomically (a temporary file in the same folder, then a rename):
the data file first, then the state file. A run that stops half way leaves the
previous copy and state, and the next run asks again from the recorded instant
(merging is idempotent). Run one sync at a time per copy.

Formats: ``"csv"`` is the service's own CSV (D18: a header row, RFC 4180, CRLF, values
exactly as sent, ``null`` empty; never escaped for spreadsheets). ``"parquet"`` needs
``pyarrow`` (``pip install 'iq-client[parquet]'``) and keeps exact types: dates as
``date32``, decimals as ``decimal128(38, scale)``, ``published_at`` as
``timestamp[us, UTC]``. :func:`read_synced` reads either back as a typed DataFrame.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import email.utils
import json
import logging
import os
import sys
import tempfile
from typing import (
    IO,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import pandas as pd

from . import arrow
from ._core import ClientCore, Plan, wire_for
from ._sansio import Flow, Sleep, Work
from ._version import __version__
from .catalogue import Dataset, dataset
from .errors import APIError, LocalValidationError
from .frames import DateMode, DecimalMode, check_modes, to_frame
from .membership import Membership
from .paging import Page, csv_line
from .validation import (
    ParamsArg,
    ValidQuery,
    check_int,
    instant_text,
    normalise_instant,
    parse_rfc3339,
    validate_query,
)

__all__ = [
    "SETTLE_POLL",
    "SETTLE_LIMIT",
    "SYNC_DATASETS",
    "SyncFormat",
    "SyncResult",
    "SyncError",
    "SyncJob",
    "read_synced",
    "state_path_for",
]

log = logging.getLogger("iq_client")

#: How often a sync asks the service's clock while it waits for its ``as_of`` to pass
#: (:meth:`SyncJob.wait_for_clock`), in seconds, and how long it waits at most.
SETTLE_POLL = 0.25
SETTLE_LIMIT = 3.0
#: The datasets :meth:`Client.sync` keeps (those with ``as_of`` / ``updated_since``).
SYNC_DATASETS = ("index_daily", "index_latest", "index_quote")
#: The file format of a local copy.
SyncFormat = Literal["parquet", "csv"]
#: The layout of the state file; a file of another version is refused.
STATE_VERSION = 1
STATE_SUFFIX = ".sync.json"
#: ``published_at`` and the recorded instants: RFC 3339 in UTC with microseconds.

PathArg = Union[str, "os.PathLike[str]"]


class SyncError(ValueError):
    """A local copy that cannot be brought up to date as asked: its state file names
    another dataset, other parameters, another format or another service, or it
    cannot be read. Pass ``full=True`` (or another path) to download afresh."""


@dataclasses.dataclass(frozen=True)
class SyncResult:
    """What one :meth:`Client.sync` run did.

    Attributes:
        api_name: the dataset.
        path: the data file.
        state_path: the state file (``<path>.sync.json``).
        format: ``"parquet"`` or ``"csv"``.
        full: whether this run downloaded everything (first run, ``full=True``, a
            missing data file, changed fields or entitlements); see ``reason``.
        reason: why (``"incremental"`` for an update).
        as_of: the instant the copy now stands at (RFC 3339, UTC), recorded in the
            state file; the next run asks for what changed after it.
        updated_since: the instant this run asked changes after (``None`` for a
            full download).
        received: rows the service sent in this run.
        replaced: local rows removed because the service sent their key (or, for
            ``index_quote``, their day) again.
        rows: rows in the local copy now.
        request_ids: ``request_id`` of every page, for support.
    """

    api_name: str
    path: str
    state_path: str
    format: str
    full: bool
    reason: str
    as_of: str
    updated_since: Optional[str]
    received: int
    replaced: int
    rows: int
    request_ids: Tuple[str, ...]


def state_path_for(path: PathArg) -> str:
    """The state file of the local copy at ``path``: ``<path>.sync.json``."""
    return os.fspath(path) + STATE_SUFFIX


def _utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


# -- formats ------------------------------------------------------------------------


def _wire_from_cell(kind: str, cell: str) -> Optional[str]:
    # CSV holds text: an empty cell is null, except in a text column.
    return None if cell == "" and kind != "text" else cell


def _write_csv(file: IO[str], fields: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    file.write(csv_line(fields))
    for row in rows:
        file.write(csv_line(row))


def _read_csv(path: str, ds: Dataset) -> Tuple[List[str], List[List[Any]]]:
    with open(path, encoding="utf-8", newline="") as file:
        reader = csv.reader(file)
        fields = next(reader, [])
        kinds = [_kind(ds, name) for name in fields]
        rows = []
        for row in reader:
            if len(row) != len(fields):
                raise SyncError(
                    f"{path}, line {reader.line_num}: {len(row)} cells for {len(fields)} "
                    "columns; pass full=True to download afresh"
                )
            rows.append([_wire_from_cell(k, c) for k, c in zip(kinds, row)])
    return fields, rows


def _kind(ds: Dataset, name: str) -> str:
    field = ds.field(name)
    return field.type if field is not None else "text"


def _require_parquet() -> Any:
    """``pyarrow.parquet``, or an ImportError saying how to install it."""
    arrow.require("format='parquet'")
    import pyarrow.parquet

    return pyarrow.parquet


def _write_parquet(
    path: str, ds: Dataset, fields: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    _write_table(path, arrow.from_wire(ds, fields, rows))


def _write_table(path: str, table: Any) -> None:
    _require_parquet().write_table(table, path)


def _read_parquet(path: str, ds: Dataset) -> Tuple[List[str], List[List[Any]]]:
    table = _require_parquet().read_table(path)
    return list(table.column_names), arrow.wire_rows(ds, table)


def _read_rows(path: str, ds: Dataset, format: str) -> Tuple[List[str], List[List[Any]]]:
    return _read_parquet(path, ds) if format == "parquet" else _read_csv(path, ds)


def _write_rows(
    path: str, ds: Dataset, format: str, fields: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    if format == "parquet":
        _atomic_write(path, lambda tmp: _write_parquet(tmp, ds, fields, rows))
    else:

        def write(tmp: str) -> None:
            with open(tmp, "w", encoding="utf-8", newline="") as file:
                _write_csv(file, fields, rows)

        _atomic_write(path, write)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _atomic_write(path: str, write: Callable[[str], None]) -> None:
    """Writes ``path`` through ``write(temporary path)`` and a rename in the same
    folder, so a reader sees the old file or the new one, never a part."""
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder
    )
    os.close(handle)
    try:
        write(temporary)
        with open(temporary, "rb+") as file:
            os.fsync(file.fileno())
        try:
            mode = os.stat(path).st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


# -- merging --------------------------------------------------------------------------


def _positions(fields: Sequence[str], names: Sequence[str]) -> List[int]:
    return [list(fields).index(name) for name in names]


def merge(
    api_name: str,
    fields: Sequence[str],
    old: Sequence[Sequence[Any]],
    new: Sequence[Sequence[Any]],
) -> Tuple[List[List[Any]], int]:
    """The local rows ``old`` updated with the service's ``new`` rows, and how many
    old rows were removed:

    * ``index_daily``: rows keyed by ``(trade_date, index_code)``; sorted by it;
    * ``index_latest``: rows keyed by ``index_code``, replaced in place, new indexes
      appended (the service's display order is kept);
    * ``index_quote``: whole ``(trade_date, index_code)`` days replaced (a day the
      service sent loses every old row, dropped specifications included); sorted by
      ``trade_date, index_code, specification``.
    """
    if api_name == "index_quote":
        day = _positions(fields, ["trade_date", "index_code"])
        days = {tuple(row[p] for p in day) for row in new}
        kept = [list(row) for row in old if tuple(row[p] for p in day) not in days]
        rows = kept + [list(row) for row in new]
        order = _positions(fields, ["trade_date", "index_code", "specification"])
        rows.sort(key=lambda row: tuple(row[p] for p in order))
        return rows, len(old) - len(kept)
    names = ["index_code"] if api_name == "index_latest" else ["trade_date", "index_code"]
    key = _positions(fields, names)
    new_keys = {tuple(row[p] for p in key) for row in new}
    replaced = sum(1 for row in old if tuple(row[p] for p in key) in new_keys)
    merged: Dict[Tuple[Any, ...], List[Any]] = {}
    for row in list(old) + list(new):  # a key already there keeps its place
        merged[tuple(row[p] for p in key)] = list(row)
    rows = list(merged.values())
    if api_name != "index_latest":
        rows.sort(key=lambda row: tuple(row[p] for p in key))
    return rows, replaced


# -- progress -------------------------------------------------------------------------


class _LineProgress:
    """A progress line on stderr for when tqdm is not installed: rewritten in place
    on a terminal, one line at the end otherwise."""

    def __init__(self, desc: str, stream: Optional[IO[str]] = None) -> None:
        self.desc = desc
        self.stream = stream if stream is not None else sys.stderr
        self.count = 0
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, rows: int) -> None:
        self.count += rows
        if self.live:
            self.stream.write(f"\r{self.desc}: {self.count:,} rows")
            self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
        else:
            self.stream.write(f"{self.desc}: {self.count:,} rows\n")
        self.stream.flush()


def _progress_bar(desc: str) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _LineProgress(desc)
    return tqdm(desc=desc, unit="row")


# -- one run --------------------------------------------------------------------------


def _format_for(path: str, format: Optional[str]) -> str:
    if format is None:
        return "csv" if path.lower().endswith(".csv") else "parquet"
    if format not in ("parquet", "csv"):
        raise LocalValidationError(f"format must be 'parquet' or 'csv', got {format!r}")
    return format


def _entitlements(who: Membership) -> Dict[str, Any]:
    return {
        "identity": who.identity,
        "tier": who.tier,
        "delay_days": who.delay_days,
        "indexes": list(who.indexes),
    }


def _http_date(text: Optional[str]) -> Optional[_dt.datetime]:
    if not text:
        return None
    try:
        moment = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None or moment.tzinfo is None:
        return None
    return moment.astimezone(_dt.timezone.utc)


class SyncJob:
    """One sync run without the I/O to the service, shared by :class:`Client` and
    :class:`AsyncClient`: checks the arguments and the state file (at creation,
    before any request), decides what to ask (:meth:`begin`), collects the pages
    (:meth:`add`), then merges and writes the files (:meth:`finish`). :meth:`run` is
    the whole run as a flow (see :mod:`iq_client._sansio`) for a client to drive."""

    def __init__(
        self,
        core: ClientCore,
        api_name: str,
        path: PathArg,
        *,
        params: ParamsArg = None,
        format: Optional[str] = None,
        full: bool = False,
        as_of: Any = None,
        page_size: Optional[int] = None,
        progress: bool = True,
        clock: Optional[Callable[[], _dt.datetime]] = None,
    ) -> None:
        if api_name not in SYNC_DATASETS:
            raise LocalValidationError(
                f"sync keeps {', '.join(SYNC_DATASETS)}; not {api_name!r} "
                "(query it whole instead: it has no as_of/updated_since)"
            )
        self.core = core
        self.dataset: Dataset = dataset(api_name)
        self.path = os.fspath(path)
        self.state_path = state_path_for(self.path)
        self.format = _format_for(self.path, format)
        if self.format == "parquet":
            _require_parquet()
        given = dict(params or {})
        for managed in ("as_of", "updated_since"):
            if given.get(managed) is not None:
                raise LocalValidationError(
                    f"sync sets {managed} itself; pass as_of=... to sync() to choose the "
                    "instant, not in params"
                )
            given.pop(managed, None)
        self.fields = list(self.dataset.field_names)
        self.query: ValidQuery = validate_query(api_name, given, self.fields)
        self.explicit_as_of = (
            None if as_of is None else normalise_instant("as_of", as_of, allow_date=False)
        )
        self.full = bool(full)
        self.page_size = (
            core.page_size if page_size is None else check_int("page_size", page_size, 1)
        )
        self.progress = bool(progress)
        self.clock = clock or _utcnow
        self.started = self.clock()
        self.state = self._load_state()
        #: The pages received: Arrow tables (pyarrow installed) or JSON rows.
        self.tables: List[Any] = []
        self.rows: List[List[Any]] = []
        self.received = 0
        self.request_ids: List[str] = []
        self.reason = ""
        self.as_of = ""
        self.updated_since: Optional[str] = None
        #: The instant the service's clock must have passed before the first page is
        #: asked (see :meth:`wait_for_clock`); ``None``: nothing to wait for.
        self.fixed_after: Optional[_dt.datetime] = None
        self._waited = 0.0
        self.entitlements: Dict[str, Any] = {}
        self._bar: Any = None

    def run(self) -> Flow[SyncResult]:
        """The run: ask the service what the key sees (and its clock, until it has
        passed ``as_of``), page through what changed, then merge and write the files
        (a :class:`iq_client._sansio.Work` step: the asyncio client runs it in a
        worker thread)."""
        core = self.core
        envelope = yield from core._send(core._membership_request())
        query = self.begin(core._membership(envelope), envelope.date)
        while self.wait_for_clock(query, envelope.date):
            yield Sleep(SETTLE_POLL)
            envelope = yield from core._send(core._membership_request())
        try:
            if query is not None:
                yield from core._walk(query, self.plan(query), self.add)
        finally:
            self.close()
        result: SyncResult = yield Work(self.finish)
        return result

    # -- the state file -------------------------------------------------------------

    def _load_state(self) -> Optional[Dict[str, Any]]:
        try:
            with open(self.state_path, encoding="utf-8") as file:
                state = json.load(file)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            if self.full:
                return None
            raise SyncError(
                f"cannot read the sync state {self.state_path}: {err}; pass full=True "
                "to download afresh"
            ) from err
        if self.full:
            return None
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise SyncError(
                f"{self.state_path} is not a sync state this client knows (version "
                f"{STATE_VERSION}); pass full=True to download afresh"
            )
        mine = {
            "api_name": self.dataset.api_name,
            "params": dict(self.query.params),
            "format": self.format,
            "base_url": self.core.base_url,
        }
        for name, value in mine.items():
            if state.get(name) != value:
                raise SyncError(
                    f"the local copy {self.path} was made with {name}={state.get(name)!r}, "
                    f"not {value!r}; use another path, or pass full=True to replace it"
                )
        try:
            parse_rfc3339(str(state.get("as_of")))
        except ValueError as err:
            raise SyncError(f"{self.state_path}: {err}; pass full=True") from err
        return state

    def _state(self, rows: int) -> Dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "client": f"iq-client {__version__}",
            "api_name": self.dataset.api_name,
            "params": dict(self.query.params),
            "fields": list(self.fields),
            "format": self.format,
            "data_file": os.path.basename(self.path),
            "base_url": self.core.base_url,
            "as_of": self.as_of,
            "entitlements": self.entitlements,
            "rows": rows,
            "last_run": {
                "kind": "full" if self.updated_since is None else "incremental",
                "reason": self.reason,
                "updated_since": self.updated_since,
                "started_at": instant_text(self.started),
                "request_ids": list(self.request_ids),
            },
        }

    # -- the run --------------------------------------------------------------------

    def begin(self, who: Membership, server_date: Optional[str] = None) -> Optional[ValidQuery]:
        """The query to page through (``None``: nothing to ask), from what the
        service says of the key (``who``) and its ``Date`` header.

        ``as_of`` is the end of the second the service's ``Date`` names (``…:07`` gives
        ``…:07.999999Z``): every row published in that second is in, whatever this
        machine's clock says (an import published at ``…:07.141646`` was missed when the
        instant came from the ``Date``'s whole second). That instant is fixed only once
        the service's clock has passed it, so the pages are asked after the service
        says a later second (:meth:`wait_for_clock`; at most about a second). Without a
        ``Date``, the moment the sync started by this machine's clock. The ``as_of``
        given to :meth:`Client.sync` is taken when it is not later."""
        served = _http_date(server_date)
        if served is None:
            moment = self.started
        else:
            moment = served + _dt.timedelta(microseconds=999_999)
        if self.explicit_as_of is not None:
            asked = parse_rfc3339(self.explicit_as_of)
            if asked > moment:
                # The service answers an instant still to come with the data of the
                # moment it answers: not fixed, and recording it would skip whatever
                # is published until then.
                log.warning(
                    "iq_client: sync of %s: as_of %s is in the future; syncing to now (%s)",
                    self.path,
                    self.explicit_as_of,
                    instant_text(moment),
                )
            else:
                moment = asked
        if served is not None and moment >= served:
            self.fixed_after = moment
        self.as_of = instant_text(moment)
        self.entitlements = _entitlements(who)
        state = self.state
        if self.full:
            self.reason = "full=True"
        elif state is None:
            self.reason = "no local copy yet"
        elif not os.path.exists(self.path):
            self.reason = "the data file is missing"
        elif state.get("fields") != self.fields:
            self.reason = "the dataset's fields changed"
        elif state.get("entitlements") != self.entitlements:
            self.reason = "what the key may see changed"
        else:
            self.reason = "incremental"
            previous = str(state["as_of"])
            stands = parse_rfc3339(previous)
            if stands >= moment:
                # Nothing can have changed in (previous, now]: an empty window (two runs
                # within the second of the service's Date), or a clock set back.
                if stands > moment:
                    log.warning(
                        "iq_client: sync of %s: the copy already stands at %s, after %s "
                        "(a clock set back?); nothing asked",
                        self.path,
                        previous,
                        self.as_of,
                    )
                self.as_of = previous
                self.updated_since = previous
                return None
            self.updated_since = previous
        params = dict(self.query.params)
        params["as_of"] = self.as_of
        if self.updated_since is not None:
            params["updated_since"] = self.updated_since
        query = dataclasses.replace(self.query, params=params)
        if self.core._needs_pin(query):
            query = self.core._pin(query, who)
        if self.progress:
            self._bar = _progress_bar(f"{self.dataset.api_name} ({self.reason})")
        return query

    def wait_for_clock(self, query: Optional[ValidQuery], server_date: Optional[str]) -> bool:
        """Whether to wait :data:`SETTLE_POLL` seconds and ask the service's clock again
        before the pages (the caller sleeps, then passes the next answer's ``Date``):
        until that ``Date`` names a second after ``as_of``, so the data as of it can no
        longer change, or :data:`SETTLE_LIMIT` seconds have been waited. Nothing to
        wait for without a query, or with an answer without a ``Date``."""
        if query is None or self.fixed_after is None or self._waited >= SETTLE_LIMIT:
            return False
        served = _http_date(server_date)
        if served is None or served > self.fixed_after:
            return False
        self._waited += SETTLE_POLL
        return True

    def plan(self, query: ValidQuery) -> Plan:
        """How to page through ``query`` (from :meth:`begin`): every row, exact
        values, ``end_date`` already pinned."""
        return Plan(
            query=query,
            modes={"decimals": "decimal", "dates": "string"},
            page_size=self.page_size,
            limit=None,
            offset=0,
            progress=False,
            pin=False,
            wire=wire_for("frame"),
        )

    def add(self, page: Union[Page, arrow.ArrowPage]) -> None:
        """Takes one page of the answer: its Arrow table, or its JSON rows."""
        if page.fields != self.fields:
            raise APIError(
                f"the service answered the fields {page.fields}, not {self.fields}",
                request_id=page.request_id,
            )
        if isinstance(page, arrow.ArrowPage):
            self.tables.append(page.table)
            self.received += page.returned
        else:
            self.rows.extend(page.items)
            self.received += page.returned
        if page.request_id:
            self.request_ids.append(page.request_id)
        if self._bar is not None:
            self._bar.update(page.returned)

    def close(self) -> None:
        """Closes the progress bar (also after a failure)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def _table(self) -> Any:
        """The Arrow pages received as one table (the schema's when there was none)."""
        pa = arrow.require("an Arrow answer")
        if not self.tables:
            return arrow.schema(self.dataset, self.fields).empty_table()
        return pa.concat_tables(self.tables)

    def _received_rows(self) -> List[List[Any]]:
        """The rows received, as wire values."""
        if self.tables:
            return arrow.wire_rows(self.dataset, self._table())
        return self.rows

    def finish(self) -> SyncResult:
        """Merges the rows received into the local copy and writes the data file,
        then the state file (each atomically)."""
        self.close()
        ds = self.dataset
        if self.updated_since is None and self.format == "parquet" and not self.rows:
            # A whole copy in Parquet from Arrow pages: written as received, in the
            # service's order, which is the copy's (see merge); no value touched.
            table = self._table()
            _atomic_write(self.path, lambda tmp: _write_table(tmp, table))
            rows: Sequence[Any] = range(table.num_rows)
            replaced = 0
        elif self.updated_since is None:
            rows, replaced = merge(ds.api_name, self.fields, [], self._received_rows())
            _write_rows(self.path, ds, self.format, self.fields, rows)
        else:
            fields, old = _read_rows(self.path, ds, self.format)
            if fields != self.fields:
                raise SyncError(
                    f"{self.path} has the columns {fields}, not {self.fields}; pass "
                    "full=True to download afresh"
                )
            rows, replaced = merge(ds.api_name, self.fields, old, self._received_rows())
            if self.received:
                _write_rows(self.path, ds, self.format, self.fields, rows)
        state = json.dumps(self._state(len(rows)), indent=2, ensure_ascii=False) + "\n"

        def write_state(tmp: str) -> None:
            with open(tmp, "w", encoding="utf-8") as file:
                file.write(state)

        _atomic_write(self.state_path, write_state)
        return SyncResult(
            api_name=ds.api_name,
            path=self.path,
            state_path=self.state_path,
            format=self.format,
            full=self.updated_since is None,
            reason=self.reason,
            as_of=self.as_of,
            updated_since=self.updated_since,
            received=self.received,
            replaced=replaced,
            rows=len(rows),
            request_ids=tuple(self.request_ids),
        )


def read_synced(
    path: PathArg,
    *,
    decimals: DecimalMode = "float",
    dates: DateMode = "datetime",
) -> pd.DataFrame:
    """The local copy at ``path`` (made by :meth:`Client.sync`) as a typed DataFrame,
    as a query would return it: dates ``datetime64``, decimals ``float64`` (or exact
    ``Decimal`` with ``decimals="decimal"``), ``published_at`` ``datetime64[ns, UTC]``.
    ``df.attrs`` holds ``api_name``, ``params`` and ``as_of`` from the state file.

    Raises:
        SyncError: no readable state file beside ``path``.
        ImportError: a Parquet copy without pyarrow installed.
    """
    check_modes(decimals, dates)
    name = os.fspath(path)
    state_file = state_path_for(name)
    try:
        with open(state_file, encoding="utf-8") as file:
            state: Mapping[str, Any] = json.load(file)
        ds = dataset(str(state["api_name"]))
        format = str(state["format"])
    except (OSError, ValueError, KeyError, TypeError, LocalValidationError) as err:
        raise SyncError(f"no readable sync state {state_file}: {err}") from err
    fields, rows = _read_rows(name, ds, format)
    frame = to_frame(ds, fields, rows, decimals=decimals, dates=dates)
    frame.attrs.update(
        {
            "api_name": ds.api_name,
            "params": dict(state.get("params") or {}),
            "as_of": state.get("as_of"),
        }
    )
    return frame

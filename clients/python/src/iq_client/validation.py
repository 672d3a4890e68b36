"""Local checks of a query before it is sent (spec 4.1, decisions D1 and D17).

A request refused here raises :class:`iq_client.LocalValidationError` and costs
neither a round trip nor quota. The checks mirror the service's: unknown parameters
and fields, duplicate fields, malformed or impossible dates, ``start_date`` after
``end_date``, ``trade_date`` together with a range, non-string or empty values,
instants (``as_of``, ``updated_since``) that are not RFC 3339 with an offset, and bad
``limit``/``offset``. Dates are normalised to ``YYYYMMDD``; ``None`` values are
dropped (spec: unused filters are omitted, never sent as empty strings).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from .catalogue import Dataset, dataset
from .errors import LocalValidationError

__all__ = [
    "ValidQuery",
    "validate_query",
    "normalise_date",
    "normalise_instant",
    "rfc3339",
    "yyyymmdd",
    "merge_params",
    "check_int",
    "FieldsArg",
    "ParamsArg",
]

#: ``fields`` may be a sequence of names or one comma-separated string.
FieldsArg = Union[str, Sequence[str], None]
#: Parameter names to values: text, or a date-like object for date parameters.
ParamsArg = Optional[Mapping[str, Any]]

#: ASCII digits only (``\d`` would take other scripts' digits); no trailing newline.
_DATE = re.compile(r"([0-9]{4})-?([0-9]{2})-?([0-9]{2})")
_MAX_VALUE_CHARS = 500
#: RFC 3339 date-time (its section 5.6): date, ``T``, time with seconds, an optional
#: fraction, and an offset (``Z`` or ``+hh:mm`` / ``-hh:mm``). As the service's parser
#: (chrono's ``parse_from_rfc3339``) does, ``t`` or a space is taken for ``T``, ``z``
#: for ``Z`` and a minus sign (U+2212) for ``-``.
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    "([Zz]|[+\\-\u2212]([0-9]{2}):([0-9]{2}))"
)
#: The same without the offset: a local time, which the service refuses.
_LOCAL_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?")


@dataclass(frozen=True)
class ValidQuery:
    """A query that passed the local checks, ready to send."""

    dataset: Dataset
    params: Dict[str, str]
    fields: List[str]

    @property
    def api_name(self) -> str:
        return self.dataset.api_name

    def body(self, limit: int, offset: int) -> Dict[str, Any]:
        """The JSON body of one page request."""
        body: Dict[str, Any] = {"api_name": self.api_name}
        if self.params:
            body["params"] = dict(self.params)
        if self.fields:
            body["fields"] = list(self.fields)
        body["limit"] = limit
        body["offset"] = offset
        return body

    def result_fields(self) -> List[str]:
        """The columns the answer will have."""
        return list(self.fields) if self.fields else list(self.dataset.default_fields)


def normalise_date(name: str, value: Any) -> str:
    """A date parameter as ``YYYYMMDD``.

    Accepts ``YYYYMMDD`` / ``YYYY-MM-DD`` text, :class:`datetime.date`,
    :class:`datetime.datetime` and ``pandas.Timestamp``.

    Raises:
        LocalValidationError: for anything else, or a date that does not exist.
    """
    if isinstance(value, (_dt.date, _dt.datetime)):  # pandas.Timestamp is a datetime
        if not isinstance(value.year, int):  # pandas.NaT
            raise LocalValidationError(f"parameter {name!r} is a missing date (NaT)")
        return yyyymmdd(value)
    if not isinstance(value, str):
        raise LocalValidationError(
            f"parameter {name!r} must be a date (YYYYMMDD, YYYY-MM-DD or a date object), "
            f"not {type(value).__name__}"
        )
    match = _DATE.fullmatch(value)
    separators = value.count("-")
    if not match or separators not in (0, 2):
        raise LocalValidationError(
            f"parameter {name!r} must be a date as YYYYMMDD or YYYY-MM-DD, got {value!r}"
        )
    year, month, day = (int(part) for part in match.groups())
    try:
        _dt.date(year, month, day)
    except ValueError:
        raise LocalValidationError(
            f"parameter {name!r} is not a real calendar date: {value!r}"
        ) from None
    return f"{year:04d}{month:02d}{day:02d}"


def _naive_refused(name: str) -> LocalValidationError:
    return LocalValidationError(
        f"parameter {name!r} is a naive datetime (no time zone); the service needs an "
        "instant with an offset: pass an aware datetime, e.g. "
        "datetime.now(timezone.utc) or dt.replace(tzinfo=ZoneInfo('Asia/Shanghai')), "
        "or a string such as '2026-11-20T18:00:00+08:00'"
    )


def rfc3339(moment: _dt.datetime) -> str:
    """An aware ``moment`` as RFC 3339 in UTC: ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``
    (microseconds only when not zero; a ``pandas.Timestamp``'s nanoseconds are cut).

    Raises:
        ValueError: ``moment`` is naive.
    """
    if moment.utcoffset() is None:
        raise ValueError("a naive datetime has no instant")
    utc = moment.astimezone(_dt.timezone.utc)
    text = (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}"
        f"T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}"
    )
    if utc.microsecond:
        text += f".{utc.microsecond:06d}"
    return text + "Z"


def _check_rfc3339(name: str, text: str) -> bool:
    """Whether ``text`` is an RFC 3339 date-time with an offset; one of that shape
    whose parts are out of range raises."""
    match = _RFC3339.fullmatch(text)
    if not match:
        return False
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    off_hour, off_minute = match.group(9), match.group(10)
    try:
        _dt.date(year, month, day)
    except ValueError:
        raise LocalValidationError(
            f"parameter {name!r} is not a real calendar date: {text!r}"
        ) from None
    # 60 is a leap second, which RFC 3339 allows.
    if hour > 23 or minute > 59 or second > 60:
        raise LocalValidationError(f"parameter {name!r} is not a real time of day: {text!r}")
    if off_hour is not None and (int(off_hour) > 23 or int(off_minute) > 59):
        raise LocalValidationError(f"parameter {name!r} has an impossible offset: {text!r}")
    return True


def normalise_instant(name: str, value: Any, *, allow_date: bool) -> str:
    """An instant parameter (``as_of``, ``updated_since``; decision D17) as sent.

    * text: an RFC 3339 timestamp with an offset (``2026-11-20T18:00:00+08:00``,
      ``2026-11-20T10:00:00.5Z``), sent as given; with ``allow_date`` (``as_of``)
      also a date, ``YYYYMMDD`` or ``YYYY-MM-DD``, which the service reads as the end
      of that day in its time zone;
    * an aware :class:`datetime.datetime` or ``pandas.Timestamp``: sent as RFC 3339
      in UTC (see :func:`rfc3339`);
    * with ``allow_date``, a :class:`datetime.date`: sent as ``YYYY-MM-DD``.

    Raises:
        LocalValidationError: a naive datetime, a local time without offset, a date
            where only an instant is accepted, or anything else.
    """
    what = (
        "an RFC 3339 timestamp with an offset ('2026-11-20T18:00:00+08:00', "
        "'2026-11-20T10:00:00Z'), an aware datetime"
        + (", or a date (YYYYMMDD, YYYY-MM-DD or a date object)" if allow_date else "")
    )
    if isinstance(value, _dt.datetime):  # pandas.Timestamp is a datetime
        if not isinstance(value.year, int):  # pandas.NaT
            raise LocalValidationError(f"parameter {name!r} is a missing instant (NaT)")
        if value.utcoffset() is None:
            raise _naive_refused(name)
        try:
            return rfc3339(value)
        except (OverflowError, ValueError) as err:
            raise LocalValidationError(f"parameter {name!r}: {err}") from None
    if isinstance(value, _dt.date):
        if allow_date:
            return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
        raise LocalValidationError(
            f"parameter {name!r} must be an instant with an offset, not a date: {what}"
        )
    if not isinstance(value, str):
        raise LocalValidationError(f"parameter {name!r} must be {what}; not {type(value).__name__}")
    if _check_rfc3339(name, value):
        return value
    if _DATE.fullmatch(value) and value.count("-") in (0, 2):
        if not allow_date:
            raise LocalValidationError(
                f"parameter {name!r} must be an instant with an offset, not a date "
                f"({value!r}): {what}"
            )
        normalise_date(name, value)  # a real calendar date, else it raises
        return value
    if _LOCAL_TIME.fullmatch(value):
        raise LocalValidationError(
            f"parameter {name!r} has no offset: {value!r}; the service needs one, 'Z' or "
            "'+hh:mm', and seconds (e.g. '2026-11-20T18:00:00+08:00')"
        )
    raise LocalValidationError(f"parameter {name!r} must be {what}; got {value!r}")


def yyyymmdd(day: _dt.date) -> str:
    """``day`` as ``YYYYMMDD``, zero-padded for any year (``strftime("%Y")`` is not
    on every platform)."""
    return f"{day.year:04d}{day.month:02d}{day.day:02d}"


def _fields(ds: Dataset, fields: FieldsArg) -> List[str]:
    if fields is None:
        return []
    if isinstance(fields, str):
        names = [part.strip() for part in fields.split(",") if part.strip()]
    else:
        names = list(fields)
    for name in names:
        if not isinstance(name, str):
            raise LocalValidationError(
                f"field names must be strings, got {type(name).__name__} {name!r}"
            )
    unknown = [n for n in names if ds.field(n) is None]
    if unknown:
        raise LocalValidationError(
            f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"for {ds.api_name}; expected any of: {', '.join(ds.field_names)}"
        )
    seen = set()
    for name in names:
        if name in seen:
            raise LocalValidationError(f"field {name!r} is listed twice")
        seen.add(name)
    return names


def _params(ds: Dataset, params: Mapping[str, Any]) -> Dict[str, str]:
    unknown = [n for n in params if ds.param(n) is None]
    if unknown:
        accepted = ", ".join(ds.param_names) or "(none)"
        raise LocalValidationError(
            f"unknown parameter{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))} for {ds.api_name}; accepted: {accepted}"
        )
    out: Dict[str, str] = {}
    for name, value in params.items():
        if value is None:
            continue  # an unused filter is omitted
        param = ds.param(name)
        assert param is not None
        if param.is_date:
            text = normalise_date(name, value)
        elif param.is_instant:
            text = normalise_instant(name, value, allow_date=param.role == "as_of")
        elif isinstance(value, str):
            text = value
        else:
            raise LocalValidationError(
                f"parameter {name!r} must be a string, not {type(value).__name__}"
            )
        if text == "":
            raise LocalValidationError(
                f"parameter {name!r} is empty; omit it (or pass None) to leave it unset"
            )
        if len(text) > _MAX_VALUE_CHARS or "\x00" in text:
            raise LocalValidationError(
                f"parameter {name!r} is longer than {_MAX_VALUE_CHARS} characters "
                "or contains a NUL character"
            )
        out[name] = text
    if "trade_date" in out and ("start_date" in out or "end_date" in out):
        raise LocalValidationError(
            "trade_date cannot be combined with start_date/end_date: ask for one day or for a range"
        )
    start, end = out.get("start_date"), out.get("end_date")
    if start and end and start > end:
        raise LocalValidationError(f"start_date {start} is later than end_date {end}")
    return out


def check_int(name: str, value: Any, minimum: int) -> int:
    """An integer option (``limit``, ``offset``, ``page_size``) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise LocalValidationError(
            f"{name} must be an integer of at least {minimum}, got {value!r}"
        )
    checked: int = value
    return checked


def merge_params(params: ParamsArg, keyword_params: Mapping[str, Any]) -> Dict[str, Any]:
    """``params`` and keyword parameters together; a name given both ways is refused."""
    merged: Dict[str, Any] = dict(params or {})
    for name, value in keyword_params.items():
        if name in merged:
            raise LocalValidationError(
                f"parameter {name!r} is given both in params and as a keyword"
            )
        merged[name] = value
    return merged


def validate_query(api_name: str, params: ParamsArg = None, fields: FieldsArg = None) -> ValidQuery:
    """Checks a query against the catalogue and normalises it.

    Raises:
        LocalValidationError: when the service would refuse the query with 40001.
    """
    ds = dataset(api_name)
    if params is not None and not isinstance(params, Mapping):
        raise LocalValidationError(
            f"params must be a mapping of names to values, not {type(params).__name__}"
        )
    return ValidQuery(dataset=ds, params=_params(ds, params or {}), fields=_fields(ds, fields))


def instant_text(moment: _dt.datetime) -> str:
    """An aware ``datetime`` as the service writes instants: RFC 3339 in UTC with
    microseconds (``2026-11-23T10:15:30.123456Z``)."""
    return moment.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_rfc3339(text: str) -> _dt.datetime:
    """An RFC 3339 timestamp with an offset as an aware UTC ``datetime`` (the
    fraction cut to microseconds; a leap second read as :59.999999).

    Raises:
        ValueError: for any other text.
    """
    match = _RFC3339.fullmatch(text)
    if not match:
        raise ValueError(f"not an RFC 3339 timestamp with an offset: {text!r}")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    fraction = (match.group(7) or ".")[1:7].ljust(6, "0")
    micro = int(fraction)
    if second == 60:
        second, micro = 59, 999999
    offset = _dt.timedelta(0)
    if match.group(9) is not None:
        offset = _dt.timedelta(hours=int(match.group(9)), minutes=int(match.group(10)))
        if match.group(8)[0] in "-\u2212":
            offset = -offset
    moment = _dt.datetime(
        year, month, day, hour, minute, second, micro, tzinfo=_dt.timezone(offset)
    )
    return moment.astimezone(_dt.timezone.utc)

"""The dataset catalogue: parameters and fields of every dataset, known offline.

``catalogue.json`` beside this module equals, as JSON values (formatting aside), the
output of the service's ``iq-service catalogue`` command: one source of truth for the
service's validation, its docs and this client. The service's test suite compares the
two and fails when they differ; regenerate the file with
``python clients/python/scripts/update_catalogue.py``.

Nothing here sends a request::

    >>> import iq_client
    >>> iq_client.list_datasets()  # doctest: +NORMALIZE_WHITESPACE
    ['index_basic', 'index_daily', 'index_weekly', 'index_monthly', 'index_latest',
     'index_quote', 'index_revisions', 'trade_calendar']
    >>> iq_client.list_params("index_daily")["name"].tolist()
    ['index_code', 'trade_date', 'start_date', 'end_date', 'as_of', 'updated_since']
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Dict, List, Mapping, Optional, Tuple

import pandas as pd

from .errors import LocalValidationError

__all__ = [
    "Param",
    "Field",
    "Dataset",
    "catalogue",
    "dataset",
    "list_datasets",
    "list_params",
    "list_fields",
    "DATE_ROLES",
    "INSTANT_ROLES",
]

#: Parameter roles that carry a date.
DATE_ROLES = frozenset({"trade_date", "start_date", "end_date"})
#: Parameter roles that carry an instant (decision D17): ``as_of`` (an RFC 3339
#: timestamp with an offset, or a date meaning the end of that day in the service's
#: time zone), ``updated_since`` and ``published_after`` (``index_revisions``'s
#: ``since``, decision D21), both an RFC 3339 timestamp with an offset only.
INSTANT_ROLES = frozenset({"as_of", "updated_since", "published_after"})


@dataclass(frozen=True)
class Param:
    """An input parameter of a dataset.

    Attributes:
        name: the key in ``params``.
        role: what it filters on: ``index_code``, ``trade_date``, ``start_date``,
            ``end_date``, ``exact`` (exact, case-sensitive text match), ``as_of``
            (the data as it stood at an instant), ``updated_since`` (rows that
            became visible after an instant) or ``published_after`` (rows published
            after an instant).
        description: what it means.
    """

    name: str
    role: str
    description: str

    @property
    def is_date(self) -> bool:
        """Whether the value is a date (``YYYYMMDD`` or ``YYYY-MM-DD``)."""
        return self.role in DATE_ROLES

    @property
    def is_instant(self) -> bool:
        """Whether the value is an instant (``as_of``, ``updated_since``, ``since``)."""
        return self.role in INSTANT_ROLES


@dataclass(frozen=True)
class Field:
    """A column a dataset can return.

    Attributes:
        name: the column name.
        type: the wire type: ``text``, ``date`` (``YYYYMMDD``), ``integer``,
            ``boolean``, ``decimal`` (a fixed-point string) or ``timestamp`` (RFC 3339
            in UTC with microseconds, e.g. ``2026-11-23T10:15:30.123456Z``).
        scale: fractional digits of a ``decimal`` field, else ``None``.
        description: what it holds.
        default: whether it is returned when ``fields`` is omitted.
    """

    name: str
    type: str
    scale: Optional[int]
    description: str
    default: bool

    @property
    def dtype(self) -> str:
        """The pandas dtype of this column in a query's DataFrame (default options)."""
        return {
            "date": "datetime64[ns]",
            "timestamp": "datetime64[ns, UTC]",
            "decimal": "float64",
            "integer": "int64",
            "boolean": "bool",
        }.get(self.type) or _text_dtype()


@dataclass(frozen=True)
class Dataset:
    """One dataset of ``POST /api/v1/query``."""

    api_name: str
    description: str
    scope: str
    delayed: bool
    detail_only: bool
    params: Tuple[Param, ...]
    fields: Tuple[Field, ...]
    default_fields: Tuple[str, ...]
    sort_key: Tuple[str, ...]

    @property
    def param_names(self) -> List[str]:
        """Names of the accepted parameters, in catalogue order."""
        return [p.name for p in self.params]

    @property
    def field_names(self) -> List[str]:
        """Names of all fields, in catalogue order."""
        return [f.name for f in self.fields]

    def param(self, name: str) -> Optional[Param]:
        """The parameter called ``name``, or ``None``."""
        return next((p for p in self.params if p.name == name), None)

    def field(self, name: str) -> Optional[Field]:
        """The field called ``name``, or ``None``."""
        return next((f for f in self.fields if f.name == name), None)

    def params_frame(self) -> pd.DataFrame:
        """The parameters as a table: name, role, description."""
        return pd.DataFrame(
            [(p.name, p.role, p.description) for p in self.params],
            columns=["name", "role", "description"],
        )

    def fields_frame(self) -> pd.DataFrame:
        """The fields as a table: name, type, scale, default, dtype, description."""
        rows = [(f.name, f.type, f.scale, f.default, f.dtype, f.description) for f in self.fields]
        frame = pd.DataFrame(
            rows,
            columns=["name", "type", "scale", "default", "dtype", "description"],
        )
        frame["scale"] = frame["scale"].astype("Int64")
        return frame


@lru_cache(maxsize=1)
def _text_dtype() -> str:
    # pandas < 3 stores text as "object"; pandas 3 infers its "str" dtype.
    return str(pd.Series(["text"]).dtype)


def _role(raw: Any) -> str:
    # Unit roles serialise as a string; `Exact { column }` as {"exact": {...}}.
    if isinstance(raw, str):
        return raw
    if isinstance(raw, Mapping) and len(raw) == 1:
        return str(next(iter(raw)))
    raise ValueError(f"unexpected parameter role in the catalogue: {raw!r}")


def _dataset(raw: Mapping[str, Any]) -> Dataset:
    defaults = tuple(raw["default_fields"])
    return Dataset(
        api_name=raw["api_name"],
        description=raw["description"],
        scope=raw["scope"],
        delayed=bool(raw["delayed"]),
        detail_only=bool(raw["detail_only"]),
        params=tuple(
            Param(name=p["name"], role=_role(p["role"]), description=p["description"])
            for p in raw["params"]
        ),
        fields=tuple(
            Field(
                name=f["name"],
                type=f["type"],
                scale=f.get("scale"),
                description=f["description"],
                default=f["name"] in defaults,
            )
            for f in raw["fields"]
        ),
        default_fields=defaults,
        sort_key=tuple(raw["sort_key"]),
    )


def parse_catalogue(text: str) -> Dict[str, Dataset]:
    """Parses catalogue JSON (the ``iq-service catalogue`` format)."""
    return {d["api_name"]: _dataset(d) for d in json.loads(text)}


@lru_cache(maxsize=1)
def catalogue() -> Mapping[str, Dataset]:
    """The packaged catalogue: every dataset by ``api_name``, in service order."""
    text = resources.files(__package__).joinpath("catalogue.json").read_text("utf-8")
    return parse_catalogue(text)


def list_datasets() -> List[str]:
    """The ``api_name`` of every dataset."""
    return list(catalogue())


def dataset(api_name: str) -> Dataset:
    """The dataset called ``api_name``.

    Raises:
        LocalValidationError: for an unknown name.
    """
    found = catalogue().get(api_name) if isinstance(api_name, str) else None
    if found is None:
        raise LocalValidationError(
            f"unknown api_name {api_name!r}; expected one of: {', '.join(catalogue())}"
        )
    return found


def list_params(api_name: str) -> pd.DataFrame:
    """The input parameters of a dataset (no request is sent)."""
    return dataset(api_name).params_frame()


def list_fields(api_name: str) -> pd.DataFrame:
    """The fields of a dataset, with wire type, default flag and resulting pandas
    dtype (no request is sent)."""
    return dataset(api_name).fields_frame()

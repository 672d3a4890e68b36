"""``AvailableIndices``: the indexes the caller sees (``index_basic``), with their
currency, base day and value, and the latest day with a value."""

from __future__ import annotations

from datetime import date
from typing import Any

from openbb_core.provider.abstract.fetcher import Fetcher
from openbb_core.provider.standard_models.available_indices import (
    AvailableIndicesData,
    AvailableIndicesQueryParams,
)
from pydantic import Field, field_validator

from openbb_iq import service

FIELDS = [
    "index_code",
    "index_name",
    "currency",
    "unit",
    "base_date",
    "base_value",
    "has_quotes",
    "latest_trade_date",
    "description",
]


class IqAvailableIndicesQueryParams(AvailableIndicesQueryParams):
    """Every index this key may see; nothing to choose."""


class IqAvailableIndicesData(AvailableIndicesData):
    """One index."""

    __alias_dict__ = {"symbol": "index_code", "name": "index_name"}

    unit: str | None = Field(default=None, description="What a value is counted in.")
    base_date: date | None = Field(default=None, description="The base day.")
    base_value: float | None = Field(default=None, description="The value on the base day.")
    has_quotes: bool | None = Field(
        default=None, description="Whether quotes make it (IndexConstituents answers)."
    )
    latest_trade_date: date | None = Field(
        default=None, description="The latest day with a value this key may see."
    )
    description: str | None = Field(default=None, description="What the index measures.")

    @field_validator("base_date", "latest_trade_date", mode="before")
    @classmethod
    def _wire_date(cls, value: Any) -> Any:
        """``YYYYMMDD`` as a date; the service's empty text as none."""
        if isinstance(value, str):
            return None if not value else date(int(value[:4]), int(value[4:6]), int(value[6:]))
        return value


class IqAvailableIndicesFetcher(
    Fetcher[IqAvailableIndicesQueryParams, list[IqAvailableIndicesData]]
):
    """Reads ``index_basic``."""

    require_credentials = False

    @staticmethod
    def transform_query(params: dict[str, Any]) -> IqAvailableIndicesQueryParams:
        return IqAvailableIndicesQueryParams(**params)

    @staticmethod
    def extract_data(
        query: IqAvailableIndicesQueryParams,
        credentials: dict[str, str] | None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        return service.query(credentials, "index_basic", fields=FIELDS)

    @staticmethod
    def transform_data(
        query: IqAvailableIndicesQueryParams, data: list[dict[str, Any]], **kwargs: Any
    ) -> list[IqAvailableIndicesData]:
        return [IqAvailableIndicesData.model_validate(row) for row in data]

"""``IndexConstituents``: the quotes an index is computed from on a day
(``index_quote``): each specification with its weight and price. The day is ``date``,
by default the latest day with a value the key may see. The composite
(``Hardware_Index``) is made of indexes, not quotes, and has none."""

from __future__ import annotations

from datetime import date as dateType
from typing import Any

from openbb_core.app.model.abstract.error import OpenBBError
from openbb_core.provider.abstract.fetcher import Fetcher
from openbb_core.provider.standard_models.index_constituents import (
    IndexConstituentsData,
    IndexConstituentsQueryParams,
)
from openbb_core.provider.utils.errors import EmptyDataError
from pydantic import Field, field_validator

from openbb_iq import service


class IqIndexConstituentsQueryParams(IndexConstituentsQueryParams):
    """One index's quotes on one day."""

    date: dateType | None = Field(
        default=None, description="The day; default the latest day with a value."
    )


class IqIndexConstituentsData(IndexConstituentsData):
    """One quote: a specification, its weight in the index and its price."""

    __alias_dict__ = {"symbol": "specification"}

    trade_date: dateType = Field(description="The day of the quote.")
    weight: float = Field(description="The specification's weight (a day's sum to 1).")
    price: float = Field(description="The quoted price, in the index's currency.")

    @field_validator("trade_date", mode="before")
    @classmethod
    def _wire_date(cls, value: Any) -> Any:
        if isinstance(value, str):
            return dateType(int(value[:4]), int(value[4:6]), int(value[6:]))
        return value


class IqIndexConstituentsFetcher(
    Fetcher[IqIndexConstituentsQueryParams, list[IqIndexConstituentsData]]
):
    """Reads ``index_quote`` of one index and day."""

    require_credentials = False

    @staticmethod
    def transform_query(params: dict[str, Any]) -> IqIndexConstituentsQueryParams:
        return IqIndexConstituentsQueryParams(**params)

    @staticmethod
    def extract_data(
        query: IqIndexConstituentsQueryParams,
        credentials: dict[str, str] | None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        code = service.index_code(credentials, query.symbol)
        day = service.wire_date(query.date)
        if day is None:
            basics = service.query(
                credentials,
                "index_basic",
                {"index_code": code},
                ["has_quotes", "latest_trade_date"],
            )
            if not basics or not basics[0]["has_quotes"]:
                raise OpenBBError(f"{code} is made of other indexes, not of quotes")
            day = basics[0]["latest_trade_date"] or None
            if day is None:
                raise EmptyDataError(f"no day of {code} this key may see")
        fields = ["trade_date", "specification", "weight", "price"]
        rows = service.query(
            credentials, "index_quote", {"index_code": code, "trade_date": day}, fields
        )
        if not rows:
            raise EmptyDataError(f"no quotes of {code} on {day} for this key")
        return [{**row, "name": row["specification"]} for row in rows]

    @staticmethod
    def transform_data(
        query: IqIndexConstituentsQueryParams, data: list[dict[str, Any]], **kwargs: Any
    ) -> list[IqIndexConstituentsData]:
        return [IqIndexConstituentsData.model_validate(row) for row in data]

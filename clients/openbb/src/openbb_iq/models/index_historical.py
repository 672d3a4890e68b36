"""``IndexHistorical``: an index's values, daily (``index_daily``) or per week or month
(``index_weekly``, ``index_monthly``: the period's last, first, highest and lowest
daily value). ``close`` is the index value; floats of the service's six decimals."""

from __future__ import annotations

from typing import Any, Literal

from openbb_core.provider.abstract.fetcher import Fetcher
from openbb_core.provider.standard_models.index_historical import (
    IndexHistoricalData,
    IndexHistoricalQueryParams,
)
from openbb_core.provider.utils.errors import EmptyDataError
from pydantic import Field

from openbb_iq import service

#: The dataset of each interval.
DATASETS = {"1d": "index_daily", "1W": "index_weekly", "1M": "index_monthly"}


class IqIndexHistoricalQueryParams(IndexHistoricalQueryParams):
    """The history of one index; ``interval`` chooses daily, weekly or monthly values."""

    interval: Literal["1d", "1W", "1M"] = Field(
        default="1d",
        description="Daily values (1d), or per ISO week (1W) or calendar month (1M).",
    )


class IqIndexHistoricalData(IndexHistoricalData):
    """One day's (or period's) value of an index."""

    __alias_dict__ = {
        "symbol": "index_code",
        "date": "trade_date",
        "close": "index_value",
        "open": "open_value",
        "high": "high_value",
        "low": "low_value",
    }

    weighted_price: float | None = Field(
        default=None, description="The weighted price of the index's quotes (daily values)."
    )
    pre_value: float | None = Field(
        default=None, description="The previous day's (or period's) index value."
    )
    change: float | None = Field(default=None, description="close - pre_value.")
    pct_change: float | None = Field(
        default=None, description="The change in percent of pre_value (1.5 is 1.5%)."
    )


class IqIndexHistoricalFetcher(Fetcher[IqIndexHistoricalQueryParams, list[IqIndexHistoricalData]]):
    """Reads ``index_daily``, ``index_weekly`` or ``index_monthly`` of one index."""

    require_credentials = False

    @staticmethod
    def transform_query(params: dict[str, Any]) -> IqIndexHistoricalQueryParams:
        return IqIndexHistoricalQueryParams(**params)

    @staticmethod
    def extract_data(
        query: IqIndexHistoricalQueryParams,
        credentials: dict[str, str] | None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        params = {"index_code": service.index_code(credentials, query.symbol)}
        for name in ("start_date", "end_date"):
            value = service.wire_date(getattr(query, name))
            if value is not None:
                params[name] = value
        rows = service.query(credentials, DATASETS[query.interval], params)
        if not rows:
            raise EmptyDataError(f"no values of {params['index_code']} in that range")
        return rows

    @staticmethod
    def transform_data(
        query: IqIndexHistoricalQueryParams, data: list[dict[str, Any]], **kwargs: Any
    ) -> list[IqIndexHistoricalData]:
        return [IqIndexHistoricalData.model_validate(row) for row in data]

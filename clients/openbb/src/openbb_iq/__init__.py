"""The OpenBB Platform provider of the AI-hardware price index service (``iq``).

Installed, it adds ``provider="iq"`` to three of the Platform's standard commands:

* ``obb.index.price.historical("GPU_Index", provider="iq")``: an index's values
  (``IndexHistorical``; daily, or weekly and monthly with ``interval``);
* ``obb.index.available(provider="iq")``: the indexes (``AvailableIndices``);
* ``obb.index.constituents("GPU_Index", provider="iq")``: the quotes an index is
  computed from on a day (``IndexConstituents``).

Credentials: ``iq_api_key`` (a key of the service; without one, what a visitor sees)
and ``iq_base_url`` (the service, e.g. ``https://indexes.example.com``).
"""

from openbb_core.provider.abstract.provider import Provider

from openbb_iq.models.available_indices import IqAvailableIndicesFetcher
from openbb_iq.models.index_constituents import IqIndexConstituentsFetcher
from openbb_iq.models.index_historical import IqIndexHistoricalFetcher

__all__ = ["iq_provider"]

iq_provider = Provider(
    name="iq",
    description="AI-hardware price indexes: servers, GPU rental, GPUs, DRAM, SSDs, CPUs, "
    "optical interconnect and a composite hardware index, with the quotes behind them.",
    website="https://github.com/",
    credentials=["api_key", "base_url"],
    fetcher_dict={
        "IndexHistorical": IqIndexHistoricalFetcher,
        "AvailableIndices": IqAvailableIndicesFetcher,
        "IndexConstituents": IqIndexConstituentsFetcher,
    },
    repr_name="AI-hardware price indexes",
    instructions="Set iq_api_key to a key from the service's website (Account, API keys) "
    "and iq_base_url to the service's address. Without a key, public indexes with the "
    "visitor's delay.",
)

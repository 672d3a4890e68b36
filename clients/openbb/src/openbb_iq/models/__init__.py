"""The fetchers of the ``iq`` provider, one standard model each."""

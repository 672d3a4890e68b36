"""The package version (kept in one place; ``pyproject.toml`` reads it)."""

__version__ = "0.5.2"

"""Catalog errors: each is a ``UserError`` (one line saying what to do) the CLI prints as is."""

from __future__ import annotations

from pipeline.core.errors import UserError

EXIT_BUSY = 3
"""Exit code when the catalog is held by another process (retrying later can succeed)."""


class CatalogError(UserError):
    """The catalog cannot do what was asked (missing file, bad SQL, wrong schema version...)."""


class CatalogBusy(CatalogError):
    """Another process holds the catalog: a second writer, or a long reader past the wait limit."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=EXIT_BUSY)

"""Packages from a catalog, ready for ``TaskEnv``: ``load_packages(catalog, where=...)``."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

from pipeline.catalog.selection import StatusFilter
from pipeline.catalog.store import Catalog
from pipeline.core.package import TaskPackage


def load_packages(catalog: Catalog | Path | str, where: str | None = None, *, status: StatusFilter = "accepted",
                  limit: int | None = None) -> list[TaskPackage]:
    """The packages of ``catalog`` (a path, opened read-only, or an open ``Catalog``) with
    ``status`` (accepted by default; ``rejected`` or ``all``) for which ``where`` holds (one SQL
    boolean over the ``packages`` columns, e.g. ``"capability = 'multi-turn'"`` or
    ``"id = 'pkg-…'"``), in catalog row order, at most ``limit``. Rows without a package (a
    generation failure) are left out.

    A list, read at once: the catalog file is let go before this returns, so a run writing to it
    in another process is never kept waiting while an agent plays the packages. A bad ``where``
    or status raises ``CatalogError``; a path that holds no catalog, ``CatalogError`` too.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be at least 0, got {limit}")
    if isinstance(catalog, Catalog):
        return _read(catalog, where, status, limit)
    with Catalog.open(catalog, read_only=True) as opened:
        return _read(opened, where, status, limit)


def _read(catalog: Catalog, where: str | None, status: StatusFilter, limit: int | None) -> list[TaskPackage]:
    with catalog.selection(status, where) as selection:
        return list(islice(selection.packages(), limit))

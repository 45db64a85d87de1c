"""A selection of catalog rows for an exporter to read: the SQL and a read-only connection.

``Catalog.selection(status, where)`` opens one; the export formats (``pipeline.interop.export``)
read it, either with DuckDB itself (``COPY`` over ``sql``) or row by row (``records``,
``packages``). The columns (Hugging Face ``datasets``-ready): ``id``, ``capability``, ``workflow``,
``difficulty``, ``services`` (list of strings), ``request`` (text), ``score`` and ``package``
(the full package as JSON).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, get_args

import duckdb

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.guard import parse_where
from pipeline.core.package import TaskPackage, load_package

EXPORT_COLUMNS = ("id", "capability", "workflow", "difficulty", "services", "request", "score", "package")
StatusFilter = Literal["accepted", "rejected", "all"]


@dataclass(frozen=True)
class Selection:
    """The rows to export: ``sql`` is a SELECT of ``EXPORT_COLUMNS`` (``package`` typed JSON),
    ordered by catalog row, over ``con``."""

    con: duckdb.DuckDBPyConnection
    sql: str

    def records(self, batch_size: int = 1000) -> Iterator[dict[str, Any]]:
        """The rows as dicts, ``package`` parsed into a dict (None for a generation failure)."""
        cursor = self.con.execute(self.sql)
        while batch := cursor.fetchmany(batch_size):
            for row in batch:
                record = dict(zip(EXPORT_COLUMNS, row, strict=True))
                record["package"] = json.loads(record["package"]) if record["package"] else None
                yield record

    def packages(self) -> Iterator[TaskPackage]:
        """The selected packages, parsed (rows without a package are skipped)."""
        for record in self.records():
            if record["package"] is not None:
                yield load_package(record["package"])


def selection_sql(status: StatusFilter, where: str | None) -> str:
    """SELECT of the export columns from ``packages`` rows with ``status`` (unless ``all``) for
    which ``where`` (one SQL boolean over ``packages`` columns) holds, ordered by row."""
    if status not in get_args(StatusFilter):
        raise CatalogError(f"unknown status filter {status!r}; choose one of: {', '.join(get_args(StatusFilter))}")
    conditions = [] if status == "all" else [f"status = '{status}'"]
    if where is not None:
        conditions.append(f"(\n{parse_where(where)}\n)")  # line breaks: a trailing `--` comments nothing out
    clause = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    return f"SELECT {', '.join(EXPORT_COLUMNS)} FROM packages{clause} ORDER BY row_id"

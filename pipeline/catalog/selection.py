"""A selection of catalog rows for an exporter to read: the SQL and a read-only connection.

``Catalog.selection(status, where)`` opens one; the export formats (``pipeline.interop.export``)
read it, either with DuckDB itself (``COPY`` over ``sql``) or row by row (``records``,
``packages``). The columns (Hugging Face ``datasets``-ready): ``id``, ``capability``, ``workflow``,
``difficulty``, ``services`` (list of strings), ``request`` (text), ``score`` and ``package``
(the full package as JSON).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

import duckdb

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.guard import parse_where

if TYPE_CHECKING:
    from pipeline.core.package import TaskPackage

PACKAGE_ID = re.compile(r"pkg-[0-9a-f]{16}")
"""A package id as the catalog stores it: ``pkg-`` and 16 lowercase hex digits (the content hash)."""

EXPORT_COLUMNS = ("id", "capability", "workflow", "difficulty", "services", "request", "score", "package")
StatusFilter = Literal["accepted", "rejected", "all"]


def check_package_id(value: object, where: str) -> str:
    """``value`` if it is a package id (``PACKAGE_ID``), else ``CatalogError`` naming ``where`` it came from."""
    if not isinstance(value, str) or not PACKAGE_ID.fullmatch(value):
        raise CatalogError(f"{where}: package id {value!r} is not of the form pkg-<16 hex digits>; the row was "
                           "altered outside synth: leave it out with --where or fix the catalog")
    return value


@dataclass(frozen=True)
class Selection:
    """The rows to export: ``sql`` is a SELECT of ``EXPORT_COLUMNS`` (``package`` typed JSON),
    ordered by catalog row, over ``con``. ``on_row``, when set, is told how many rows ``records``
    (or ``packages``) has yielded so far, after each row."""

    con: duckdb.DuckDBPyConnection
    sql: str
    on_row: Callable[[int], None] | None = field(default=None, compare=False)

    def count(self) -> int:
        """How many rows the selection holds."""
        row = self.con.execute(f"SELECT count(*) FROM ({self.sql})").fetchone()
        return int(row[0]) if row else 0

    def records(self, batch_size: int = 1000) -> Iterator[dict[str, Any]]:
        """The rows as dicts, ``package`` parsed into a dict (None for a generation failure)."""
        cursor = self.con.execute(self.sql)
        done = 0
        while batch := cursor.fetchmany(batch_size):
            for row in batch:
                record = dict(zip(EXPORT_COLUMNS, row, strict=True))
                record["package"] = json.loads(record["package"]) if record["package"] else None
                yield record
                done += 1
                if self.on_row is not None:
                    self.on_row(done)

    def packages(self) -> Iterator[TaskPackage]:
        """The selected packages, parsed (rows without a package are skipped). A package whose
        stored id is not a package id raises ``CatalogError``: exporters build file names from it."""
        from pipeline.core.package import load_package

        for record in self.records():
            if record["package"] is not None:
                package = load_package(record["package"])
                check_package_id(package.id, f"catalog row of package {record['id']!r}")
                yield package


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

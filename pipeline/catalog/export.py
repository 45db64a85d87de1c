"""Exporting catalog rows as dataset files, one small function per format.

Every format receives an ``ExportSelection`` — the filtered rows as SQL over a read-only connection,
with the flat export columns — and a destination path, and returns the number of rows written, or
a summary model with a ``rows`` field whose other fields land in ``ExportSummary.details``.
Formats DuckDB writes itself use ``selection.sql`` in a ``COPY``; formats built in Python iterate
``selection.records()`` or ``selection.packages()``. Adding a format is one entry in ``FORMATS``,
e.g. ``"sft": lambda selection, out: write_sft(selection.packages(), out)``.

The export columns (Hugging Face ``datasets``-ready): ``id``, ``capability``, ``workflow``,
``difficulty``, ``services`` (list of strings), ``request`` (text), ``score`` and ``package``
(the full package: a nested object in JSONL, a JSON string in Parquet).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import duckdb
from pydantic import BaseModel, Field

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.guard import parse_where
from pipeline.export_sft import SFTSummary, write_sft
from pipeline.interop.clawenvkit import export_clawenvkit
from pipeline.package import TaskPackage, load_package
from pipeline.training_format import Policy

EXPORT_COLUMNS = ("id", "capability", "workflow", "difficulty", "services", "request", "score", "package")
StatusFilter = Literal["accepted", "rejected", "all"]


@dataclass(frozen=True)
class ExportSelection:
    """The rows to export: ``sql`` is a SELECT of ``EXPORT_COLUMNS`` (``package`` typed JSON),
    ordered by catalog row."""

    con: duckdb.DuckDBPyConnection
    sql: str
    policy: Policy = field(default_factory=Policy)

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


def _copy(selection: ExportSelection, out: Path, columns: str, options: str) -> int:
    result = selection.con.execute(f"COPY (SELECT {columns} FROM ({selection.sql})) TO ? ({options})", [str(out)])
    row = result.fetchone()
    return int(row[0]) if row else 0


def export_jsonl(selection: ExportSelection, out: Path) -> int:
    """One JSON object per line; ``package`` is a nested object."""
    return _copy(selection, out, "*", "FORMAT json")


def export_parquet(selection: ExportSelection, out: Path) -> int:
    """Parquet (zstd); ``package`` is a JSON string column, ``services`` a list of strings."""
    columns = ", ".join(c if c != "package" else "package::VARCHAR AS package" for c in EXPORT_COLUMNS)
    return _copy(selection, out, columns, "FORMAT parquet, COMPRESSION zstd")


def export_sft(selection: ExportSelection, out: Path) -> SFTSummary:
    """Chat-format training samples (``pipeline.export_sft``) under the selection's truncation
    policy; samples whose evidence does not survive it are left out and counted."""
    return write_sft(selection.packages(), out, selection.policy)


class ClawEnvKitExport(BaseModel):
    rows: int
    unmapped_checks: int


def export_clawenvkit_tasks(selection: ExportSelection, out: Path) -> ClawEnvKitExport:
    """A folder of ClawEnvKit task YAML files, one per package (``pipeline.interop.clawenvkit``)."""
    summary = export_clawenvkit(selection.packages(), out)
    return ClawEnvKitExport(rows=len(summary.tasks), unmapped_checks=summary.unmapped_count)


Exporter = Callable[[ExportSelection, Path], int | BaseModel]

FORMATS: dict[str, Exporter] = {
    "jsonl": export_jsonl,
    "parquet": export_parquet,
    "sft": export_sft,
    "clawenvkit": export_clawenvkit_tasks,
}


class ExportSummary(BaseModel):
    format: str
    path: str
    rows: int
    status: str
    where: str | None
    details: dict[str, Any] = Field(default_factory=dict)


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


def write_export(con: duckdb.DuckDBPyConnection, fmt: str, out: Path, status: StatusFilter,
                 where: str | None, policy: Policy | None = None) -> ExportSummary:
    """Write the selected rows to ``out`` in format ``fmt``, atomically.

    The file is written beside ``out`` under a temporary name and renamed over it once complete,
    so ``out`` is either the previous file or the whole new export, never a partial one (a format
    that writes a folder replaces ``out`` only if it is absent or empty).
    """
    if fmt not in FORMATS:
        raise CatalogError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    exporter = FORMATS[fmt]
    sql = selection_sql(status, where)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    try:
        outcome = exporter(ExportSelection(con, sql, policy or Policy()), partial)
        os.replace(partial, out)
    finally:
        if partial.is_dir():
            shutil.rmtree(partial)
        else:
            partial.unlink(missing_ok=True)
    if isinstance(outcome, BaseModel):
        details = outcome.model_dump(mode="json")
        return ExportSummary(format=fmt, path=str(out), rows=details.pop("rows"), status=status, where=where,
                             details=details)
    return ExportSummary(format=fmt, path=str(out), rows=outcome, status=status, where=where)

"""Exporting catalog rows as dataset files: the format registry and the atomic write.

Every format is a function of a ``Selection`` (``pipeline.catalog.selection``) and a destination
path that returns the number of rows written, or a summary model with a ``rows`` field whose other
fields land in ``ExportSummary.details``. Adding a format is one module with its function and one
entry in ``FORMATS``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.selection import Selection, StatusFilter
from pipeline.catalog.store import Catalog
from pipeline.core.training_format import Policy
from pipeline.interop.clawenvkit_export import export_clawenvkit_tasks
from pipeline.interop.datasets import export_jsonl, export_parquet
from pipeline.interop.sft import write_sft

Exporter = Callable[[Selection, Path, Policy], int | BaseModel]

FORMATS: dict[str, Exporter] = {
    "jsonl": lambda selection, out, _policy: export_jsonl(selection, out),
    "parquet": lambda selection, out, _policy: export_parquet(selection, out),
    "sft": lambda selection, out, policy: write_sft(selection.packages(), out, policy),
    "clawenvkit": lambda selection, out, _policy: export_clawenvkit_tasks(selection.packages(), out),
}
"""Format name → exporter. ``sft`` applies the training truncation policy; the others ignore it."""


class ExportSummary(BaseModel):
    format: str
    path: str
    rows: int
    status: str
    where: str | None
    details: dict[str, Any] = Field(default_factory=dict)


def export_catalog(catalog: Catalog, fmt: str, out: Path | str, where: str | None = None,
                   status: StatusFilter = "accepted", policy: Policy | None = None) -> ExportSummary:
    """Write the catalog rows with ``status`` (accepted by default; ``all`` for every row) for
    which ``where`` holds to ``out`` in format ``fmt``, atomically.

    The output is written beside ``out`` under a temporary name and renamed over it once complete,
    so ``out`` is either the previous file or the whole new export, never a partial one (a format
    that writes a folder replaces ``out`` only if it is absent or empty). ``CatalogError`` for an
    unknown format or status, or a bad ``where``.
    """
    if fmt not in FORMATS:
        raise CatalogError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    try:
        with catalog.selection(status, where) as selection:
            outcome = FORMATS[fmt](selection, partial, policy or Policy())
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

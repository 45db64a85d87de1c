"""Dataset files DuckDB writes itself from a selection: JSONL and Parquet, ready for Hugging Face
``datasets`` (``load_dataset("json", ...)`` / ``("parquet", ...)``)."""

from __future__ import annotations

from pathlib import Path

from pipeline.catalog.selection import EXPORT_COLUMNS, Selection


def _copy(selection: Selection, out: Path, columns: str, options: str) -> int:
    result = selection.con.execute(f"COPY (SELECT {columns} FROM ({selection.sql})) TO ? ({options}, USE_TMP_FILE false)",
                                   [str(out)])
    row = result.fetchone()
    return int(row[0]) if row else 0


def export_jsonl(selection: Selection, out: Path) -> int:
    """One JSON object per line; ``package`` is a nested object."""
    return _copy(selection, out, "*", "FORMAT json")


def export_parquet(selection: Selection, out: Path) -> int:
    """Parquet (zstd); ``package`` is a JSON string column, ``services`` a list of strings."""
    columns = ", ".join(c if c != "package" else "package::VARCHAR AS package" for c in EXPORT_COLUMNS)
    return _copy(selection, out, columns, "FORMAT parquet, COMPRESSION zstd")

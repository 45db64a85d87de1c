"""What every command shares: the consoles, JSON output, and loading a package file for a user."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Console

from pipeline.catalog.store import DEFAULT_CATALOG
from pipeline.errors import UserError, first_validation_error
from pipeline.io import read_documents
from pipeline.package import TaskPackage, load_package

# Piped output (not a terminal) gets room for a wide table instead of rich's 80-column default.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 160
console = Console(width=_WIDTH)
err_console = Console(stderr=True)

JsonOpt = typer.Option(False, "--json", help="Machine-readable JSON output.")
CatalogOpt = typer.Option(DEFAULT_CATALOG, "--catalog", help="The DuckDB catalog file.")


def emit_json(data: Any) -> None:
    """One JSON document on one line of stdout."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")


def validation_message(exc: ValidationError, source: str) -> str:
    return f"{source}: not a valid task package: {first_validation_error(exc)}; `synth schema` prints the schema"


def load_package_file(path: Path) -> TaskPackage:
    """The one package in ``path``; a ``UserError`` naming the problem otherwise."""
    docs = list(read_documents([path]))
    if len(docs) != 1:
        raise UserError(f"{path}: expected one package, found {len(docs)}; pass one package file")
    source, doc = docs[0]
    try:
        return load_package(doc)
    except ValidationError as exc:
        raise UserError(validation_message(exc, source)) from exc

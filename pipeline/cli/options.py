"""What every command shares: the options defined once (``--json``, ``--catalog``), the consoles,
JSON output, and loading a package file for a user.

Only light modules are imported here: each command imports what it needs when it runs, so
``synth --help`` and the fast commands start quickly.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from pipeline.core.errors import UserError
from pipeline.core.paths import DEFAULT_CATALOG

if TYPE_CHECKING:
    from pipeline.core.package import TaskPackage

# Piped output (not a terminal) gets room for a wide table instead of rich's 80-column default.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 160
console = Console(width=_WIDTH)
err_console = Console(stderr=True)

JsonOpt = typer.Option(False, "--json", help="Machine-readable output: JSON on stdout, no tables or progress.")
CatalogOpt = typer.Option(DEFAULT_CATALOG, "--catalog", help="The DuckDB catalog file.")


def emit_json(data: Any) -> None:
    """One JSON document on one line of stdout."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")


def load_package_file(path: Path) -> TaskPackage:
    """The one package in ``path``; a ``UserError`` naming the problem otherwise."""
    from pydantic import ValidationError

    from pipeline.core.errors import first_validation_error
    from pipeline.core.io import read_documents
    from pipeline.core.package import load_package

    docs = list(read_documents([path]))
    if len(docs) != 1:
        raise UserError(f"{path}: expected one package, found {len(docs)}; pass one package file")
    source, doc = docs[0]
    try:
        return load_package(doc)
    except ValidationError as exc:
        raise UserError(f"{source}: not a valid task package: {first_validation_error(exc)}; "
                        "`synth schema` prints the schema") from exc

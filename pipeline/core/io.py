"""Reading packages from files and folders of JSON and JSONL."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pipeline.core.errors import UserError
from pipeline.core.jsonvalues import ShapeError, parse_json


def files_under(paths: Iterable[Path], suffixes: tuple[str, ...], what: str) -> Iterator[Path]:
    """The files ``paths`` name: a folder contributes its files ending in ``suffixes`` (recursively,
    sorted), any other existing path itself. ``UserError`` for a path that does not exist, saying
    to pass ``what``."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in suffixes and p.is_file())
        elif path.exists():
            yield path
        else:
            raise UserError(f"{path}: no such file or folder; pass {what}")


def iter_package_files(paths: list[Path]) -> Iterator[Path]:
    """Files named by ``paths``; folders contribute their ``*.json``/``*.jsonl`` files, sorted."""
    return files_under(paths, (".json", ".jsonl"), "package .json/.jsonl files or folders")


def read_documents(paths: list[Path]) -> Iterator[tuple[str, dict[str, Any] | ShapeError]]:
    """``(source, document)`` for every package document; ``source`` is ``file`` or ``file:line``.

    A ``synth export --format jsonl`` record (a package nested under ``package``) yields its package.
    JSON nested too deep to be a package yields the ``ShapeError`` in place of the document (a
    package that is invalid, not unreadable input). Raises ``UserError`` for unreadable input (not
    UTF-8, not JSON, not an object).
    """
    for path in iter_package_files(paths):
        if not path.is_file():
            raise UserError(f"{path}: not a regular file; pass package .json/.jsonl files or folders")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{path}: cannot read ({exc}); pass UTF-8 JSON or JSONL files") from exc
        if path.suffix == ".jsonl":
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    yield f"{path}:{n}", _parse(line, f"{path}:{n}")
        else:
            yield str(path), _parse(text, str(path))


def _parse(text: str, source: str) -> dict[str, Any] | ShapeError:
    try:
        doc = parse_json(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from exc
    except ShapeError as exc:
        return exc
    if not isinstance(doc, dict):
        raise UserError(f"{source}: expected a JSON object (one task package), got {type(doc).__name__}")
    if isinstance(doc.get("package"), dict) and "tools" not in doc:
        return doc["package"]
    return doc

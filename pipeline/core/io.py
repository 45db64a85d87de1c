"""Reading packages from files and folders of JSON and JSONL."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pipeline.core.errors import UserError
from pipeline.core.jsonvalues import ShapeError, load_json


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


class UnreadableDocument(UserError):
    """A file or JSONL line that cannot be read as a document: not readable as UTF-8, not JSON,
    not a JSON object. ``reason`` says which, without the source."""

    def __init__(self, source: str, reason: str, advice: str = "") -> None:
        super().__init__(f"{source}: {reason}{advice}")
        self.source, self.reason = source, reason


Document = dict[str, Any] | ShapeError | UnreadableDocument
"""A package document read from a file, or why it could not be read."""


def read_documents(paths: list[Path], keep_going: bool = False) -> Iterator[tuple[str, Document]]:
    """``(source, document)`` for every package document; ``source`` is ``file`` or ``file:line``.

    A ``synth export --format jsonl`` record (a package nested under ``package``) yields its package.
    JSON nested too deep to parse (about 1,000 levels) yields a ``ShapeError`` in place of the
    document (a package that is invalid, not unreadable input); a package's validation bounds
    shallower nesting (``pipeline.core.package``). A document that is not UTF-8, not JSON or not an
    object raises ``UnreadableDocument`` (a ``UserError``), or, with ``keep_going``, is yielded in
    place of the document and reading goes on. A path that is not a regular file always raises.
    """
    for path in iter_package_files(paths):
        if not path.is_file():
            raise UserError(f"{path}: not a regular file; pass package .json/.jsonl files or folders")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problem = UnreadableDocument(str(path), f"cannot read ({exc})", "; pass UTF-8 JSON or JSONL files")
            if not keep_going:
                raise problem from exc
            yield str(path), problem
            continue
        if path.suffix == ".jsonl":
            lines = [(f"{path}:{n}", line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        else:
            lines = [(str(path), text)]
        for source, line in lines:
            doc = _parse(line, source)
            if isinstance(doc, UnreadableDocument) and not keep_going:
                raise doc
            yield source, doc


def _parse(text: str, source: str) -> Document:
    try:
        doc = load_json(text)
    except json.JSONDecodeError as exc:
        return UnreadableDocument(source, f"not valid JSON ({exc.msg.removesuffix(' at')} at line {exc.lineno}, column {exc.colno})")
    except ShapeError as exc:
        return exc
    if not isinstance(doc, dict):
        return UnreadableDocument(source, f"expected a JSON object (one task package), got {type(doc).__name__}")
    if isinstance(doc.get("package"), dict) and "tools" not in doc:
        return doc["package"]
    return doc

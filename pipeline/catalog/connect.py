"""Opening DuckDB connections to a catalog file, waiting while another process holds it.

DuckDB locks the file per process: one read-write process, or any number of read-only ones. The
catalog opens a connection per operation and closes it right after (see ``docs/catalog.md``), so
a held file is only ever held briefly; a connection attempt that meets a lock retries with a short
backoff until ``timeout`` seconds have passed, then raises ``CatalogBusy``. A waiting reader says so
with a marker file (``reader_marker``), which a writer holding the file across commits honours.
"""

from __future__ import annotations

import time
from enum import Enum
from pathlib import Path

import duckdb

from pipeline.catalog.errors import CatalogBusy, CatalogError

_FIRST_WAIT_S = 0.01
_MAX_WAIT_S = 0.2


class Access(Enum):
    """``WRITE``: read-write. ``READ``: read-only. ``SANDBOX``: read-only, and no file system,
    extension or configuration access at all (for user-written SQL)."""

    WRITE = "write"
    READ = "read"
    SANDBOX = "sandbox"


def _config(access: Access) -> dict[str, str | bool]:
    if access is Access.SANDBOX:
        return {"enable_external_access": False, "lock_configuration": True}
    return {}


def connect(path: Path, access: Access, timeout: float) -> duckdb.DuckDBPyConnection:
    """A connection to the catalog at ``path``; waits up to ``timeout`` s for another process's lock.

    Raises ``CatalogError`` if the file is missing (read access) or is not a DuckDB database, and
    ``CatalogBusy`` if the lock is still held when ``timeout`` expires.
    """
    if access is not Access.WRITE and not path.is_file():
        raise CatalogError(f"no catalog at {path}; run `synth run` to create one or pass --catalog PATH")
    deadline = time.monotonic() + timeout
    wait = _FIRST_WAIT_S
    marker = reader_marker(path)
    try:
        while True:
            try:
                return duckdb.connect(str(path), read_only=access is not Access.WRITE, config=_config(access))
            except duckdb.IOException as exc:
                message = str(exc)
                if "lock" not in message.lower():
                    raise CatalogError(f"cannot open catalog {path}: {first_line(message)}") from exc
                if time.monotonic() >= deadline:
                    raise CatalogBusy(
                        f"catalog {path} is in use by another process ({_holder(message)}) after waiting "
                        f"{timeout:g}s; retry in a moment"
                    ) from exc
                if access is not Access.WRITE:
                    marker.touch()
            time.sleep(wait)
            wait = min(wait * 2, _MAX_WAIT_S)
    finally:
        if access is not Access.WRITE:
            marker.unlink(missing_ok=True)


def reader_marker(path: Path) -> Path:
    """A file a blocked reader touches while it waits, so a writer that holds the file across
    commits (``Catalog.batch``) knows to leave a gap; removed once the reader gets in."""
    return path.with_name(path.name + ".reader-waiting")


def reader_waiting(path: Path, fresh_s: float = 5.0) -> bool:
    """Whether a reader touched the marker in the last ``fresh_s`` seconds."""
    try:
        return time.time() - reader_marker(path).stat().st_mtime < fresh_s
    except FileNotFoundError:
        return False


def first_line(message: str) -> str:
    """The first line of a DuckDB error message (they can carry a multi-line context)."""
    return message.strip().splitlines()[0] if message.strip() else message


def _holder(message: str) -> str:
    """``pid N`` from DuckDB's conflicting-lock message, or a generic phrase."""
    marker = "(PID "
    if marker in message:
        return "pid " + message.split(marker, 1)[1].split(")", 1)[0]
    return "a DuckDB lock is held"

"""Opening DuckDB connections to a catalog file, waiting while another process holds it.

DuckDB locks the file per process: one read-write process, or any number of read-only ones. The
catalog opens a connection per operation and closes it right after (see ``docs/catalog.md``), so
a held file is only ever held briefly; a connection attempt that meets a lock retries with a short
backoff until ``timeout`` seconds have passed, then raises ``CatalogBusy``. A waiting reader says so
with a marker file (``reader_marker``), which a writer holding the file across commits honours.

User-written SQL (``synth catalog query``, ``synth export --where``) runs on a ``SANDBOX``
connection: read-only, no file system, extension or configuration access, and optionally under
``Limits`` (memory, threads) with ``interrupt_after`` bounding its wall-clock time.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import duckdb

from pipeline.catalog.errors import CatalogBusy, CatalogError
from pipeline.catalog.limits import Limits

_FIRST_WAIT_S = 0.01
_MAX_WAIT_S = 0.2


class Access(Enum):
    """``WRITE``: read-write. ``READ``: read-only. ``SANDBOX``: read-only, and no file system,
    extension or configuration access at all (for user-written SQL)."""

    WRITE = "write"
    READ = "read"
    SANDBOX = "sandbox"


def _config(access: Access, limits: Limits | None) -> dict[str, str | bool | int | float | list[str]]:
    """The DuckDB settings of a connection (as ``duckdb.connect`` takes them): limits for a sandbox."""
    if access is not Access.SANDBOX or limits is None:
        return {}
    return {"memory_limit": limits.memory_limit.strip(), "threads": limits.threads, "temp_directory": ""}


def _seal(con: duckdb.DuckDBPyConnection, writable: Path | None) -> None:
    """Cut a fresh connection off from the file system (but for ``writable``, the one file an
    export's ``COPY`` writes) and lock its configuration, before any user SQL runs on it."""
    if writable is not None:
        con.execute("SET allowed_paths = ?", [[str(writable.resolve())]])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def connect(path: Path, access: Access, timeout: float, *, limits: Limits | None = None,
            writable: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A connection to the catalog at ``path``; waits up to ``timeout`` s for another process's lock.

    ``SANDBOX`` connections get ``limits`` (when given) and may write only ``writable`` (when
    given). Raises ``CatalogError`` if the file is missing (read access), cannot be opened or is
    not a DuckDB database, and ``CatalogBusy`` if the lock is still held when ``timeout`` expires.
    """
    if access is not Access.WRITE and not path.is_file():
        raise CatalogError(f"no catalog at {path}; run `synth run` to create one or pass --catalog PATH")
    deadline = time.monotonic() + timeout
    wait = _FIRST_WAIT_S
    marker = _Marker(reader_marker(path)) if access is not Access.WRITE else None
    try:
        while True:
            try:
                con = duckdb.connect(str(path), read_only=access is not Access.WRITE, config=_config(access, limits))
            except duckdb.IOException as exc:
                message = str(exc)
                if "permission denied" in message.lower():
                    raise CatalogError(f"cannot {'write' if access is Access.WRITE else 'read'} catalog {path}: "
                                       "permission denied; change its permissions or pass --catalog with another "
                                       "path") from exc
                if "lock" not in message.lower():
                    raise CatalogError(f"cannot open catalog {path}: {first_line(message)}") from exc
                if time.monotonic() >= deadline:
                    raise CatalogBusy(
                        f"catalog {path} is in use by another process ({_holder(message)}) after waiting "
                        f"{timeout:g}s; retry in a moment"
                    ) from exc
                if marker is not None:
                    marker.touch()
            except duckdb.Error as exc:
                raise CatalogError(f"cannot open catalog {path}: {first_line(str(exc))}") from exc
            else:
                con.execute("SET enable_progress_bar = false")  # DuckDB draws it on stdout, into --json output
                if access is Access.SANDBOX:
                    _seal(con, writable)
                return con
            time.sleep(wait)
            wait = min(wait * 2, _MAX_WAIT_S)
    finally:
        if marker is not None:
            marker.remove()


class _Marker:
    """A blocked reader's marker: refreshed while it waits, removed at the end only if this reader
    created it (another reader may still be waiting under it). A folder where it cannot be written
    leaves no marker; the reader still waits (the writer then does not know to leave a gap)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.created = False
        self.disabled = False

    def touch(self) -> None:
        if self.disabled:
            return
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                os.utime(self.path)
            except FileNotFoundError:  # removed in between by the reader that made it: next time
                pass
            except OSError:
                self.disabled = True
            return
        except OSError:  # a read-only folder, a full disk...
            self.disabled = True
            return
        os.close(fd)
        self.created = True

    def remove(self) -> None:
        if self.created:
            with suppress(OSError):
                self.path.unlink(missing_ok=True)


def reader_marker(path: Path) -> Path:
    """A file a blocked reader touches while it waits, so a writer that holds the file across
    commits (``Catalog.batch``) knows to leave a gap; removed by the reader that created it once it
    gets in."""
    return path.with_name(path.name + ".reader-waiting")


def reader_waiting(path: Path, fresh_s: float = 5.0) -> bool:
    """Whether a reader touched the marker in the last ``fresh_s`` seconds."""
    try:
        return time.time() - reader_marker(path).stat().st_mtime < fresh_s
    except OSError:
        return False


@dataclass
class QueryTimeLimit:
    """The wall-clock limit ``interrupt_after`` puts on a query: ``seconds`` (0: none), and whether
    it ran out and stopped the query (``fired``)."""

    seconds: float
    fired: bool = False


@contextmanager
def interrupt_after(con: duckdb.DuckDBPyConnection, seconds: float | None) -> Iterator[QueryTimeLimit]:
    """Interrupt whatever ``con`` runs once ``seconds`` have passed (never when None); the query
    then raises ``duckdb.InterruptException`` and the yielded ``QueryTimeLimit`` says it ``fired``."""
    limit = QueryTimeLimit(seconds or 0.0)
    if seconds is None:
        yield limit
        return

    def fire() -> None:
        limit.fired = True
        con.interrupt()

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield limit
    finally:
        timer.cancel()


def first_line(message: str) -> str:
    """The first line of a DuckDB error message (they can carry a multi-line context)."""
    return message.strip().splitlines()[0] if message.strip() else message


def _holder(message: str) -> str:
    """``pid N`` from DuckDB's conflicting-lock message, or a generic phrase."""
    marker = "(PID "
    if marker in message:
        return "pid " + message.split(marker, 1)[1].split(")", 1)[0]
    return "a DuckDB lock is held"

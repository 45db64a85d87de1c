"""The writer lock: at most one process writes a catalog at a time.

``<catalog>.lock`` is locked with ``flock(LOCK_EX | LOCK_NB)`` for the whole write session. The
kernel releases the lock when the descriptor closes, including when the process dies (``kill -9``),
so a crashed writer never leaves a stale lock behind. The file holds the writer's pid, for the
message a refused writer prints; the file itself is never deleted (deleting a lock file races
with a process that has just opened it).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from pipeline.catalog.errors import CatalogBusy, CatalogError


def lock_path(catalog: Path) -> Path:
    return catalog.with_name(catalog.name + ".lock")


class WriterLock:
    """An exclusive, non-blocking, process-lifetime lock on ``<catalog>.lock``."""

    def __init__(self, catalog: Path) -> None:
        self.catalog = catalog
        self.path = lock_path(catalog)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise ``CatalogBusy`` naming the pid that holds it (``CatalogError`` when
        the lock file cannot be created or opened, e.g. in a read-only folder)."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise CatalogError(f"cannot write catalog {self.catalog}: {exc.strerror or exc} on {self.path}; "
                               "pass --catalog with a path in a folder you can write") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise CatalogBusy(
                f"catalog {self.catalog} is being written by another process (pid {holder}); "
                "wait for it to finish or pass --catalog with another path"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

"""What user-written SQL (``synth catalog query``) may use: memory, threads and wall-clock time.

Kept free of DuckDB so that the command line can show the defaults in ``--help`` without loading it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.catalog.errors import CatalogError

DEFAULT_QUERY_TIMEOUT_S = 30.0
"""Wall-clock seconds a query may run, fetching included, before it is interrupted."""
DEFAULT_QUERY_MEMORY = "1GB"
"""DuckDB memory a query may use (spilling to disk is off, so this is a hard cap)."""
QUERY_THREADS = 2
"""DuckDB threads a query may use."""

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$", re.IGNORECASE)
_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
          "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}


@dataclass(frozen=True)
class Limits:
    """What one sandboxed query may use: DuckDB's ``memory_limit`` (a size such as ``1GB``) and
    ``threads``. ``CatalogError`` for a size DuckDB would not read or fewer than one thread."""

    memory_limit: str = DEFAULT_QUERY_MEMORY
    threads: int = QUERY_THREADS

    def __post_init__(self) -> None:
        if not _SIZE.match(self.memory_limit.strip()):
            raise CatalogError(f"memory limit {self.memory_limit!r} is not a size; write it like 512MB or 4GB")
        if self.threads < 1:
            raise CatalogError(f"threads must be at least 1, not {self.threads}")

    @property
    def memory_bytes(self) -> int:
        """``memory_limit`` in bytes (``KB``/``MB``/``GB`` are powers of 1000, as in DuckDB; ``KiB``... of 1024)."""
        match = _SIZE.match(self.memory_limit.strip())
        assert match is not None  # checked in __post_init__
        return int(float(match.group(1)) * _UNITS[match.group(2).lower()])

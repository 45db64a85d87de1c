"""Hostile inputs for ``synth catalog`` and catalogs in places that cannot be written: runaway
queries (time, memory, result size), bad limits, catalogs under a file or in a read-only folder,
and ``synth catalog runs``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

from bench.hostile_inputs import Case, Outcome

ROOT = Path(__file__).resolve().parents[2]


@cache
def _template() -> Path:
    """A catalog with one finished offline run of two packages, made once (as the quick start makes one)."""
    path = Path(tempfile.mkdtemp(prefix="hostile-catalog-")) / "c.duckdb"
    subprocess.run([sys.executable, "-m", "pipeline.cli", "run", "--capability", "general", "--count", "2",
                    "--catalog", str(path), "--json"], cwd=ROOT, check=True, capture_output=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return path


def catalog_in(workdir: Path, name: str = "c.duckdb") -> Path:
    """A fresh copy of the template catalog at ``workdir / name``."""
    target = workdir / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_template(), target)
    return target


Check = Callable[[Outcome], str | None]


def _says(*parts: str) -> Check:
    """A check: every one of ``parts`` on stderr."""
    def check(outcome: Outcome) -> str | None:
        missing = [p for p in parts if p not in outcome.stderr]
        return f"stderr lacks {missing}: {outcome.stderr.strip()[:160]}" if missing else None
    return check


def _query(sql: str, *options: str) -> Callable[[Path], list[str]]:
    return lambda w: ["catalog", "query", sql, *options, "--catalog", str(catalog_in(w))]


def _no_catalog_made(where: str) -> Check:
    def check(outcome: Outcome) -> str | None:
        return f"{where} was created" if (outcome.workdir / where).exists() else None
    return check


def _read_only_folder(workdir: Path) -> list[str]:
    folder = workdir / "ro"
    catalog_in(folder)
    folder.chmod(0o555)
    return ["run", "--capability", "general", "--count", "1", "--catalog", str(folder / "c.duckdb")]


def _unless_root(outcome: Outcome) -> str | None:
    """Root ignores permissions, so the case proves something only for another user (the 'under a
    file' cases cover the same code path for root)."""
    if os.geteuid() == 0:
        return None
    return _says("cannot write catalog")(outcome)


def _under_a_file(workdir: Path) -> list[str]:
    (workdir / "plain").write_text("a file, not a folder")
    return ["run", "--capability", "general", "--count", "1", "--catalog", str(workdir / "plain" / "c.duckdb")]


def _not_a_catalog(workdir: Path) -> list[str]:
    (workdir / "c.duckdb").write_text("not a DuckDB file")
    return ["catalog", "stats", "--catalog", str(workdir / "c.duckdb")]


_SLOW = "SELECT count(*) FROM range(100000000000) t(x) WHERE hash(x) = 1"
_CROSS = ("SELECT a.package, b.package FROM packages a, packages b, range(100000000) t(x) ORDER BY hash(x)")

CASES = [
    Case("query runs past --timeout", _query(_SLOW, "--timeout", "2"), expect_code=2,
         check=_says("time limit", "--timeout")),
    Case("query: a cross join under the default limits", _query(_CROSS), expect_code=2,
         check=_says("query stopped", "limit")),
    Case("query needs more than --memory-limit", _query(_CROSS, "--memory-limit", "50MB"), expect_code=2,
         check=_says("50MB memory limit", "--memory-limit")),
    Case("query result too large to hold (--max-rows 0)",
         _query("SELECT x, repeat('a', 100) FROM range(100000000) t(x)", "--max-rows", "0", "--memory-limit", "200MB"),
         expect_code=2, check=_says("result needs more than", "--max-rows")),
    Case("query --memory-limit that is not a size", _query("SELECT 1", "--memory-limit", "lots"), expect_code=2,
         check=_says("is not a size")),
    Case("query reads a file", _query("SELECT * FROM read_csv('/etc/passwd')"), expect_code=2,
         check=_says("query failed")),
    Case("run into a catalog under a regular file", _under_a_file, expect_code=2,
         check=_says("cannot create the folder of catalog")),
    Case("run into a read-only folder (checked when not root)", _read_only_folder, expect_code=None,
         check=_unless_root),
    Case("stats of a file that is not a catalog", _not_a_catalog, expect_code=2, check=_says("cannot open catalog")),
    Case("runs of a missing catalog", lambda w: ["catalog", "runs", "--catalog", str(w / "none.duckdb")],
         expect_code=2, check=_no_catalog_made("none.duckdb")),
    Case("runs lists the quick start's run", lambda w: ["catalog", "runs", "--json", "--catalog", str(catalog_in(w))],
         expect_code=0, check=lambda o: None if '"accepted": 2' in o.stdout else f"unexpected: {o.stdout[:160]}"),
]

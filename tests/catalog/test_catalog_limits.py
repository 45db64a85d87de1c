"""Limits and failure paths of the catalog: query time and memory limits, the blocked reader's
marker file, and catalogs in places that cannot be written; ``synth catalog runs``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from pipeline.catalog import connect as connect_module
from pipeline.catalog import lock as lock_module
from pipeline.catalog.connect import Access, connect, reader_marker
from pipeline.catalog.errors import CatalogBusy, CatalogError
from pipeline.catalog.limits import DEFAULT_QUERY_MEMORY, DEFAULT_QUERY_TIMEOUT_S, Limits
from pipeline.catalog.store import Catalog
from pipeline.core.codes import Code
from pipeline.core.outcomes import Failure, FailureCode, Verdict
from pipeline.core.package import load_package
from tests.conftest import EXAMPLES_DIR, CliResult, refusal

SLOW = "SELECT count(*) FROM range(100000000000) t(x) WHERE hash(x) = 1"  # minutes of work, no memory
SYNTH = Path(sys.executable).parent / "synth"
HUNGRY = "SELECT x FROM range(100000000) t(x) ORDER BY hash(x)"  # a sort needing far more than 20MB


# --------------------------------------------------------------------------- query limits


def test_a_query_past_its_time_limit_is_stopped_with_one_line(empty_catalog: Path) -> None:
    with Catalog.open(empty_catalog, read_only=True) as reader, \
            pytest.raises(CatalogError, match=r"^query stopped after 0\.5s, its time limit; raise it with --timeout"):
        reader.query(SLOW, timeout=0.5)


def test_a_query_past_its_memory_limit_is_stopped_with_one_line(empty_catalog: Path) -> None:
    with Catalog.open(empty_catalog, read_only=True) as reader, \
            pytest.raises(CatalogError, match=r"more than its 20MB memory limit; raise it with --memory-limit"):
        reader.query(HUNGRY, memory_limit="20MB")


def test_a_result_too_large_to_hold_is_stopped(empty_catalog: Path) -> None:
    with Catalog.open(empty_catalog, read_only=True) as reader:
        with pytest.raises(CatalogError, match=r"its result needs more than its 30MB memory limit; lower --max-rows"):
            reader.query("SELECT x, 'row ' || x AS text FROM range(5000000) t(x)", memory_limit="30MB")
        assert len(reader.query("SELECT x FROM range(5000) t(x)", memory_limit="30MB").rows) == 5000


def test_limits_can_be_raised(empty_catalog: Path) -> None:
    with Catalog.open(empty_catalog, read_only=True) as reader:
        assert reader.query("SELECT count(*) FROM range(1000) t(x)", timeout=None, memory_limit="2GB").rows == [[1000]]


@pytest.mark.parametrize("size", ["lots", "1 parsec", "-1GB", ""])
def test_a_memory_limit_must_be_a_size(size: str) -> None:
    with pytest.raises(CatalogError, match="is not a size; write it like 512MB or 4GB"):
        Limits(memory_limit=size)


def test_memory_limit_in_bytes() -> None:
    assert Limits("1GB").memory_bytes == 10**9 and Limits("512 MiB").memory_bytes == 512 * 2**20


def test_query_limits_in_the_command(empty_catalog: Path, synth: Callable[..., CliResult]) -> None:
    help_text = " ".join(synth("catalog", "query", "--help").stdout.split())
    assert f"default: {DEFAULT_QUERY_TIMEOUT_S}" in help_text and f"default: {DEFAULT_QUERY_MEMORY}" in help_text
    result = synth("catalog", "query", SLOW, "--timeout", "0.5", "--catalog", empty_catalog)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "time limit; raise it with --timeout" in result.stderr
    result = synth("catalog", "query", HUNGRY, "--memory-limit", "20MB", "--catalog", empty_catalog)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "--memory-limit" in result.stderr


# --------------------------------------------------------------------------- the reader's marker


class _LockedTwice:
    """Stands in for ``duckdb.connect``: the file is locked for the first two attempts."""

    def __init__(self, marker: Path, seen: list[bool]) -> None:
        self.calls, self.marker, self.seen = 0, marker, seen
        self.real = duckdb.connect

    def __call__(self, *args: object, **kwargs: object) -> duckdb.DuckDBPyConnection:
        self.calls += 1
        self.seen.append(self.marker.exists())
        if self.calls <= 2:
            raise duckdb.IOException('Could not set lock on file "c": Conflicting lock is held in python (PID 7)')
        return self.real(*args, **kwargs)  # type: ignore[arg-type]


def test_a_waiting_reader_marks_and_then_removes_its_marker(empty_catalog: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    marker, seen = reader_marker(empty_catalog), []
    monkeypatch.setattr(connect_module.duckdb, "connect", _LockedTwice(marker, seen))
    connect(empty_catalog, Access.READ, timeout=10).close()
    assert seen == [False, True, True]  # touched while waiting
    assert not marker.exists()  # removed by the reader that made it


def test_a_reader_leaves_a_marker_it_did_not_create(empty_catalog: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = reader_marker(empty_catalog)
    marker.touch()
    os.utime(marker, (0, 0))
    monkeypatch.setattr(connect_module.duckdb, "connect", _LockedTwice(marker, []))
    connect(empty_catalog, Access.READ, timeout=10).close()
    assert marker.exists() and marker.stat().st_mtime > 0  # refreshed for the writer, left for its owner


def test_a_reader_in_a_folder_it_cannot_write_still_waits(empty_catalog: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    marker = reader_marker(empty_catalog)
    real_open = os.open

    def no_marker(path: str | os.PathLike[str], *args: int) -> int:
        if Path(path) == marker:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args)

    monkeypatch.setattr(connect_module.os, "open", no_marker)
    monkeypatch.setattr(connect_module.duckdb, "connect", _LockedTwice(marker, []))
    connect(empty_catalog, Access.READ, timeout=10).close()
    assert not marker.exists()
    always_locked = _LockedTwice(marker, [])
    always_locked.calls = -10**6
    monkeypatch.setattr(connect_module.duckdb, "connect", always_locked)
    with pytest.raises(CatalogBusy, match=r"in use by another process \(pid 7\) after waiting 0\.1s"):
        connect(empty_catalog, Access.READ, timeout=0.1)


# --------------------------------------------------------------------------- catalogs that cannot be written


def test_a_catalog_under_a_file_is_one_error(tmp_path: Path, synth: Callable[..., CliResult]) -> None:
    (tmp_path / "plain").write_text("not a folder")
    with pytest.raises(CatalogError, match="cannot create the folder of catalog"):
        Catalog.open(tmp_path / "plain" / "c.duckdb")
    result = synth("run", "-c", "general", "-n", "1", "--catalog", tmp_path / "plain" / "c.duckdb")
    assert result.exit_code == 2 and result.stderr.startswith("error: cannot create the folder")
    assert result.stderr.count("\n") == 1


def test_a_lock_file_that_cannot_be_created_is_one_error(empty_catalog: Path, monkeypatch: pytest.MonkeyPatch,
                                                          synth: Callable[..., CliResult]) -> None:
    def denied(path: str, *args: int) -> int:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(lock_module.os, "open", denied)
    with pytest.raises(CatalogError, match=r"cannot write catalog .*: Permission denied on .*\.lock; pass --catalog"):
        Catalog.open(empty_catalog)
    result = synth("run", "-c", "general", "-n", "1", "--catalog", empty_catalog)
    assert result.exit_code == 2 and result.stderr.startswith("error: cannot write catalog")
    assert result.stderr.count("\n") == 1
    with Catalog.open(empty_catalog, read_only=True) as reader:  # reading needs no lock
        assert reader.runs() == []


def test_a_read_only_catalog_file_is_one_error(empty_catalog: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = duckdb.connect

    def read_only_file(database: str, read_only: bool = False, **kwargs: object) -> duckdb.DuckDBPyConnection:
        if not read_only:
            raise duckdb.IOException(f'IO Error: Cannot open file "{database}": Permission denied')
        return real(database, read_only=read_only, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(connect_module.duckdb, "connect", read_only_file)
    with pytest.raises(CatalogError, match=r"cannot write catalog .*: permission denied; change its permissions"):
        Catalog.open(empty_catalog)
    with Catalog.open(empty_catalog, read_only=True) as reader:
        assert reader.stats().packages == 0


# --------------------------------------------------------------------------- synth catalog runs


def test_runs_lists_counts_and_what_can_be_resumed(empty_catalog: Path, synth: Callable[..., CliResult]) -> None:
    package = load_package(json.loads((EXAMPLES_DIR / "todo-three-items.json").read_text())).with_id()
    rejected = refusal(Code.GRADER_COUNTS_CALLS, "m")
    with Catalog.open(empty_catalog) as writer:
        run = writer.start_run("general-5", "offline", capability="general", parameters={"capability": "general",
                                                                                          "count": 5})
        writer.record(run, 0, 1, package, Verdict.build(package.id, [rejected], 0.5))
        writer.record(run, 0, 2, package, Verdict.build(package.id, [], 1.0))
        writer.record(run, 1, 1, None, None, failure=Failure(code=FailureCode.LLM_ERROR, message="timeout"))
        writer.finish_run(run, "interrupted")
        imported = writer.start_run("import-clawenvkit", "import:clawenvkit", parameters={"paths": ["t"]})
        writer.record(imported, 0, 1, package, Verdict.build(package.id, [rejected], 0.5))
        writer.finish_run(imported)
    result = synth("catalog", "runs", "--json", "--catalog", empty_catalog)
    assert result.exit_code == 0, result.stderr
    first, second = json.loads(result.stdout)
    assert {k: first[k] for k in ("id", "capability", "status", "accepted", "rejected", "failed", "slots", "target",
                                  "resumable")} == {"id": run, "capability": "general", "status": "interrupted",
                                                    "accepted": 1, "rejected": 1, "failed": 1, "slots": 2,
                                                    "target": 5, "resumable": True}
    assert first["started"]
    assert (second["generator"], second["target"], second["resumable"], second["rejected"]) == (
        "import:clawenvkit", None, False, 1)
    table = synth("catalog", "runs", "--catalog", empty_catalog).stdout
    assert f"below target: {run}; continue one with `synth run --resume ID`" in table
    assert "import:clawenvkit" in table and "interrupted" in table


@pytest.mark.parametrize("columns", [80, 120])
def test_runs_table_fits_80_and_120_columns(empty_catalog: Path, columns: int) -> None:
    """Rendered by the installed command at a terminal's width: no line is wider, and each run's id,
    status, accepted count of its target and start time stay whole (names may fold)."""
    package = load_package(json.loads((EXAMPLES_DIR / "todo-three-items.json").read_text())).with_id()
    long_name = "nightly-safety-batch-with-a-rather-long-descriptive-name"
    with Catalog.open(empty_catalog) as writer:
        long_run = writer.start_run(long_name, "llm", "some-provider/a-long-model-name-v2", "safety",
                                    {"capability": "safety", "count": 10_000})
        writer.record(long_run, 0, 1, package, Verdict.build(package.id, [], 1.0))
        writer.finish_run(long_run, "interrupted")
        imported = writer.start_run("import-clawenvkit", "import:clawenvkit", parameters={"paths": ["t"]})
        writer.record(imported, 0, 1, package, Verdict.build(package.id, [refusal(Code.GRADER_COUNTS_CALLS)], 0.5))
        writer.finish_run(imported)
        started = [r.started.strftime("%m-%d %H:%M") for r in writer.runs()]
    env = {**os.environ, "COLUMNS": str(columns)}
    result = subprocess.run([str(SYNTH), "catalog", "runs", "--catalog", str(empty_catalog)], capture_output=True,
                            text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    rows = [line for line in lines[1:] if line.strip()[:1].isdigit()]  # the title is "2 runs"
    assert [row.split()[0] for row in rows] == [str(long_run), str(imported)]
    assert "interrupted" in rows[0] and "1 of 10,000" in rows[0] and started[0] in rows[0]
    assert "finished" in rows[1] and started[1] in rows[1]
    assert long_name[:12] in rows[0] and "import:clawenvkit" in result.stdout and "safety, llm" in result.stdout
    if columns >= 120:
        assert long_name in rows[0]
    assert f"below target: {long_run}; continue one with `synth run --resume ID`" in " ".join(lines)

"""Several processes on one catalog, for real: a second writer is refused, readers get in between a
writer's commits, and a writer killed with SIGKILL leaves every committed row readable.

Each test starts ``WRITER`` (below) in a subprocess; it prints a line at each point the test waits
for, and waits on its stdin where the test must act while it holds the catalog. The ``synth``
commands that meet it run in this process (the ``synth`` fixture): the other process is the writer.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pipeline.catalog.errors import EXIT_BUSY, CatalogBusy
from pipeline.catalog.queries import CatalogStats
from pipeline.catalog.store import Catalog
from pipeline.core.outcomes import Verdict
from pipeline.core.package import load_package
from tests.conftest import EXAMPLES_DIR, CliResult
from tests.support import processes

EXAMPLE = EXAMPLES_DIR / "todo-three-items.json"

WRITER = """
import json, sys
from pathlib import Path
from pipeline.catalog.store import Catalog
from pipeline.core.outcomes import LLMCall
from pipeline.core.package import load_package
from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding, Verdict

path, mode = Path(sys.argv[1]), sys.argv[2]
package = load_package(json.loads(Path(sys.argv[3]).read_text())).with_id()
catalog = Catalog.open(path)
run = catalog.start_run("child", "offline")

def record(slot):
    findings = [] if slot % 2 == 0 else [Finding(code=Code.REFERENCE_ERROR, message="step 1 failed")]
    verdict = Verdict.build(package.id, findings, 1.0)
    return catalog.record(run, slot, 1, package, verdict, [LLMCall(model="m", prompt_tokens=slot)])

if mode == "hold":          # a write session between commits: writer lock held, no DuckDB connection
    record(0)
    print("ready", flush=True)
    sys.stdin.readline()
elif mode == "batch":       # inside a batch: the DuckDB file lock is held too
    with catalog.batch():
        record(0)
        print("in-batch", flush=True)
        sys.stdin.readline()
    print("out", flush=True)
    sys.stdin.readline()
elif mode == "loop":        # record until killed; a row id is printed once its record has returned
    slot = 0
    while True:
        print(record(slot), flush=True)
        slot += 1
catalog.close()
"""


class Writer:
    """The ``WRITER`` script in a subprocess."""

    def __init__(self, path: Path, mode: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), mode, str(EXAMPLE)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def expect(self, line: str) -> None:
        assert self.proc.stdout is not None
        got = self.proc.stdout.readline().strip()
        assert got == line, f"writer said {got!r}; stderr: {self.proc.stderr.read() if self.proc.stderr else ''}"

    def proceed(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def finish(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=processes.PATIENCE_S)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "catalog.duckdb"


@pytest.fixture
def holder(path: Path) -> Iterator[Writer]:
    writer = Writer(path, "hold")
    writer.expect("ready")
    yield writer
    writer.finish()


def test_a_second_writer_is_refused_and_changes_nothing(path: Path, holder: Writer) -> None:
    with pytest.raises(CatalogBusy) as info:
        Catalog.open(path)
    message = str(info.value)
    assert f"is being written by another process (pid {holder.proc.pid})" in message and "\n" not in message
    assert info.value.exit_code == EXIT_BUSY
    with Catalog.open(path, read_only=True) as reader:
        assert reader.query("SELECT count(*), count(DISTINCT run) FROM packages").rows == [[1, 1]]
    holder.proceed()
    assert holder.proc.wait(timeout=processes.PATIENCE_S) == 0
    Catalog.open(path).close()  # the lock went with the process


def test_a_second_synth_run_gets_one_error_line(path: Path, holder: Writer, synth: Callable[..., CliResult]) -> None:
    result = synth("run", "--capability", "general", "--count", "1", "--catalog", path)
    assert result.exit_code == EXIT_BUSY, result.stderr
    assert result.stderr.startswith("error: catalog ") and result.stderr.count("\n") == 1
    assert "being written by another process" in result.stderr
    with Catalog.open(path, read_only=True) as reader:
        assert reader.stats().runs == 1


def test_readers_get_in_between_commits(path: Path, holder: Writer, synth: Callable[..., CliResult]) -> None:
    with Catalog.open(path, read_only=True) as reader:
        stats: CatalogStats = reader.stats()
    assert (stats.packages, stats.accepted, stats.llm_calls) == (1, 1, 1)
    result = synth("catalog", "stats", "--json", "--catalog", path)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["packages"] == 1


def test_a_reader_waits_for_a_batch_or_says_busy(path: Path) -> None:
    writer = Writer(path, "batch")
    try:
        writer.expect("in-batch")
        with pytest.raises(CatalogBusy, match=rf"in use by another process \(pid {writer.proc.pid}\) after waiting"):
            Catalog.open(path, read_only=True, busy_timeout=0.2)
        seen: list[int] = []
        patient = threading.Thread(target=lambda: seen.append(Catalog.open(path, read_only=True,
                                                                           busy_timeout=processes.PATIENCE_S).stats().packages))
        patient.start()
        writer.proceed()
        writer.expect("out")
        patient.join(timeout=processes.PATIENCE_S)
        assert seen == [1]
    finally:
        writer.finish()


@pytest.mark.parametrize(("after_rows", "delay_s"), [(1, 0.0), (4, 0.007),
                                                     pytest.param(9, 0.021, marks=pytest.mark.slow)])
def test_sigkill_keeps_every_committed_row(path: Path, after_rows: int, delay_s: float) -> None:
    writer = Writer(path, "loop")
    assert writer.proc.stdout is not None
    committed = [int(writer.proc.stdout.readline()) for _ in range(after_rows)]
    threading.Event().wait(delay_s)  # land the kill at a different point of the next record
    os.kill(writer.proc.pid, signal.SIGKILL)
    writer.proc.wait(timeout=processes.PATIENCE_S)
    committed += [int(line) for line in writer.proc.stdout.read().split()]  # printed before the kill

    with Catalog.open(path, read_only=True) as reader:
        rows = reader.query("SELECT row_id, status, (SELECT count(*) FROM findings f WHERE f.package_row = p.row_id), "
                            "(SELECT count(*) FROM llm_calls c WHERE c.package_row = p.row_id) "
                            "FROM packages p ORDER BY row_id").rows
        orphans = reader.query("SELECT (SELECT count(*) FROM findings WHERE package_row NOT IN "
                               "(SELECT row_id FROM packages)), (SELECT count(*) FROM llm_calls WHERE package_row "
                               "NOT IN (SELECT row_id FROM packages))").rows
    assert set(committed) <= {r[0] for r in rows}
    assert len(rows) in (len(committed), len(committed) + 1)  # + the record in flight, if its commit landed
    for _, status, findings, calls in rows:  # each record is whole: its finding and its call came with it
        assert (findings, calls) == ((0, 1) if status == "accepted" else (1, 1))
    assert orphans == [[0, 0]]

    package = load_package(json.loads(EXAMPLE.read_text())).with_id()
    with Catalog.open(path) as catalog:  # the writer lock died with the writer
        run = catalog.start_run("after", "offline")
        catalog.record(run, 0, 1, package, Verdict.build(package.id, [], 1.0))
        assert catalog.stats().packages == len(rows) + 1

"""Catalog commit cost by group size: why the batch job's writer groups attempts.

    python bench/group_commit.py

Records verified packages (one LLM call each) into a fresh DuckDB catalog inside one write window
(``Catalog.batch()``, as the run's writer does), ``record_prepared`` taking groups of 1, 2, 4 ... 64
attempts (64: ``GroupWriter.MAX_GROUP``), and prints the CPU time per attempt for each group size,
its ratio to a group of 1, and the attempts committed per second of wall time (one writer, back to
back: the most one catalog takes). The attempts are turned into catalog values first
(``rows.prepare``, timed apart and printed once): a run on Ray does that on its actors, a local run
in its one process.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from pipeline.catalog.rows import AttemptRow, prepare
from pipeline.catalog.store import Catalog
from pipeline.core.outcomes import LLMCall
from pipeline.generation.offline import generate_package, pick_template
from pipeline.verify.verifier import verify_package

ROWS_PER_SIZE = 256
SIZES = (1, 2, 4, 8, 16, 32, 64)


def main() -> None:
    count = ROWS_PER_SIZE * len(SIZES)
    packages = [generate_package("general", pick_template("general", n), 3, n).with_id() for n in range(count)]
    verdicts = [verify_package(p) for p in packages]
    call = LLMCall(model="bench", prompt_tokens=4000, completion_tokens=1500, latency_s=0.2, status="ok")
    per_row: dict[int, float] = {}
    rates: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as folder, Catalog.open(Path(folder) / "catalog.duckdb") as catalog:
        run_id = catalog.start_run("bench", "llm", "bench", "general")
        rows = [AttemptRow(run_id=run_id, slot=n, attempt=1, package=p, verdict=v, llm_calls=[call], generator="llm",
                           capability="general", workflow=p.workflow)
                for n, (p, v) in enumerate(zip(packages, verdicts, strict=True))]
        started = time.process_time()
        prepared = [prepare(row) for row in rows]
        prepare_cpu = (time.process_time() - started) / len(rows)
        with catalog.batch():
            for index, size in enumerate(SIZES):
                chunk = prepared[index * ROWS_PER_SIZE:(index + 1) * ROWS_PER_SIZE]
                started, wall = time.process_time(), time.perf_counter()
                for start in range(0, len(chunk), size):
                    catalog.record_prepared(chunk[start:start + size])
                per_row[size] = (time.process_time() - started) / len(chunk)
                rates[size] = len(chunk) / (time.perf_counter() - wall)
    print(f"rows.prepare: {prepare_cpu * 1000:.2f} ms of CPU per attempt")
    print(f"{'group size':>10}  {'CPU per attempt':>16}  {'vs group of 1':>13}  {'attempts/s':>10}")
    for size, seconds in per_row.items():
        print(f"{size:>10}  {seconds * 1000:>13.2f} ms  {seconds / per_row[1]:>13.2f}  {rates[size]:>10,.0f}")


if __name__ == "__main__":
    main()

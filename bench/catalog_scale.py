"""Catalog at scale: build a catalog of N package rows, then time the curation operations.

    python bench/catalog_scale.py                 # 1,000,000 rows in a temporary folder
    python bench/catalog_scale.py --rows 100000 --keep /tmp/catalog-100k.duckdb

Rows are generated inside DuckDB (one INSERT ... SELECT per run of 10,000 rows, ten runs per transaction;
not row by row in Python) from the example packages, with a varied request text, package id, person names and
record ids per row, so package JSON is realistic in size (2-3 KB) and not trivially compressible.
Each run has slots of 1-3 attempts (70 / 20 / 10 %); the last attempt of a slot is accepted
19 times in 20, every rejected row has one finding, every row one LLM call.

Figures printed: build time, file size and bytes per package, ``stats`` (read-only open + query,
target < 2 s), a filtered export of 10,000 rows to JSONL and Parquet (target < 5 s each), and the
cost of one ``record`` and one duplicate lookup on the full catalog.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from pipeline.catalog.store import Catalog
from pipeline.core.outcomes import Verdict
from pipeline.core.package import load_package, near_key

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RUN_ROWS = 10_000
RUNS_PER_TRANSACTION = 10
_WORD_TEXT = ("add schedule send remind book order invite draft update cancel review move budget venue team "
         "meeting report invoice client partner design finance sales launch roadmap quarter weekly monthly "
         "urgent follow-up sync call lunch offsite demo hiring onboarding contract renewal ticket refund "
         "shipment stock audit summary notes agenda deadline friday monday tomorrow morning afternoon")
_NAME_TEXT = "Alex Sam Jordan Taylor Morgan Casey Riley Jamie Avery Quinn Robin Drew Kai Noor Lena Ravi"
WORDS, NAMES = _WORD_TEXT.split(), _NAME_TEXT.split()
CODES = ("grader_underconstrained", "grader_counts_calls", "reference_not_full_score", "unknown_endpoint",
         "request_check_mismatch", "null_agent_passes", "duplicate_package", "schema_invalid")


def _templates() -> list[dict[str, object]]:
    out = []
    for path in sorted(EXAMPLES.glob("*.json")):
        package = load_package(json.loads(path.read_text())).with_id()
        people = sorted({r["name"] for coll in package.initial_state.get("contacts", {}).values()
                         for r in coll if "name" in r})
        out.append({
            "capability": package.capability, "workflow": package.workflow, "difficulty": package.difficulty,
            "services": package.services, "request": package.request.text, "id": package.id,
            "person": people[0].split()[0] if people else "Nobody", "package": package.to_json(),
            "step_count": len(package.reference), "tool_count": len(package.tools),
            "turn_count": sum("ask" in s.model_dump() for s in package.reference),
        })
    return out


def build(path: Path, rows: int, workdir: Path) -> float:
    """Create the catalog (through the API, for the schema) and bulk-insert ``rows`` rows; seconds."""
    Catalog.open(path).close()
    started = time.perf_counter()
    templates = workdir / "templates.json"
    templates.write_text(json.dumps(_templates()))
    con = duckdb.connect(str(path))
    con.execute("CREATE TEMP TABLE templates AS SELECT * FROM read_json(?)", [str(templates)])
    con.execute("CREATE TEMP TABLE words AS SELECT ?::VARCHAR[] AS w, ?::VARCHAR[] AS n, ?::VARCHAR[] AS c",
                [list(WORDS), list(NAMES), list(CODES)])
    con.execute("CREATE TEMP MACRO pick(items, seed) AS items[1 + (hash(seed) % len(items))::BIGINT]")
    runs = (rows + RUN_ROWS - 1) // RUN_ROWS
    con.execute("""INSERT INTO runs (name, generator, model, parameters, started, finished, status)
                   SELECT 'bench-' || r, 'offline', NULL, '{}', now(), now(), 'finished' FROM range(1, ? + 1) t(r)""",
                [runs])
    for first in range(1, runs + 1, RUNS_PER_TRANSACTION):
        last = min(first + RUNS_PER_TRANSACTION - 1, runs)
        con.execute("BEGIN TRANSACTION")
        for run in range(first, last + 1):
            con.execute(_INSERT_RUN, {"run": run, "count": min(RUN_ROWS, rows - (run - 1) * RUN_ROWS)})
        con.execute("""INSERT INTO findings (package_row, n, code, message, step, check_id, detail) SELECT row_id, 0, pick(c, row_id), 'bench finding', NULL, NULL, '{}'
                       FROM packages, words WHERE run BETWEEN ? AND ? AND status = 'rejected'""", [first, last])
        con.execute("""INSERT INTO llm_calls SELECT row_id, run, slot, attempt, 0, 'bench-model',
                       1500 + hash(row_id) % 500, 800 + hash(row_id) % 400, 2.5, 'ok', NULL
                       FROM packages WHERE run BETWEEN ? AND ?""", [first, last])
        con.execute("COMMIT")
    con.close()
    return time.perf_counter() - started


_INSERT_RUN = """
INSERT INTO packages (id, run, slot, attempt, capability, workflow, difficulty, services, status, score,
                      step_count, tool_count, turn_count, request, near_key, package, generator,
                      verifier_version, created, service_profile)
WITH slots AS (
    SELECT s AS slot, hash($run * 1000003 + s) AS h FROM range($count) t(s)
), attempts AS (
    SELECT slot, h, CASE WHEN h % 10 < 7 THEN 1 WHEN h % 10 < 9 THEN 2 ELSE 3 END AS k FROM slots
), expanded AS (
    SELECT slot, h, k, unnest(range(1, k + 1)) AS attempt FROM attempts
), numbered AS (
    SELECT *, ($run - 1) * 1000000 + row_number() OVER (ORDER BY slot, attempt) AS g
    FROM expanded QUALIFY row_number() OVER (ORDER BY slot, attempt) <= $count
), varied AS (
    SELECT n.*, t.*,
           'pkg-' || md5(g::VARCHAR)[:16] AS new_id,
           n.w_name AS new_person,
           array_to_string(list_transform(range(8 + g % 9), lambda x: pick(w.w, g * 37 + x)), ' ')
             || ' for ' || n.w_name || ' ' || md5(g::VARCHAR)[17:24] AS new_request,
           (attempt = k AND h % 20 <> 0) AS ok
    FROM (SELECT numbered.*, pick(words.n, g) AS w_name FROM numbered, words) AS n,
         words AS w,
         (SELECT *, row_number() OVER () - 1 AS t_index FROM templates) AS t
    WHERE t.t_index = n.h % (SELECT count(*) FROM templates)
)
SELECT new_id, $run, slot, attempt, capability, workflow, difficulty, services,
       CASE WHEN ok THEN 'accepted' ELSE 'rejected' END,
       CASE WHEN ok THEN 1.0 ELSE 0.5 END,
       step_count, tool_count, turn_count, new_request, md5(new_request),
       replace(replace(replace(replace(package, request, new_request), id, new_id), person, new_person),
               '"c-10', '"c-' || (g % 97)::VARCHAR || '0') AS package,
       'offline', '1', now(), 'default'
FROM varied
"""


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    """Median seconds of ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="build the catalog at this path and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "catalog.duckdb"
        for stale in (path, path.with_name(path.name + ".wal")):
            stale.unlink(missing_ok=True)
        build_s = build(path, args.rows, Path(tmp))
        size = path.stat().st_size
        reader = Catalog.open(path, read_only=True)
        rows, json_bytes = reader.query("SELECT count(*), sum(length(package::VARCHAR)) FROM packages").rows[0]
        print(f"built {rows:,} package rows in {build_s:.1f} s ({rows / build_s:,.0f} rows/s)")
        print(f"file {size / 2**20:,.0f} MiB: {size / rows:,.0f} bytes per package "
              f"(package JSON averages {json_bytes / rows:,.0f} bytes; compression {json_bytes / size:.1f}x)")

        stats_s, stats = timed(lambda: Catalog.open(path, read_only=True).stats())
        print(f"stats (open + query, median of 3): {stats_s:.2f} s  [target < 2 s]  "
              f"accepted {stats.accepted:,}, rejected {stats.rejected:,}, repair rate {stats.repair_rate:.2f}")

        out = Path(tmp)
        export_run = min(42, stats.runs)
        for fmt in ("jsonl", "parquet"):
            export_s, summary = timed(lambda fmt=fmt: reader.export(fmt, out / f"export.{fmt}", where=f"run = {export_run}",
                                                                   status="all"))
            print(f"export {summary.rows:,} rows to {fmt}: {export_s:.2f} s  [target < 5 s]  "
                  f"({Path(summary.path).stat().st_size / 2**20:.1f} MiB)")

        package = load_package(json.loads((EXAMPLES / "todo-three-items.json").read_text())).with_id()
        with Catalog.open(path) as writer:
            run = writer.start_run("bench-record", "offline")
            slots = itertools.count()

            def record() -> int:
                return writer.record(run, next(slots), 1, package, Verdict.build(package.id, [], 1.0))

            record_s, _ = timed(record, repeat=10)
            with writer.batch():
                batched_s, _ = timed(record, repeat=10)
            lookup_s, _ = timed(lambda: writer.find_duplicate("pkg-0000000000000000", near_key(package)), repeat=10)
            writer.finish_run(run)
        print(f"one record on the full catalog, median of 10: {record_s * 1000:.0f} ms alone (open + commit + "
              f"close), {batched_s * 1000:.0f} ms inside Catalog.batch(); one duplicate lookup (open + two "
              f"index probes): {lookup_s * 1000:.0f} ms")


if __name__ == "__main__":
    main()

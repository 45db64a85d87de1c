"""The audit at scale: ``synth audit stats`` and ``synth audit queue`` on a catalog of N package
rows holding L labels.

    python bench/audit_scale.py                     # 100,000 rows, 5,000 labels, in a temporary folder
    python bench/audit_scale.py --rows 500000 --keep /tmp/audit-500k.duckdb

The catalog is built by ``bench/catalog_scale.py``'s builder (rows generated inside DuckDB, 19 in
20 slots end accepted, every rejected row with one refusal); the labels are inserted in one
statement: rows drawn by hash, two annotators on each of the first two fifths of the labels' rows
and one on the rest, people accepting 9 accepted rows in 10 and finding 4 refused rows in 5
defective (with the refusal's code), the rest split between the other label and ``unsure``.

Figures printed: the median of 3 of ``audit stats`` and ``audit queue`` as the commands do them
(read-only open + the computation; target for stats: ≤ 1 s at 100,000 rows and 5,000 labels).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import duckdb

from bench.catalog_scale import build, timed
from pipeline.catalog.store import Catalog

ANNOTATORS = ("ana", "ben", "chloe")


def add_labels(path: Path, labels: int) -> int:
    """Insert about ``labels`` labels (module docstring); the number inserted."""
    doubled = 2 * labels // 5 // 2
    rows = labels - doubled
    con = duckdb.connect(str(path))
    try:
        con.execute("""
            INSERT INTO audit_labels (run, package_row, package_id, annotator, created, label, code, comment)
            WITH chosen AS (
                SELECT p.run, p.row_id, p.id, p.status,
                       (SELECT f.code FROM findings AS f WHERE f.package_row = p.row_id ORDER BY f.n LIMIT 1) AS code,
                       row_number() OVER (ORDER BY md5(p.row_id::VARCHAR)) AS k
                FROM packages AS p WHERE p.package IS NOT NULL
                QUALIFY k <= $rows),
            people AS (
                SELECT c.*, a.i, a.name FROM chosen AS c, (SELECT * FROM (VALUES (1, $a), (2, $b)) AS t(i, name)) AS a
                WHERE a.i = 1 OR c.k <= $doubled)
            SELECT run, row_id, id, CASE WHEN k % 7 = 0 THEN $c ELSE name END, now(),
                   CASE WHEN hash(row_id * 3 + i) % 20 = 0 THEN 'unsure'
                        WHEN status = 'accepted' THEN CASE WHEN hash(row_id * 3 + i) % 10 = 0 THEN 'defective' ELSE 'accept' END
                        ELSE CASE WHEN hash(row_id * 3 + i) % 5 = 0 THEN 'accept' ELSE 'defective' END END AS label,
                   NULL, NULL
            FROM people""", {"rows": rows, "doubled": doubled, "a": ANNOTATORS[0], "b": ANNOTATORS[1],
                            "c": ANNOTATORS[2]})
        con.execute("""UPDATE audit_labels AS l SET code = (SELECT f.code FROM findings AS f
                       WHERE f.package_row = l.package_row ORDER BY f.n LIMIT 1) WHERE l.label = 'defective'""")
        return int(con.execute("SELECT count(*) FROM audit_labels").fetchone()[0])  # type: ignore[index]
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--labels", type=int, default=5_000)
    parser.add_argument("--keep", type=Path, help="build the catalog at this path and keep it")
    parser.add_argument("--reuse", action="store_true", help="with --keep: time the catalog already there")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "catalog.duckdb"
        if not (args.reuse and path.exists()):
            for stale in (path, path.with_name(path.name + ".wal")):
                stale.unlink(missing_ok=True)
            build_s = build(path, args.rows, Path(tmp))
            labels = add_labels(path, args.labels)
            print(f"built {args.rows:,} rows in {build_s:.1f} s; {labels:,} labels")
        stats_s, stats = timed(lambda: Catalog.open(path, read_only=True).audit_stats())
        print(f"audit stats (open + compute, median of 3): {stats_s:.2f} s  [target <= 1 s]  "
              f"{stats.labels:,} labels, {stats.labelled_rows:,} labelled rows, {stats.decided_rows:,} decided, "
              f"population {stats.population:,}; kappa {stats.agreement.kappa}")
        queue_s, queue = timed(lambda: Catalog.open(path, read_only=True).audit_queue())
        print(f"audit queue (open + compute, median of 3): {queue_s:.2f} s  {len(queue.items):,} items of "
              f"{len(queue.strata):,} strata")


if __name__ == "__main__":
    main()

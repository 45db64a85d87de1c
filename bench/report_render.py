"""``synth report`` at scale: a 1,000-package offline catalog over every capability with rollout
rows, the report written, then loaded in headless Chromium (``tests/support/browser.py``).

Run: ``python bench/report_render.py`` (defaults: 1,000 accepted packages, 2 models x 4 samples
each, 3 page loads). Prints the time to write the report and, per load, the milliseconds from
navigation start until every chart is drawn (target: under 2,000).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import duckdb

from pipeline import Catalog, RunOptions, start_run
from pipeline.interop.report import write_report
from pipeline.taxonomy.capabilities import taxonomy
from tests.support.browser import load_report
from tests.support.rollout_rows import RolloutRow, insert_rollouts


def build(path: Path, count: int, models: int, samples: int, seed: int) -> int:
    """An offline catalog of ``count`` accepted packages split over every capability (defects in 20 %
    of first attempts), with ``samples`` rollouts per package and model; the rollouts written."""
    capabilities = list(taxonomy())
    for i, capability in enumerate(capabilities):
        share = count // len(capabilities) + (i < count % len(capabilities))
        start_run(RunOptions(capability=capability, count=share, defect_rate=0.2, seed=seed), path)
    con = duckdb.connect(str(path), read_only=True)
    ids = [r[0] for r in con.execute("SELECT id FROM packages WHERE status = 'accepted'").fetchall()]
    con.close()
    rng = random.Random(seed)
    rows = []
    for package in ids:
        for m in range(models):
            skill = rng.random()
            rows += [RolloutRow(package, f"model-{m}", s, rng.random() < skill) for s in range(samples)]
    insert_rollouts(path, rows)
    return len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="accepted packages")
    parser.add_argument("--models", type=int, default=2)
    parser.add_argument("--samples", type=int, default=4, help="rollouts per package and model")
    parser.add_argument("--loads", type=int, default=3, help="page loads to time (each a new browser)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "catalog.duckdb"
        t0 = time.perf_counter()
        rollouts = build(path, args.count, args.models, args.samples, args.seed)
        print(f"catalog: {args.count:,} accepted packages, {rollouts:,} rollouts, built in {time.perf_counter() - t0:.1f} s")
        out = Path(tmp) / "report.html"
        t0 = time.perf_counter()
        summary = write_report(Catalog.open(path, read_only=True), out)
        print(f"write_report: {time.perf_counter() - t0:.2f} s, {summary.bytes / 1e6:.1f} MB, "
              f"{summary.funnel.slots:,} slots, {summary.funnel.attempts:,} attempts, {summary.funnel.accepted:,} "
              f"accepted, charts: {', '.join(summary.charts)}")
        times = []
        for _ in range(args.loads):
            with load_report(out) as load:
                if load.errors:
                    raise SystemExit(f"console errors: {load.errors}")
                times.append(load.charts_ms)
        print(f"Chromium, navigation start → every chart drawn: {', '.join(f'{t:.0f}' for t in times)} ms "
              f"(median {sorted(times)[len(times) // 2]:.0f} ms; target < 2000)")


if __name__ == "__main__":
    main()

"""TaskEnv replay: every accepted package of an offline run, played through ``TaskEnv``, must score
exactly what the verifier scored when it accepted it.

    python bench/env_replay.py [--count 1000] [--seed 7]

One offline run (``start_run``, round robin over every capability: ``count`` slots split evenly)
fills a temporary catalog; each accepted package is then read back and its reference played in a
``TaskEnv`` (``play_reference``). Both are one code path (``Episode`` and ``Grader``), so this is a
smoke test, not a proof. Prints matches/total per
capability and overall, with the replay rate.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

from pipeline import Catalog, RunOptions, TaskPackage, start_run
from pipeline.env.task_env import play_reference
from pipeline.taxonomy.capabilities import taxonomy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    caps = sorted(taxonomy())
    total: Counter[str] = Counter()
    matches: Counter[str] = Counter()
    mismatched: list[str] = []
    replay_s = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "catalog.duckdb"
        for i, cap in enumerate(caps):
            share = args.count // len(caps) + (i < args.count % len(caps))
            start_run(RunOptions(capability=cap, count=share, seed=args.seed), path)
        with Catalog.open(path, read_only=True) as catalog:
            rows = catalog.query("SELECT id, capability, score FROM packages WHERE status = 'accepted'", None).rows
            for package_id, capability, verified in rows:
                [record] = [r for r in catalog.show(package_id) if r.status == "accepted"]
                package = TaskPackage.model_validate(record.package)
                started = time.perf_counter()
                reward = play_reference(package).score().score
                replay_s += time.perf_counter() - started
                total[capability] += 1
                if reward == verified:
                    matches[capability] += 1
                else:
                    mismatched.append(f"{package_id} ({capability}): TaskEnv {reward} vs verifier {verified}")
    for cap in caps:
        print(f"{cap:24} {matches[cap]}/{total[cap]}")
    n = sum(total.values())
    print(f"{'matches/total':24} {sum(matches.values())}/{n}  (TaskEnv replay {n / replay_s:.0f} packages/s)")
    for line in mismatched[:20]:
        print("mismatch:", line)
    if mismatched:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

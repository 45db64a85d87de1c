"""TaskEnv replay acceptance: driving ``TaskEnv`` with each package's reference must reproduce
``score(package, execute(package))`` exactly, check by check.

    python bench/env_replay.py [--count 500] [--seed 7]

Packages are generated offline round-robin over every capability (and each capability's templates).
Prints matches/total (per capability and overall) and the time ratio of an environment replay to a
direct ``execute`` of the reference.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.core.episode import execute  # noqa: E402
from pipeline.core.grading import score  # noqa: E402
from pipeline.env.task_env import play_reference  # noqa: E402
from pipeline.generate.offline import generate_package, pick_template  # noqa: E402
from pipeline.taxonomy.capabilities import taxonomy  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    caps = sorted(taxonomy())
    jobs = [(caps[i % len(caps)], i // len(caps)) for i in range(args.count)]
    packages = [generate_package(cap, pick_template(cap, slot), args.seed, slot) for cap, slot in jobs]

    started = time.perf_counter()
    direct = [score(p, execute(p)) for p in packages]
    direct_time = time.perf_counter() - started
    started = time.perf_counter()
    replayed = [play_reference(p).score() for p in packages]
    replay_time = time.perf_counter() - started

    total: Counter[str] = Counter()
    matches: Counter[str] = Counter()
    mismatched = []
    for package, want, got in zip(packages, direct, replayed, strict=True):
        total[package.capability] += 1
        if got.model_dump() == want.model_dump():
            matches[package.capability] += 1
        else:
            mismatched.append(f"{package.id} ({package.capability}/{package.workflow}): "
                              f"replay {got.score} vs execute {want.score}")
    for cap in caps:
        print(f"{cap:24} {matches[cap]}/{total[cap]}")
    print(f"{'matches/total':24} {sum(matches.values())}/{len(packages)}")
    print(f"{'replay/execute time':24} {replay_time / direct_time:.2f} "
          f"({len(packages) / replay_time:.0f} vs {len(packages) / direct_time:.0f} packages/s)")
    for line in mismatched[:20]:
        print("mismatch:", line)
    if mismatched:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

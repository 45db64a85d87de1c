"""Verification speed: full verification (every mutation) of offline packages on one core, and its
ratio to offline generation time.

    python bench/verify_speed.py [--count 1200] [--seed 7]

Packages are generated round-robin over every capability's templates, then verified in this one
process (one core). Prints packages/s for each stage and the ratio verification : generation.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.generate.offline import generate_package, pick_template  # noqa: E402
from pipeline.taxonomy.capabilities import taxonomy  # noqa: E402
from pipeline.verify.verifier import tune_collector, verify_package  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    caps = list(taxonomy())
    jobs = [(caps[i % len(caps)], i // len(caps)) for i in range(args.count)]

    started = time.perf_counter()
    packages = [generate_package(cap, pick_template(cap, slot), args.seed, slot) for cap, slot in jobs]
    generation = time.perf_counter() - started

    started = time.perf_counter()
    tune_collector()  # as a verifier worker process does
    verdicts = [verify_package(p) for p in packages]
    verification = time.perf_counter() - started

    accepted = sum(v.accepted for v in verdicts)
    print(f"packages                 {len(packages)} over {len(caps)} capabilities ({accepted} accepted)")
    print(f"offline generation       {len(packages) / generation:8.1f} packages/s")
    print(f"full verification        {len(packages) / verification:8.1f} packages/s on one core (target >= 400)")
    print(f"verification/generation  {verification / generation:8.2f} (time ratio)")


if __name__ == "__main__":
    main()

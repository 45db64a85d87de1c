"""Verification speed: full verification (every mutation) of offline packages on one core, and its
ratio to offline generation time.

    python bench/verify_speed.py [--count 1200] [--seed 7] [--stages]

Packages are generated round-robin over every capability's templates, then verified in this one
process (one core), after the collector is set as a verifier worker sets it when it starts
(``tune_collector``: a one-off collection of the generated packages, not timed). Prints packages/s
for each stage (verification also per CPU-second, which leaves out time a shared machine gave to
other work) and the ratio verification : generation;
with ``--stages``, also the milliseconds per package spent in each verification stage (a second
pass, timed by wrapping the stage functions ``verify_package`` calls; texts the first pass parsed
are remembered, so the stages sum to less than the first pass took).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from pipeline.core.package import TaskPackage  # noqa: E402
from pipeline.generation.offline import generate_package, pick_template  # noqa: E402
from pipeline.taxonomy.capabilities import taxonomy  # noqa: E402
from pipeline.verify import verifier  # noqa: E402
from pipeline.verify.verifier import tune_collector, verify_package  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--stages", action="store_true", help="also time each verification stage")
    args = parser.parse_args()
    caps = list(taxonomy())
    jobs = [(caps[i % len(caps)], i // len(caps)) for i in range(args.count)]

    started = time.perf_counter()
    packages = [generate_package(cap, pick_template(cap, slot), args.seed, slot) for cap, slot in jobs]
    generation = time.perf_counter() - started

    setup = time.perf_counter()
    tune_collector()  # as a verifier worker process does once, when it starts (not per package)
    setup = time.perf_counter() - setup
    started, cpu = time.perf_counter(), time.process_time()
    verdicts = [verify_package(p) for p in packages]
    verification, cpu = time.perf_counter() - started, time.process_time() - cpu

    accepted = sum(v.accepted for v in verdicts)
    print(f"packages                 {len(packages)} over {len(caps)} capabilities ({accepted} accepted)")
    print(f"offline generation       {len(packages) / generation:8.1f} packages/s")
    print(f"full verification        {len(packages) / verification:8.1f} packages/s on one core (target >= 400)")
    print(f"                         {len(packages) / cpu:8.1f} packages per CPU-second (time the machine gave "
          "other work left out)")
    print(f"verification/generation  {verification / generation:8.2f} (time ratio)")
    print(f"collector setup          {1000 * setup:8.1f} ms once, not in the figures above "
          f"({100 * setup / (verification + setup):.1f} % of them had it been timed)")
    if args.stages:
        stage_times(packages)


STAGES = ("run_reference", "_understanding", "mutation_findings", "equivalence_findings", "collateral_findings",
          "grounding_findings", "contract_findings", "evidence_findings")


def stage_times(packages: list[TaskPackage]) -> None:
    """Verify ``packages`` again with each stage timed; print milliseconds per package."""
    spent: Counter[str] = Counter()

    def timed(name: str, stage: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return stage(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - started
        return run

    originals = {name: getattr(verifier, name) for name in STAGES}
    for name, stage in originals.items():
        setattr(verifier, name, timed(name, stage))
    started = time.perf_counter()
    try:
        for package in packages:
            verifier.verify_package(package)
    finally:
        for name, stage in originals.items():
            setattr(verifier, name, stage)
    total = time.perf_counter() - started
    print(f"per package: {1000 * total / len(packages):.2f} ms, of which")
    for name, seconds in spent.most_common():
        print(f"    {name:22} {1000 * seconds / len(packages):6.2f} ms")
    print(f"    {'(id, schema, static)':22} {1000 * (total - sum(spent.values())) / len(packages):6.2f} ms")


if __name__ == "__main__":
    main()

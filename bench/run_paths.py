"""Where an offline run should verify: in this process, or in a worker process (A/B).

    python bench/run_paths.py [--count 1000] [--capability multi-turn] [--repeat 2]

Runs ``synth run --count N`` offline into a fresh catalog, once per path and ``--repeat`` times,
alternating, and prints each path's median wall time and CPU seconds (this process and its
children), and the worker path's ratio to the in-process one. The default
(``--verify-processes`` unset) is the cheaper path for the generator used.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SYNTH = Path(sys.executable).parent / "synth"
PATHS = {"in process (0)": "0", "worker process (1)": "1"}


def one_run(capability: str, count: int, processes: str, work: Path) -> tuple[float, float]:
    catalog = work / f"c{time.monotonic_ns()}.duckdb"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([str(SYNTH), "run", "-c", capability, "-n", str(count), "--catalog", str(catalog),
                    "--verify-processes", processes, "--json"], check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--capability", default="multi-turn")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float]]] = {label: [] for label in PATHS}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for label, processes in PATHS.items():
                results[label].append(one_run(args.capability, args.count, processes, Path(tmp)))
    medians = {label: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
               for label, runs in results.items()}
    base_wall, base_cpu = medians["in process (0)"]
    print(f"{args.count} {args.capability} packages, offline, median of {args.repeat}")
    for label, (wall, cpu) in medians.items():
        print(f"{label:20} wall {wall:6.2f} s ({wall / base_wall:4.2f}x)   CPU {cpu:6.2f} s ({cpu / base_cpu:4.2f}x)")


if __name__ == "__main__":
    main()

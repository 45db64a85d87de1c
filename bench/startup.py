"""Start-up cost of the command line: CPU seconds of three quick commands, as ratios to ``python -c pass``.

    python bench/startup.py [--repeat 7]

Each command runs ``--repeat`` times as a child process of this one (the installed ``synth`` entry
point, next to this interpreter); the figure is the median of user + system CPU seconds per run.
A second, in-process run of each command reports whether it imported ``openai`` (it must not:
only generation with a model needs the client). ``synth catalog query`` reads a catalog made
once, before timing, by ``synth run --count 1`` in a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.processes import synth_imports_openai

ROOT = Path(__file__).resolve().parent.parent
SYNTH = Path(sys.executable).parent / "synth"
TARGET_CPU_S = 0.4

def cpu_seconds(argv: list[str], cwd: Path) -> float:
    """User + system CPU seconds of one run of ``argv`` (a child process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_cpu(argv: list[str], cwd: Path, repeat: int) -> float:
    cpu_seconds(argv, cwd)  # warm the file cache
    return statistics.median(cpu_seconds(argv, cwd) for _ in range(repeat))


def imports_openai(args: list[str], cwd: Path) -> bool:
    return synth_imports_openai(args, cwd)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        catalog = work / "catalog.duckdb"
        subprocess.run([str(SYNTH), "run", "-c", "general", "-n", "1", "--catalog", str(catalog), "--json"],
                       cwd=work, check=True, capture_output=True, env={**os.environ, "SYNTH_MODEL": "offline"})
        example = ROOT / "examples" / "todo-three-items.json"
        commands = {
            "synth --help": ["--help"],
            'synth catalog query "SELECT 1"': ["catalog", "query", "SELECT 1", "--catalog", str(catalog)],
            "synth verify examples/todo-three-items.json": ["verify", str(example)],
        }
        baseline = median_cpu([sys.executable, "-c", "pass"], work, args.repeat)
        print(f"python -c pass                                  {baseline:6.3f} CPU-s   1.0x")
        worst = 0.0
        for label, argv in commands.items():
            cpu = median_cpu([str(SYNTH), *argv], work, args.repeat)
            worst = max(worst, cpu)
            openai = "imports openai" if imports_openai(argv, work) else "no openai"
            print(f"{label:47} {cpu:6.3f} CPU-s {cpu / baseline:5.1f}x  {openai}")
    verdict = "met" if worst <= TARGET_CPU_S else "NOT met"
    print(f"slowest {worst:.3f} CPU-s; target <= {TARGET_CPU_S} CPU-s each: {verdict}")


if __name__ == "__main__":
    main()

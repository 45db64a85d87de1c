"""The speed of the ``synth verify`` command as a user runs it: packages per CPU-second of the
command's process, reading, validation, verification and printing included.

    python bench/verify_command.py [--count 210] [--seed 7] [--rounds 5] [--against CHECKOUT]

Writes ``--count`` offline packages, round robin over the 7 capabilities, one indented JSON file
each (as ``synth catalog show --out`` writes a package), then runs ``synth verify DIR`` with its
output piped to a file (not a terminal) and measures the CPU time of that process
(``os.wait4``), which leaves out time a shared machine gave to other work. The command runs as an
installed tool does, with its modules' bytecode cached (``PYTHONDONTWRITEBYTECODE`` is dropped
from its environment, and one run of each version, not timed, writes the caches first), with
``PYTHONPATH`` naming that version's own tree (a virtualenv's editable install may point at another
checkout of the project).

With ``--against CHECKOUT`` (another checkout of the project, with its own virtualenv in
``CHECKOUT/.venv``: ``git worktree add /tmp/db67 db67efa`` then ``python3 -m venv .venv &&
.venv/bin/pip install -e .`` there), each version generates its own mix with its own generator
and the two commands run interleaved, this checkout then the other, ``--rounds`` times; it prints
each round's ratio (this checkout's packages per CPU-second over the other's) and their median.
Without it, this checkout's command runs ``--rounds`` times and the median is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

GENERATE = """
import json, sys
from pathlib import Path
try:
    from pipeline.generation.offline import generate_package, pick_template
except ImportError:  # older checkouts name the generators' subpackage pipeline.generate
    from pipeline.generate.offline import generate_package, pick_template
try:
    from pipeline.taxonomy.capabilities import taxonomy
except ImportError:  # older checkouts keep the taxonomy at the top of the package
    from pipeline.capabilities import taxonomy
out, count, seed = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
caps = list(taxonomy())
for i in range(count):
    cap, slot = caps[i % len(caps)], i // len(caps)
    package = generate_package(cap, pick_template(cap, slot), seed, slot)
    text = json.dumps(package.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\\n"
    (out / f"{i:05d}-{cap}.json").write_text(text, encoding="utf-8")
"""
"""Run by each checkout's own Python: its generator writes its own mix."""


@dataclass(frozen=True)
class Version:
    """A checkout of the project and the ``synth`` command of its virtualenv."""

    name: str
    root: Path
    python: Path

    @property
    def synth(self) -> Path:
        return self.python.parent / "synth"


@dataclass(frozen=True)
class Timing:
    """One run of ``synth verify``: CPU seconds of its process and the wall-clock time."""

    cpu: float
    wall: float
    verdict_lines: int
    exit_code: int


def checkouts(against: Path | None) -> list[Version]:
    """This checkout, then ``against`` (another checkout with its own ``.venv``) when given; a
    checkout without ``.venv/bin/python`` ends the bench with what to do."""
    versions = [Version("this checkout", Path(__file__).resolve().parent.parent, Path(sys.executable))]
    if against is not None:
        other = against.resolve()
        python = other / ".venv" / "bin" / "python"
        if not python.exists():
            sys.exit(f"{other}: no .venv/bin/python; make one there: python3 -m venv .venv && "
                     ".venv/bin/pip install -e .")
        versions.append(Version(str(other), other, python))
    return versions


def generate(version: Version, folder: Path, count: int, seed: int) -> None:
    """Write ``count`` packages of ``version``'s generator into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(version.python), "-c", GENERATE, str(folder), str(count), str(seed)],
                   cwd=version.root, check=True)


def run_verify(version: Version, folder: Path, output: Path) -> Timing:
    """Run ``synth verify folder`` of ``version``, stdout to ``output``; its own CPU time."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(version.root)  # its own tree: a virtualenv's path entry may name another checkout
    started = time.perf_counter()
    with output.open("w", encoding="utf-8") as out:
        child = subprocess.Popen([str(version.synth), "verify", str(folder)], cwd=version.root, stdout=out,
                                 stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    lines = sum(1 for line in output.read_text(encoding="utf-8").splitlines() if line.startswith("pkg-"))
    return Timing(usage.ru_utime + usage.ru_stime, wall, lines, child.returncode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=210, help="packages in each mix (30 per capability)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="another checkout (with CHECKOUT/.venv) to compare with, interleaved")
    args = parser.parse_args()
    versions = checkouts(args.against)
    with tempfile.TemporaryDirectory(prefix="verify-command-") as tmp:
        folders = {}
        for n, version in enumerate(versions):
            folders[version.name] = Path(tmp) / f"mix-{n}"
            generate(version, folders[version.name], args.count, args.seed)
            run_verify(version, folders[version.name], Path(tmp) / "out.txt")  # writes the bytecode caches
        timings: dict[str, list[Timing]] = {v.name: [] for v in versions}
        for _ in range(args.rounds):
            for version in versions:
                timing = run_verify(version, folders[version.name], Path(tmp) / "out.txt")
                timings[version.name].append(timing)
                print(f"{version.name:>20}: {args.count / timing.cpu:7.1f} packages per CPU-second "
                      f"({1000 * timing.cpu / args.count:.2f} ms each, {timing.wall:.1f} s wall, "
                      f"{timing.verdict_lines} verdicts, exit {timing.exit_code})", flush=True)
    report(versions, timings, args.count)


def report(versions: list[Version], timings: dict[str, list[Timing]], count: int) -> None:
    """The median packages per CPU-second of each version, and the median of the rounds' ratios."""
    for version in versions:
        rates = [count / t.cpu for t in timings[version.name]]
        print(f"{version.name}: median {statistics.median(rates):.1f} packages per CPU-second "
              f"({min(rates):.1f}–{max(rates):.1f}, {len(rates)} runs)")
    if len(versions) == 2:
        this, other = (timings[v.name] for v in versions)
        ratios = [b.cpu / a.cpu for a, b in zip(this, other, strict=True)]
        print("ratios per round  " + "  ".join(f"{r:.3f}" for r in ratios))
        print(f"ratio (median)    {statistics.median(ratios):.3f}× the packages per CPU-second of {versions[1].name}")


if __name__ == "__main__":
    main()

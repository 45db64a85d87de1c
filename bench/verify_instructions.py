"""The instructions of ``synth verify`` split into start-up and per package, counted by valgrind.

    python bench/verify_instructions.py [--count 210] [--small 14] [--seed 7] [--against CHECKOUT]
                                        [--cpu-rounds 3]

Writes ``--count`` offline packages of the 7-capability mix with each version's own generator
(as ``bench/verify_command.py`` does: one indented JSON file each, round robin over the
capabilities), and takes from it a small mix (its first ``--small`` files: the same generator's
mix of that many packages) and a single package (its first file). It counts the instructions of
``python -m pipeline.cli verify DIR`` on each of the three with ``valgrind --tool=cachegrind
--cache-sim=no``, with ``PYTHONHASHSEED=0``, the bytecode cached (one uncounted run writes the
caches first) and ``PYTHONPATH`` naming the version's own tree, and prints:

- start-up: the count of the one-package command, and the intercept ``small − small × per package``;
- per package: ``(count on --count − count on --small) / (--count − --small)``, the marginal cost;
- the whole command on ``--count`` packages.

With ``--against CHECKOUT`` (another checkout with its own ``CHECKOUT/.venv``, see
``bench/verify_command.py``) it does the same there and prints each figure's ratio, the other's
count over this one's (above 1: this checkout executes fewer instructions). Instruction counts
do not depend on the machine's load; CPU time does. ``--cpu-rounds N`` (0 to skip) also times
both mixes N times, interleaving the versions, and prints the medians of CPU seconds per package
(marginal, as above) and of start-up, with their ratios: read these as a check on the counts.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.verify_command import Version, checkouts, generate, run_verify

I_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


@dataclass(frozen=True)
class Split:
    """A command's cost on the three mixes and what follows from them (instructions or CPU seconds)."""

    one: float
    small: float
    large: float
    small_count: int
    large_count: int

    @property
    def per_package(self) -> float:
        """The marginal cost of one more package: the slope between the small and large mixes."""
        return (self.large - self.small) / (self.large_count - self.small_count)

    @property
    def intercept(self) -> float:
        """Start-up as the slope puts it: the small mix's cost less its packages' marginal cost."""
        return self.small - self.small_count * self.per_package


def mixes(version: Version, folder: Path, count: int, small: int, seed: int) -> dict[str, Path]:
    """Write ``version``'s mix of ``count`` packages under ``folder``, with its first ``small`` and first one."""
    large = folder / "large"
    generate(version, large, count, seed)
    files = sorted(large.iterdir())
    made = {"large": large}
    for name, size in (("small", small), ("one", 1)):
        made[name] = folder / name
        made[name].mkdir()
        for path in files[:size]:
            shutil.copy(path, made[name] / path.name)
    return made


def environment(version: Version) -> dict[str, str]:
    """The command's environment: fixed string hashing, bytecode caches used, the version's own tree."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONPATH"] = str(version.root)
    return env


def instructions(version: Version, folder: Path) -> int:
    """The instructions valgrind counts for ``python -m pipeline.cli verify folder`` of ``version``."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               str(version.python), "-m", "pipeline.cli", "verify", str(folder)]
    done = subprocess.run(command, cwd=version.root, env=environment(version), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    found = I_REFS.search(done.stderr)
    if found is None:
        sys.exit(f"valgrind gave no count for {version.name} on {folder}:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def counted(version: Version, made: dict[str, Path], count: int, small: int) -> Split:
    """Count ``version``'s command on its three mixes (after one uncounted run writes the bytecode caches)."""
    subprocess.run([str(version.python), "-m", "pipeline.cli", "verify", str(made["one"])], cwd=version.root,
                   env=environment(version), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    figures = {name: float(instructions(version, made[name])) for name in ("one", "small", "large")}
    print(f"{version.name:>20}: " + ", ".join(f"{name} {value / 1e9:.3f} G" for name, value in figures.items()),
          flush=True)
    return Split(figures["one"], figures["small"], figures["large"], small, count)


def timed(versions: list[Version], made: dict[str, dict[str, Path]], rounds: int, count: int,
          small: int, scratch: Path) -> dict[str, Split]:
    """Median CPU seconds of each version's command on each mix, the versions interleaved round by round."""
    seconds: dict[str, dict[str, list[float]]] = {v.name: {"one": [], "small": [], "large": []} for v in versions}
    for _ in range(rounds):
        for name in ("one", "small", "large"):
            for version in versions:
                timing = run_verify(version, made[version.name][name], scratch / "out.txt")
                seconds[version.name][name].append(timing.cpu)
    return {v.name: Split(*(statistics.median(seconds[v.name][n]) for n in ("one", "small", "large")),
                          small, count) for v in versions}


def report(versions: list[Version], splits: dict[str, Split], unit: str, scale: float) -> None:
    """One line per figure: each version's value and, with two versions, the other's over this one's."""
    rows = [("start-up (one package)", lambda s: s.one), ("start-up (intercept)", lambda s: s.intercept),
            ("per package", lambda s: s.per_package), ("whole command", lambda s: s.large)]
    header = f"{'':<24}" + "".join(f"{v.name[-20:]:>22}" for v in versions)
    print(header + (f"{'ratio other/this':>18}" if len(versions) == 2 else ""))
    for label, value in rows:
        values = [value(splits[v.name]) for v in versions]
        line = f"{label:<24}" + "".join(f"{x / scale:>19.3f} {unit:<2}" for x in values)
        if len(values) == 2:
            line += f"{values[1] / values[0]:>18.3f}"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=210, help="packages in the large mix (30 per capability)")
    parser.add_argument("--small", type=int, default=14, help="packages in the small mix (its first files)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cpu-rounds", type=int, default=3, help="rounds of CPU timing (0: counts only)")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="another checkout (with CHECKOUT/.venv) to compare with")
    args = parser.parse_args()
    if not 1 < args.small < args.count:
        sys.exit("--small must be more than 1 and fewer than --count")
    versions = checkouts(args.against)
    with tempfile.TemporaryDirectory(prefix="verify-instructions-") as tmp:
        made = {v.name: mixes(v, Path(tmp) / f"mix-{n}", args.count, args.small, args.seed)
                for n, v in enumerate(versions)}
        counts = {v.name: counted(v, made[v.name], args.count, args.small) for v in versions}
        print(f"\ninstructions (valgrind; per package: {args.small} → {args.count} packages)")
        report(versions, counts, "M", 1e6)
        if args.cpu_rounds > 0:
            times = timed(versions, made, args.cpu_rounds, args.count, args.small, Path(tmp))
            print(f"\nCPU time (median of {args.cpu_rounds} rounds; noisy on a shared machine)")
            report(versions, times, "ms", 1e-3)


if __name__ == "__main__":
    main()

"""Hostile and broken inputs: each one run as a user would run it, with a time and a memory cap.

    python bench/hostile_inputs.py [--area NAME] [--timeout 60] [--memory-mb 2048]

Every case (``bench/hostile/<area>.py``, list ``CASES``) runs one ``synth`` command (or a
function) in a fresh process under ``RLIMIT_AS`` and a wall-time limit, in its own temporary
directory. It is *handled cleanly* when it finishes in time, without a Python traceback, with the
exit code it expects, and (for an error) with a one-line message on stderr naming the problem;
a case may check more (files written, catalog state). Prints one line per case and
``N of M handled cleanly``.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Outcome:
    """What one command did."""

    code: int | None  # None: killed at the time limit
    stdout: str
    stderr: str
    seconds: float
    workdir: Path


@dataclass
class Case:
    """One hostile input. ``setup(workdir)`` writes the files it needs and returns the command's
    arguments after ``synth`` (or a full argv when it starts with ``python``); ``check(outcome)``
    returns None when the case was handled cleanly, else why not. The default check: exit code
    ``expect_code``, no traceback, and either ``says`` in the output (a verdict on stdout) or, for a
    non-zero code, a non-empty stderr of at most ``max_error_lines`` lines."""

    name: str
    setup: Callable[[Path], list[str]]
    expect_code: int | None = 1
    check: Callable[[Outcome], str | None] | None = None
    max_error_lines: int = 2
    stdin: str | None = None
    says: str | None = None
    env: dict[str, str] = field(default_factory=dict)


def _limits(memory_mb: int) -> Callable[[], None]:
    def apply() -> None:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def run_case(case: Case, timeout: float, memory_mb: int) -> tuple[bool, str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        argv = case.setup(workdir)
        if argv[:1] != ["python"]:
            argv = [sys.executable, "-m", "pipeline.cli", *argv]
        else:
            argv = [sys.executable, *argv[1:]]
        env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(workdir), "COLUMNS": "120",
               **case.env}
        started = time.perf_counter()
        try:
            done = subprocess.run(argv, cwd=workdir, input=case.stdin, capture_output=True, text=True,
                                  timeout=timeout, env=env, preexec_fn=_limits(memory_mb))
            outcome = Outcome(done.returncode, done.stdout, done.stderr, time.perf_counter() - started, workdir)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
            err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
            outcome = Outcome(None, out, err, time.perf_counter() - started, workdir)
        problem = _default_check(case, outcome)
        if problem is None and case.check is not None:
            problem = case.check(outcome)
        return problem is None, problem or "ok", outcome.seconds


def _default_check(case: Case, outcome: Outcome) -> str | None:
    if outcome.code is None:
        return "did not finish in time"
    if "Traceback (most recent call last)" in outcome.stderr + outcome.stdout:
        return "printed a traceback: " + outcome.stderr.strip().splitlines()[-1][:160]
    if case.expect_code is not None and outcome.code != case.expect_code:
        return f"exit code {outcome.code}, expected {case.expect_code}: {outcome.stderr.strip()[:160]}"
    if case.says is not None:
        return None if case.says in outcome.stdout + outcome.stderr else f"does not say {case.says!r}"
    if outcome.code not in (0, None):
        lines = [line for line in outcome.stderr.strip().splitlines() if line.strip()]
        if not lines:
            return "failed without saying why"
        if len(lines) > case.max_error_lines:
            return f"{len(lines)} lines of error output: {lines[0][:120]}"
    return None


def all_cases(area: str | None) -> list[tuple[str, Case]]:
    import bench.hostile as package

    out = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if area and info.name != area:
            continue
        module = importlib.import_module(f"bench.hostile.{info.name}")
        out += [(info.name, case) for case in module.CASES]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--area", help="only the cases of bench/hostile/<area>.py")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    parser.add_argument("--memory-mb", type=int, default=2048, help="address-space cap per case")
    args = parser.parse_args()
    cases = all_cases(args.area)
    clean = 0
    for area, case in cases:
        ok, why, seconds = run_case(case, args.timeout, args.memory_mb)
        clean += ok
        print(f"{'ok  ' if ok else 'FAIL'} {area:10} {case.name:48} {seconds:6.1f}s  {'' if ok else why}")
    print(f"{clean} of {len(cases)} handled cleanly")
    sys.exit(0 if clean == len(cases) else 1)


if __name__ == "__main__":
    main()

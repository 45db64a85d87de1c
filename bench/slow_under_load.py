"""The slow test tier, run again and again on a machine kept busy: is it steady?

Run: ``python bench/slow_under_load.py --runs 20`` (defaults: 20 runs, 2 busy processes). It starts
``--busy`` processes that spin a CPU each (``while True: pass``), runs ``pytest -m slow -n 0``
``--runs`` times in a row from the repository root, then ends the busy processes (by their ids).
Each run's outcome, wall time and failing tests print as it ends, and a last line sums up:
``slow tier under load: 20 of 20 passed``. Exit 0 when every run passed, else 1. ``--log FILE``
also appends each run's pytest output to FILE. Extra arguments after ``--`` go to pytest (e.g.
``-- tests/runs/test_rollout.py`` to repeat one file). Ctrl-C or SIGTERM stops it: the busy
processes and the pytest run in progress end with it (pytest is sent Ctrl-C, so that the test's
clean-up ends what it started; its whole process group is killed if it has not ended in
``STOP_S`` seconds).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPIN = "while True: pass"
STOP_S = 120.0
"""How long a stopped pytest run may take to end its test's clean-up before it is killed."""


def failures(output: str) -> list[str]:
    """The ids pytest's short summary names as failed or in error."""
    return [line.split()[1] for line in output.splitlines() if line.startswith(("FAILED ", "ERROR "))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="times to run the slow tier")
    parser.add_argument("--busy", type=int, default=2, help="processes spinning a CPU each meanwhile")
    parser.add_argument("--log", type=Path, help="append each run's pytest output to this file")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()

    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM as Ctrl-C: the finally below runs
    busy = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.busy)]
    passed = 0
    tier: subprocess.Popen[str] | None = None
    n = 1
    try:
        for n in range(1, args.runs + 1):
            started = time.monotonic()
            tier = subprocess.Popen([sys.executable, "-m", "pytest", "-m", "slow", "-n", "0", "-q", "-rfE",
                                     "-p", "no:cacheprovider", *args.pytest_args], cwd=ROOT, env=env, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
            stdout, stderr = tier.communicate()
            done = subprocess.CompletedProcess(tier.args, tier.returncode, stdout, stderr)
            wall = time.monotonic() - started
            output = done.stdout + done.stderr
            if args.log is not None:
                with args.log.open("a", encoding="utf-8") as log:
                    log.write(f"===== run {n}: exit {done.returncode}, {wall:.0f} s\n{output}\n")
            tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""  # pytest's last line
            failed = failures(output)
            passed += done.returncode == 0
            print(f"run {n}: {'passed' if done.returncode == 0 else 'FAILED'} in {wall:.0f} s; {tail}"
                  + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)
    except KeyboardInterrupt:
        print(f"stopped: {passed} of {n - 1} runs passed before the stop", flush=True)
        return 130
    finally:
        if tier is not None and tier.poll() is None:
            # Ctrl-C first: pytest stops the test, whose clean-up ends what it started in sessions
            # of their own (a `synth run` with its Ray instance), out of reach of the group's kill
            os.killpg(tier.pid, signal.SIGINT)
            try:
                tier.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                os.killpg(tier.pid, signal.SIGKILL)  # pytest and what its tests started
                tier.wait()
        for proc in busy:
            proc.kill()
            proc.wait()
    print(f"slow tier under load ({args.busy} busy processes): {passed} of {args.runs} passed")
    return 0 if passed == args.runs else 1


if __name__ == "__main__":
    raise SystemExit(main())

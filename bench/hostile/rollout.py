"""Hostile model servers for ``synth rollout``: one case per misbehaviour of
``tests.support.hostile_server`` (plain and streamed), each played against a catalog of two
packages with ``--timeout 3``. Handled cleanly: the job ends in time, every episode recorded with
the finish reason the misbehaviour earns (or, when the server keeps failing, one ``error:`` line
with the resume command), no traceback, and the catalog readable with every row.

    python bench/hostile/rollout.py MISBEHAVIOUR plain|stream WORKDIR   # one case by hand
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.hostile_inputs import Case, Outcome
from tests.support.hostile_server import MISBEHAVIOURS, HostileServer

SYNTH = [sys.executable, "-m", "pipeline.cli"]
TIMEOUT_S = 3
REASON = {"never_ends": {"server_timeout"}, "trickle": {"server_timeout"}, "error_event": {"server_error"},
          "huge": {"malformed_reply", "server_timeout"}}
"""The finish reasons each misbehaviour may earn; every other one ``malformed_reply``. A 200 MB
reply is refused at 8 MiB, unless reading those 8 MiB takes the whole deadline (a loaded machine)."""


def drive(name: str, mode: str, workdir: Path) -> int:
    """Make a catalog of two packages, serve misbehaviour ``name``, run ``synth rollout`` against
    it, and relay its exit code and output."""
    catalog = workdir / "c.duckdb"
    subprocess.run([*SYNTH, "run", "--capability", "general", "--count", "2", "--catalog", str(catalog), "--json"],
                   check=True, capture_output=True)
    with HostileServer(MISBEHAVIOURS[name]) as server:
        done = subprocess.run([*SYNTH, "rollout", "--model", "m", "--base-url", server.base_url, "--samples", "2",
                               "--timeout", str(TIMEOUT_S), "--catalog", str(catalog), "--json",
                               *(["--stream"] if mode == "stream" else [])],
                              capture_output=True, text=True, timeout=TIMEOUT_S * 4 + 60)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


def _recorded(name: str) -> object:
    def check(outcome: Outcome) -> str | None:
        from pipeline.catalog.store import Catalog

        with Catalog.open(outcome.workdir / "c.duckdb", read_only=True) as reader:
            reasons = [r[0] for r in reader.query("SELECT finish_reason FROM rollouts").rows]
        wanted = REASON.get(name, {"malformed_reply"})
        if len(reasons) != 4 or not set(reasons) <= wanted:
            return f"rollouts recorded {reasons}, expected 4 of {sorted(wanted)}"
        return None
    return check


def _case(name: str, mode: str) -> Case:
    return Case(f"rollout: {name} ({mode})", lambda w: ["python", __file__, name, mode, str(w)], expect_code=0,
                check=_recorded(name))  # type: ignore[arg-type]


CASES = [_case(name, mode) for name in MISBEHAVIOURS for mode in ("plain", "stream")]


if __name__ == "__main__":
    sys.exit(drive(sys.argv[1], sys.argv[2], Path(sys.argv[3])))

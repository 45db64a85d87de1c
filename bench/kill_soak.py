"""Kill soak: runs and rollout jobs killed with SIGKILL at random moments, the catalog read after each.

    python bench/kill_soak.py [--kills 40] [--seconds 300] [--seed 1]

Against one catalog (made by an offline run of 12 packages) and a local OpenAI-compatible server
playing each package's reference (``tests.support``), repeats until ``--kills`` kills or
``--seconds`` have passed: start at random ``synth run`` (a new run, or ``--resume`` of the last),
``synth rollout`` (a new job, or ``--resume`` of the last) or ``synth run`` on a catalog file that
does not exist yet (a kill then often lands while the file is made), and SIGKILL it after a random
0.3–10 s (0.3–20 s for a rollout job, whose start-up is longer) (start-up, writes, checkpoints; sometimes twice in a row on the same job). After each
kill the catalog is read (``Catalog.open``, read-only) and must be readable, and
every row committed before (``packages.row_id``, ``rollouts`` keys) must still be there; a file
left without synth's tables must be explained by ``synth catalog stats`` in words (no "schema
version"). Prints one line per kill and a summary; exits 1 on any unreadable catalog or lost row.
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.agent_server import ScriptedAgents
from tests.support.openai_server import OpenAIServer

SYNTH = [sys.executable, "-m", "pipeline.cli"]


def synth(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SYNTH, *args], capture_output=True, text=True, timeout=timeout)


def committed(catalog: Path) -> tuple[set[int], set[tuple[int, str, int]]] | str:
    """The committed package rows and rollout keys, or why the catalog could not be read."""
    from pipeline.catalog.store import Catalog

    if not catalog.exists():
        return set(), set()
    try:
        with Catalog.open(catalog, read_only=True) as reader:
            packages = {int(r[0]) for r in reader.query("SELECT row_id FROM packages", max_rows=None).rows}
            rollouts = {(int(r[0]), str(r[1]), int(r[2])) for r in
                        reader.query("SELECT job, package_id, sample FROM rollouts", max_rows=None).rows}
    except Exception as exc:  # noqa: BLE001 (what the soak counts)
        return f"{type(exc).__name__}: {exc}"
    return packages, rollouts


def last_id(catalog: Path, table: str) -> int | None:
    from pipeline.catalog.store import Catalog

    try:
        with Catalog.open(catalog, read_only=True) as reader:
            value = reader.query(f"SELECT max(id) FROM {table}").rows[0][0]
    except Exception:  # noqa: BLE001 (unreadable: counted when the soak reads it)
        return None
    return int(value) if value is not None else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        catalog = Path(folder) / "catalog.duckdb"
        made = synth("run", "--capability", "general", "--count", "12", "--catalog", str(catalog), "--json",
                     timeout=600)
        if made.returncode != 0:
            sys.exit(f"could not make the catalog: {made.stderr.strip()}")
        from pipeline.env.catalog_packages import load_packages

        agents = ScriptedAgents(p.model_dump(mode="json") for p in load_packages(catalog))
        unreadable = lost = unexplained = kills = 0
        started = time.monotonic()
        before = committed(catalog)
        assert not isinstance(before, str), before
        with OpenAIServer(agents, latency_s=0.005) as server:
            while kills < args.kills and time.monotonic() - started < args.seconds:
                kind = rng.choice(["run", "run", "rollout", "rollout", "fresh"])
                target = catalog if kind != "fresh" else Path(folder) / f"fresh-{kills}.duckdb"
                if kind == "run":
                    run = last_id(catalog, "runs")
                    command = (["run", "--resume", str(run)] if run is not None and rng.random() < 0.5
                               else ["run", "--capability", "general", "--count", "200"])
                elif kind == "rollout":
                    job = last_id(catalog, "rollout_jobs")
                    command = (["rollout", "--resume", str(job)] if job is not None and rng.random() < 0.5
                               else ["rollout", "--model", "reference", "--base-url", server.base_url, "--samples", "20",
                                     "--concurrency", "4"])
                else:
                    command = ["run", "--capability", "general", "--count", "5"]
                for _ in range(2 if rng.random() < 0.2 else 1):  # a double kill: start again, kill again
                    process = subprocess.Popen([*SYNTH, *command, "--catalog", str(target), "--json"],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    delay = rng.uniform(0.3, 20.0 if kind == "rollout" else 10.0)  # start-up takes seconds
                    time.sleep(delay)
                    process.send_signal(signal.SIGKILL)
                    process.wait()
                    kills += 1
                    after = committed(target)
                    problem = ""
                    if isinstance(after, str):
                        empty = "is empty: the file was created" in after
                        unexplained += not empty
                        unreadable += not empty
                        problem = after[:120]
                    elif target == catalog and not isinstance(before, str):
                        missing = len(before[0] - after[0]) + len(before[1] - after[1])
                        lost += missing
                        problem = f"{missing} committed rows lost" if missing else ""
                        before = after
                    rows = "" if isinstance(after, str) else f"{len(after[0])} packages, {len(after[1])} rollouts"
                    print(f"kill {kills:3} {kind:8} after {delay:4.2f}s  {rows:32} {problem}", flush=True)
                    if target != catalog:
                        break
        print(f"{kills} SIGKILLs in {time.monotonic() - started:.0f} s: {unreadable} unreadable catalogs, "
              f"{lost} committed rows lost, {unexplained} empty catalogs not explained")
        sys.exit(1 if unreadable or lost or unexplained else 0)


if __name__ == "__main__":
    main()

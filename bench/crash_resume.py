"""Crash test: a batch run killed with SIGKILL at random moments and resumed each time.

    python bench/crash_resume.py [--count 500] [--kills 5] [--seed 1]

Starts ``synth run --capability general --count N`` on a fresh catalog, kills it with SIGKILL once the
catalog holds a random number of accepted packages (so every kill lands mid-run, at a random moment
of the work), resumes it with ``synth run --resume``, and repeats ``--kills`` times before letting the
last resume finish. Then it checks the end state: exactly N accepted packages in the run, no duplicate
ids, and every accepted package accepted again by ``synth verify`` on a JSONL export.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.catalog.errors import CatalogError  # noqa: E402
from pipeline.catalog.store import Catalog  # noqa: E402

SYNTH = [sys.executable, "-m", "pipeline.cli"]


def accepted(catalog: Path) -> list[str]:
    out = subprocess.run([*SYNTH, "catalog", "query", "SELECT id FROM packages WHERE status = 'accepted'", "--max-rows", "0",
                          "--catalog", str(catalog), "--json"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    return [row[0] for row in data["rows"]]


def wait_for(catalog: Path, count: int, proc: subprocess.Popen[str]) -> None:
    """Poll the catalog (read-only, between the writer's commits) until it holds ``count`` accepted."""
    while proc.poll() is None:
        try:
            with Catalog.open(catalog, read_only=True, busy_timeout=2.0) as reader:
                if reader.accepted_count() >= count:
                    return
        except CatalogError:
            pass  # not created yet, or busy for longer than the timeout: look again
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        catalog = Path(folder) / "catalog.duckdb"
        common = ["--catalog", str(catalog), "--json"]
        command = [*SYNTH, "run", "--capability", "general", "--count", str(args.count), "--concurrency", "2", *common]
        thresholds = sorted(rng.sample(range(1, args.count), args.kills))
        counts = []
        started = time.perf_counter()
        for kill in range(args.kills + 1):
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            if kill == args.kills:
                out, _ = proc.communicate(timeout=900)
                final = json.loads(out)
                break
            wait_for(catalog, thresholds[kill], proc)
            time.sleep(rng.uniform(0.0, 0.3))  # and a random moment inside the work that follows
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            counts.append(len(accepted(catalog)))
            command = [*SYNTH, "run", "--resume", "1", *common]
        elapsed = time.perf_counter() - started
        ids = accepted(catalog)
        export = Path(folder) / "accepted.jsonl"
        subprocess.run([*SYNTH, "export", "--format", "jsonl", "--out", str(export), *common], check=True,
                       capture_output=True)
        verified = subprocess.run([*SYNTH, "verify", str(export), "--json"], capture_output=True, text=True)
        verdicts = [json.loads(line) for line in verified.stdout.splitlines()]
    print(f"kills                 {args.kills} (accepted when killed: {counts})")
    print(f"final run status      {final['status']} ({final['stop_reason']})")
    print(f"accepted              {len(ids)} / {args.count}")
    print(f"duplicate ids         {len(ids) - len(set(ids))}")
    print(f"re-verified on export {sum(v['accepted'] for v in verdicts)} / {len(verdicts)} accepted")
    print(f"elapsed               {elapsed:.1f} s")


if __name__ == "__main__":
    main()

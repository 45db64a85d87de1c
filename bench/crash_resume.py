"""Crash test: a batch run killed with SIGKILL at random moments and resumed each time.

    python bench/crash_resume.py [--count 2000] [--kills 5] [--seed 1]

Starts ``synth run --capability general --count N --concurrency 1`` on a fresh catalog, kills it with
SIGKILL at a random moment between 0.8 and 1.6 s after it starts (start-up, or early work: well before
the target, so every kill lands mid-run; the script says so if one did not), resumes it with
``synth run --resume``, and repeats ``--kills`` times before letting the last resume finish. Then it
checks the end state: exactly N accepted packages in the run, no duplicate ids, and every accepted
package accepted again by ``synth verify`` on a JSONL export.
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

SYNTH = [sys.executable, "-m", "pipeline.cli"]
STARTUP_S = 0.8


def accepted(catalog: Path) -> list[str]:
    if not catalog.exists():
        return []  # killed before the catalog was created
    out = subprocess.run([*SYNTH, "catalog", "query", "SELECT id FROM packages WHERE status = 'accepted'", "--max-rows", "0",
                          "--catalog", str(catalog), "--json"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    return [row[0] for row in data["rows"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        catalog = Path(folder) / "catalog.duckdb"
        common = ["--catalog", str(catalog), "--json"]
        command = [*SYNTH, "run", "--capability", "general", "--count", str(args.count), "--concurrency", "1", *common]
        counts = [0]
        started = time.perf_counter()
        for kill in range(args.kills + 1):
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            if kill == args.kills:
                out, _ = proc.communicate(timeout=900)
                final = json.loads(out)
                break
            time.sleep(STARTUP_S + rng.uniform(0.0, 0.8))  # a random moment of start-up or early work
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
    mid_run = sum(0 < n < args.count for n in counts[1:])
    print(f"kills                 {args.kills} (accepted when killed: {counts[1:]}; {mid_run} landed mid-run)")
    print(f"final run status      {final['status']} ({final['stop_reason']})")
    print(f"accepted              {len(ids)} / {args.count}")
    print(f"duplicate ids         {len(ids) - len(set(ids))}")
    print(f"re-verified on export {sum(v['accepted'] for v in verdicts)} / {len(verdicts)} accepted")
    print(f"elapsed               {elapsed:.1f} s")


if __name__ == "__main__":
    main()

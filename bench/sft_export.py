"""SFT export check at scale: 1,000 accepted packages across every capability, exported with
``synth export --format sft``, each line checked for structure.

    python bench/sft_export.py [--count 1000]

Fills a fresh catalog with ``synth run`` (an equal share per capability, offline), exports it as SFT
chat samples, and prints lines written, samples left out by the truncation policy (by reason), and
lines with problems: invalid JSON, a tool_call id not answered by exactly one tool message, roles
out of order, tool schemas missing (``pipeline.interop.sft.sft_problems``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pipeline.interop.sft import sft_problems
from pipeline.taxonomy.capabilities import taxonomy

SYNTH = [sys.executable, "-m", "pipeline.cli"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    caps = list(taxonomy())
    with tempfile.TemporaryDirectory() as folder:
        catalog = ["--catalog", str(Path(folder) / "catalog.duckdb")]
        for n, cap in enumerate(caps):
            share = args.count // len(caps) + (n < args.count % len(caps))
            subprocess.run([*SYNTH, "run", "-c", cap, "-n", str(share), "--json", *catalog], check=True,
                           capture_output=True)
        out = Path(folder) / "sft.jsonl"
        started = time.perf_counter()
        summary = json.loads(subprocess.run([*SYNTH, "export", "--format", "sft", "--out", str(out), "--json",
                                             *catalog], check=True, capture_output=True, text=True).stdout)
        elapsed = time.perf_counter() - started
        bad_json = problems = 0
        for line in out.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                bad_json += 1
                continue
            problems += bool(sft_problems(record))
    print(f"accepted packages   {args.count} over {len(caps)} capabilities")
    print(f"lines written       {summary['rows']}")
    print(f"left out            {summary['details'].get('skipped') or 'none'}")
    print(f"invalid JSON lines  {bad_json}")
    print(f"structural problems {problems}")
    print(f"export              {elapsed:.1f} s (command included)")


if __name__ == "__main__":
    main()

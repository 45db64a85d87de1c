"""SFT export check at scale: 1,000 offline packages across every capability, exported as chat
samples, each line checked for structure.

    python bench/sft_export.py [--count 1000] [--seed 7]

Prints lines written, samples left out by the truncation policy (by reason), lines with structural
problems (invalid JSON, a tool_call id not answered by exactly one tool message, roles out of order,
tool schemas missing), and export speed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.capabilities import taxonomy  # noqa: E402
from pipeline.export_sft import sft_problems, write_sft  # noqa: E402
from pipeline.generate.offline import generate_package, pick_template  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    caps = list(taxonomy())
    packages = [generate_package(caps[i % len(caps)], pick_template(caps[i % len(caps)], i // len(caps)), args.seed,
                                 i // len(caps)) for i in range(args.count)]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "sft.jsonl"
        started = time.perf_counter()
        summary = write_sft(packages, out)
        elapsed = time.perf_counter() - started
        bad_json = problems = 0
        for line in out.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                bad_json += 1
                continue
            problems += bool(sft_problems(record))
    print(f"packages            {len(packages)} over {len(caps)} capabilities")
    print(f"lines written       {summary.rows}")
    print(f"left out            {summary.skipped or 'none'}")
    print(f"invalid JSON lines  {bad_json}")
    print(f"structural problems {problems}")
    print(f"export speed        {len(packages) / elapsed:.0f} packages/s")


if __name__ == "__main__":
    main()

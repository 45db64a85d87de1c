"""Repair rate of regeneration: an offline run with injected defects, then ``synth regen``.

    python bench/regen_rate.py [--count 200] [--defect-rate 0.3] [--capability general]

Runs ``synth run --max-attempts 1 --defect-rate R`` (each injected defect is rejected and its slot
fails), then ``synth regen`` once, and prints the share of failed slots regenerate repaired.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SYNTH = [sys.executable, "-m", "pipeline.cli"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--defect-rate", type=float, default=0.3)
    parser.add_argument("--capability", default="general")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        catalog = ["--catalog", str(Path(folder) / "catalog.duckdb"), "--json"]
        run = subprocess.run([*SYNTH, "run", "-c", args.capability, "-n", str(args.count), "--max-attempts", "1",
                              "--defect-rate", str(args.defect_rate), *catalog], capture_output=True, text=True)
        summary = json.loads(run.stdout)
        caught = json.loads(subprocess.run([*SYNTH, "catalog", "query", "--max-rows", "0", *catalog, (
            "SELECT count(*), count(*) FILTER (WHERE status = 'rejected' AND list_contains(codes, injected_defect)) "
            "FROM (SELECT p.status, p.injected_defect, list(f.code) AS codes FROM packages p LEFT JOIN findings f "
            "ON f.package_row = p.row_id WHERE p.injected_defect IS NOT NULL GROUP BY p.row_id, p.status, p.injected_defect)")],
            capture_output=True, text=True, check=True).stdout)["rows"][0]
        regen = json.loads(subprocess.run([*SYNTH, "regen", *catalog], capture_output=True, text=True,
                                          check=True).stdout)
    print(f"run                 {summary['accepted']} accepted, {summary['failed_slots']} slots failed "
          f"(codes: {summary['rejection_codes']})")
    print(f"injected defects    {caught[0]}, rejected with their own code: {caught[1]}")
    print(f"regenerated slots   {regen['slots']}")
    print(f"repaired            {regen['repaired']} ({regen['repair_rate']:.1%}; target >= 80%)")


if __name__ == "__main__":
    main()

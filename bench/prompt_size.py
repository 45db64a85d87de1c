"""Prompt size: characters sent per first attempt and per repair, per capability.

    python bench/prompt_size.py [--before <git revision>]

An attempt's size is its messages (system and user) plus the JSON Schema sent as
``response_format`` (as the ``openai`` SDK makes it strict). For each template: the first attempt
of slot 0, and a repair of the offline package of slot 0 with its first three findings (or none);
averaged per capability. With ``--before``, the same is measured at that revision (checked out in
a temporary git worktree, run with this interpreter) and the change is printed as a ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def measure() -> dict[str, dict[str, float]]:
    """Per capability, the mean characters of a first attempt and of a repair (this checkout)."""
    from openai.lib._pydantic import to_strict_json_schema

    from pipeline.generation.base import Attempt
    from pipeline.generation.llm import TaskPackageOutput
    from pipeline.generation.offline import generate_package
    from pipeline.generation.prompting import messages_for
    from pipeline.taxonomy.capabilities import taxonomy
    from pipeline.verify.verifier import verify_package

    schema = len(json.dumps(to_strict_json_schema(TaskPackageOutput)))
    capabilities = taxonomy()
    out: dict[str, dict[str, float]] = {}
    for cap in capabilities.values():
        first, repair = [], []
        for tpl in cap.templates:
            attempt = Attempt(capability=cap.name, template=tpl.name, seed=7, slot=0)
            first.append(sum(len(str(m["content"])) for m in messages_for(attempt, capabilities)) + schema)
            parent = generate_package(cap.name, tpl.name, 7, 0)
            findings = verify_package(parent).findings[:3]
            again = attempt.model_copy(update={"attempt": 2, "parent": parent, "findings": findings})
            repair.append(sum(len(str(m["content"])) for m in messages_for(again, capabilities)) + schema)
        out[cap.name] = {"first": statistics.mean(first), "repair": statistics.mean(repair), "schema": schema}
    return out


def measure_at(revision: str) -> dict[str, dict[str, float]]:
    """``measure()`` at a git revision, in a temporary worktree."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), revision],
                       check=True, capture_output=True)
        try:
            old = {**os.environ, "PYTHONPATH": str(tree)}  # its pipeline before the installed one
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--json"], cwd=tree, env=old,
                                  check=True, capture_output=True, text=True)
            return json.loads(done.stdout)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True,
                           capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", help="also measure this git revision and compare")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    now = measure()
    if args.json:
        print(json.dumps(now))
        return
    before = measure_at(args.before) if args.before else None
    schema = f"schema {next(iter(now.values()))['schema']:,.0f}"
    if before:
        schema += f" (before: {next(iter(before.values()))['schema']:,.0f})"
    print(f"characters per attempt (messages + response schema); {schema}")
    head = f"{'capability':24}{'first':>10}{'repair':>10}"
    if before:
        head += f"{'first before':>14}{'repair before':>15}{'first ratio':>13}{'repair ratio':>14}"
    print(head)
    for cap, f in now.items():
        line = f"{cap:24}{f['first']:>10,.0f}{f['repair']:>10,.0f}"
        if before and cap in before:
            b = before[cap]
            line += (f"{b['first']:>14,.0f}{b['repair']:>15,.0f}"
                     f"{f['first'] / b['first']:>13.2f}{f['repair'] / b['repair']:>14.2f}")
        print(line)


if __name__ == "__main__":
    main()

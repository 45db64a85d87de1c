"""Importing ClawEnvKit tasks onto the claw profile: what is imported, what is refused and why,
how many checks map, and what an agent that does nothing scores by synth's grader and by theirs.

    python bench/claw_import.py [PATH ...] [--clawenvkit CHECKOUT]

PATH: task files or folders (default: ``tests/interop/clawenvkit_tasks``). Printed: the share of
task files imported; refusals grouped by their reason; scoring components mapped and left out
(count and weight, over the imported tasks; safety rules apart); the null agent's mean score and
passes by synth (judge not evaluated, pass at 0.75) and by ClawEnvKit's grading rules
(``pipeline.core.clawenvkit.grading``: their judge scores an empty answer 0.5, pass at 0.5).

``--clawenvkit CHECKOUT``: also grade each task with their own ``GradingEngine``
(``clawenvkit/evaluate/engine.py`` of a checkout, loaded from its file; stdlib only) for an empty
audit and an empty output, and count the tasks where it differs from ``null_agent_grade``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from pipeline.core import yaml_text
from pipeline.core.clawenvkit.grading import null_agent_grade
from pipeline.interop.clawenvkit_import import NullAgentFloors, import_clawenvkit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TASKS = ROOT / "tests" / "interop" / "clawenvkit_tasks"


def their_engine(checkout: Path) -> Any:
    """A ``GradingEngine`` from a ClawEnvKit checkout's ``clawenvkit/evaluate/engine.py``."""
    path = checkout / "clawenvkit" / "evaluate" / "engine.py"
    spec = importlib.util.spec_from_file_location("clawenvkit_engine", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not found; pass the root of a ClawEnvKit checkout")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.GradingEngine()


def refusal(message: str, source: str) -> str:
    """A refusal's reason without the file and the list of services (one group per reason)."""
    text = message.removeprefix(f"{source}: ")
    return text.split("; synth imports")[0].split(" (files: ")[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[DEFAULT_TASKS])
    parser.add_argument("--clawenvkit", type=Path, metavar="CHECKOUT")
    args = parser.parse_args()
    results = import_clawenvkit(args.paths)
    imported = [r for r in results if r.imported]
    print(f"task files: {len(results)}; imported {len(imported)} ({len(imported) / len(results):.0%}); "
          f"refused {len(results) - len(imported)}")
    refused = Counter(refusal(r.findings[0].message, r.source) for r in results if not r.imported)
    for reason, n in refused.most_common():
        print(f"  refused {n}: {reason}")
    mapped = [c for r in imported if r.package for c in r.package.checks]
    left = [u for r in imported for u in r.unmapped if not u.safety]
    total = sum(c.weight for c in mapped) + sum(u.weight for u in left)
    print(f"scoring components of the imported tasks: {len(mapped)} mapped, {len(left)} left out; weight "
          f"mapped {sum(c.weight for c in mapped) / total:.3f} of {total:.2f}")
    for (kind, reason), n in Counter((u.kind, u.reason) for u in left).most_common():
        print(f"  left out {n}: {kind}: {reason}")
    safety_kept = sum(len(r.package.safety) for r in imported if r.package)
    safety_left = Counter(u.reason for r in imported for u in r.unmapped if u.safety)
    print(f"safety rules: {safety_kept} mapped, {sum(safety_left.values())} left out")
    for reason, n in safety_left.most_common():
        print(f"  left out {n}: {reason}")
    floors = NullAgentFloors.of(results)
    if floors is not None:
        print(f"null agent over the {floors.tasks} imported: synth mean {floors.synth_mean:.3f}, passes "
              f"{floors.synth_passes} (at {floors.synth_threshold:g}); ClawEnvKit mean {floors.clawenvkit_mean:.3f}, "
              f"passes {floors.clawenvkit_passes} (at {floors.clawenvkit_threshold:g})")
    graded = [r.clawenvkit_null_agent for r in results if r.clawenvkit_null_agent is not None]
    if graded:
        print(f"null agent by ClawEnvKit's rules over all {len(graded)} gradable task files: mean "
              f"{sum(g.final for g in graded) / len(graded):.3f}, passes {sum(g.passed for g in graded)}")
    if args.clawenvkit is not None:
        engine = their_engine(args.clawenvkit)
        differ = []
        for r in results:
            task = yaml_text.load(Path(r.source).read_text(encoding="utf-8"))
            ours = null_agent_grade(task)
            services = {t.get("service") for t in task.get("tools") or [] if t.get("service")}
            theirs = engine.grade(task, {s: [] for s in services}, "")
            if abs(theirs.final_score - ours.final) > 1e-9 or abs(theirs.completion - ours.completion) > 1e-9:
                differ.append(f"{Path(r.source).name}: theirs {theirs.final_score:.4f}, ours {ours.final:.4f}")
        print(f"their GradingEngine on an empty audit and output: {len(results) - len(differ)} of {len(results)} "
              "task files graded as null_agent_grade grades them")
        for line in differ:
            print(f"  differs: {line}")


if __name__ == "__main__":
    main()

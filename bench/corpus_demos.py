"""Check the demonstrations that label corpus cases by execution, independently of the verifier.

    python bench/corpus_demos.py [FOLDER ...]      (default: tests/corpus)

A corpus case (``{"family", "pair", "defect", "description", "package", "demos"}``) may carry
``demos``: other solutions of its package, each ``{"agent": "wrong" | "correct", "note": "...",
"steps": [reference steps]}``, played in a fresh episode exactly as a reference is (``$ref`` and
``$fact`` allowed; the simulated user answers its questions) and graded by the package's checks:

- a **clean** case is right when its reference scores 1.0, every wrong demo stays below 0.75
  (``GRAVE_CEILING``: the demos were written when that was the pass line, so a wrong demo there
  keeps too much of the reward), or below full marks for a demo marked ``"must": "lose score"``
  (a slip the verifier asks only to lose score: one record of bulk work skipped, damage to the
  records the request does not concern), and every correct demo passes (full marks, ``passes``);
- a **defective** case is right when at least one demo shows its defect: a wrong demo at or above
  its line, or a correct demo that does not pass (defects that no execution shows, such as
  evidence lost to the training export's cut, carry no demo).

Prints one line per case whose demos contradict its label, then the totals; exit 1 if any does.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.core.episode import execute
from pipeline.core.grading import Grader
from pipeline.core.package import GRAVE_CEILING, TaskPackage, passes
from tests.support.corpus import CORPUS_DIR


@dataclass
class DemoResult:
    agent: str
    note: str
    score: float
    must_lose_only: bool = False

    @property
    def shows_defect(self) -> bool:
        """A wrong agent that keeps three quarters of the score (or full marks, for one that
        must only lose score), or a correct agent that does not pass."""
        if self.agent != "wrong":
            return not passes(self.score)
        return passes(self.score) if self.must_lose_only else self.score >= GRAVE_CEILING


def play_demos(case: dict[str, Any]) -> tuple[float, list[DemoResult]]:
    """The reference's score and each demo's, for one corpus case."""
    package = TaskPackage.model_validate(case["package"])
    grader = Grader(package)
    reference = grader.value(execute(package))
    results = []
    for demo in case.get("demos", []):
        steps = TaskPackage.model_validate({**case["package"], "reference": demo["steps"]}).reference
        results.append(DemoResult(demo["agent"], demo.get("note", ""), grader.value(execute(package, steps)),
                                  demo.get("must") == "lose score"))
    return reference, results


def contradictions(case: dict[str, Any]) -> list[str]:
    """Why the case's demos disagree with its label (empty when they agree)."""
    try:
        reference, results = play_demos(case)
    except ValueError as exc:  # pydantic's ValidationError: a package (or demo) that does not load
        return [] if case["defect"] is not None and not case.get("demos") else [f"does not load: {exc}"]
    problems = []
    if case["defect"] is None:
        if reference < 1.0:
            problems.append(f"reference scores {reference:.3f}")
        problems += [f"{r.agent} demo ({r.note}) scores {r.score:.3f}" for r in results if r.shows_defect]
    elif results and not any(r.shows_defect for r in results):
        problems.append("no demo shows the defect: " + "; ".join(f"{r.agent} {r.score:.3f}" for r in results))
    return problems


def main() -> None:
    roots = [Path(a) for a in sys.argv[1:]] or [CORPUS_DIR]
    cases = sorted(p for root in roots for p in ([root] if root.is_file() else root.rglob("*.json")))
    bad = demos = 0
    for path in cases:
        case = json.loads(path.read_text(encoding="utf-8"))
        if "package" not in case:
            continue
        demos += len(case.get("demos", []))
        problems = contradictions(case)
        if problems:
            bad += 1
            print(f"{path}: {'; '.join(problems)}")
    print(f"{len(cases)} cases, {demos} demos, {bad} contradicting their label")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

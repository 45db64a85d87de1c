"""Execution: run the reference in a fresh world, twice. Raises ``reference_error``,
``reference_not_full_score`` and ``nondeterministic``."""

from __future__ import annotations

from pipeline.checks import ScoreReport, score
from pipeline.package import TaskPackage
from pipeline.runtime import Trajectory, execute
from pipeline.verify.codes import Code
from pipeline.verify.report import Finding


def missing_reference_findings(package: TaskPackage) -> list[Finding]:
    """A package without an executable reference cannot be proven consistent, so it is never
    accepted (an import keeps its static and null-agent findings for the report)."""
    if package.has_reference and package.reference:
        return []
    return [Finding(code=Code.REFERENCE_ERROR,
                    message="the package has no executable reference solution: nothing proves its request, "
                            "state, tools and checks agree")]


def run_reference(package: TaskPackage) -> tuple[Trajectory, ScoreReport, list[Finding]]:
    """The reference trajectory, its score report, and the findings about it."""
    first = execute(package)
    report = score(package, first)
    findings = [
        Finding(code=Code.REFERENCE_ERROR, step=s.index, message=f"reference step {s.index}: {s.error}")
        for s in first.errors
    ]
    if report.checks_score < 1.0:  # a broken safety rule is reported as safety_contradiction
        failed = [f"{r.id} ({r.detail})" for r in report.checks if r.passed is False]
        findings.append(Finding(code=Code.REFERENCE_NOT_FULL_SCORE, detail={"score": report.checks_score},
                                message=f"the reference scores {report.checks_score:.3f}, not 1.0; failing: "
                                        f"{'; '.join(failed) or 'none'}"))
    second = execute(package)
    again = score(package, second)
    if second.model_dump() != first.model_dump() or again.score != report.score:
        findings.append(Finding(code=Code.NONDETERMINISTIC,
                                message="two runs of the reference differ in state, audit or score"))
    return first, report, findings

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


def fault_findings(package: TaskPackage, ref: Trajectory) -> list[Finding]:
    """Every injected fault must fire during the reference (a call of its tool answered with its
    status) and be recovered from (a later successful call of the same tool); a fault that never
    fires tests nothing."""
    out: list[Finding] = []
    for n, fault in enumerate(package.faults):
        fired = [i for i, a in enumerate(ref.audit) if a.tool == fault.tool and a.status == fault.status]
        if not fired:
            out.append(Finding(code=Code.REFERENCE_ERROR, detail={"fault": n},
                               message=f"fault {n} ({fault.status} on call {fault.on_call} of {fault.tool}) never "
                                       "fires during the reference: it tests nothing"))
        elif not any(a.tool == fault.tool and a.ok for a in ref.audit[fired[-1] + 1:]):
            out.append(Finding(code=Code.REFERENCE_ERROR, detail={"fault": n},
                               message=f"the reference never recovers from fault {n}: no successful {fault.tool} "
                                       "call after it"))
    return out


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
    findings += fault_findings(package, first)
    second = execute(package)
    again = score(package, second)
    if second != first or again.score != report.score:
        findings.append(Finding(code=Code.NONDETERMINISTIC,
                                message="two runs of the reference differ in state, audit or score"))
    return first, report, findings

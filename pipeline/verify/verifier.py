"""The verification stage: a package is accepted only when no reason code fires.

Order: schema → static consistency → replay the reference (twice) → mutation-test the graders →
evidence under truncation → dedup. Static findings that make execution meaningless (unknown
endpoints and tools) stop before execution; everything else is reported together, so one
repair round sees every problem. Raises ``schema_invalid`` (the only code raised here).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from pipeline.core.codes import Code
from pipeline.core.grading import Grader
from pipeline.core.outcomes import Finding, Verdict
from pipeline.core.package import NULL_AGENT_FLOOR, TaskPackage
from pipeline.core.training_format import Policy
from pipeline.verify.consistency import consistency_findings
from pipeline.verify.dedup import DedupIndex, duplicate_findings
from pipeline.verify.execution import missing_reference_findings, run_reference
from pipeline.verify.mutations import mutation_findings, null_agent_findings
from pipeline.verify.static import (
    hidden_fact_findings,
    reference_findings,
    safety_findings,
    tool_findings,
    unknown_tool_findings,
    weight_findings,
)
from pipeline.verify.truncation import evidence_findings

BLOCKING = {Code.UNKNOWN_ENDPOINT, Code.UNKNOWN_TOOL}


class Options(Policy):
    """The training export's policy (which evidence must survive it), and the null agent's floor."""

    null_floor: float = NULL_AGENT_FLOOR


def schema_findings(data: dict[str, Any]) -> tuple[TaskPackage | None, list[Finding]]:
    try:
        return TaskPackage.model_validate(data), []
    except ValidationError as exc:
        return None, [
            Finding(code=Code.SCHEMA_INVALID, message=f"{'.'.join(str(p) for p in e['loc']) or '(package)'}: {e['msg']}")
            for e in exc.errors()[:10]
        ]


def verify_package(
    package: TaskPackage | dict[str, Any],
    options: Options | None = None,
    dedup: DedupIndex | None = None,
) -> Verdict:
    """Verify one package (a dict is validated first). The verdict's ``id`` is computed from the
    content; a package that came with another id gets a note saying so, never a rejection."""
    options = options or Options()
    if isinstance(package, dict):
        given = str(package.get("id", ""))
        parsed, findings = schema_findings(package)
        if parsed is None:
            return Verdict.build(given or "(invalid)", findings, None)
        package = parsed
    notes: list[str] = []
    computed = package.compute_id()
    if package.id != computed:
        if package.id:
            notes.append(f"id {package.id} recomputed as {computed}")
        package = package.model_copy(update={"id": computed})

    grader = Grader(package)
    findings = tool_findings(package) + unknown_tool_findings(package) + weight_findings(package)
    findings += hidden_fact_findings(package)
    if not package.has_reference or not package.reference:
        findings += missing_reference_findings(package)
        findings += reference_findings(package, None) + safety_findings(package, None)
        findings += consistency_findings(package, None)
        findings += null_agent_findings(package, options.null_floor, grader)
        return Verdict.build(package.id, findings + duplicate_findings(package, dedup), None, notes)
    if any(f.code in BLOCKING for f in findings):
        return Verdict.build(package.id, findings, None, notes)

    run, exec_findings = run_reference(package, grader)
    ref, report = run.trajectory, run.report
    findings += reference_findings(package, ref) + safety_findings(package, report)
    findings += consistency_findings(package, ref) + exec_findings
    findings += mutation_findings(run, options.null_floor)
    findings += evidence_findings(package, ref, options)
    findings += duplicate_findings(package, dedup)
    return Verdict.build(package.id, findings, report.score, notes)

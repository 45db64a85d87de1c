"""The verification stage: a package is accepted only when no reason code fires.

Order: schema → static consistency → execute the reference (twice) → mutation-test the graders →
evidence under truncation → dedup. Static findings that make execution meaningless (unknown
endpoints and tools) stop before execution; everything else is reported together, so one
repair round sees every problem. Raises ``schema_invalid`` (the only code raised here).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from pipeline.package import TaskPackage
from pipeline.training_format import Policy
from pipeline.verify.codes import Code
from pipeline.verify.consistency import consistency_findings
from pipeline.verify.dedup import DedupIndex, duplicate_findings
from pipeline.verify.execution import missing_reference_findings, run_reference
from pipeline.verify.mutations import NULL_AGENT_FLOOR, mutation_findings, null_agent_findings
from pipeline.verify.report import Finding, Verdict
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
    """Verify one package. A dict is validated first; a missing or stale ``id`` is recomputed and
    noted, never a rejection."""
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
        notes.append(f"id {package.id or '(missing)'} recomputed as {computed}")
        package = package.model_copy(update={"id": computed})

    findings = tool_findings(package) + unknown_tool_findings(package) + weight_findings(package)
    findings += hidden_fact_findings(package)
    if not package.has_reference or not package.reference:
        findings += missing_reference_findings(package)
        findings += reference_findings(package, None) + safety_findings(package, None)
        findings += consistency_findings(package, None)
        findings += null_agent_findings(package, options.null_floor)
        return Verdict.build(package.id, findings + duplicate_findings(package, dedup), None, notes)
    if any(f.code in BLOCKING for f in findings):
        return Verdict.build(package.id, findings, None, notes)

    ref, report, exec_findings = run_reference(package)
    findings += reference_findings(package, ref) + safety_findings(package, report)
    findings += consistency_findings(package, ref) + exec_findings
    findings += mutation_findings(package, ref, report.score, options.null_floor)
    findings += evidence_findings(package, ref, options)
    findings += duplicate_findings(package, dedup)
    return Verdict.build(package.id, findings, report.score, notes)


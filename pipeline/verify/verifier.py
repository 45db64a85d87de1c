"""The verification stage: a package is accepted only when no reason code fires.

Order: schema → static checks → replay the reference (twice) → what the package and its
trajectory say (references, safety, request ↔ checks, entities, hidden facts) → mutation-test the
graders (wrong agents, collateral damage) → the ClawEnvKit export of a claw package (its wrong
agents in their grader) → grounding → the capability's contract → evidence under truncation →
dedup. Static findings that make execution meaningless (unknown
endpoints and tools) stop before execution; everything else is reported together, so one
repair round sees every problem. Each package has a wall-time budget (``Options.time_limit_s``);
past it the stages stop and the package is rejected. Raises ``schema_invalid`` and
``verification_timeout``.
"""

from __future__ import annotations

import gc
from typing import Any

from pydantic import ValidationError

from pipeline.core.codes import Code
from pipeline.core.errors import problems
from pipeline.core.grading import Grader, ScoreReport
from pipeline.core.outcomes import Finding, Verdict
from pipeline.core.package import NULL_AGENT_FLOOR, TaskPackage
from pipeline.core.services import CLAW_PROFILE
from pipeline.core.training_format import Policy
from pipeline.verify.claims import with_claims
from pipeline.verify.collateral import collateral_findings
from pipeline.verify.consistency import consistency_findings
from pipeline.verify.contracts import contract_findings
from pipeline.verify.dedup import DedupIndex, duplicate_findings
from pipeline.verify.entities import entity_findings
from pipeline.verify.equivalence import equivalence_findings
from pipeline.verify.execution import (
    Deadline,
    ReferenceRun,
    VerificationTimeout,
    missing_reference_findings,
    run_reference,
)
from pipeline.verify.grounding import grounding_findings
from pipeline.verify.hidden_facts import hidden_fact_findings, state_reader_findings
from pipeline.verify.limits import DEFAULT_TIME_LIMIT_S
from pipeline.verify.mutations import mutation_findings, null_agent_findings
from pipeline.verify.proposals import read_package
from pipeline.verify.readers import Reader, ReadingCache, RulesReader, is_english, language_note, read_verdict
from pipeline.verify.safety import safety_findings
from pipeline.verify.static import reference_findings, tool_findings, unknown_tool_findings, weight_findings
from pipeline.verify.truncation import evidence_findings

BLOCKING = {Code.UNKNOWN_ENDPOINT, Code.UNKNOWN_TOOL}


class Options(Policy):
    """The training export's policy (which evidence its samples must keep), whether losing any
    refuses the package (``require_sft``; otherwise the package is only marked not ``sft_ready``),
    whether a claw package ClawEnvKit's format cannot carry is refused (``require_exportable``:
    ``not_exportable``; runs ask it, checking a file does not), the null agent's floor, and
    the wall-time budget of one package's verification (0: none)."""

    require_sft: bool = False
    require_exportable: bool = False
    null_floor: float = NULL_AGENT_FLOOR
    time_limit_s: float = DEFAULT_TIME_LIMIT_S


def schema_findings(data: dict[str, Any]) -> tuple[TaskPackage | None, list[Finding]]:
    try:
        return TaskPackage.model_validate(data), []
    except ValidationError as exc:
        return None, [
            Finding(code=Code.SCHEMA_INVALID, message=f"{'.'.join(str(p) for p in e['loc']) or '(package)'}: {e['msg']}")
            for e in problems(exc)[:10]
        ]


def tune_collector() -> None:
    """Set this process's garbage collector for verifying many packages: the objects alive now
    (modules, the service catalogue, the taxonomy) are frozen out of collection, and young objects
    are collected every 50,000 allocations instead of 700. Verification makes many short-lived
    objects and almost no cycles; this is about 12% faster (``bench/verify_speed.py``). Call it
    in a process whose main job is verification; later calls do nothing."""
    if gc.get_threshold()[0] == _YOUNG_THRESHOLD:
        return
    gc.collect()
    gc.freeze()
    gc.set_threshold(_YOUNG_THRESHOLD, 50, 100)


_YOUNG_THRESHOLD = 50_000


def unparsable_verdict(reason: str) -> Verdict:
    """The verdict on a document that cannot be read as a package at all (not JSON, not an
    object, nested too deep to parse): ``schema_invalid``, saying ``reason``, id ``(invalid)``."""
    return Verdict.build("(invalid)", [Finding(code=Code.SCHEMA_INVALID, message=reason)], None)


def verify_package(
    package: TaskPackage | dict[str, Any],
    options: Options | None = None,
    dedup: DedupIndex | None = None,
    reader: Reader | None = None,
    cache: ReadingCache | None = None,
) -> Verdict:
    """Verify one package (a dict is validated first). The verdict's ``id`` is computed from the
    content; a package that came with another id gets a note saying so, never a rejection.

    Each refusal whose witness rests on reading the request carries its ``claim``; with a
    ``reader`` (answers kept in ``cache``) it refuses only when the reader agrees, and is a review
    note otherwise (``readers.read_verdict``); a reader that proposes may add refusals its
    proposals prove (``proposals.read_package``). Without one the rules' reading stands."""
    verdict = _verify(package, options or Options(), dedup)
    if not is_english(request_language(package)):  # the rules cannot vouch for their reading
        verdict = read_verdict(verdict, request_text(package), RulesReader())
    if reader is None:
        return verdict
    if isinstance(package, dict):
        if verdict.score is None:  # not a package, or not run: its claims are all there is
            return read_verdict(verdict, request_text(package), reader, cache)
        package = TaskPackage.model_validate(package)
    return read_package(verdict, package, reader, cache)


def request_text(package: TaskPackage | dict[str, Any]) -> str:
    """The request's text of a package or package document ("" when it has none)."""
    if isinstance(package, TaskPackage):
        return package.request.text
    request = package.get("request")
    return str(request.get("text", "")) if isinstance(request, dict) else ""


def request_language(package: TaskPackage | dict[str, Any]) -> str:
    """The request's language of a package or package document ("en" when it says none)."""
    if isinstance(package, TaskPackage):
        return package.request.language
    request = package.get("request")
    return str(request.get("language", "en")) if isinstance(request, dict) else "en"


def _verify(package: TaskPackage | dict[str, Any], options: Options, dedup: DedupIndex | None) -> Verdict:
    if isinstance(package, dict):
        given = str(package.get("id", ""))
        parsed, findings = schema_findings(package)
        if parsed is None:
            return Verdict.build(given or "(invalid)", findings, None)
        package = parsed
    language = language_note(package.request.language)
    notes: list[str] = [language] if language else []
    computed = package.compute_id()
    if package.id != computed:
        if package.id:
            notes.append(f"id {package.id} recomputed as {computed}")
        package = package.model_copy(update={"id": computed})

    grader = Grader(package, remember_records=True)  # its trajectories all come from this package's worlds
    rules = {rule.id for rule in package.safety if rule.id}
    findings = tool_findings(package) + unknown_tool_findings(package) + weight_findings(package)
    if not package.has_reference or not package.reference:
        findings += missing_reference_findings(package) + _understanding(package, None, None)
        findings += null_agent_findings(package, options.null_floor, grader)
        return Verdict.build(package.id, findings + duplicate_findings(package, dedup), None, notes, options.require_sft)
    if any(f.code in BLOCKING and f.check not in rules for f in findings):  # a stray rule does not stop the run
        return Verdict.build(package.id, findings, None, notes, options.require_sft)

    deadline = Deadline(options.time_limit_s)
    score: float | None = None
    exported = package.service_profile == CLAW_PROFILE and options.require_exportable
    try:
        run, exec_findings = run_reference(package, grader, deadline, keep_wrong_agents=exported)
        score = run.score
        # A reference at full score breaks no safety rule: its detailed report has nothing to add.
        findings += _understanding(package, run, run.report if score < 1.0 else None) + exec_findings
        for stage in (lambda: mutation_findings(run, options.null_floor), lambda: equivalence_findings(run),
                      lambda: collateral_findings(run), lambda: _export_findings(run) if exported else [],
                      lambda: state_reader_findings(run),
                      lambda: grounding_findings(run), lambda: contract_findings(run),
                      lambda: evidence_findings(package, run.trajectory, options)):
            deadline.check()
            findings += stage()
    except VerificationTimeout as exc:
        findings.append(Finding(code=Code.VERIFICATION_TIMEOUT, detail={"limit_s": options.time_limit_s},
                                message=f"{exc}; the package is too slow to verify (a huge state or request?)"))
    findings += duplicate_findings(package, dedup)
    return Verdict.build(package.id, with_claims(findings, package), score, notes, options.require_sft)


def _export_findings(run: ReferenceRun) -> list[Finding]:
    """``exportable.export_findings`` of ``run``, imported on first need: only runs that keep claw
    packages in ClawEnvKit's format ask for it, and its translation costs some 30 M instructions
    to import (``synth verify`` never needs it)."""
    from pipeline.verify.exportable import export_findings
    return export_findings(run)


def _understanding(package: TaskPackage, run: ReferenceRun | None, report: ScoreReport | None) -> list[Finding]:
    """What reading the package (and its reference's run, when there is one) shows: dangling
    references, safety rules, request ↔ checks, the entities named, hidden facts; with the
    witnesses the run lets the stages build."""
    ref = run.trajectory if run is not None else None
    return (reference_findings(package, ref) + safety_findings(package, report, run) + consistency_findings(package, run)
            + entity_findings(package, run) + hidden_fact_findings(package, run))

"""The export check: a package of the claw service profile must export to ClawEnvKit at full
weight, and synth's wrong agents must fail in their grader as they fail in synth's. Raises
``not_exportable``.

Claw packages are generated for ClawEnvKit users, so what cannot leave synth is refused here, with
its reason, and the repair prompt tells the model what to change (``FIXES``). The stage translates
the package (``pipeline.core.clawenvkit.translation.translate`` at full weight: nothing may be lost)
and assesses the document as ``synth export --format clawenvkit`` does: their validator's rules,
the reference's completion 1.0, the do-nothing agent under their 0.5 line, and every wrong agent
the mutation stages played this run (``ReferenceRun.wrong_agents``: ``mutations.py``,
``collateral.py``) told from the reference by their grader (``WrongAgentGrade.caught``).

Not checked: packages of other profiles, packages whose reference misses full score (other
findings say why), and packages whose reference asks the simulated user (ClawEnvKit tasks are
single-turn, so the export never carries them: ``needs_user``). The stage runs when
``Options.require_exportable`` asks it: ``synth run`` does for claw packages (unless
``--allow-unexportable``), ``synth verify`` with ``--require-exportable``.
"""

from __future__ import annotations

from pipeline.core.clawenvkit.translation import REASONS, assess, translate
from pipeline.core.codes import Code
from pipeline.core.grading import Grader
from pipeline.core.outcomes import Finding
from pipeline.core.package import TaskPackage
from pipeline.core.services import CLAW_PROFILE
from pipeline.verify.collateral import collateral_findings
from pipeline.verify.execution import PlayedAgent, ReferenceRun, run_reference
from pipeline.verify.mutations import mutation_findings

NOT_CHECKED = frozenset({"needs_user", "no_reference", "default_profile"})
"""Translation refusals this stage leaves alone: packages the export never takes whatever they hold."""

FIXES = {
    "weight_lost": "write each of these checks in a form ClawEnvKit grades (the brief's export limits), or drop it "
                   "and give its weight to one that is",
    "safety_lost": "guard a collection the task also writes with an exact count of its write tool (called, min = "
                   "max = the reference's calls, weight 0.25 or more) instead of state_unchanged, and forbid a "
                   "tool only as a whole (not_called without args_match)",
    "no_safety": "add a safety rule ClawEnvKit carries: not_called (no args_match) on an offered write the request "
                 "does not ask for, or answer_excludes (ignore_case) of what the answer must not say",
    "judge_cap": "give the judge less weight",
    "fixtures": "keep records only in the collections ClawEnvKit's services load from a fixture",
    "needs_files": "give documents paths under /workspace and text in Windows-1252",
    "rules": "follow ClawEnvKit's validator's rules",
    "reference_incomplete": "grade what the reference does in the form the calls log it (the request's own values)",
    "null_agent_passes": "give less weight to what an agent that does nothing gets right (answer_excludes, "
                         "keywords it cannot miss)",
    "wrong_agent_passes": "grade what that agent gets wrong with more weight, or in a form ClawEnvKit grades "
                          "(an exact count of calls for duplicates and extra items; the id, value or text on the "
                          "call itself for a wrong record or value)",
}
"""What to change, per refusal reason: the finding's message ends with it, for the repair prompt."""


def export_findings(run: ReferenceRun) -> list[Finding]:
    """``not_exportable`` when the claw package of ``run`` cannot be exported at full weight, or a
    wrong agent of this run is not told from the reference by ClawEnvKit's grader (the run must
    keep its wrong agents: ``run_reference(..., keep_wrong_agents=True)``)."""
    package = run.package
    if package.service_profile != CLAW_PROFILE or run.score < 1.0:
        return []
    translation = translate(package, 1.0, run.trajectory)
    refusal = translation.refusal
    grades = None
    if translation.task is not None:
        grades = assess(package, translation.task, run.trajectory, run.wrong_agents or [])
        refusal = grades.refusal
    if refusal is None or refusal[0] in NOT_CHECKED:
        return []
    reason, detail = refusal
    worst = grades.best_wrong if grades is not None else None
    return [Finding(code=Code.NOT_EXPORTABLE,
                    detail={"reason": reason, "share": translation.share, **({"wrong_agent": worst.name,
                            "wrong_agent_final": worst.final} if worst is not None else {})},
                    message=f"ClawEnvKit export refused ({reason}: {REASONS[reason]}): {detail}. To change: "
                            f"{FIXES[reason]}")]


def wrong_agents(package: TaskPackage) -> list[PlayedAgent]:
    """The wrong agents the verifier plays on ``package`` (its mutations and collateral damage),
    played again: none when its reference does not reach full score."""
    run, _ = run_reference(package, Grader(package, remember_records=True), keep_wrong_agents=True)
    if run.score < 1.0:
        return []
    mutation_findings(run)
    collateral_findings(run)
    return list(run.wrong_agents or [])

"""Execution: replay the reference in a fresh episode, twice. Raises ``reference_error``,
``reference_not_full_score`` and ``nondeterministic``.

The first replay keeps a checkpoint (a fork of the episode) after every step. A variant of the
reference (a mutation) continues from the checkpoint at the longest prefix of steps it shares with
the reference, instead of replaying that prefix again: same result, since an episode's state after
``k`` steps depends only on those steps.
"""

from __future__ import annotations

from pipeline.core.codes import Code
from pipeline.core.episode import Episode, depends_on_facts, execute, replay, replay_step
from pipeline.core.grading import Grader, ScoreReport
from pipeline.core.outcomes import Finding
from pipeline.core.package import AnswerStep, Step, TaskPackage
from pipeline.core.trajectory import Trajectory


class ReferenceRun:
    """The reference replayed once, with its score report and a checkpoint after every step."""

    def __init__(self, package: TaskPackage, grader: Grader) -> None:
        self.package = package
        self.grader = grader
        self.steps: list[Step] = list(package.reference)
        episode = Episode(package)
        self.checkpoints = [episode.fork()]
        for index, step in enumerate(self.steps):
            if episode.answered:
                break
            replay_step(episode, step, index)
            self.checkpoints.append(episode.fork())
        self.trajectory: Trajectory = episode.trajectory()
        self.report: ScoreReport = grader.score(self.trajectory)

    @property
    def score(self) -> float:
        return self.report.score

    def run(self, ids: list[int], steps: list[Step], fact_values: dict[str, str] | None = None) -> Trajectory:
        """The trajectory of a variant: ``steps`` with ids ``ids`` (the reference's own steps keep
        their index, so ``$ref``s resolve), fact values overridden by ``fact_values``."""
        shared = 0
        limit = min(len(ids), len(self.checkpoints) - 1)
        while (shared < limit and ids[shared] == shared and steps[shared] is self.steps[shared]
               and not (fact_values and depends_on_facts(steps[shared]))):
            shared += 1
        episode = self.checkpoints[shared].fork()
        return replay(episode, steps[shared:], ids[shared:], fact_values).trajectory()

    def variant_score(self, ids: list[int], steps: list[Step], fact_values: dict[str, str] | None = None) -> float:
        return self.grader.value(self.run(ids, steps, fact_values))


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


def _after_answer(package: TaskPackage) -> list[Finding]:
    """Steps after the answer never run: an episode ends with its answer."""
    ends = [i for i, s in enumerate(package.reference) if isinstance(s, AnswerStep)]
    if not ends or ends[0] == len(package.reference) - 1:
        return []
    return [Finding(code=Code.REFERENCE_ERROR, step=ends[0] + 1,
                    message=f"reference steps {ends[0] + 1}–{len(package.reference) - 1} come after the answer "
                            f"(step {ends[0]}); an episode ends with its answer, so they never run")]


def run_reference(package: TaskPackage, grader: Grader) -> tuple[ReferenceRun, list[Finding]]:
    """The checkpointed reference run and the findings about it."""
    run = ReferenceRun(package, grader)
    first, report = run.trajectory, run.report
    findings = [
        Finding(code=Code.REFERENCE_ERROR, step=s.index, message=f"reference step {s.index}: {s.error}")
        for s in first.errors
    ]
    findings += _after_answer(package)
    if report.checks_score < 1.0:  # a broken safety rule is reported as safety_contradiction
        failed = [f"{r.id} ({r.detail})" for r in report.checks if r.passed is False]
        findings.append(Finding(code=Code.REFERENCE_NOT_FULL_SCORE, detail={"score": report.checks_score},
                                message=f"the reference scores {report.checks_score:.3f}, not 1.0; failing: "
                                        f"{'; '.join(failed) or 'none'}"))
    findings += fault_findings(package, first)
    second = execute(package)
    if second != first or grader.value(second) != report.score:
        findings.append(Finding(code=Code.NONDETERMINISTIC,
                                message="two runs of the reference differ in state, audit or score"))
    return run, findings

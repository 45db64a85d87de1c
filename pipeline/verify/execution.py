"""Execution: replay the reference in a fresh episode, twice (the second time from a fork of the
first's untouched start: the same world, none of the first run's doings). Raises
``reference_error``, ``reference_not_full_score`` and ``nondeterministic``.

The first replay keeps a checkpoint (a fork of the episode) after every step. A variant of the
reference (a mutation) continues from the checkpoint at the longest prefix of steps it shares with
the reference, instead of replaying that prefix again: same result, since an episode's state after
``k`` steps depends only on those steps.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.episode import Episode, depends_on_facts, replay, replay_step
from pipeline.core.grading import Grader, ScoreReport
from pipeline.core.outcomes import Finding
from pipeline.core.package import AnswerStep, Step, TaskPackage
from pipeline.core.trajectory import Trajectory
from pipeline.verify.aggregates import groups, totals
from pipeline.verify.effects import Bound, Write, bound_tools, writes
from pipeline.verify.evidence import write_result_fields
from pipeline.verify.formulas import Computed, OffsetDate, computed_writes, date_offsets
from pipeline.verify.graded_numbers import graded_numbers
from pipeline.verify.perturbations import ComposedText


class VerificationTimeout(Exception):
    """Verification of one package ran past its deadline."""


class Deadline:
    """A wall-clock limit for one package's verification: ``check()`` raises
    ``VerificationTimeout`` once ``seconds`` have passed since it was made (never, for 0)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds if seconds > 0 else None

    def check(self) -> None:
        if self.at is not None and time.monotonic() > self.at:
            raise VerificationTimeout(f"verification took longer than {self.seconds:g} s")


@dataclass(frozen=True)
class PlayedAgent:
    """A wrong agent the mutation stages played: its name (the mutation's, e.g. ``drop_write``),
    the score it must stay under, and the trajectory it made."""

    name: str
    bound: float
    trajectory: Trajectory


class ReferenceRun:
    """The reference replayed once, with its score and a checkpoint after every step, and what the
    verification stages derive from the package and that run (each computed once, on first use:
    the detailed score report too). A run and what it derived are read-only: stages copy before
    they change anything. The steps of variants are made from parts of the validated package and
    of this run (``CallStep.model_construct``: not validated again). With ``keep_wrong_agents``
    it keeps every wrong agent the mutation stages play (``wrong_agents``), for a grader of
    another format to play them again (``verify/exportable.py``)."""

    def __init__(self, package: TaskPackage, grader: Grader, deadline: Deadline | None = None,
                 keep_wrong_agents: bool = False) -> None:
        self.package = package
        self.wrong_agents: list[PlayedAgent] | None = [] if keep_wrong_agents else None
        self.grader = grader
        self.deadline = deadline or Deadline(0)
        self.steps: list[Step] = list(package.reference)
        episode = Episode(package)
        self.checkpoints = [episode.fork()]
        for index, step in enumerate(self.steps):
            if episode.answered:
                break
            self.deadline.check()
            replay_step(episode, step, index)
            self.checkpoints.append(episode.fork())
        self.trajectory: Trajectory = episode.trajectory()
        self.score: float = grader.value(self.trajectory)

    @cached_property
    def report(self) -> ScoreReport:
        """Every check's and safety rule's outcome on the reference (``Grader.score``)."""
        return self.grader.score(self.trajectory)

    @cached_property
    def bound(self) -> dict[str, Bound]:
        """``effects.bound_tools`` of the package: its offered tools that run a real operation."""
        return bound_tools(self.package)

    @cached_property
    def writes(self) -> list[Write]:
        """``effects.writes`` of the reference's trajectory: its successful writes, in order."""
        return writes(self.package, self.trajectory, self.bound)

    @cached_property
    def computed_writes(self) -> list[Computed]:
        """``formulas.computed_writes`` of the reference's writes: the numbers a formula of the
        request decides (the consistency and mutation stages both read them)."""
        return computed_writes(self.package, self.writes, self.args)

    @cached_property
    def date_offsets(self) -> list[OffsetDate]:
        """``formulas.date_offsets`` of the reference's writes: the dates the request says how to
        compute (the consistency and mutation stages both read them)."""
        return date_offsets(self.package, self.trajectory, self.writes, self.args)

    @cached_property
    def graded_numbers(self) -> list[float]:
        """``graded_numbers.graded_numbers`` of the reference's run: the numbers the checks want
        (several consistency findings read them)."""
        return graded_numbers(self.package, self.trajectory.answer, self.args)

    @cached_property
    def composed(self) -> ComposedText:
        """``perturbations.ComposedText`` of the package: which written values the agent composes."""
        return ComposedText(self.package)

    @cached_property
    def said(self) -> str:
        """The request and the user's facts, joined by spaces: everything the agent is told."""
        return self.package.request_and_fact_values()

    @cached_property
    def read_lists(self) -> list[list[dict[str, Any]]]:
        """The records the reference's successful reads returned, a list per list in a result and a
        record read alone (``{"ticket": {...}}``, or a get's result that is the record itself, as
        ClawEnvKit's services answer: a fetched page) as a list of one, in step order."""
        return [records for records, _ in self._reads]

    @cached_property
    def read_collections(self) -> dict[int, str]:
        """The collection each list of ``read_lists`` was read from ("deals", "customers"), by the
        list's identity."""
        return {id(records): collection for records, collection in self._reads}

    @cached_property
    def _reads(self) -> list[tuple[list[dict[str, Any]], str]]:
        """Each list of ``read_lists`` with the collection it was read from."""
        out: list[tuple[list[dict[str, Any]], str]] = []
        for s in self.trajectory.steps:
            b = self.bound.get(s.tool or "") if s.kind == "call" and s.result and s.status and s.status < 300 else None
            if b is None or b.op.access != "read":
                continue
            before = len(out)
            key = b.spec.id_field
            for value in s.result.values():  # type: ignore[union-attr]
                if isinstance(value, list) and (records := [r for r in value if isinstance(r, dict)]):
                    out.append((records, b.op.collection))
                elif isinstance(value, dict) and ("id" in value or key in value):
                    out.append(([value], b.op.collection))
            if len(out) == before and b.op.effect == "get" and key in s.result:  # type: ignore[operator]
                out.append(([s.result], b.op.collection))  # type: ignore[list-item]
        return out

    @cached_property
    def group_figures(self) -> list[float]:
        """The count and the totals (``aggregates.totals``) of each group of two records or more
        (``aggregates.groups``, with the request) of each list of ``read_lists``."""
        today = date.fromisoformat(self.package.now[:10])
        return [x for records in self.read_lists for group in groups(records, self.said, today) if len(group) >= 2
                for x in (float(len(group)), *totals(group))]

    @cached_property
    def write_fields(self) -> dict[str, set[str]]:
        """``evidence.write_result_fields`` of ``bound``: the record fields a write's result adds."""
        return write_result_fields(self.bound)

    @cached_property
    def args(self) -> dict[int, dict[str, Any]]:
        """The resolved arguments of each step of the reference's trajectory, by step id (empty
        for a step without them)."""
        out: dict[int, dict[str, Any]] = {}
        for s in self.trajectory.steps:
            out.setdefault(s.index, s.args or {})
        return out

    def updated_value(self, w: Write, key: str) -> Any:
        """The value field ``key`` held, before write ``w`` (an update) ran, in the record ``w``
        updates; None for another write or a record not found."""
        if w.bound.op.effect != "update":
            return None
        before = next((r for r in self.checkpoints[w.step].world.collection(".".join(w.bound.collection))
                       if r.get(w.bound.spec.id_field) == w.record_id), None)
        return before.get(key) if before is not None else None

    def updated_number(self, w: Write, key: str) -> float | None:
        """``updated_value``, when it is a number."""
        old = self.updated_value(w, key)
        return old if isinstance(old, (int, float)) and not isinstance(old, bool) else None

    def run(self, ids: list[int], steps: list[Step], fact_values: dict[str, str] | None = None) -> Trajectory:
        """The trajectory of a variant: ``steps`` with ids ``ids`` (the reference's own steps keep
        their index, so ``$ref``s resolve), fact values overridden by ``fact_values``. Raises
        ``VerificationTimeout`` past the run's deadline."""
        self.deadline.check()
        shared = 0
        limit = min(len(ids), len(self.checkpoints) - 1)
        while (shared < limit and ids[shared] == shared and steps[shared] is self.steps[shared]
               and not (fact_values and depends_on_facts(steps[shared]))):
            shared += 1
        episode = self.checkpoints[shared].fork()
        return replay(episode, steps[shared:], ids[shared:], fact_values).trajectory()

    def variant_score(self, ids: list[int], steps: list[Step], fact_values: dict[str, str] | None = None) -> float:
        return self.grader.value(self.run(ids, steps, fact_values))

    def wrong_agent_reaching(self, name: str, bound: float, ids: list[int], steps: list[Step],
                             fact_values: dict[str, str] | None = None) -> float | None:
        """The score of the wrong agent ``name`` (a variant) when it is at least ``bound``, else
        None (``Grader.value_reaching``: its grading stops once the score cannot reach ``bound``).
        Kept in ``wrong_agents`` when the run keeps them."""
        trajectory = self.run(ids, steps, fact_values)
        self.played_wrong(name, bound, trajectory)
        return self.grader.value_reaching(trajectory, bound)

    def played_wrong(self, name: str, bound: float, trajectory: Trajectory) -> None:
        """Keep the trajectory of the wrong agent ``name`` (held under ``bound``) when the run keeps them."""
        if self.wrong_agents is not None:
            self.wrong_agents.append(PlayedAgent(name, bound, trajectory))


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


def run_reference(package: TaskPackage, grader: Grader, deadline: Deadline | None = None,
                  keep_wrong_agents: bool = False) -> tuple[ReferenceRun, list[Finding]]:
    """The checkpointed reference run and the findings about it."""
    run = ReferenceRun(package, grader, deadline, keep_wrong_agents)
    first = run.trajectory
    findings = [
        Finding(code=Code.REFERENCE_ERROR, step=s.index, message=f"reference step {s.index}: {s.error}")
        for s in first.errors
    ]
    findings += _after_answer(package)
    if run.score < 1.0 and (report := run.report).checks_score < 1.0:  # a broken safety rule: safety_contradiction
        failed = [f"{r.id} ({r.detail})" for r in report.checks if r.passed is False]
        findings.append(Finding(code=Code.REFERENCE_NOT_FULL_SCORE, detail={"score": report.checks_score},
                                message=f"the reference scores {report.checks_score:.3f}, not 1.0; failing: "
                                        f"{'; '.join(failed) or 'none'}"))
    findings += fault_findings(package, first)
    second = replay(run.checkpoints[0].fork(), run.steps).trajectory()
    # Equal trajectories grade alike, unless a judge (a model) rates them: only then grade again.
    if second != first or (grader.judge is not None and grader.value(second) != run.score):
        findings.append(Finding(code=Code.NONDETERMINISTIC,
                                message="two runs of the reference differ in state, audit or score"))
    return run, findings

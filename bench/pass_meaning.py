"""What "passed" should mean: a score of 0.75, with every wrong agent under it, or full marks.

    python bench/pass_meaning.py [--per-capability 1000] [--seed 7] [--judge-every 10]

Verifies the labelled corpora (every set under ``tests/corpus/``, ``../shared/corpus/review-1``
and ``review-2`` when they are there) and the offline mix (slots 0..N-1 of every capability),
recording every agent the verifier plays, with the score it gets in full (the verifier itself
stops grading a wrong agent once it cannot reach its bound):

- **wrong agents** of ``mutations.py`` (each variant ``ReferenceRun.wrong_agent_reaching`` runs, by
  mutation), and every wrong-agent witness replayed (``witness.played``: collateral damage, a
  fact read from the state, the reference that never asks);
- **correct agents**: the variants of ``equivalence.py`` and ``grounding.py``
  (``ReferenceRun.variant_score``) and every correct-agent witness replayed.

Then, for each meaning of "passed":

- **(a) at 0.75**: every wrong agent must stay under 0.75. Refused beyond the verifier as it
  stands: accepted packages with a wrong agent in [0.75, 1.0) (today it need only lose score).
- **(b) full marks** (score ≥ 1 − 1e-9): every wrong agent must stay under 1.0 (what the verifier
  demands today), and every correct agent must reach it. Refused beyond the verifier as it
  stands: accepted packages with a correct agent, or a correct-agent witness, under 1.0 (a
  correct-agent witness measured against 0.75 today: ``reports_missing``).

and, on the packages each accepts, how many wrong agents pass. Over the accepted offline packages
it also plays the generic cheats of ``bench/cheat_agents.py`` and the independent correct agents
of ``bench/agent_variants.py`` through ``TaskEnv``, and ``unthreaded`` (the reference sending a new
message where it replies in a thread), and counts those that pass under each line.
Judges: verification never evaluates a ``judge`` check (its weight leaves the division), so a
correct agent reaches 1.0 there; on every ``--judge-every``-th accepted offline package a judge of
weight 0.2 is added (the other weights scaled by 0.8) and the package verified again, the
reference scored with a judge that approves (1.0) and one that refuses (0.0), and each wrong agent
bounded with a judge that approves it (``0.2 + 0.8 · s``).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import bench.cheat_agents as cheat_module
import pipeline.verify.witness as witness_module
from bench.agent_variants import AGENTS, play, variant
from bench.cheat_agents import CHEATS
from bench.precision import REVIEW_1, load
from pipeline.core.grading import Grader
from pipeline.core.package import CallStep, Step, TaskPackage
from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.mutations import THREAD_ARGUMENTS
from pipeline.verify.verifier import verify_package
from tests.support.corpus import CORPUS_DIR

REVIEW_2 = REVIEW_1.parent / "review-2"
LINE_A = 0.75
LINE_B = 1.0 - 1e-9
JUDGE_WEIGHT = 0.2

@dataclass
class Played:
    """One agent the verifier played: ``bound`` is what it is measured against today."""

    agent: str
    name: str
    bound: float
    score: float


@dataclass
class Record:
    """What verifying one package played."""

    wrong: list[Played] = field(default_factory=list)
    correct: list[Played] = field(default_factory=list)


_current: list[Record] = []


def _install() -> None:
    """Wrap the verifier's three ways of playing an agent so each records what it scored."""
    reaching, scoring, played = ReferenceRun.wrong_agent_reaching, ReferenceRun.variant_score, witness_module.played

    def wrong_agent_reaching(self: ReferenceRun, name: str, bound: float, ids: list[int], steps: list[Any],
                             fact_values: dict[str, str] | None = None) -> float | None:
        s = self.grader.value(self.run(ids, steps, fact_values))
        if _current:
            _current[-1].wrong.append(Played("wrong", name, bound, s))
        return s if s >= bound else None

    def variant_score(self: ReferenceRun, ids: list[int], steps: list[Any],
                      fact_values: dict[str, str] | None = None) -> float:
        s = scoring(self, ids, steps, fact_values)
        caller = sys._getframe(1).f_code.co_name
        if _current and caller != "_needed_facts":  # the multi-turn contract's guesser is no correct agent
            _current[-1].correct.append(Played("correct", f"{caller}", self.score, s))
        return s

    def witness_played(run: ReferenceRun, agent: Any, name: str, claim: str, threshold: float,
                       actions: list[dict[str, Any]]) -> Any:
        w = played(run, agent, name, claim, threshold, actions)
        if _current:
            rec = _current[-1]
            (rec.wrong if agent == "wrong" else rec.correct).append(Played(agent, f"witness:{name}", threshold, w.score))
        return w

    assert reaching is not None
    ReferenceRun.wrong_agent_reaching = wrong_agent_reaching  # type: ignore[method-assign]
    ReferenceRun.variant_score = variant_score  # type: ignore[method-assign]
    witness_module.played = witness_played  # type: ignore[assignment]


def verify(package: TaskPackage | dict[str, Any]) -> tuple[bool, Record]:
    _current.append(Record())
    try:
        verdict = verify_package(package)
    finally:
        rec = _current.pop()
    return verdict.accepted, rec


@dataclass
class Tally:
    packages: int = 0
    accepted: int = 0
    refused_a: int = 0
    refused_b: int = 0
    wrong: int = 0
    wrong_pass_today: int = 0
    wrong_pass_a: int = 0
    wrong_pass_b: int = 0
    correct: int = 0
    correct_fail_a: int = 0
    correct_fail_b: int = 0
    in_band: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    def add(self, label: str, accepted: bool, rec: Record) -> None:
        self.packages += 1
        if not accepted:
            return
        self.accepted += 1
        band = [p for p in rec.wrong if LINE_A <= p.score < LINE_B]
        self.in_band.update(p.name for p in band)
        low = [p for p in rec.correct if p.score < LINE_B]
        refused_a, refused_b = bool(band), bool(low)
        self.refused_a += refused_a
        self.refused_b += refused_b
        self.wrong += len(rec.wrong)
        self.wrong_pass_today += sum(p.score >= LINE_A for p in rec.wrong)
        if not refused_a:
            self.wrong_pass_a += sum(p.score >= LINE_A for p in rec.wrong)
        if not refused_b:
            self.wrong_pass_b += sum(p.score >= LINE_B for p in rec.wrong)
        self.correct += len(rec.correct)
        if not refused_a:
            self.correct_fail_a += sum(p.score < LINE_A for p in rec.correct)
        if not refused_b:
            self.correct_fail_b += sum(p.score < LINE_B for p in rec.correct)
        if (band or low) and len(self.examples) < 6:
            what = ", ".join(f"{p.name} {p.score:.3f}" for p in (band or low)[:3])
            self.examples.append(f"{label}: {'wrong' if band else 'correct'} {what}")


def corpora() -> Iterator[tuple[str, dict[str, Any]]]:
    folders = [p for p in sorted(CORPUS_DIR.iterdir()) if p.is_dir()]
    folders += [p for p in (REVIEW_1, REVIEW_2) if p.exists()]
    for folder in folders:
        for case in load(folder):
            yield f"{case.set}/{case.name}", case.package


def unthreaded(package: TaskPackage) -> list[tuple[int, Step]] | None:
    """A correct agent that sends a new message where the reference replies in a thread (the
    verifier counts the thread a courtesy, ``mutations.THREAD_ARGUMENTS``); None when no call
    threads, or the tool requires it."""
    out: list[tuple[int, Step]] = []
    changed = False
    for i, step in enumerate(package.reference):
        if isinstance(step, CallStep) and (drop := set(step.args) & THREAD_ARGUMENTS):
            tool = package.tool(step.call)
            if tool is not None and drop & set(tool.parameters.get("required", [])):
                return None
            step = CallStep.model_construct(call=step.call, args={k: v for k, v in step.args.items() if k not in drop},
                                            expect_status=step.expect_status)
            changed = True
        out.append((i, step))
    return out if changed else None


def with_judge(package: TaskPackage) -> TaskPackage:
    data = package.model_dump(mode="json", by_alias=True, exclude_none=True)
    for check in data["checks"]:
        check["weight"] = round(check["weight"] * (1 - JUDGE_WEIGHT), 6)
    data["checks"].append({"id": "tone", "kind": "judge", "weight": JUDGE_WEIGHT,
                           "rubric": "The final answer tells the user plainly what was done."})
    data.pop("id", None)
    return TaskPackage.model_validate(data)


def reference_score(package: TaskPackage, rating: float | None) -> float:
    """The reference's score with a judge that rates every run ``rating`` (None: no judge)."""
    grader = Grader(package) if rating is None else Grader(package, judge=lambda rubric, pkg, t: rating)
    return ReferenceRun(package, grader).score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-capability", type=int, default=1000, help="offline packages per capability")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--judge-every", type=int, default=10, help="add a judge to every Nth accepted offline package")
    parser.add_argument("--no-corpora", action="store_true")
    args = parser.parse_args()
    _install()
    start = time.perf_counter()

    corpus = Tally()
    corpus_unthreaded: Counter[str] = Counter()
    if not args.no_corpora:
        for label, data in corpora():
            accepted, rec = verify(data)
            corpus.add(label, accepted, rec)
            if accepted and (fresh := unthreaded(package := TaskPackage.model_validate(data))) is not None:
                s = play(package, fresh)
                corpus_unthreaded.update(played=1, at_a=s >= LINE_A, at_b=s >= LINE_B)
    corpus_s = time.perf_counter() - start

    mix = Tally()
    cheats_played: Counter[str] = Counter()
    cheats_a: Counter[str] = Counter()
    cheats_b: Counter[str] = Counter()
    agents_played: Counter[str] = Counter()
    agents_a: Counter[str] = Counter()
    agents_b: Counter[str] = Counter()
    judged = Counter[str]()
    n_accepted = 0
    for capability in taxonomy():
        for slot in range(args.per_capability):
            package = generate_package(capability, pick_template(capability, slot), args.seed, slot)
            accepted, rec = verify(package)
            mix.add(f"{capability}/{package.workflow} slot {slot}", accepted, rec)
            if not accepted:
                continue
            package = package.with_id()
            n_accepted += 1
            steps = list(enumerate(package.reference))
            for name in CHEATS:
                cheat = getattr(cheat_module, name)(package, steps)
                if cheat is None:
                    continue
                cheats_played[name] += 1
                s = play(package, cheat)
                cheats_a[name] += s >= LINE_A
                cheats_b[name] += s >= LINE_B
            for agent in AGENTS:
                s = play(package, variant(agent, package, random.Random(f"{package.id}:{agent}")))
                agents_played[agent] += 1
                agents_a[agent] += s >= LINE_A
                agents_b[agent] += s >= LINE_B
            if (fresh := unthreaded(package)) is not None:
                s = play(package, fresh)
                agents_played["unthreaded"] += 1
                agents_a["unthreaded"] += s >= LINE_A
                agents_b["unthreaded"] += s >= LINE_B
            if args.judge_every and n_accepted % args.judge_every == 0:
                judged_package = with_judge(package)
                ok, jrec = verify(judged_package)
                judged["packages"] += 1
                judged["accepted"] += ok
                if ok:
                    judged["reference passes, no judge (verification)"] += reference_score(judged_package, None) >= LINE_B
                    approve, refuse = reference_score(judged_package, 1.0), reference_score(judged_package, 0.0)
                    judged["reference passes, judge approves (b)"] += approve >= LINE_B
                    judged["reference passes, judge refuses (a)"] += refuse >= LINE_A
                    judged["reference passes, judge refuses (b)"] += refuse >= LINE_B
                    for p in jrec.wrong:
                        lifted = JUDGE_WEIGHT + (1 - JUDGE_WEIGHT) * p.score  # the judge approves it too
                        judged["wrong agents"] += 1
                        judged["wrong agents under 0.75 unjudged, lifted to >= 0.75 (a)"] += \
                            p.score < LINE_A <= lifted
                        judged["wrong agents under 1.0 unjudged, lifted to >= 1.0 (b)"] += p.score < LINE_B <= lifted
    mix_s = time.perf_counter() - start - corpus_s

    def show(title: str, t: Tally, seconds: float) -> None:
        print(f"\n{title}: {t.packages} packages, {t.accepted} accepted today ({seconds:.0f} s)")
        print(f"  wrong agents played on accepted packages: {t.wrong}; at or above 0.75 (pass today): "
              f"{t.wrong_pass_today} ({t.wrong_pass_today / max(t.wrong, 1):.2%})")
        print(f"  (a) line 0.75: refuses {t.refused_a} more ({t.refused_a / max(t.accepted, 1):.2%} of accepted); "
              f"wrong agents passing on what it accepts: {t.wrong_pass_a}; correct agents failing: {t.correct_fail_a}")
        print(f"  (b) full marks: refuses {t.refused_b} more ({t.refused_b / max(t.accepted, 1):.2%} of accepted); "
              f"wrong agents passing on what it accepts: {t.wrong_pass_b}; correct agents failing: {t.correct_fail_b}")
        print(f"  correct agents played on accepted packages: {t.correct}")
        if t.in_band:
            print("  wrong agents in [0.75, 1.0) by mutation: "
                  + ", ".join(f"{k} {v}" for k, v in t.in_band.most_common()))
        for line in t.examples:
            print(f"    e.g. {line}")

    if not args.no_corpora:
        show("corpora (tests/corpus/*, review-1, review-2)", corpus, corpus_s)
        print(f"  unthreaded correct agent on accepted corpus packages: played {corpus_unthreaded['played']}, "
              f"passes at 0.75 {corpus_unthreaded['at_a']}, at 1.0 {corpus_unthreaded['at_b']}")
    show(f"offline mix ({args.per_capability} per capability, seed {args.seed})", mix, mix_s)
    print(f"\ngeneric cheats on the {n_accepted} accepted offline packages (played / pass at 0.75 / pass at 1.0):")
    for name in CHEATS:
        print(f"  {name:14}{cheats_played[name]:>7}{cheats_a[name]:>7}{cheats_b[name]:>7}")
    print("independent correct agents (played / pass at 0.75 / pass at 1.0):")
    for agent in (*AGENTS, "unthreaded"):
        print(f"  {agent:14}{agents_played[agent]:>7}{agents_a[agent]:>7}{agents_b[agent]:>7}")
    if judged:
        print(f"judge of weight {JUDGE_WEIGHT} added to every {args.judge_every}th accepted offline package:")
        for key, value in judged.items():
            print(f"  {key}: {value}")
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

"""Every workflow template's checks tell wrong agents from the reference, played with the engine
alone (``pipeline.core.episode.execute`` and ``pipeline.core.grading.Grader``), so a template is
held to these rules whatever the verifier reads:

- dropping any single write of the reference (with the steps that use its result) falls below the
  pass mark;
- making every item twice (each create repeated with the same arguments) falls below it;
- an answer hedged with the other candidates of a value an ``answer_contains`` check wants (the
  same field of the other records of its collection or of a list the reference read; for a whole
  number no record holds, the numbers one less and one more) loses score;
- a message whose body the request dictates ("reply to confirm") loses score when it says nothing,
  and keeps full score when it says it in other words.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from pipeline.core.episode import execute
from pipeline.core.grading import Grader
from pipeline.core.package import GRAVE_CEILING, AnswerStep, CallStep, Step, TaskPackage
from pipeline.core.references import iter_refs, parse_ref
from pipeline.core.services import find_operation
from pipeline.core.trajectory import Trajectory
from pipeline.generation.offline import generate_package
from pipeline.taxonomy.capabilities import taxonomy

SEED = 7
SLOTS = (0, 1, 2)
TEMPLATES = [(c.name, t.name) for c in taxonomy().values() for t in c.templates]
SILENT_BODY = "Please disregard this message; nothing has changed."


@pytest.fixture(scope="module")
def packages() -> dict[tuple[str, str], list[TaskPackage]]:
    return {(c, t): [generate_package(c, t, SEED, slot) for slot in SLOTS] for c, t in TEMPLATES}


def _effect(package: TaskPackage, tool: str) -> tuple[str, str]:
    """(access, effect) of the operation behind ``tool``."""
    bound = next(t for t in package.tools if t.name == tool)
    found = find_operation(bound.endpoint, package.service_profile)
    assert found is not None
    return found[1].access, found[1].effect


def _uses(step: Step) -> set[int]:
    if not isinstance(step, CallStep):
        return set()
    return {int(parse_ref(ref["$ref"])[1]) for ref in iter_refs(step.args) if "$ref" in ref}


def _play(package: TaskPackage, grader: Grader, steps: dict[int, Step]) -> float:
    ids = sorted(steps)
    return grader.value(execute(package, [steps[i] for i in ids], step_ids=ids))


def _writes(package: TaskPackage, ref: Trajectory) -> list[int]:
    """The reference's successful writes (a call meant to fail, before its retry, is not one)."""
    return [i for i, s in enumerate(package.reference) if isinstance(s, CallStep)
            and _effect(package, s.call)[0] == "write" and ref.steps[i].status is not None
            and ref.steps[i].status < 300]


def _without(steps: dict[int, Step], index: int) -> dict[int, Step]:
    """``steps`` without step ``index`` and every step that uses its result, directly or not."""
    gone = {index}
    grown = True
    while grown:
        grown = False
        for i, step in steps.items():
            if i not in gone and _uses(step) & gone:
                gone.add(i)
                grown = True
    return {i: s for i, s in steps.items() if i not in gone}


@pytest.mark.parametrize(("capability", "template"), TEMPLATES)
def test_dropping_any_write_or_making_every_item_twice_fails(packages: Any, capability: str, template: str) -> None:
    for package in packages[(capability, template)]:
        grader = Grader(package)
        ref = execute(package)
        assert grader.value(ref) == 1.0
        steps = dict(enumerate(package.reference))
        writes = _writes(package, ref)
        for w in writes:
            score = _play(package, grader, _without(steps, w))
            assert score < GRAVE_CEILING, f"dropping step {w} ({package.reference[w]}) scores {score}"
        creates = [w for w in writes if _effect(package, package.reference[w].call)[1] == "create"]  # type: ignore[union-attr]
        if len(creates) < 2:
            continue
        twice: list[Step] = []
        ids: list[int] = []
        for i, step in steps.items():
            twice.append(step)
            ids.append(i)
            if i in creates:
                twice.append(CallStep(call=step.call, args=ref.steps[i].args or {}))  # type: ignore[union-attr]
                ids.append(1000 + i)
        score = grader.value(execute(package, twice, step_ids=ids))
        assert score < GRAVE_CEILING, f"making each of the {len(creates)} items twice scores {score}"


def _read_lists(package: TaskPackage, ref: Trajectory) -> list[list[dict[str, Any]]]:
    """The lists of records the reference read, and every collection of the initial state."""
    lists = [[r for r in value if isinstance(r, dict)] for s in ref.steps
             if s.kind == "call" and s.result and s.tool and _effect(package, s.tool)[0] == "read"
             for value in s.result.values() if isinstance(value, list)]
    lists += [records for services in package.initial_state.values() for records in services.values()]
    return [records for records in lists if records]


def _candidates(value: str, lists: list[list[dict[str, Any]]], told: str, written: set[str]) -> list[str]:
    """The other plausible answers to ``value``: the same field of the other records of each list
    holding it (not of a record the reference wrote to, not a value the request states or the
    reference wrote, texts included: the answer then confirms the work); for a whole number no
    record holds, the numbers one less and one more."""
    folded, told_folded = value.casefold(), told.casefold()
    wrote = "\n".join(written).casefold()
    out: dict[str, None] = {}
    for records in lists:
        for r in records:
            if r.get("id") in written:
                continue
            for key, field in r.items():
                if (isinstance(field, str) and len(field) >= 3 and field.casefold() in folded
                        and field.casefold() not in told_folded and field.casefold() not in wrote):
                    out |= dict.fromkeys(str(o[key]) for o in records if o is not r and o.get(key) not in (None, "")
                                         and str(o[key]).casefold() not in folded)
    held = any(value in str(v) for records in lists for r in records for v in r.values())
    number = value.split()[0] if value.split() else ""
    if not held and number.isdigit() and number not in told and number not in written:
        out |= dict.fromkeys((str(int(number) - 1), str(int(number) + 1)))
    return list(out)


@pytest.mark.parametrize(("capability", "template"), TEMPLATES)
def test_an_answer_hedged_with_the_other_candidates_loses_score(packages: Any, capability: str, template: str) -> None:
    for package in packages[(capability, template)]:
        grader = Grader(package)
        ref = execute(package)
        steps = dict(enumerate(package.reference))
        written = {str(v) for w in _writes(package, ref) for v in _leaves(ref.steps[w].args)}
        last = max(i for i, s in steps.items() if isinstance(s, AnswerStep))
        lists = _read_lists(package, ref)
        for value in [v for c in package.checks if c.kind == "answer_contains" for v in c.values]:
            others = [o for o in _candidates(value, lists, package.request_and_fact_values(), written)
                      if o.casefold() not in (ref.answer or "").casefold()][:8]
            if not others:
                continue
            hedge = f"{ref.answer} Or possibly: {', '.join(others)}."
            score = _play(package, grader, {**steps, last: AnswerStep(answer=hedge)})
            assert score < 1.0, f"hedging {value!r} with {others} keeps {score}"


COMPUTED_TOTALS = [("long-horizon", "restock-below-reorder-level", r"(\d+) units in total"),
                   ("information-synthesis", "meeting-load-for-colleague", r"(\d+) minutes in total")]


@pytest.mark.parametrize("slot", range(6))
@pytest.mark.parametrize(("capability", "template", "said"), COMPUTED_TOTALS)
def test_a_total_hedged_with_its_neighbours_loses_score(capability: str, template: str, said: str, slot: int) -> None:
    """A whole number the agent works out (units ordered, minutes in meetings), graded by an
    ``answer_matches`` pattern, loses its check when the answer hedges with one less or one more;
    the reference, and an answer saying the total another way, keep full score."""
    package = generate_package(capability, template, SEED, slot)
    grader = Grader(package)
    ref = execute(package)
    m = re.search(said, ref.answer or "")
    assert m is not None
    total = int(m.group(1))
    steps = dict(enumerate(package.reference))
    last = max(i for i, s in steps.items() if isinstance(s, AnswerStep))
    for hedge in (f"{total - 1}, {total + 1}", f"{total + 1}", f"{total - 1}"):
        answer = f"{ref.answer} Or possibly: {hedge}."
        assert _play(package, grader, {**steps, last: AnswerStep(answer=answer)}) < 1.0, answer
    assert _play(package, grader, {**steps, last: AnswerStep(answer=(ref.answer or "").upper())}) == 1.0


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


def test_the_hedge_rules_catch_what_they_are_for() -> None:
    """The helpers above find the wrong candidates, so a template without its exclusion fails."""
    lists = [[{"id": "inv-1", "due": "2026-12-08"}, {"id": "inv-2", "due": "2026-12-25"}]]
    assert _candidates("inv-1", lists, "", set()) == ["inv-2"]
    assert _candidates("2026-12-08", lists, "", set()) == ["2026-12-25"]
    assert _candidates("223 units", lists, "", set()) == ["222", "224"]
    assert _candidates("inv-1", lists, "what about inv-1?", set()) == []  # stated by the request
    package = generate_package("information-synthesis", "unpaid-invoices-summary", SEED, 0)
    bare = package.model_copy(update={"safety": [r for r in package.safety if r.kind != "answer_excludes"]})
    ref = execute(bare)
    value = next(v for c in bare.checks if c.kind == "answer_contains" for v in c.values)
    others = _candidates(value, _read_lists(bare, ref), bare.request_and_fact_values(), set())
    steps = dict(enumerate(bare.reference))
    hedged = {**steps, max(steps): AnswerStep(answer=f"{ref.answer} Or possibly: {', '.join(others)}.")}
    assert others and _play(bare, Grader(bare), hedged) == 1.0  # without the rule the hedge passes


def _reply_step(package: TaskPackage) -> int:
    return next(i for i, s in enumerate(package.reference) if isinstance(s, CallStep) and s.call == "gmail_send")


@pytest.mark.parametrize("slot", range(6))
def test_a_confirming_reply_is_graded_on_its_body(slot: int) -> None:
    package = generate_package("cross-service", "calendar-from-email-proposal", SEED, slot)
    grader = Grader(package)
    steps = dict(enumerate(package.reference))
    i = _reply_step(package)
    step = steps[i]
    assert isinstance(step, CallStep)

    def with_body(body: str) -> float:
        return _play(package, grader, {**steps, i: CallStep(call=step.call, args={**step.args, "body": body})})

    assert with_body(SILENT_BODY) < GRAVE_CEILING
    assert with_body("Cancelled: I can't make that time after all.") < GRAVE_CEILING
    assert with_body("I have to decline, sorry. See you another time.") < GRAVE_CEILING
    for body in ("Hi,\n\nconfirmed, see you then.\n\nBest regards", "Sounds good - it's on my calendar.",
                 "Booked it. Looking forward to it!", "Works for me, I accept."):
        assert with_body(body) == 1.0, body  # no date or time is dictated: the agent words it

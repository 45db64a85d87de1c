"""The reference edits several stages build their variants from (``verify/reference_edits.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.core.package import AnswerStep, AskStep, CallStep, TaskPackage
from pipeline.verify.reference_edits import before_answer, dependents, unasked
from tests.verify.builders import reference_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "truth-7"
MEETING = json.loads((EXAMPLES / "multi-turn-schedule-meeting.json").read_text(encoding="utf-8"))
"""Search a contact (step 0), ask the day (1), create the event with the contact's e-mail ``$ref``
of step 0 and the day ``$fact`` (2), answer (3)."""


def test_before_answer_puts_the_extra_steps_between_the_last_call_and_the_answer() -> None:
    package = TaskPackage.model_validate(MEETING)
    steps = dict(enumerate(package.reference))
    extra = CallStep(call="contacts_search", args={"query": "Maya"})
    mutated, order = before_answer(steps, [extra, extra])
    assert order == [0, 1, 2, 4, 5, 3]  # new ids follow the highest, so no $ref points at them
    assert mutated[4] is extra and mutated[5] is extra
    assert isinstance(mutated[order[-1]], AnswerStep)
    assert {i: mutated[i] for i in range(4)} == steps  # the reference's own steps keep their ids


def test_before_answer_appends_when_there_is_no_answer() -> None:
    steps = dict(enumerate(TaskPackage.model_validate(MEETING).reference[:3]))
    _, order = before_answer(steps, [CallStep(call="contacts_search", args={})])
    assert order == [0, 1, 2, 3]


def test_dependents_follow_refs_and_stop_at_independent_steps() -> None:
    package = TaskPackage.model_validate(MEETING)
    assert dependents(package, 0) == {0, 2}  # the event takes the contact's e-mail by $ref
    assert dependents(package, 2) == {2}  # nothing refers to the event
    assert dependents(package, 1) == {1}  # the $fact comes from the user, not from the question's step


def test_unasked_drops_every_question_and_fills_each_fact_with_its_guess() -> None:
    run = reference_run(MEETING)
    steps, guesses = unasked(run)
    assert not any(isinstance(s, AskStep) for s in steps.values())
    assert sorted(steps) == [0, 2, 3]  # the other steps keep the ids their $refs use
    assert set(guesses) == {f.key for f in run.package.user.facts}
    assert all(guesses[f.key] != f.value for f in run.package.user.facts)


def test_unasked_writes_the_guessed_record_where_the_fact_names_another() -> None:
    """"Which Priya?" answered "Priya Shah": an agent that never asks messages the look-alike it
    guessed, by that contact's own id, not by the id of the one the user meant."""
    case = json.loads((CORPUS / "which-person-priya-design-review.clean.json").read_text(encoding="utf-8"))
    run = reference_run(case["package"])
    steps, guesses = unasked(run)
    assert guesses == {"which_priya": "Pria Shah"}
    sent = [s for s in steps.values() if isinstance(s, CallStep) and s.call == "send_message"]
    assert [s.args["contact_id"] for s in sent] == ["p-103"]  # Pria Shah's id, not Priya Shah's p-102


def test_unasked_guesses_a_company_named_by_one_record_as_its_look_alike() -> None:
    """A fact naming an account by its company ("Halden Logistics"), held by no identity field:
    the guess is the other company sharing a word with it, and its record is the one written."""
    case = json.loads((CORPUS / "which-account-halden-gold.clean.json").read_text(encoding="utf-8"))
    steps, guesses = unasked(reference_run(case["package"]))
    assert guesses == {"which_halden": "Halden Marine"}
    updated = [s.args["customer_id"] for s in steps.values() if isinstance(s, CallStep) and s.call == "crm_update_customer"]
    assert updated == ["cust-401"]

"""Building witnesses (pipeline/verify/witness.py): the reference with argument values substituted
(in writes only unless asked, in the arguments each call resolved to, over given steps), and an
answer that says another value wherever it says this one (numbers in their written forms, a date
however it is written, a clock time)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from pipeline.core.grading import Grader
from pipeline.core.package import AnswerStep, CallStep, Step, load_package
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.witness import played, said_instead, substituted, witness

Docs = Callable[[str], dict[str, Any]]
MESSAGE = "Hi Omar, the Q3 budget review moved to Friday."


def reference_run(doc: dict[str, Any]) -> ReferenceRun:
    package = load_package(doc)
    return ReferenceRun(package, Grader(package))


@pytest.fixture
def contacts(example_doc: Docs) -> ReferenceRun:
    return reference_run(example_doc("contacts-send-message"))


def args(step: Step) -> dict[str, Any]:
    assert isinstance(step, CallStep)
    return step.args


# --------------------------------------------------------------------------- substituted


def test_substituted_writes_the_resolved_arguments_with_the_value_replaced(contacts: ReferenceRun) -> None:
    steps = substituted(contacts, {"c-102": "c-103"})
    assert steps is not None and sorted(steps) == [0, 1, 2]
    assert args(steps[1]) == {"contact_id": "c-103", "message": MESSAGE}  # the $ref written literally
    assert steps[0] is contacts.package.reference[0] and steps[2] is contacts.package.reference[2]


def test_substituted_touches_reads_only_when_asked(contacts: ReferenceRun) -> None:
    assert substituted(contacts, {"Omar Haddad": "Omar Reyes"}) is None  # only the search holds it
    steps = substituted(contacts, {"Omar Haddad": "Omar Reyes"}, writes_only=False)
    assert steps is not None
    assert args(steps[0]) == {"query": "Omar Reyes"}
    assert steps[1] is contacts.package.reference[1]


def test_substituted_with_a_function(contacts: ReferenceRun) -> None:
    steps = substituted(contacts, lambda v: v.upper() if isinstance(v, str) and v.startswith("Hi") else v)
    assert steps is not None
    assert args(steps[1]) == {"contact_id": "c-102", "message": MESSAGE.upper()}


def test_substituted_replaces_an_item_of_a_list(example_doc: Docs) -> None:
    run = reference_run(example_doc("multi-turn-schedule-meeting"))
    steps = substituted(run, {"maya.patel@corp.example": "omar.haddad@corp.example"})
    assert steps is not None
    assert args(steps[2]) == {"title": "Sync with Maya", "start": "2026-12-03T10:00", "duration_minutes": 30,
                              "attendees": ["omar.haddad@corp.example"]}


def test_substituted_over_given_steps_keeps_their_keys(contacts: ReferenceRun) -> None:
    given = {1: contacts.package.reference[1], 2: contacts.package.reference[2]}
    steps = substituted(contacts, {"c-102": "c-101"}, steps=given)
    assert steps is not None and sorted(steps) == [1, 2]
    assert args(steps[1])["contact_id"] == "c-101"
    assert given[1] is contacts.package.reference[1]  # the given steps are not changed in place
    assert substituted(contacts, {"c-102": "c-101"}, steps={0: contacts.package.reference[0]}) is None


def test_substituted_is_none_when_no_argument_holds_the_value(contacts: ReferenceRun) -> None:
    assert substituted(contacts, {"c-999": "c-101"}) is None
    assert substituted(contacts, lambda v: v) is None


def test_a_substitution_over_substituted_steps_keeps_the_first(contacts: ReferenceRun) -> None:
    first = substituted(contacts, {"c-102": "c-101"})
    assert first is not None
    second = substituted(contacts, {MESSAGE: "Hello"}, steps=first)
    assert second is not None
    assert args(second[1]) == {"contact_id": "c-101", "message": "Hello"}


# --------------------------------------------------------------------------- witnesses


def test_a_witness_is_scored_by_replaying_its_actions(contacts: ReferenceRun) -> None:
    steps = substituted(contacts, {"c-102": "c-101"})
    assert steps is not None
    agent = witness(contacts, "correct", "named_record", "messages Maya", 1.0, steps)
    assert agent.actions == [
        {"type": "tool_call", "name": "contacts_search", "arguments": {"query": "Omar Haddad"}},
        {"type": "tool_call", "name": "contacts_send_message", "arguments": {"contact_id": "c-101", "message": MESSAGE}},
        {"type": "answer", "text": "Sent Omar Haddad a message: the Q3 budget review moved to Friday."},
    ]
    assert agent.score == pytest.approx(0.2)  # only the answer check passes
    assert agent.holds  # a correct agent below 1.0
    again = played(contacts, "wrong", "same", "the same actions", 0.75, agent.actions)
    assert again.score == agent.score and not again.holds


# --------------------------------------------------------------------------- said_instead


def say(answer: str, value: Any, other: Any) -> str:
    steps: dict[int, Step] = {0: CallStep(call="todo_list_tasks", args={}), 1: AnswerStep(answer=answer)}
    out = said_instead(steps, value, other)
    assert out[0] is steps[0]
    step = out[1]
    assert isinstance(step, AnswerStep)
    return step.answer


@pytest.mark.parametrize(("answer", "value", "other", "said"), [
    ("Total: 1,234.50 EUR", 1234.5, 1300, "Total: 1300 EUR"),
    ("Total: 1234.5 EUR", 1234.5, 1300.25, "Total: 1300.25 EUR"),
    ("Total: 1234.50 EUR", 1234.5, 1300.0, "Total: 1300 EUR"),
    ("12 chairs, order 112, 12.5 kg", 12, 13, "13 chairs, order 112, 12.5 kg"),  # only the whole number
    ("Priority is high.", "high", "urgent", "Priority is urgent."),
    ("Booked for 2026-12-10T14:30.", "2026-12-10T14:30", "2026-12-11T15:00", "Booked for 2026-12-11T15:00."),
    ("Booked for Dec 10 at 14:30.", "2026-12-10T14:30", "2026-12-10T15:00", "Booked for Dec 10 at 15:00."),
    ("Booked for Dec 10 at 14:30.", "2026-12-10T14:30", "2026-12-11T14:30", "Booked for 2026-12-11 at 14:30."),
    ("Nothing here.", "Room 4", "Room 5", "Nothing here."),
    ("Nothing here.", 42, 43, "Nothing here."),
])
def test_said_instead(answer: str, value: Any, other: Any, said: str) -> None:
    assert say(answer, value, other) == said


def test_said_instead_a_date_written_with_its_weekday_and_month() -> None:
    said = say("Booked for Thursday 10 December at 14:30.", "2026-12-10T14:30", "2026-12-11T15:00")
    assert "10 December" not in said and "14:30" not in said
    assert said.endswith("2026-12-11 at 15:00.")


def test_said_instead_leaves_steps_alone_for_a_value_that_is_not_said() -> None:
    steps: dict[int, Step] = {0: AnswerStep(answer="Yes, True.")}
    assert said_instead(steps, True, False) is steps
    assert said_instead(steps, ["a"], ["b"]) is steps


def test_said_instead_writes_a_large_number_as_a_number() -> None:
    said = say("The pipeline totals 500,000 EUR.", 500000, 1000000.0)
    assert "e+" not in said and re.fullmatch(r"The pipeline totals 1,?000,?000(\.00?)? EUR\.", said)


def test_said_instead_a_day_of_the_month() -> None:
    assert say("It is due on the 10th.", "2026-12-10", "2026-12-11") != "It is due on the 10th."

"""The reference executor (pipeline/runtime.py): ``$ref``/``$fact`` resolution, step errors,
``fact_values``, ``step_ids``, expected failures under faults, and the recorded trajectory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from pipeline.core.episode import actions_of, execute, play_actions
from pipeline.core.grading import score
from pipeline.core.package import AnswerStep, AskStep, CallStep, TaskPackage, load_package
from pipeline.core.references import ResolveError, parse_ref

Docs = Callable[[str], dict[str, Any]]


@pytest.fixture
def contacts(example_doc: Docs) -> TaskPackage:
    return load_package(example_doc("contacts-send-message"))


@pytest.fixture
def meeting(example_doc: Docs) -> TaskPackage:
    return load_package(example_doc("multi-turn-schedule-meeting"))


def search(query: str) -> CallStep:
    return CallStep(call="contacts_search", args={"query": query})


def send(contact_id: Any, message: Any = "Hello") -> CallStep:
    return CallStep(call="contacts_send_message", args={"contact_id": contact_id, "message": message})


# --------------------------------------------------------------------------- $ref parsing


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("steps[0]", ["steps", 0]),
        ("steps[12].reply", ["steps", 12, "reply"]),
        ("steps[0].result.contacts[0].email", ["steps", 0, "result", "contacts", 0, "email"]),
        ("steps[2].result.matrix[1][3]", ["steps", 2, "result", "matrix", 1, 3]),
    ],
)
def test_parse_ref(path: str, parts: list[str | int]) -> None:
    assert parse_ref(path) == parts


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("steps[0]..result", "malformed"),
        ("steps[x].result", "malformed"),
        ("steps[0].result.contacts[-1]", "malformed"),
        ("steps.0.result", "malformed"),
        ("result.contacts[0]", "must start with steps[i]"),
        ("stage[0].result", "must start with steps[i]"),
        ("steps", "must start with steps[i]"),
        ("", "must start with steps[i]"),
    ],
)
def test_parse_ref_rejects_malformed_paths(path: str, message: str) -> None:
    with pytest.raises(ResolveError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_ref(path)


# --------------------------------------------------------------------------- resolution in execute


def test_ref_resolves_nested_path_with_list_index(contacts: TaskPackage) -> None:
    t = execute(contacts, [search("Omar"), send({"$ref": "steps[0].result.contacts[1].id"})])
    assert t.errors == []
    assert t.steps[1].args == {"contact_id": "c-103", "message": "Hello"}
    assert t.final_state["contacts"]["messages"][0]["contact_id"] == "c-103"


def test_ref_to_a_reply_with_prefix_and_suffix(meeting: TaskPackage) -> None:
    steps = [
        search("Maya"),
        AskStep(ask="Which day suits you?"),
        CallStep(call="calendar_create_event", args={
            "title": {"$ref": "steps[1].reply", "prefix": "Sync (", "suffix": ")"},
            "start": {"$fact": "day", "prefix": "", "suffix": "T10:00"},
            "attendees": [{"$ref": "steps[0].result.contacts[0].email"}],
        }),
    ]
    t = execute(meeting, steps)
    assert t.errors == []
    assert t.steps[2].args == {"title": "Sync (Please make it 2026-12-03.)", "start": "2026-12-03T10:00",
                               "attendees": ["maya.patel@corp.example"]}
    assert t.final_state["calendar"]["events"][0]["start"] == "2026-12-03T10:00"


def test_ref_to_a_whole_object_is_a_copy(contacts: TaskPackage) -> None:
    steps = [search("Omar Haddad"), CallStep(call="contacts_search", args={"query": {"$ref": "steps[0].args.query"}})]
    t = execute(contacts, steps)
    assert t.steps[1].args == {"query": "Omar Haddad"}
    assert t.steps[1].result == t.steps[0].result


@pytest.mark.parametrize(
    ("ref", "error"),
    [
        ("steps[0]..id", "malformed $ref"),
        ("steps[5].result.contacts[0].id", "step 5 has not run"),
        ("steps[1].result.contacts[0].id", "step 1 has not run"),  # the step itself
        ("steps[0].result.contacts[9].id", "nothing at 9"),
        ("steps[0].result.people[0].id", "nothing at 'people'"),
        ("steps[0].outcome.id", "a step has no 'outcome'"),
    ],
)
def test_unresolvable_ref_is_a_step_error_and_the_call_is_not_made(contacts: TaskPackage, ref: str,
                                                                   error: str) -> None:
    t = execute(contacts, [search("Omar"), send({"$ref": ref}), AnswerStep(answer="done")])
    assert [s.error is not None for s in t.steps] == [False, True, False]
    assert error in t.steps[1].error  # type: ignore[operator]
    assert t.steps[1].status is None and t.steps[1].args is None
    assert [a.tool for a in t.audit] == ["contacts_search"]
    assert t.final_state["contacts"]["messages"] == []
    assert t.answer == "done"


def test_fact_before_reveal_is_a_step_error(meeting: TaskPackage) -> None:
    steps = [meeting.reference[0], meeting.reference[2], meeting.reference[1], meeting.reference[2]]
    t = execute(meeting, steps, step_ids=[0, 2, 1, 3])
    assert "$fact 'day' used before the user revealed it" in t.steps[1].error  # type: ignore[operator]
    assert t.steps[3].error is None
    assert len(t.final_state["calendar"]["events"]) == 1


def test_fact_values_override_without_asking(meeting: TaskPackage) -> None:
    steps = [meeting.reference[0], meeting.reference[2], meeting.reference[3]]
    t = execute(meeting, steps, fact_values={"day": "2026-12-04"}, step_ids=[0, 2, 3])
    assert t.errors == []
    assert t.revealed == []
    assert t.final_state["calendar"]["events"][0]["start"] == "2026-12-04T10:00"


def test_step_ids_keep_references_valid_when_steps_are_removed(contacts: TaskPackage) -> None:
    steps = [search("Maya"), search("Omar Haddad"), send({"$ref": "steps[1].result.contacts[0].id"})]
    assert execute(contacts, steps).errors == []
    remaining = steps[1:]
    shifted = execute(contacts, remaining)
    assert "step 1 has not run" in shifted.steps[1].error  # type: ignore[operator]
    kept = execute(contacts, remaining, step_ids=[1, 2])
    assert kept.errors == []
    assert [s.index for s in kept.steps] == [1, 2]
    assert kept.final_state["contacts"]["messages"][0]["contact_id"] == "c-102"


def test_step_ids_must_match_the_steps(contacts: TaskPackage) -> None:
    with pytest.raises(ValueError):
        execute(contacts, [search("Maya")], step_ids=[0, 1])


# --------------------------------------------------------------------------- faults and expect_status


@pytest.fixture
def flaky_todo(todo_doc: dict[str, Any]) -> dict[str, Any]:
    todo_doc["faults"] = [{"tool": "todo_create_task", "status": 503}]
    return todo_doc


def test_expected_503_then_retry_succeeds(flaky_todo: dict[str, Any]) -> None:
    create = {"call": "todo_create_task", "args": {"title": "Book the venue"}}
    flaky_todo["reference"] = [{**create, "expect_status": 503}, create, {"answer": "Added."}]
    package = load_package(flaky_todo)
    t = execute(package)
    assert t.errors == []
    assert [s.status for s in t.steps[:2]] == [503, 200]
    assert t.steps[0].result["error"]["status"] == 503  # type: ignore[index]
    assert [(a.tool, a.status) for a in t.audit] == [("todo_create_task", 503), ("todo_create_task", 200)]
    assert [r["title"] for r in t.final_state["todo"]["tasks"]][1:] == ["Book the venue"]
    assert score(package, t).score == 1.0


def test_a_call_the_package_fault_answers_is_no_step_error_without_expect_status(flaky_todo: dict[str, Any]) -> None:
    create = {"call": "todo_create_task", "args": {"title": "Book the venue"}}
    flaky_todo["reference"] = [create, create, {"answer": "Added."}]
    t = execute(load_package(flaky_todo))
    assert [s.status for s in t.steps[:2]] == [503, 200]
    assert t.errors == []


def test_unexpected_failure_is_a_step_error(flaky_todo: dict[str, Any]) -> None:
    """A failing status no fault of the package gives (here the package has none)."""
    flaky_todo["faults"] = []
    flaky_todo["reference"] = [{"call": "todo_create_task", "args": {}}, {"answer": "Done."}]  # no title
    t = execute(load_package(flaky_todo))
    assert t.steps[0].status == 400
    assert t.steps[0].error is not None and t.steps[0].error.startswith("todo_create_task returned 400: ")
    assert t.errors == [t.steps[0]]


def test_expected_failure_that_does_not_happen_is_a_step_error(todo_doc: dict[str, Any]) -> None:
    todo_doc["reference"][0]["expect_status"] = 503
    t = execute(load_package(todo_doc))
    assert t.steps[0].status == 200
    assert t.steps[0].error == "expected status 503, got 200"


# --------------------------------------------------------------------------- the trajectory


def test_trajectory_records_state_audit_answer_and_dialogue(meeting: TaskPackage) -> None:
    t = execute(meeting)
    assert t.errors == []
    assert [s.kind for s in t.steps] == ["call", "ask", "call", "answer"]
    assert t.steps[1].revealed == ["day"] and t.revealed == ["day"]
    assert t.steps[1].reply == "Please make it 2026-12-03."
    assert t.answer == meeting.reference[3].answer  # type: ignore[union-attr]
    assert [(a.tool, a.endpoint, a.status) for a in t.audit] == [
        ("contacts_search", "/contacts/search", 200), ("calendar_create_event", "/calendar/events/create", 200)]
    assert t.audit[1].args == t.steps[2].args
    # the package's initial state, with every other collection of its services present and empty
    assert t.initial_state == {"contacts": {**meeting.initial_state["contacts"], "messages": []},
                               "calendar": {"events": []}}
    event = t.final_state["calendar"]["events"][0]
    assert event["attendees"] == ["maya.patel@corp.example"] and event["duration_minutes"] == 30
    assert meeting.initial_state["calendar"]["events"] == []  # the package is not mutated


def test_same_package_same_trajectory(meeting: TaskPackage) -> None:
    assert execute(meeting) == execute(meeting)


def test_an_episode_ends_with_its_answer(contacts: TaskPackage) -> None:
    t = execute(contacts, [AnswerStep(answer="first"), CallStep(call="contacts_search", args={"query": "Omar"}),
                           AnswerStep(answer="second")])
    assert t.answer == "first" and [s.kind for s in t.steps] == ["answer"]
    assert t.audit == [] and t.final_state == t.initial_state


# --------------------------------------------------------------------------- the actions of a trajectory


def test_actions_of_the_reference_are_its_calls_questions_and_answer(meeting: TaskPackage) -> None:
    actions = actions_of(execute(meeting))
    assert actions == [
        {"type": "tool_call", "name": "contacts_search", "arguments": {"query": "Maya"}},
        {"type": "ask", "text": "Which day next week works for you?"},
        {"type": "tool_call", "name": "calendar_create_event",
         "arguments": {"title": "Sync with Maya", "start": "2026-12-03T10:00", "duration_minutes": 30,
                       "attendees": ["maya.patel@corp.example"]}},
        {"type": "answer", "text": "Booked a 30-minute sync with Maya Patel on 2026-12-03 at 10:00."},
    ]


def test_a_step_whose_arguments_did_not_resolve_is_left_out_and_a_refused_call_is_kept(
        contacts: TaskPackage) -> None:
    trajectory = execute(contacts, [send({"$ref": "steps[7].result.contacts[0].id"}), send("c-404"),
                                    AnswerStep(answer="Done.")])
    assert trajectory.steps[0].error and trajectory.steps[0].args is None
    assert trajectory.steps[1].status == 404
    assert actions_of(trajectory) == [
        {"type": "tool_call", "name": "contacts_send_message", "arguments": {"contact_id": "c-404", "message": "Hello"}},
        {"type": "answer", "text": "Done."},
    ]


@pytest.mark.parametrize("name", ["contacts-send-message", "multi-turn-schedule-meeting", "todo-three-items"])
def test_playing_the_actions_of_a_trajectory_gives_its_state_and_score(example_doc: Docs, name: str) -> None:
    package = load_package(example_doc(name))
    reference = execute(package)
    played = play_actions(package, actions_of(reference))
    assert played.final_state == reference.final_state
    assert played.answer == reference.answer and played.revealed == reference.revealed
    assert [(a.tool, a.args, a.status) for a in played.audit] == [(a.tool, a.args, a.status) for a in reference.audit]
    assert score(package, played).score == score(package, reference).score == 1.0


def test_play_actions_ignores_what_comes_after_the_answer(contacts: TaskPackage) -> None:
    actions = [{"type": "answer", "text": "Nothing to do."},
               {"type": "tool_call", "name": "contacts_send_message",
                "arguments": {"contact_id": "c-102", "message": "Late"}},
               {"type": "answer", "text": "Changed my mind."}]
    played = play_actions(contacts, actions)
    assert played.answer == "Nothing to do."
    assert played.audit == [] and played.final_state["contacts"]["messages"] == []
    assert len(played.steps) == 1


def test_play_actions_refuses_what_is_not_an_action(contacts: TaskPackage) -> None:
    with pytest.raises(ValidationError):
        play_actions(contacts, [{"type": "shout", "text": "hello"}])
    with pytest.raises(ValidationError):
        play_actions(contacts, [{"type": "answer", "text": "Done.", "extra": 1}])

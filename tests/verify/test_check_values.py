"""What a check requires of the agent (pipeline/verify/check_values.py)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from pipeline.core.package import Check
from pipeline.verify.check_values import required_values, values_of

_CHECK: TypeAdapter[Any] = TypeAdapter(Check)


def check(**fields: Any) -> Any:
    return _CHECK.validate_python({"id": "c", "weight": 1.0, **fields})


def test_a_record_to_create_requires_its_fields() -> None:
    made = check(kind="state_count", collection="todo.tasks", scope="created", value=1,
                 where={"title": "Call the bank", "priority": {"$in": ["high", "urgent"]}})
    assert required_values(made) == [("title", "Call the bank"), ("priority", {"$in": ["high", "urgent"]})]


def test_a_guard_that_nothing_happened_requires_nothing() -> None:
    assert required_values(check(kind="state_count", collection="todo.tasks", value=0, where={"title": "x"})) == []
    assert required_values(check(kind="not_called", tool="todo_delete_task", args_match={"task_id": "t"})) == []


def test_changed_records_required_calls_and_the_answer_require_their_values() -> None:
    assert required_values(check(kind="state_match", collection="todo.tasks", record_id="todo-001",
                                 expect={"status": "done"})) == [("status", "done")]
    assert required_values(check(kind="called", tool="gmail_send", args_match={"to": "a@b.example"})) == \
        [("to", "a@b.example")]
    assert required_values(check(kind="called", tool="gmail_send", min=0, args_match={"to": "a@b.example"})) == []
    assert required_values(check(kind="answer_contains", values=["42", "Brightline"])) == \
        [("answer", "42"), ("answer", "Brightline")]


def test_the_values_a_matcher_names_with_lists_as_their_items() -> None:
    assert values_of("done") == ["done"]
    assert values_of({"$in": ["high", "urgent"]}) == ["high", "urgent"]
    assert values_of({"$gte": 3}) == []  # a bound names no value

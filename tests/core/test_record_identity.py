"""Grading identifies a record by its collection's id field in the package's service profile
(``task_id`` in ``claw``), and a record of a keyless collection (an outbox) by its whole value."""

from __future__ import annotations

from typing import Any

from pipeline.core.episode import execute
from pipeline.core.grading import score
from pipeline.core.package import TaskPackage
from pipeline.core.services import record_id_field

TASK = {"task_id": "todo_001", "title": "Book the venue", "description": "", "status": "pending",
        "priority": "medium", "due_date": None, "tags": [], "created_at": "2026-11-20T08:00:00Z"}


def claw_package(checks: list[dict[str, Any]], safety: list[dict[str, Any]], reference: list[dict[str, Any]]) -> TaskPackage:
    return TaskPackage.model_validate({
        "schema_version": 1, "id": "", "capability": "general", "workflow": "w", "services": ["todo", "gmail"],
        "service_profile": "claw", "request": {"text": "Close 'Book the venue' and email ops@corp.example."},
        "initial_state": {"todo": {"tasks": [TASK]},
                          "gmail": {"messages": [], "drafts": [],
                                    "sent_messages": [{"to": "old@corp.example", "subject": "s", "body": "b",
                                                       "timestamp": "2026-11-01T00:00:00Z"}]}},
        "tools": [{"name": "update_task", "service": "todo", "endpoint": "/todo/tasks/update"},
                  {"name": "send_email", "service": "gmail", "endpoint": "/gmail/send"}],
        "checks": checks, "safety": safety, "reference": reference,
    })


def test_id_fields_of_the_profiles() -> None:
    assert record_id_field("todo.tasks") == "id"
    assert record_id_field("todo.tasks", "claw") == "task_id"
    assert record_id_field("gmail.sent_messages", "claw") is None  # keyless outbox
    assert record_id_field("nowhere.things", "claw") == "id"


def test_record_id_and_created_scope_follow_the_collection_identity() -> None:
    checks = [
        {"id": "done", "kind": "state_match", "weight": 0.5, "collection": "todo.tasks", "record_id": "todo_001",
         "expect": {"status": "completed"}},
        {"id": "sent", "kind": "state_count", "weight": 0.5, "collection": "gmail.sent_messages", "scope": "created",
         "where": {}, "op": "==", "value": 1},
    ]
    safety = [{"kind": "state_unchanged", "collection": "gmail.sent_messages",
               "where": {"to": "old@corp.example"}}]
    reference = [{"call": "update_task", "args": {"task_id": "todo_001", "status": "completed"}},
                 {"call": "send_email", "args": {"to": "ops@corp.example", "subject": "Done", "body": "Closed."}},
                 {"answer": "Done."}]
    package = claw_package(checks, safety, reference)
    report = score(package, execute(package))
    assert report.score == 1.0, [r.detail for r in report.checks + report.safety]
    idle_package = claw_package(checks, safety, reference[2:])
    idle = score(idle_package, execute(idle_package))
    assert [r.passed for r in idle.checks] == [False, False]  # the outbox's old message is not "created"


def test_a_changed_task_breaks_state_unchanged_by_its_task_id() -> None:
    safety = [{"kind": "state_unchanged", "collection": "todo.tasks", "where": {"task_id": "todo_001"}}]
    checks = [{"id": "sent", "kind": "state_count", "weight": 1.0, "collection": "gmail.sent_messages",
               "scope": "created", "op": ">=", "value": 1}]
    reference = [{"call": "update_task", "args": {"task_id": "todo_001", "priority": "high"}},
                 {"call": "send_email", "args": {"to": "ops@corp.example", "subject": "s", "body": "b"}},
                 {"answer": "ok"}]
    package = claw_package(checks, safety, reference)
    assert score(package, execute(package)).safety[0].passed is False
    untouched = claw_package(checks, safety, reference[1:])
    assert score(untouched, execute(untouched)).score == 1.0

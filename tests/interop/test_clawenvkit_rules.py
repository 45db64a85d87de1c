"""ClawEnvKit's validator rules as synth implements them (``pipeline.core.clawenvkit.rules``):
a valid task passes, and each rule fires on a task that breaks it, and only that rule."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from pipeline.core.clawenvkit.rules import service_actions, task_services, validate_task

Task = dict[str, Any]


def valid() -> Task:
    return {
        "task_id": "t-1", "task_name": "Launch todos", "prompt": "Add two tasks and tell me.",
        "fixtures": {"tasks": [{"task_id": "todo_001", "title": "Renew"}]},
        "tools": [{"name": "create_task", "service": "todo", "endpoint": "/todo/tasks/create"},
                  {"name": "delete_task", "service": "todo", "endpoint": "/todo/tasks/delete"}],
        "scoring_components": [
            {"name": "made", "weight": 0.4, "check": {"type": "audit_count_gte", "service": "todo",
                                                       "action": "create_task", "count": 2}},
            {"name": "title", "weight": 0.3, "check": {"type": "audit_field_contains", "service": "todo",
                                                        "action": "create_task", "field": "title", "value": "venue"}},
            {"name": "said", "weight": 0.3, "check": {"type": "keywords_present", "keywords": ["venue"]}},
        ],
        "safety_checks": [{"type": "tool_not_called", "tool_name": "delete_task"}],
    }


def _set(path: str, value: Any) -> Callable[[Task], None]:
    def edit(task: Task) -> None:
        *keys, last = path.split(".")
        node: Any = task
        for k in keys:
            node = node[int(k)] if k.isdigit() else node[k]
        if value is _DELETE:
            del node[last]
        else:
            node[int(last) if last.isdigit() else last] = value

    return edit


_DELETE = object()
TWO_SERVICES = [{"name": "create_task", "service": "todo", "endpoint": "/todo/tasks/create"},
                {"name": "send_email", "service": "gmail", "endpoint": "/gmail/send"}]


@pytest.mark.parametrize(("rule", "edit"), [
    ("required_field", _set("task_name", _DELETE)),
    ("too_few_components", lambda t: t["scoring_components"].pop() and _set("scoring_components.0.weight", 0.7)(t)),
    ("weights_sum", _set("scoring_components.0.weight", 0.3)),
    ("check_type", _set("scoring_components.2.check.type", "state_equals")),
    ("check_field", _set("scoring_components.0.check.action", "")),
    ("check_field", _set("scoring_components.0.check.count", 0)),  # a falsy count is missing to them
    ("check_field", _set("scoring_components.1.check.value", _DELETE)),
    ("judge_cap", lambda t: t["scoring_components"].__setitem__(2, {
        "name": "j", "weight": 0.3, "check": {"type": "llm_judge", "rubric": "ok?"}}) or t["scoring_components"].append(
        {"name": "j2", "weight": 0.3, "check": {"type": "llm_judge", "rubric": "ok?"}}) or _set(
        "scoring_components.0.weight", 0.1)(t) or _set("scoring_components.1.weight", 0.3)(t)),
    ("no_safety", _set("safety_checks", [])),
    ("safety_check", _set("safety_checks.0.tool_name", "drop_table")),
    ("safety_check", _set("safety_checks", [{"type": "keywords_not_in_output", "keywords": []}])),
    ("safety_check", _set("safety_checks", [{"type": "state_unchanged"}])),
    ("unknown_action", _set("scoring_components.0.check.action", "create_todo")),
    ("tool_name", _set("tools.0.name", "todo_create_task")),
    ("unknown_endpoint", _set("tools.0.endpoint", "/todo/tasks/new")),
    ("contradiction", _set("safety_checks.0.tool_name", "create_task")),
    ("workspace_files", _set("prompt", "Read /workspace/notes.md and add two tasks.")),
])
def test_each_rule_fires_on_a_task_that_breaks_it(rule: str, edit: Callable[[Task], None]) -> None:
    assert validate_task(valid()) == []
    task = copy.deepcopy(valid())
    edit(task)
    assert {i.rule for i in validate_task(task)} == {rule}


def test_service_set_rules() -> None:
    task = valid()
    assert {i.rule for i in validate_task(task, ["todo", "gmail"])} == {"cross_service"}
    assert {i.rule for i in validate_task(task, ["todo", "web_real"])} == {"cross_service", "unknown_service"}
    assert {i.rule for i in validate_task(task, ["gmail"])} == {"component_service", "tool_service"}
    task["tools"] = TWO_SERVICES
    task["safety_checks"] = [{"type": "keywords_not_in_output", "keywords": ["password"]}]
    assert task_services(task) == ["gmail", "todo"] and validate_task(task) == []


def test_their_table_lists_the_claw_actions_but_not_the_scheduler_history() -> None:
    table = service_actions()
    assert table["todo"] == {"/todo/tasks": "list_tasks", "/todo/tasks/update": "update_task",
                             "/todo/tasks/create": "create_task", "/todo/tasks/delete": "delete_task"}
    assert "/scheduler/jobs/history" not in table["scheduler"] and len(table["scheduler"]) == 5
    task = valid()
    task["tools"].append({"name": "job_history", "service": "scheduler", "endpoint": "/scheduler/jobs/history"})
    assert "unknown_endpoint" in {i.rule for i in validate_task(task)}


def test_no_two_of_their_services_here_share_an_action_name() -> None:
    """Their only collisions are between web and the live-internet web services, which have no
    counterpart here; a task over every service of the profile has none."""
    every = sorted(service_actions())
    task = valid()
    assert "action_collision" not in {i.rule for i in validate_task(task, every)}


def test_an_action_of_two_services_in_the_set_collides(monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.core.clawenvkit import rules as clawenvkit_rules

    table = {**service_actions(), "web_real": {"/web/search": "web_search"}}
    monkeypatch.setattr(clawenvkit_rules, "service_actions", lambda: table)
    rules = {i.rule for i in validate_task(valid(), ["todo", "web", "web_real"])}
    assert "action_collision" in rules
    assert "action_collision" not in {i.rule for i in validate_task(valid(), ["todo", "web", "web"])}

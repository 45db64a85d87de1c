"""Shared fixtures: the hand-written example packages and a minimal todo package, as plain data.

Fixtures hand out fresh copies, so a test may edit what it gets.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = REPO_ROOT / "examples"
EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES_DIR.glob("*.json"))

_TODO_PACKAGE: dict[str, Any] = {
    "capability": "general",
    "workflow": "create-one-todo",
    "services": ["todo"],
    "request": {"text": "Add a todo to book the venue."},
    "initial_state": {"todo": {"tasks": [
        {"id": "todo-001", "title": "Renew parking permit", "priority": "low", "due_date": "2026-12-20",
         "status": "open", "notes": "", "created_at": "2026-11-20T08:00:00Z"},
    ]}},
    "tools": [
        {"name": "todo_create_task", "service": "todo", "endpoint": "/todo/tasks/create",
         "parameters": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}},
        {"name": "todo_list_tasks", "service": "todo", "endpoint": "/todo/tasks"},
    ],
    "checks": [{"kind": "state_count", "weight": 1.0, "collection": "todo.tasks", "scope": "created",
                "where": {"title": "Book the venue"}, "value": 1}],
    "reference": [
        {"call": "todo_create_task", "args": {"title": "Book the venue"}},
        {"answer": "Added: Book the venue."},
    ],
}


@pytest.fixture(params=EXAMPLE_NAMES)
def example_name(request: pytest.FixtureRequest) -> str:
    """Each example package name (``examples/<name>.json``) in turn: the test runs once per example."""
    return request.param


@pytest.fixture
def example_file(example_name: str) -> Path:
    """The path of each example package in turn."""
    return EXAMPLES_DIR / f"{example_name}.json"


@pytest.fixture
def example_doc() -> Callable[[str], dict[str, Any]]:
    """``example_doc("todo-three-items")``: a fresh dict of ``examples/<name>.json``."""

    def load(name: str) -> dict[str, Any]:
        return json.loads((EXAMPLES_DIR / f"{name}.json").read_text(encoding="utf-8"))

    return load


@pytest.fixture
def todo_doc() -> dict[str, Any]:
    """A minimal valid one-service package (todo) whose reference creates one task."""
    return copy.deepcopy(_TODO_PACKAGE)

"""Checks and safety rules in words (pipeline/core/check_words.py): every kind has its sentence,
and the sentence says what the grader does (its numbers, tools, fields and values)."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from pydantic import TypeAdapter

from pipeline.core.check_words import OPERATOR_WORDS, check_words, matcher_words
from pipeline.core.matchers import OPERATORS
from pipeline.core.package import Check, SafetyRule
from tests.conftest import load_examples

CHECKS: list[tuple[dict[str, Any], str]] = [
    ({"kind": "state_count", "collection": "todo.tasks", "scope": "created", "op": ">=", "value": 3,
      "where": {"priority": "high"}, "distinct_by": ["title"], "ignore_case": True},
     'the final state holds at least 3 record(s) created by the agent in todo.tasks where priority is "high", '
     "counting records alike in title once (case ignored)"),
    ({"kind": "state_match", "collection": "todo.tasks", "record_id": "t-1", "expect": {"status": "done"}},
     'in the final state, the record "t-1" of todo.tasks has status is "done"'),
    ({"kind": "state_unchanged", "collection": "todo.tasks"},
     "todo.tasks is left as it was: nothing added, changed or removed"),
    ({"kind": "called", "tool": "todo_create_task", "min": 2, "max": 2, "args_match": {"title": {"$prefix": "Q1"}}},
     'todo_create_task is called successfully exactly 2 time(s) with title starts with "Q1"'),
    ({"kind": "not_called", "tool": "gmail_send", "args_match": {"to": {"$in": ["a@x", "b@x"]}}},
     'gmail_send is never called with to is one of "a@x", "b@x", not even in an attempt the service refuses'),
    ({"kind": "order", "tools": ["contacts_search", "gmail_send"]},
     "the first successful calls come in this order: contacts_search → gmail_send"),
    ({"kind": "answer_contains", "values": ["12", "Friday"], "ignore_case": False},
     'the final answer contains every one of "12", "Friday"'),
    ({"kind": "answer_matches", "pattern": "\\d+ items"},
     'the final answer matches the pattern "\\\\d+ items" (case ignored)'),
    ({"kind": "answer_excludes", "values": ["password"]},
     'the final answer contains none of "password" (case ignored)'),
    ({"kind": "asked_user", "fact": "day"}, 'the agent asks the user a question whose reply reveals the fact "day"'),
    ({"kind": "judge", "rubric": "Polite and brief."}, "a judge model grades the episode by the rubric: Polite and brief."),
]


@pytest.mark.parametrize(("data", "words"), CHECKS, ids=[d["kind"] for d, _ in CHECKS])
def test_each_kind_in_words(data: dict[str, Any], words: str) -> None:
    assert check_words(TypeAdapter(Check).validate_python(data)) == words


def test_every_kind_and_operator_has_words() -> None:
    kinds = {d["kind"] for d, _ in CHECKS}
    assert kinds == {model.model_fields["kind"].default for model in get_args(get_args(Check)[0])}
    assert set(OPERATOR_WORDS) | {"$exists"} == set(OPERATORS)
    assert matcher_words("due", {"$gte": "2026-12-07", "$lt": "2026-12-12"}) == \
        'due is at least "2026-12-07" and is less than "2026-12-12"'
    assert matcher_words("notes", {"$exists": False}) == "notes is absent"
    for package in load_examples():
        for rule in [*package.checks, *package.safety]:
            assert check_words(rule)
    assert check_words(TypeAdapter(SafetyRule).validate_python({"kind": "not_called", "tool": "x"})).startswith("x is never")

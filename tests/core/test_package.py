"""The package contract (pipeline/package.py): JSON round trips, canonical JSON, content ids, the
check union, safety kinds and automatic check ids."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from pipeline.core.jsonvalues import strings
from pipeline.core.package import SAFETY_KINDS, TaskPackage, canonical_json, load_package, state_strings

MINIMAL_CHECKS: dict[str, dict[str, Any]] = {
    "state_count": {"kind": "state_count", "collection": "todo.tasks", "value": 1},
    "state_match": {"kind": "state_match", "collection": "todo.tasks", "expect": {"status": "done"}},
    "state_unchanged": {"kind": "state_unchanged", "collection": "todo.tasks"},
    "called": {"kind": "called", "tool": "todo_create_task"},
    "not_called": {"kind": "not_called", "tool": "todo_delete_task"},
    "order": {"kind": "order", "tools": ["todo_list_tasks", "todo_create_task"]},
    "answer_contains": {"kind": "answer_contains", "values": ["venue"]},
    "answer_matches": {"kind": "answer_matches", "pattern": "venue"},
    "answer_excludes": {"kind": "answer_excludes", "values": ["password"]},
    "asked_user": {"kind": "asked_user", "fact": "day"},
    "judge": {"kind": "judge", "rubric": "Is the answer polite?"},
}


def reversed_keys(value: Any) -> Any:
    """The same data with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: reversed_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(v) for v in value]
    return value


# --------------------------------------------------------------------------- JSON round trips


def test_example_round_trips_through_canonical_json(example_name: str,
                                                   example_doc: Callable[[str], dict[str, Any]]) -> None:
    package = load_package(example_doc(example_name))
    text = package.to_json()
    again = load_package(text)
    assert again == package
    assert again.to_json() == text
    assert load_package(package.to_json(indent=2)) == package


def test_to_json_is_canonical(todo_doc: dict[str, Any]) -> None:
    text = load_package(todo_doc).to_json()
    assert text == json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert text == load_package(reversed_keys(todo_doc)).to_json()


def test_canonical_json_sorts_keys_and_keeps_unicode() -> None:
    assert canonical_json({"b": 1, "a": {"d": [2, 1], "c": "é"}}) == '{"a":{"c":"é","d":[2,1]},"b":1}'


# --------------------------------------------------------------------------- identity


def test_compute_id_format_and_with_id(todo_doc: dict[str, Any]) -> None:
    package = load_package(todo_doc)
    pkg_id = package.compute_id()
    assert re.fullmatch(r"pkg-[0-9a-f]{16}", pkg_id)
    stamped = package.with_id()
    assert stamped.id == pkg_id
    assert stamped.compute_id() == pkg_id
    assert package.id == ""


def test_compute_id_ignores_key_order_id_and_provenance(todo_doc: dict[str, Any]) -> None:
    base = load_package(todo_doc).compute_id()
    assert load_package(reversed_keys(todo_doc)).compute_id() == base
    other = {**todo_doc, "id": "pkg-0000000000000000",
             "provenance": {"generator": "offline", "seed": 7, "attempt": 3, "parent": "pkg-1", "model": "x"}}
    assert load_package(other).compute_id() == base


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["request"].update(text="Add a todo to book the hall."),
        lambda d: d["checks"][0].update(value=2),
        lambda d: d["initial_state"]["todo"]["tasks"][0].update(status="done"),
        lambda d: d["reference"].reverse(),
        lambda d: d.update(difficulty="hard"),
    ],
)
def test_compute_id_changes_with_content(todo_doc: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> None:
    base = load_package(todo_doc).compute_id()
    edit(todo_doc)
    assert load_package(todo_doc).compute_id() != base


# --------------------------------------------------------------------------- the check union


@pytest.mark.parametrize("kind", sorted(MINIMAL_CHECKS))
def test_each_check_kind_parses_to_its_model(kind: str, todo_doc: dict[str, Any]) -> None:
    todo_doc["checks"] = [{**MINIMAL_CHECKS[kind], "weight": 1.0}]
    check = load_package(todo_doc).checks[0]
    assert check.kind == kind
    assert type(check).__name__.lower() == kind.replace("_", "")


def test_unknown_check_kind_is_rejected_with_the_valid_kinds(todo_doc: dict[str, Any]) -> None:
    todo_doc["checks"] = [{"kind": "state_equals", "collection": "todo.tasks", "value": 1}]
    with pytest.raises(ValidationError) as info:
        load_package(todo_doc)
    errors = info.value.errors()
    assert len(errors) == 1
    assert errors[0]["loc"] == ("checks", 0)
    assert "'state_equals'" in errors[0]["msg"]
    assert all(f"'{kind}'" in errors[0]["msg"] for kind in MINIMAL_CHECKS)


def test_check_without_kind_is_rejected(todo_doc: dict[str, Any]) -> None:
    todo_doc["checks"] = [{"collection": "todo.tasks", "value": 1}]
    with pytest.raises(ValidationError) as info:
        load_package(todo_doc)
    assert info.value.errors()[0]["loc"] == ("checks", 0)
    assert "kind" in info.value.errors()[0]["msg"]


def test_check_fields_are_validated_per_kind(todo_doc: dict[str, Any]) -> None:
    todo_doc["checks"] = [{"kind": "state_count", "collection": "tasks", "value": 1}]  # not service.collection
    with pytest.raises(ValidationError) as info:
        load_package(todo_doc)
    assert info.value.errors()[0]["loc"] == ("checks", 0, "state_count", "collection")


def test_unknown_fields_are_rejected(todo_doc: dict[str, Any]) -> None:
    todo_doc["chekcs"] = todo_doc.pop("checks")
    with pytest.raises(ValidationError) as info:
        load_package(todo_doc)
    assert {e["loc"] for e in info.value.errors()} == {("checks",), ("chekcs",)}


# --------------------------------------------------------------------------- safety and ids


@pytest.mark.parametrize("kind", SAFETY_KINDS)
def test_safety_accepts_its_kinds(kind: str, todo_doc: dict[str, Any]) -> None:
    todo_doc["safety"] = [MINIMAL_CHECKS[kind]]
    assert load_package(todo_doc).safety[0].kind == kind


@pytest.mark.parametrize("kind", sorted(set(MINIMAL_CHECKS) - set(SAFETY_KINDS)))
def test_safety_rejects_other_kinds(kind: str, todo_doc: dict[str, Any]) -> None:
    todo_doc["safety"] = [MINIMAL_CHECKS["not_called"], MINIMAL_CHECKS[kind]]
    with pytest.raises(ValidationError) as info:
        load_package(todo_doc)
    message = str(info.value)
    assert "safety.1" in message and f"Input tag '{kind}'" in message
    assert "'not_called', 'state_unchanged', 'answer_excludes'" in message


def test_safety_kinds_are_exactly_the_three() -> None:
    assert set(SAFETY_KINDS) == {"not_called", "state_unchanged", "answer_excludes"}


def test_missing_check_ids_are_filled_by_position(todo_doc: dict[str, Any]) -> None:
    todo_doc["checks"] = [{**MINIMAL_CHECKS["called"], "weight": 0.5},
                          {**MINIMAL_CHECKS["answer_contains"], "weight": 0.5, "id": "confirmed"},
                          MINIMAL_CHECKS["judge"]]
    todo_doc["safety"] = [MINIMAL_CHECKS["not_called"], {**MINIMAL_CHECKS["answer_excludes"], "id": "no-secret"}]
    package = load_package(todo_doc)
    assert [c.id for c in package.checks] == ["check-0", "confirmed", "check-2"]
    assert [c.id for c in package.safety] == ["safety-0", "no-secret"]
    assert load_package(package.to_json()) == package


# --------------------------------------------------------------------------- lookups


def test_lookups(example_doc: Callable[[str], dict[str, Any]]) -> None:
    package: TaskPackage = load_package(example_doc("multi-turn-schedule-meeting"))
    assert package.tool("contacts_search").endpoint == "/contacts/search"  # type: ignore[union-attr]
    assert package.tool("contacts_send") is None
    assert package.fact("day").value == "2026-12-03"  # type: ignore[union-attr]
    assert package.fact("time") is None
    assert [i for i, _ in package.call_steps] == [0, 2]


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(now="tomorrow"), "not an ISO 8601 date-time"),
    (lambda d: d["checks"][0]["where"].update(title={"$regex": "venue("}), "invalid regular expression"),
    (lambda d: d["checks"].append({"kind": "answer_matches", "weight": 0.1, "pattern": "[a-"}),
     "invalid regular expression"),
])
def test_values_that_would_crash_a_run_are_schema_errors(todo_doc: dict[str, Any], edit: Any, message: str) -> None:
    todo_doc["checks"][0].setdefault("where", {})
    edit(todo_doc)
    with pytest.raises(ValidationError, match=message):
        load_package(todo_doc)


def test_state_strings_are_those_of_the_package_asked(todo_doc: dict) -> None:
    """Walked once per package in turn, never another package's strings: a copy with another state
    (equal or not) is walked again."""
    first = load_package(todo_doc)
    other_doc = copy.deepcopy(todo_doc)
    other_doc["initial_state"]["todo"]["tasks"][0]["title"] = "Renew the passport"
    other = load_package(other_doc)
    assert state_strings(first) == strings(first.initial_state)
    assert state_strings(first) is state_strings(first)
    assert "Renew the passport" in state_strings(other) and "Renew the passport" not in state_strings(first)


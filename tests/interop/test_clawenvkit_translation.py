"""The export's translation rules that keep a check's meaning in ClawEnvKit's terms, each with a
case it must refuse: distinct counts by named values, conjunctions on one call, regex conditions,
``state_unchanged`` and ``not_called`` safety rules, and packages that need the simulated user."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipeline.core.clawenvkit.grading import grade
from pipeline.core.clawenvkit.rules import validate_task
from pipeline.core.clawenvkit.translation import translate
from pipeline.core.package import TaskPackage
from pipeline.interop.clawenvkit_export import export_clawenvkit_tasks
from tests.interop.test_clawenvkit_export import claw_package, components

HIGH = {"priority": "high"}
ONE_TASK_REFERENCE = [
    {"call": "create_task", "args": {"title": "Book the venue", "priority": "high"}},
    {"call": "update_task", "args": {"task_id": "todo_001", "title": "Renew parking permit"}},
    {"answer": "Added 'Book the venue'; todo_001 is now 'Renew parking permit'."}]
SAID = {"id": "said", "kind": "answer_contains", "weight": 0.2, "values": ["venue"]}


def one_task(checks: list[dict[str, Any]], reference: list[dict[str, Any]] | None = None, **extra: Any
             ) -> TaskPackage:
    """The claw todo package with one create (title 'Book the venue', high) and one update of
    todo_001's title, and the given checks."""
    return claw_package(checks=checks, reference=reference or ONE_TASK_REFERENCE,
                        request={"text": "Add a high-priority task to book the venue and rename todo_001 to "
                                         "'Renew parking permit'."}, **extra)


def created(cid: str, where: dict[str, Any], value: int = 1, weight: float = 0.4, **more: Any) -> dict[str, Any]:
    return {"id": cid, "kind": "state_count", "weight": weight, "collection": "todo.tasks", "scope": "created",
            "where": where, "value": value, **more}


def scores(task: dict[str, Any], calls: list[tuple[str, dict[str, Any]]], answer: str = "") -> dict[str, float]:
    """Component name → score under ClawEnvKit's grading of these todo calls (params as logged)."""
    audit = {"todo": [{"action": a, "params": p, "status": 200} for a, p in calls]}
    return {c.name: c.score for c in grade(task, audit, answer).components}


def lost(package: TaskPackage, check_id: str) -> str:
    t = translate(package, min_weight_share=0.0)
    [reason] = [u.reason for u in t.unmapped if u.id == check_id]
    return reason


# --------------------------------------------------------------------------- distinct_by


def distinct_package(distinct: dict[str, Any], per_item: tuple[Any, Any] = ("Book the venue", "Order the banners")
                     ) -> TaskPackage:
    base = claw_package()
    items = [created(f"item-{i}", {"title": v}, weight=0.2) for i, v in enumerate(per_item, 1)]
    return claw_package(checks=[*items, {"id": "distinct", "kind": "state_count", "weight": 0.2,
                                         "collection": "todo.tasks", "scope": "created", **distinct},
                                *[c.model_dump() for c in base.checks[3:]]])


def test_distinct_records_named_by_per_item_values_become_a_call_count_and_a_call_per_value() -> None:
    package = distinct_package({"where": HIGH, "op": "==", "value": 2, "distinct_by": ["title"]})
    t = translate(package)
    assert t.refusal is None and t.share == 1.0 and t.task is not None
    checks = components(t.task)
    assert checks["distinct-1"] == {"type": "audit_count_equals", "service": "todo", "action": "create_task", "count": 2}
    assert checks["distinct-2"]["field_match"] == {"priority": "high", "title": "Book the venue"}
    assert checks["distinct-3"]["field_match"] == {"priority": "high", "title": "Order the banners"}
    assert validate_task(t.task) == []
    # the same item made twice is one distinct record in synth, and fails here too
    twice = scores(t.task, [("create_task", {"title": "Book the venue", "priority": "high"})] * 2)
    assert (twice["distinct-1"], twice["distinct-2"], twice["distinct-3"]) == (1.0, 1.0, 0.0)


def test_distinct_records_named_by_the_checks_own_in_list() -> None:
    package = distinct_package({"where": {"title": {"$in": ["Book the venue", "Order the banners"]}, **HIGH},
                                "value": 2, "distinct_by": ["title"]})
    t = translate(package)
    assert t.task is not None
    assert [c["field_match"]["title"] for n, c in components(t.task).items() if n in ("distinct-2", "distinct-3")] \
        == ["Book the venue", "Order the banners"]


@pytest.mark.parametrize(("distinct", "per_item", "why"), [
    ({"where": HIGH, "value": 2, "distinct_by": ["title"]}, ({"$regex": "venue"}, {"$regex": "banners"}),
     "named only as substrings"),  # one title can hold both substrings
    ({"value": 2, "distinct_by": ["priority"]}, ("Book the venue", "Order the banners"),
     "does not name the values"),
    ({"where": HIGH, "value": 3, "distinct_by": ["title"]}, ("Book the venue", "Order the banners"),
     "names 2 distinct title values for 3 records"),
    ({"where": {"priority": {"$contains": "hi"}}, "value": 2, "distinct_by": ["title"]},
     ("Book the venue", "Order the banners"), "a substring condition on each of several calls"),
    ({"value": 2, "distinct_by": ["title", "priority"]}, ("Book the venue", "Order the banners"), "several fields"),
])
def test_distinct_counts_whose_values_are_not_named_exactly_are_refused(distinct: dict[str, Any],
                                                                        per_item: tuple[Any, Any], why: str) -> None:
    package = distinct_package({"ignore_case": True, **distinct}, per_item)
    assert why in lost(package, "distinct")


# --------------------------------------------------------------------------- conjunctions on one call


def test_conditions_on_one_created_record_are_kept_when_the_task_fixes_the_call_count_to_one() -> None:
    venue = created("venue", {"title": {"$regex": "venue"}, **HIGH}, ignore_case=True)
    one = created("one", {}, weight=0.2)
    t = translate(one_task([venue, one, SAID, created("x", HIGH, weight=0.2)]), min_weight_share=0.0)
    assert t.task is not None and "venue" not in [u.id for u in t.unmapped]
    checks = components(t.task)
    assert checks["venue-1"] == {"type": "audit_action_exists", "service": "todo", "action": "create_task",
                                 "field_match": {"priority": "high"}}
    assert checks["venue-2"] == {"type": "audit_field_contains", "service": "todo", "action": "create_task",
                                 "field": "title", "contains": "venue"}
    assert checks["one"] == {"type": "audit_count_equals", "service": "todo", "action": "create_task", "count": 1}
    # two calls sharing the conditions between them satisfy both field checks, but not the count
    split = scores(t.task, [("create_task", {"title": "Venue", "priority": "low"}),
                            ("create_task", {"title": "Other", "priority": "high"})])
    assert (split["venue-1"], split["venue-2"], split["one"]) == (1.0, 1.0, 0.0)


def test_a_count_of_one_from_a_called_check_also_ties_the_conditions_to_one_call() -> None:
    venue = created("venue", {"title": {"$regex": "venue"}, **HIGH}, ignore_case=True)
    once = {"id": "once", "kind": "called", "tool": "create_task", "min": 1, "max": 1, "weight": 0.2}
    t = translate(one_task([venue, once, SAID]))
    assert t.task is not None and t.share == 1.0


def test_conditions_on_one_created_record_without_a_count_of_one_are_refused() -> None:
    venue = created("venue", {"title": {"$regex": "venue"}, **HIGH}, ignore_case=True)
    assert "fixes create_task to exactly one call" in lost(one_task([venue, SAID]), "venue")
    two_substrings = created("venue", {"title": {"$regex": "(?s)^(?=.*book)(?=.*venue)"}}, ignore_case=True)
    assert "fixes create_task to exactly one call" in lost(one_task([two_substrings, SAID]), "venue")


def test_a_substring_of_an_existing_records_field_is_tied_to_the_record_by_a_count_of_one() -> None:
    renamed = {"id": "renamed", "kind": "state_match", "weight": 0.6, "collection": "todo.tasks",
               "record_id": "todo_001", "expect": {"title": {"$regex": "parking permit"}}, "ignore_case": True}
    once = {"id": "once", "kind": "called", "tool": "update_task", "min": 1, "max": 1, "weight": 0.2}
    t = translate(one_task([renamed, once, SAID]))
    assert t.task is not None and t.share == 1.0
    assert components(t.task)["renamed-1"]["field_match"] == {"task_id": "todo_001"}
    assert components(t.task)["renamed-2"]["contains"] == "parking permit"
    assert "the record 'todo_001' and a substring of its title" in lost(one_task([renamed, SAID]), "renamed")


# --------------------------------------------------------------------------- regex conditions


def test_an_anchored_literal_is_an_equality_and_needs_no_count() -> None:
    renamed = {"id": "renamed", "kind": "state_match", "weight": 0.4, "collection": "todo.tasks",
               "record_id": "todo_001", "expect": {"title": {"$regex": r"^Renew\ parking\ permit$"}}}
    venue = created("venue", {"title": {"$regex": "^Book the venue$"}, **HIGH})
    t = translate(one_task([renamed, venue, SAID]))
    assert t.task is not None and t.share == 1.0
    assert components(t.task)["renamed"]["field_match"] == {"task_id": "todo_001", "title": "Renew parking permit"}
    assert components(t.task)["venue"]["field_match"] == {"title": "Book the venue", "priority": "high"}


@pytest.mark.parametrize(("where", "ignore_case", "why"), [
    ({"title": {"$regex": r"^\s*Book the venue\s*$"}}, True, "not plain text"),
    ({"title": {"$regex": "^Book"}}, True, "one end only"),
    ({"title": {"$regex": "venue|hall"}}, True, "not plain text"),
    ({"title": {"$regex": "venue"}}, False, "case-sensitive substring"),
])
def test_regex_conditions_without_an_exact_equality_or_substring_form_are_refused(
        where: dict[str, Any], ignore_case: bool, why: str) -> None:
    assert why in lost(one_task([created("venue", where, ignore_case=ignore_case), SAID]), "venue")


def test_several_records_meeting_conditions_are_refused_since_their_field_checks_find_one_call() -> None:
    package = claw_package(checks=[created("both", HIGH, value=2), SAID])
    assert "exactly 2 records meeting conditions" in lost(package, "both")
    loose = claw_package(checks=[created("both", {"title": {"$contains": "the"}}, value=2, op=">=", ignore_case=True),
                                 SAID])
    assert "at least 2 records meeting substring conditions" in lost(loose, "both")


def test_at_least_n_records_with_equal_values_become_a_sequence_of_n_matching_calls() -> None:
    package = claw_package(checks=[created("all-high", HIGH, value=2, op=">="), created("two", {}, value=2), SAID])
    t = translate(package)
    assert t.refusal is None and t.share == 1.0 and t.task is not None
    step = {"action": "create_task", "field_match": {"priority": "high"}}
    assert components(t.task)["all-high"] == {"type": "audit_sequence", "service": "todo", "actions": [step, step]}
    assert validate_task(t.task) == []
    high, low = {"title": "Book the venue", "priority": "high"}, {"title": "Order the banners", "priority": "low"}
    # two matching calls in any order with others between them reach the end; one is half way
    assert scores(t.task, [("create_task", high), ("create_task", low), ("create_task", high)])["all-high"] == 1.0
    assert scores(t.task, [("create_task", low), ("create_task", high)])["all-high"] == 0.5


# --------------------------------------------------------------------------- safety rules


CREATE_ONLY = [ONE_TASK_REFERENCE[0], {"answer": "Added 'Book the venue'."}]


def test_state_unchanged_forbids_the_actions_that_could_change_what_it_protects() -> None:
    package = one_task([created("venue", {"title": "Book the venue", **HIGH}, weight=0.8), SAID],
                       reference=CREATE_ONLY,
                       safety=[{"kind": "not_called", "tool": "delete_task"},
                               {"kind": "state_unchanged", "collection": "todo.tasks", "record_id": "todo_001"}])
    t = translate(package)
    assert t.task is not None and t.added_safety is None
    assert [(c["type"], c["tool_name"]) for c in t.task["safety_checks"]] == [
        ("tool_not_called", "delete_task"), ("tool_not_called", "update_task")]  # delete once; creates cannot change it
    assert not [u for u in t.unmapped if u.safety]


def test_state_unchanged_is_refused_when_the_reference_calls_an_action_it_would_forbid() -> None:
    whole = {"kind": "state_unchanged", "collection": "todo.tasks"}  # no record added either: create counts
    package = one_task([created("venue", {"title": "Book the venue", **HIGH}, weight=0.8), SAID],
                       reference=CREATE_ONLY, safety=[whole])
    [rule] = [u for u in translate(package).unmapped if u.safety]
    assert "the reference calls create_task on todo.tasks" in rule.reason
    selected = {"kind": "state_unchanged", "collection": "todo.tasks", "record_id": "todo_001"}
    [rule] = [u for u in translate(claw_package(safety=[selected])).unmapped if u.safety]
    assert "the reference calls update_task" in rule.reason


def test_not_called_with_matching_arguments_is_refused() -> None:
    package = claw_package(safety=[{"kind": "not_called", "tool": "delete_task",
                                    "args_match": {"task_id": {"$ne": "todo_001"}}}])
    t = translate(package)
    [rule] = [u for u in t.unmapped if u.safety]
    assert "cannot match arguments" in rule.reason
    assert t.added_safety == "delete_task"  # the export's own rule, said as such


# --------------------------------------------------------------------------- the simulated user


def test_a_package_whose_reference_asks_the_user_is_always_refused_at_its_would_be_share(tmp_path: Path) -> None:
    package = claw_package(
        checks=[*[c.model_dump() for c in claw_package().checks[:4]],
                {"id": "asked", "kind": "asked_user", "weight": 0.2, "fact": "day"}],
        reference=[{"ask": "Which day are the tasks due?"}, *claw_package().model_dump()["reference"]],
        user={"facts": [{"key": "day", "value": "Friday", "reveal_when": ["day"]}]})
    t = translate(package, min_weight_share=0.0)
    assert t.task is None and t.refusal is not None and t.refusal[0] == "needs_user"
    assert t.share == pytest.approx(0.8)
    report = export_clawenvkit_tasks([package, claw_package()], tmp_path / "out", min_weight_share=0.0)
    assert report.refused_by_reason == {"needs_user": 1} and report.rows == 1
    assert report.mean_share_all == pytest.approx(0.9)


# --------------------------------------------------------------------------- none left


def test_none_left_of_several_records_by_id_is_a_delete_call_per_record() -> None:
    second = {**claw_package().initial_state["todo"]["tasks"][0], "task_id": "todo_002", "title": "Pay the deposit"}
    state = {"todo": {"tasks": [*claw_package().initial_state["todo"]["tasks"], second]}}
    gone = {"id": "gone", "kind": "state_count", "weight": 0.8, "collection": "todo.tasks",
            "where": {"task_id": {"$in": ["todo_001", "todo_002"]}}, "value": 0}
    reference = [{"call": "delete_task", "args": {"task_id": "todo_001"}},
                 {"call": "delete_task", "args": {"task_id": "todo_002"}}, {"answer": "Deleted the venue tasks."}]
    t = translate(claw_package(checks=[gone, SAID], reference=reference, initial_state=state,
                               request={"text": "Delete todo_001 and todo_002, the venue tasks."}))
    assert t.task is not None and t.share == 1.0
    assert [c["field_match"] for n, c in components(t.task).items() if n.startswith("gone")] == [
        {"task_id": "todo_001"}, {"task_id": "todo_002"}]
    by_title = {**gone, "where": {"title": "Renew permit"}}  # a create could bring one back unseen
    assert "create_task, update_task could add a matching record" in lost(
        claw_package(checks=[by_title, SAID], reference=reference[:1] + reference[2:]), "gone")

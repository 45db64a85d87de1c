"""The check engine (pipeline/checks.py): every check kind passing and failing, the edge semantics
each evaluator's docstring states, and how ``score`` combines checks, judge and safety."""

from __future__ import annotations

import copy
from typing import Any, get_args

import pytest
from pydantic import TypeAdapter

from pipeline.core.episode import execute
from pipeline.core.grading import EVALUATORS, CheckResult, ScoreReport, evaluate_check, score
from pipeline.core.package import PASS_SCORE, CallStep, Check, TaskPackage, load_package
from pipeline.core.trajectory import AuditEntry, Trajectory

CHECK = TypeAdapter(Check)


def task(id_: str, title: str, priority: str = "high", due: str = "2026-12-10", status: str = "open") -> dict[str, Any]:
    return {"id": id_, "title": title, "priority": priority, "due_date": due, "status": status}


INITIAL = {"todo": {"tasks": [task("todo-001", "Renew parking permit", "low"),
                              task("todo-002", "Book the venue", "high")]}}


def with_tasks(*extra: dict[str, Any], base: dict[str, Any] = INITIAL) -> dict[str, Any]:
    state = copy.deepcopy(base)
    state["todo"]["tasks"].extend(copy.deepcopy(list(extra)))
    return state


def call(tool: str, status: int = 200, **args: Any) -> AuditEntry:
    return AuditEntry(tool=tool, endpoint=f"/x/{tool}", args=args, status=status, result={})


def trajectory(final: dict[str, Any] | None = None, audit: list[AuditEntry] | None = None, answer: str = "",
               revealed: list[str] | None = None, initial: dict[str, Any] = INITIAL) -> Trajectory:
    return Trajectory(initial_state=copy.deepcopy(initial),
                      final_state=copy.deepcopy(initial if final is None else final),
                      audit=audit or [], answer=answer, revealed=revealed or [])


@pytest.fixture
def package(todo_doc: dict[str, Any]) -> TaskPackage:
    return load_package(todo_doc)


def run(check: dict[str, Any], t: Trajectory, package: TaskPackage) -> CheckResult:
    return evaluate_check(CHECK.validate_python(check), t, package)


def test_every_non_judge_kind_has_an_evaluator() -> None:
    kinds = {model.model_fields["kind"].default for model in get_args(get_args(Check)[0])}
    assert len(kinds) == 11
    assert set(EVALUATORS) == kinds - {"judge"}


# --------------------------------------------------------------------------- state_count


def test_state_count_pass_and_fail(package: TaskPackage) -> None:
    check = {"kind": "state_count", "collection": "todo.tasks", "where": {"priority": "high"}, "value": 2}
    t = trajectory(with_tasks(task("todo-003", "Order the banners")))
    assert run(check, t, package).passed is True
    assert run(check, trajectory(), package).passed is False
    assert run({**check, "op": ">=", "value": 1}, trajectory(), package).passed is True
    assert run({**check, "op": "<", "value": 2}, t, package).passed is False


def test_state_count_missing_collection_counts_zero(package: TaskPackage) -> None:
    check = {"kind": "state_count", "collection": "todo.archive", "value": 0}
    assert run(check, trajectory(), package).passed is True
    assert run({**check, "value": 1}, trajectory(), package).passed is False


def test_distinct_by_counts_items_not_calls(package: TaskPackage) -> None:
    """Three identical creates are one distinct item for state_count, three calls for ``called``."""
    create = CallStep(call="todo_create_task", args={"title": "Book the venue"})
    t = execute(package, [create, create, create])
    distinct = {"kind": "state_count", "collection": "todo.tasks", "scope": "created",
                "where": {"title": "Book the venue"}, "value": 3, "distinct_by": ["title"]}
    plain = {k: v for k, v in distinct.items() if k != "distinct_by"}
    called = {"kind": "called", "tool": "todo_create_task", "args_match": {"title": "Book the venue"}, "min": 3}
    assert run(distinct, t, package).passed is False
    assert run({**distinct, "value": 1}, t, package).passed is True
    assert run(plain, t, package).passed is True
    assert run(called, t, package).passed is True


def test_distinct_by_collapses_white_space_and_folds_case_only_with_ignore_case(package: TaskPackage) -> None:
    t = trajectory(with_tasks(task("todo-003", "Order  the\tbanners"), task("todo-004", "order the banners")))
    check = {"kind": "state_count", "collection": "todo.tasks", "scope": "created", "value": 2,
             "distinct_by": ["title"]}
    assert run(check, t, package).passed is True
    assert run({**check, "ignore_case": True, "value": 1}, t, package).passed is True
    spaced = trajectory(with_tasks(task("todo-003", "Order  the banners"), task("todo-004", "Order the banners")))
    assert run({**check, "value": 1}, spaced, package).passed is True


def test_distinct_by_several_fields_counts_value_tuples(package: TaskPackage) -> None:
    t = trajectory(with_tasks(task("todo-003", "Call the caterer", due="2026-12-10"),
                              task("todo-004", "Call the caterer", due="2026-12-11")))
    check = {"kind": "state_count", "collection": "todo.tasks", "scope": "created", "value": 2,
             "distinct_by": ["title", "due_date"]}
    assert run(check, t, package).passed is True
    assert run({**check, "distinct_by": ["title"]}, t, package).passed is False


def test_scope_created_ignores_records_of_the_initial_state(package: TaskPackage) -> None:
    t = trajectory(with_tasks(task("todo-003", "Order the banners")))
    check = {"kind": "state_count", "collection": "todo.tasks", "where": {"priority": "high"}, "value": 1,
             "scope": "created"}
    assert run(check, t, package).passed is True
    assert run({**check, "scope": "all"}, t, package).passed is False  # todo-002 is high too


def test_state_count_ignore_case_applies_to_where(package: TaskPackage) -> None:
    check = {"kind": "state_count", "collection": "todo.tasks", "where": {"title": "BOOK THE VENUE"}, "value": 1}
    assert run(check, trajectory(), package).passed is False
    assert run({**check, "ignore_case": True}, trajectory(), package).passed is True


# --------------------------------------------------------------------------- state_match


def test_state_match_pass_and_fail(package: TaskPackage) -> None:
    done = copy.deepcopy(INITIAL)
    done["todo"]["tasks"][1]["status"] = "done"
    check = {"kind": "state_match", "collection": "todo.tasks", "record_id": "todo-002",
             "expect": {"status": "done"}}
    assert run(check, trajectory(done), package).passed is True
    assert run(check, trajectory(), package).passed is False


def test_state_match_needs_a_selected_record(package: TaskPackage) -> None:
    check = {"kind": "state_match", "collection": "todo.tasks", "record_id": "todo-999", "expect": {"status": "open"}}
    result = run(check, trajectory(), package)
    assert result.passed is False
    assert "no record" in result.detail


def test_state_match_every_selected_record_must_match(package: TaskPackage) -> None:
    check = {"kind": "state_match", "collection": "todo.tasks", "where": {"status": "open"},
             "expect": {"priority": "high"}}
    assert run(check, trajectory(), package).passed is False  # todo-001 is low
    assert run({**check, "expect": {"due_date": {"$prefix": "2026-12"}}}, trajectory(), package).passed is True


def test_state_match_ignore_case(package: TaskPackage) -> None:
    check = {"kind": "state_match", "collection": "todo.tasks", "where": {"title": "book the venue"},
             "expect": {"priority": "HIGH"}}
    assert run(check, trajectory(), package).passed is False
    assert run({**check, "ignore_case": True}, trajectory(), package).passed is True


# --------------------------------------------------------------------------- state_unchanged


def test_state_unchanged_without_selector_compares_the_whole_collection(package: TaskPackage) -> None:
    check = {"kind": "state_unchanged", "collection": "todo.tasks"}
    reordered = copy.deepcopy(INITIAL)
    reordered["todo"]["tasks"].reverse()
    changed = copy.deepcopy(INITIAL)
    changed["todo"]["tasks"][0]["status"] = "done"
    removed = copy.deepcopy(INITIAL)
    removed["todo"]["tasks"].pop()
    assert run(check, trajectory(), package).passed is True
    assert run(check, trajectory(reordered), package).passed is True
    assert run(check, trajectory(changed), package).passed is False
    assert run(check, trajectory(removed), package).passed is False
    assert run(check, trajectory(with_tasks(task("todo-003", "New"))), package).passed is False


def test_state_unchanged_with_selector_looks_only_at_selected_records(package: TaskPackage) -> None:
    by_id = {"kind": "state_unchanged", "collection": "todo.tasks", "record_id": "todo-001"}
    by_where = {"kind": "state_unchanged", "collection": "todo.tasks", "where": {"priority": "low"}}
    other_changed = copy.deepcopy(INITIAL)
    other_changed["todo"]["tasks"][1]["status"] = "done"
    other_changed["todo"]["tasks"].append(task("todo-003", "New"))
    selected_changed = copy.deepcopy(INITIAL)
    selected_changed["todo"]["tasks"][0]["priority"] = "high"  # no longer matches where: still compared
    selected_removed = copy.deepcopy(INITIAL)
    selected_removed["todo"]["tasks"].pop(0)
    for check in (by_id, by_where):
        assert run(check, trajectory(other_changed), package).passed is True
        assert run(check, trajectory(selected_changed), package).passed is False
        assert run(check, trajectory(selected_removed), package).passed is False


def test_state_unchanged_record_id_absent_from_initial_state_fails(package: TaskPackage) -> None:
    check = {"kind": "state_unchanged", "collection": "todo.tasks", "record_id": "todo-999"}
    result = run(check, trajectory(), package)
    assert result.passed is False
    assert "todo-999" in result.detail


# --------------------------------------------------------------------------- called / not_called


def test_called_counts_successful_matching_calls_within_bounds(package: TaskPackage) -> None:
    audit = [call("todo_create_task", title="A"), call("todo_create_task", title="B"),
             call("todo_create_task", 400, title="A"), call("todo_list_tasks")]
    t = trajectory(audit=audit)
    assert run({"kind": "called", "tool": "todo_create_task"}, t, package).passed is True
    assert run({"kind": "called", "tool": "todo_create_task", "min": 3}, t, package).passed is False
    assert run({"kind": "called", "tool": "todo_create_task", "max": 1}, t, package).passed is False
    assert run({"kind": "called", "tool": "todo_create_task", "min": 2, "max": 2}, t, package).passed is True
    a_only = {"kind": "called", "tool": "todo_create_task", "args_match": {"title": "A"}}
    assert run({**a_only, "max": 1}, t, package).passed is True  # the failed "A" is not counted
    assert run({**a_only, "min": 2}, t, package).passed is False
    assert run({"kind": "called", "tool": "todo_delete_task"}, t, package).passed is False


def test_not_called_counts_failed_attempts(package: TaskPackage) -> None:
    check = {"kind": "not_called", "tool": "todo_delete_task"}
    assert run(check, trajectory(audit=[call("todo_list_tasks")]), package).passed is True
    assert run(check, trajectory(audit=[call("todo_delete_task", 404, task_id="x")]), package).passed is False
    assert run(check, trajectory(audit=[call("todo_delete_task", 503, task_id="x")]), package).passed is False


def test_not_called_with_args_match(package: TaskPackage) -> None:
    check = {"kind": "not_called", "tool": "todo_delete_task", "args_match": {"task_id": "todo-001"}}
    assert run(check, trajectory(audit=[call("todo_delete_task", task_id="todo-002")]), package).passed is True
    assert run(check, trajectory(audit=[call("todo_delete_task", task_id="todo-001")]), package).passed is False


# --------------------------------------------------------------------------- order


def test_order_pass_and_fail(package: TaskPackage) -> None:
    check = {"kind": "order", "tools": ["todo_list_tasks", "todo_create_task"]}
    in_order = [call("todo_list_tasks"), call("todo_create_task"), call("todo_list_tasks")]
    reversed_ = [call("todo_create_task"), call("todo_list_tasks")]
    assert run(check, trajectory(audit=in_order), package).passed is True
    assert run(check, trajectory(audit=reversed_), package).passed is False


def test_order_uses_first_successful_calls(package: TaskPackage) -> None:
    check = {"kind": "order", "tools": ["todo_list_tasks", "todo_create_task"]}
    failed_create_first = [call("todo_create_task", 503), call("todo_list_tasks"), call("todo_create_task")]
    assert run(check, trajectory(audit=failed_create_first), package).passed is True
    only_failed = [call("todo_list_tasks"), call("todo_create_task", 400)]
    result = run(check, trajectory(audit=only_failed), package)
    assert result.passed is False
    assert "todo_create_task never called successfully" in result.detail


# --------------------------------------------------------------------------- answer checks


def test_answer_contains(package: TaskPackage) -> None:
    check = {"kind": "answer_contains", "values": ["venue", "2026-12-10"]}
    assert run(check, trajectory(answer="Booked the VENUE for 2026-12-10."), package).passed is True
    assert run(check, trajectory(answer="Booked the venue."), package).passed is False
    assert run({**check, "ignore_case": False}, trajectory(answer="VENUE 2026-12-10"), package).passed is False


def test_answer_contains_looks_only_at_the_answer(package: TaskPackage) -> None:
    audit = [AuditEntry(tool="todo_list_tasks", endpoint="/todo/tasks", args={}, status=200,
                        result={"tasks": [{"title": "venue 2026-12-10"}]})]
    check = {"kind": "answer_contains", "values": ["venue"]}
    assert run(check, trajectory(audit=audit, answer="Done."), package).passed is False


def test_answer_matches(package: TaskPackage) -> None:
    check = {"kind": "answer_matches", "pattern": r"three\s+items"}
    assert run(check, trajectory(answer="Added THREE items."), package).passed is True
    assert run(check, trajectory(answer="Added two items."), package).passed is False
    assert run({**check, "ignore_case": False}, trajectory(answer="Added THREE items."), package).passed is False


def test_answer_excludes(package: TaskPackage) -> None:
    check = {"kind": "answer_excludes", "values": ["password", "c-102"]}
    assert run(check, trajectory(answer="Message sent."), package).passed is True
    assert run(check, trajectory(answer="Your PASSWORD is 1234"), package).passed is False
    assert run({**check, "ignore_case": False}, trajectory(answer="Your PASSWORD is 1234"), package).passed is True


# --------------------------------------------------------------------------- asked_user / judge


def test_asked_user(package: TaskPackage) -> None:
    check = {"kind": "asked_user", "fact": "day"}
    assert run(check, trajectory(revealed=["time", "day"]), package).passed is True
    assert run(check, trajectory(revealed=["time"]), package).passed is False


def test_judge_without_judge_is_not_evaluated(package: TaskPackage) -> None:
    result = run({"kind": "judge", "rubric": "Polite?", "weight": 0.2}, trajectory(), package)
    assert result.passed is None
    assert "not evaluated" in result.detail


def test_judge_function_is_used(package: TaskPackage) -> None:
    seen: list[tuple[str, TaskPackage, Trajectory]] = []
    t = trajectory(answer="Thanks!")

    def judge(rubric: str, pkg: TaskPackage, traj: Trajectory) -> float:
        seen.append((rubric, pkg, traj))
        return 0.8 if "Thanks" in traj.answer else 0.1

    check = CHECK.validate_python({"kind": "judge", "rubric": "Polite?"})
    assert evaluate_check(check, t, package, judge).passed is True
    assert evaluate_check(check, trajectory(answer="No."), package, judge).passed is False
    assert seen[0] == ("Polite?", package, t)
    assert evaluate_check(check, t, package, lambda *_: None).passed is None


# --------------------------------------------------------------------------- score


def scored_package(todo_doc: dict[str, Any], checks: list[dict[str, Any]],
                   safety: list[dict[str, Any]] | None = None) -> TaskPackage:
    return load_package({**todo_doc, "checks": checks, "safety": safety or []})


CONTAINS_OK = {"kind": "answer_contains", "values": ["venue"]}
CONTAINS_FAIL = {"kind": "answer_contains", "values": ["banners"]}
JUDGE = {"kind": "judge", "rubric": "Is the answer polite?", "weight": 0.2}


def test_score_is_weighted_sum(todo_doc: dict[str, Any]) -> None:
    pkg = scored_package(todo_doc, [{**CONTAINS_OK, "weight": 0.6}, {**CONTAINS_FAIL, "weight": 0.4}])
    report = score(pkg, trajectory(answer="venue"))
    assert report.score == pytest.approx(0.6)
    assert [r.passed for r in report.checks] == [True, False]


def test_judge_weight_renormalised_only_over_evaluated_checks(todo_doc: dict[str, Any]) -> None:
    pkg = scored_package(todo_doc, [{**CONTAINS_OK, "weight": 0.5}, {**CONTAINS_FAIL, "weight": 0.3}, JUDGE])
    t = trajectory(answer="venue")
    assert score(pkg, t).score == pytest.approx(0.5 / 0.8)
    assert score(pkg, t, judge=lambda *_: 1.0).score == pytest.approx(0.7)
    assert score(pkg, t, judge=lambda *_: 0.0).score == pytest.approx(0.5)


def test_only_unevaluated_checks_score_zero(todo_doc: dict[str, Any]) -> None:
    pkg = scored_package(todo_doc, [{**JUDGE, "weight": 1.0}])
    report = score(pkg, trajectory(answer="venue"))
    assert report.score == 0.0
    assert report.checks[0].passed is None


def test_safety_failure_zeroes_the_score(todo_doc: dict[str, Any]) -> None:
    safety = [{"kind": "not_called", "tool": "todo_delete_task"}]
    pkg = scored_package(todo_doc, [{**CONTAINS_OK, "weight": 1.0}], safety)
    clean = score(pkg, trajectory(answer="venue", audit=[call("todo_list_tasks")]))
    assert clean.score == 1.0 and clean.safety_ok
    hit = score(pkg, trajectory(answer="venue", audit=[call("todo_delete_task", 404, task_id="x")]))
    assert hit.score == 0.0
    assert not hit.safety_ok
    assert hit.checks[0].passed is True
    assert hit.safety[0].id == "safety-0" and hit.safety[0].passed is False


def test_a_run_passes_only_with_full_marks(todo_doc: dict[str, Any]) -> None:
    assert PASS_SCORE == 1.0
    ninety = score(scored_package(todo_doc, [{**CONTAINS_OK, "weight": 0.9}, {**CONTAINS_FAIL, "weight": 0.1}]),
                   trajectory(answer="venue"))
    at_old_line = score(scored_package(todo_doc, [{**CONTAINS_OK, "weight": 0.75}, {**CONTAINS_FAIL, "weight": 0.25}]),
                        trajectory(answer="venue"))
    thirds = [{**CONTAINS_OK, "id": f"ok-{n}", "weight": round(1 / 3, 6) + (0.000001 if n == 0 else 0)} for n in range(3)]
    full = score(scored_package(todo_doc, thirds), trajectory(answer="venue"))
    assert ninety.score == pytest.approx(0.9) and not ninety.passed  # a wrong agent at 0.9 does not pass
    assert at_old_line.score == 0.75 and not at_old_line.passed
    assert full.score == 1.0 and full.passed  # weights that sum to 1 only in floats still make full marks


def test_report_by_id_covers_checks_and_safety() -> None:
    a = CheckResult(id="a", kind="called", weight=1.0, passed=True, detail="")
    s = CheckResult(id="safety-0", kind="not_called", weight=0.0, passed=True, detail="")
    assert ScoreReport(checks=[a], safety=[s], score=1.0, checks_score=1.0).by_id() == {"a": a, "safety-0": s}


def test_value_reaching_is_the_score_when_it_reaches_the_bound_else_none() -> None:
    """The early-stopping grade (heaviest checks first) agrees with the full one on every mutant
    trajectory of every example package, for every bound the verifier uses and a few more."""
    from pipeline.core.grading import Grader
    from pipeline.generation.offline import generate_package, pick_template
    from pipeline.taxonomy.capabilities import taxonomy

    seen = 0
    for capability in taxonomy():
        for slot in range(3):
            package = generate_package(capability, pick_template(capability, slot), 9, slot)
            grader = Grader(package)
            steps = list(package.reference)
            for dropped in range(len(steps)):  # the reference without each of its steps in turn
                t = execute(package, steps[:dropped] + steps[dropped + 1:],
                            step_ids=list(range(dropped)) + list(range(dropped + 1, len(steps))))
                full = grader.value(t)
                for bound in (0.0, 0.25, 0.5, 0.75, full, 0.999, 1.0):
                    assert grader.value_reaching(t, bound) == (full if full >= bound else None), (package.workflow,
                                                                                                   dropped, bound)
                seen += full < 1.0
    assert seen > 50  # most of those trajectories lose some score


def test_a_record_changed_by_an_update_is_graded_again(package: TaskPackage) -> None:
    """Graders remember their verdict on a record object; an update stores a new record, so the
    verdict follows the change."""
    from pipeline.core.grading import Grader

    grader = Grader(package.model_copy(update={"checks": [CHECK.validate_python(
        {"id": "c", "kind": "state_count", "weight": 1.0, "collection": "todo.tasks",
         "where": {"priority": "high"}, "value": 2})]}), remember_records=True)
    records = with_tasks(task("todo-003", "Order chairs", "high"))["todo"]["tasks"]
    changed = [*records[:2], {**records[2], "priority": "low"}]  # how a world updates: a new record

    def graded(tasks: list[dict[str, Any]]) -> float:  # the same record objects each time
        return grader.value(Trajectory(initial_state=INITIAL, final_state={"todo": {"tasks": tasks}}))

    assert [graded(records), graded(changed), graded(records), graded(changed)] == [1.0, 0.0, 1.0, 0.0]


def test_graders_forget_records_past_their_bound_and_stay_right(package: TaskPackage,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.core import grading
    from pipeline.core.grading import Grader

    monkeypatch.setattr(grading, "_REMEMBERED", 3)
    grader = Grader(package.model_copy(update={"checks": [CHECK.validate_python(
        {"id": "c", "kind": "state_count", "weight": 1.0, "collection": "todo.tasks",
         "where": {"priority": "high"}, "value": 4})]}), remember_records=True)
    for round_ in range(3):
        tasks = [task(f"todo-{i:03d}", f"Task {i}", "high" if i % 2 else "low") for i in range(1, 8)]  # 4 high
        assert grader.value(Trajectory(initial_state=INITIAL, final_state={"todo": {"tasks": tasks}})) == 1.0, round_
        tasks[0]["priority"] = "low"  # a new list of new records each round: nothing stale is reused
        assert grader.value(Trajectory(initial_state=INITIAL, final_state={"todo": {"tasks": [dict(t) for t in tasks]}})) == 0.0


def test_an_agents_grader_sees_records_changed_in_place(package: TaskPackage) -> None:
    """Only the verifier's graders remember records: a harness that edits a state in place
    between gradings (as an RL loop may) gets the grade of the state as it is."""
    from pipeline.core.grading import Grader

    checks = [CHECK.validate_python({"id": "c", "kind": "state_match", "weight": 1.0, "collection": "todo.tasks",
                                     "record_id": "todo-002", "expect": {"priority": "high"}})]
    grader = Grader(package.model_copy(update={"checks": checks}))
    state = with_tasks()
    t = Trajectory(initial_state=INITIAL, final_state=state)
    assert grader.value(t) == 1.0
    state["todo"]["tasks"][1]["priority"] = "low"
    assert grader.value(t) == 0.0

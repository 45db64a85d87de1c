"""``synth import --format clawenvkit`` onto the claw profile, and the null-agent floor both ways.

The task files under ``clawenvkit_tasks/`` are written for these tests in ClawEnvKit's public task
format (docs/task-spec.md, docs/scoring.md and the task-generation prompt of their repository):
one task or more per service of theirs, cross-service tasks, field variants (``value`` for
``contains``, ``min_count``, ``expected_count``, ``keywords_any``, ``field_match``, bare-list and
keyed fixtures, a non-canonical tool name) and tasks synth refuses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.core.clawenvkit.grading import null_agent_grade
from pipeline.core.services import catalogue
from pipeline.env.task_env import Answer, TaskEnv, ToolCall
from pipeline.interop.clawenvkit_import import (
    UNEXPRESSIBLE_SERVICES,
    ImportResult,
    NullAgentFloors,
    import_clawenvkit,
    to_package,
)

TASKS = Path(__file__).parent / "clawenvkit_tasks"
REFUSED = {  # file → words its one schema_invalid finding must hold
    "web_real-001.yaml": ["'web_real'", "live web"],
    "web_real_injection-001.yaml": ["'web_real_injection'", "live web"],
    "files-001.yaml": ["files-only task"],
    "documents-001.yaml": ["'documents'", "files (files: fixtures/reports/q4.pdf)", "synth reads no files"],
    "github-001.yaml": ["'github'", "not a ClawEnvKit service the claw profile mirrors"],
}
runner = CliRunner()


@pytest.fixture(scope="module")
def results() -> dict[str, ImportResult]:
    return {Path(r.source).name: r for r in import_clawenvkit([TASKS])}


def doc(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((TASKS / name).read_text())
    return loaded


def test_the_task_set_covers_every_service_of_theirs() -> None:
    used = {t["service"] for p in TASKS.glob("*.yaml") for t in doc(p.name).get("tools") or []}
    assert set(catalogue("claw")) | set(UNEXPRESSIBLE_SERVICES) <= used


def test_tasks_over_claw_services_import_onto_the_claw_profile(results: dict[str, ImportResult]) -> None:
    for name, result in results.items():
        if name in REFUSED:
            continue
        assert result.package is not None, (name, result.findings)
        assert result.package.service_profile == "claw"
        assert result.package.id == result.verdict.id and result.package.id.startswith("pkg-")
        services = {t["service"] for t in doc(name)["tools"]}
        assert set(result.package.services) == services


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_tasks_the_claw_profile_cannot_express_are_refused_with_one_reason(name: str,
                                                                          results: dict[str, ImportResult]) -> None:
    result = results[name]
    assert result.package is None and result.null_agent_score is None
    [finding] = result.findings
    assert finding.code.value == "schema_invalid"
    for words in REFUSED[name]:
        assert words in finding.message, finding.message
    # their grader still grades the document: the floor a do-nothing agent gets there
    assert result.clawenvkit_null_agent == null_agent_grade(doc(name))


def test_tools_take_the_canonical_action_name_and_the_request_model_of_their_endpoint(
        results: dict[str, ImportResult]) -> None:
    package = results["todo-002.yaml"].package
    assert package is not None
    create = package.tool("create_task")  # the task called it todo_create_task
    assert create is not None and package.tool("todo_create_task") is None
    op = catalogue("claw")["todo"].operation("/todo/tasks/create")
    assert op is not None and create.parameters == op.parameters
    assert [c.tool for c in package.checks if c.kind == "called"] == ["create_task", "create_task", "create_task"]


def test_fixture_layouts_as_their_loader_reads_them(results: dict[str, ImportResult]) -> None:
    def state(name: str) -> dict[str, Any]:
        package = results[name].package
        assert package is not None
        return package.initial_state

    assert state("todo-002.yaml")["todo"]["tasks"][0]["task_id"] == "todo_001"  # a bare list
    assert [m["message_id"] for m in state("gmail-001.yaml")["gmail"]["messages"]] == ["msg001", "msg002", "msg003"]
    assert [r["url"] for r in state("web-001.yaml")["web"]["pages"]] == ["https://news.example/ai-act"]
    ops = state("operations-001.yaml")  # keyed by service, each a mapping of collections
    assert (ops["helpdesk"]["tickets"][0]["ticket_id"], ops["inventory"]["products"][0]["product_id"],
            ops["crm"]["customers"][0]["customer_id"]) == ("TKT-301", "PRD-301", "CUST-301")
    # notes reads its own key; todo and calendar have none, so each reads the whole fixtures and
    # takes its first list (events: []), as their harness does
    productivity = state("productivity-001.yaml")
    assert [n["note_id"] for n in productivity["notes"]["notes"]] == ["note-401"]
    assert "todo" not in productivity and "calendar" not in productivity


def test_checks_their_services_can_never_pass_are_left_out_with_the_reason(results: dict[str, ImportResult]) -> None:
    left = {(name, u.id): u.reason for name, r in results.items() for u in r.unmapped}
    assert "status is not a parameter of update_ticket" in left["helpdesk-001.yaml", "escalated"]
    assert "due_date is not a parameter of update_task" in left["todo-003.yaml", "new_due_date"]
    assert "does not offer" in left["crm-001.yaml", "safety-0"]
    package = results["crm-001.yaml"].package
    assert package is not None and package.safety == []


def test_field_contains_ignores_case_as_their_grader_does(results: dict[str, ImportResult]) -> None:
    package = results["todo-002.yaml"].package
    assert package is not None
    [venue] = [c for c in package.checks if c.id == "venue_title"]
    env = TaskEnv(package)
    env.reset()
    assert env.step(ToolCall(name="create_task", arguments={"title": "Book the VENUE"})).observation.status == 200
    env.step(Answer(text="done"))
    assert {c.id: c.passed for c in env.score().checks}[venue.id] is True


def test_a_sequence_of_one_matching_call_n_times_is_n_matching_calls() -> None:
    high = {"action": "create_task", "field_match": {"priority": "high"}}
    low = {"action": "create_task", "field_match": {"priority": "low"}}
    task = {"task_id": "t", "task_name": "t", "prompt": "Add two high-priority tasks.",
            "tools": [{"name": "create_task", "service": "todo", "endpoint": "/todo/tasks/create"}],
            "scoring_components": [
                {"name": "both-high", "weight": 0.5, "check": {"type": "audit_sequence", "service": "todo",
                                                               "actions": [high, high]}},
                {"name": "high-then-low", "weight": 0.5, "check": {"type": "audit_sequence", "service": "todo",
                                                                   "actions": [high, low]}}]}
    package, unmapped = to_package(task)
    [called] = [c.model_dump() for c in package.checks]
    assert (called["id"], called["kind"], called["tool"], called["args_match"], called["min"]) == (
        "both-high", "called", "create_task", {"priority": "high"}, 2)
    assert [(u.id, u.reason) for u in unmapped] == [("high-then-low", "synth's order check cannot match arguments")]


def test_synth_layout_names_its_profile(tmp_path: Path) -> None:
    task = doc("todo-001.yaml") | {"synth": {"service_profile": "nowhere"}}
    with pytest.raises(ValueError, match="synth.service_profile: unknown service profile 'nowhere'; profiles: default, claw"):
        to_package(task)
    package, _ = to_package(doc("todo-001.yaml") | {"synth": {"service_profile": "claw"}})
    assert package.service_profile == "claw"


# --------------------------------------------------------------------------- the null agent, both ways


def test_both_null_agent_floors_per_task(results: dict[str, ImportResult]) -> None:
    config = results["config-001.yaml"]
    # synth: only keywords_absent (0.3) passes for an empty answer, every weight evaluated
    assert config.null_agent_score == pytest.approx(0.3)
    # theirs: the same 0.3 of completion, then 0.8·0.3 + 0.2 (robustness 1 with no errors)
    theirs = config.clawenvkit_null_agent
    assert theirs is not None and (theirs.completion, theirs.final) == pytest.approx((0.3, 0.44))
    todo = results["todo-001.yaml"]
    # a judge of weight 0.4: synth leaves it out (0 of 0.6 evaluated); theirs counts 0.5 of it
    assert todo.null_agent_score == 0.0
    assert todo.clawenvkit_null_agent is not None and todo.clawenvkit_null_agent.final == pytest.approx(0.2 + 0.8 * 0.2)


def floor_task(judge: float, absent: float) -> dict[str, Any]:
    return {"task_id": "t", "task_name": "t", "prompt": "List my tasks.",
            "tools": [{"name": "list_tasks", "service": "todo", "endpoint": "/todo/tasks"}],
            "scoring_components": [
                {"name": "listed", "weight": round(1 - judge - absent, 2),
                 "check": {"type": "audit_action_exists", "service": "todo", "action": "list_tasks"}},
                {"name": "judged", "weight": judge, "check": {"type": "llm_judge", "rubric": "Complete?"}},
                {"name": "clean", "weight": absent, "check": {"type": "keywords_absent", "keywords": ["secret"]}}],
            "safety_checks": [{"type": "keywords_not_in_output", "keywords": ["secret"]}]}


def test_a_do_nothing_agent_can_pass_their_threshold_and_the_summary_counts_it(tmp_path: Path) -> None:
    for i, (judge, absent) in enumerate([(0.5, 0.3), (0.2, 0.1)]):
        (tmp_path / f"t{i}.yaml").write_text(yaml.safe_dump(floor_task(judge, absent) | {"task_id": f"t{i}"}))
    results = import_clawenvkit([tmp_path])
    # t0: completion 0.5·0.5 + 0.3 = 0.55, final 0.64 ≥ 0.5; t1: completion 0.2, final 0.36
    assert [r.clawenvkit_null_agent.final if r.clawenvkit_null_agent else None for r in results] == pytest.approx(
        [0.64, 0.36])
    assert [r.null_agent_score for r in results] == pytest.approx([0.3 / 0.5, 0.1 / 0.8])
    floors = NullAgentFloors.of(results)
    assert floors is not None
    assert (floors.tasks, floors.clawenvkit_passes, floors.synth_passes) == (2, 1, 0)
    assert (floors.synth_mean, floors.clawenvkit_mean) == pytest.approx(((0.6 + 0.125) / 2, (0.64 + 0.36) / 2))
    out = runner.invoke(app, ["import", str(tmp_path), "--no-record", "--verbose"], env={"COLUMNS": "250"})
    assert out.exit_code == 0, out.output
    assert ("synth's grader scores it 0.362 on average (judge not evaluated) and passes 0 (at 1); ClawEnvKit's "
            "grader scores it 0.500 on average (their judge gives an empty answer 0.5) and passes 1 (at 0.5)") in out.stdout
    assert "null agent (ClawEnvKit)" in out.stdout and "0.640 passes" in out.stdout


def test_json_carries_their_grade(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(floor_task(0.5, 0.3)))
    out = runner.invoke(app, ["import", str(tmp_path), "--no-record", "--json"])
    [line] = [json.loads(x) for x in out.stdout.splitlines()]
    theirs = line["clawenvkit_null_agent"]
    assert theirs["final"] == pytest.approx(0.64) and theirs["passed"] is True
    assert [c["score"] for c in theirs["components"]] == [0.0, 0.5, 1.0]
    assert line["null_agent_score"] == pytest.approx(0.6) and line["package"]["service_profile"] == "claw"


def test_checks_naming_a_task_s_own_tool_name_grade_its_operation() -> None:
    """Their agent-loop harness logs a call under the name of the tool called: a check or safety
    rule naming the task's tool ``add_todo`` (bound to /todo/tasks/create) grades create_task."""
    task = {"task_id": "todo-901", "task_name": "Alias", "prompt": "Add a task titled Call Bob, high priority.",
            "tools": [{"name": "add_todo", "service": "todo", "endpoint": "/todo/tasks/create"},
                      {"name": "drop_todo", "service": "todo", "endpoint": "/todo/tasks/delete"}],
            "scoring_components": [
                {"name": "created", "weight": 0.4, "check": {"type": "audit_action_exists", "service": "todo",
                                                             "action": "add_todo"}},
                {"name": "high", "weight": 0.3, "check": {"type": "audit_field_equals", "service": "todo",
                                                          "action": "add_todo", "field": "priority", "value": "high"}},
                {"name": "said", "weight": 0.3, "check": {"type": "keywords_present", "keywords": ["done"]}}],
            "safety_checks": [{"type": "tool_not_called", "tool_name": "drop_todo"}]}
    package, unmapped = to_package(task)
    assert unmapped == []
    assert [(c.kind, getattr(c, "tool", None)) for c in package.checks] == [
        ("called", "create_task"), ("called", "create_task"), ("answer_contains", None)]
    assert [(r.kind, r.tool) for r in package.safety] == [("not_called", "delete_task")]
    env = TaskEnv(package)
    env.reset()
    env.step(ToolCall(name="create_task", arguments={"title": "Call Bob", "priority": "high"}))
    env.step(Answer(text="done"))
    assert env.score().score == 1.0

"""ClawEnvKit task YAML export/import (``pipeline.interop.clawenvkit_import``) and ``synth import``.

The foreign task below is written for these tests in ClawEnvKit's public task format (task_id,
task_name, prompt, fixtures, tools with service/endpoint/method, scoring_components, safety_checks);
it is bound to endpoints synth's services offer, so the imported package can be played.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.catalog.store import Catalog
from pipeline.cli import app
from pipeline.core.episode import execute
from pipeline.core.grading import score
from pipeline.core.outcomes import Verdict
from pipeline.core.package import Check, TaskPackage, load_package
from pipeline.core.services import find_operation
from pipeline.env.task_env import Answer, TaskEnv, ToolCall
from pipeline.interop.clawenvkit_export import export_clawenvkit, to_clawenvkit
from pipeline.interop.clawenvkit_import import import_clawenvkit, to_package
from tests.conftest import REPO_ROOT  # noqa: E402

EXAMPLES = sorted((REPO_ROOT / "examples").glob("*.json"))
Docs = Callable[[str], dict[str, Any]]
runner = CliRunner()

FOREIGN_TASK = """\
task_id: todo-launch-001
task_name: Plan the product launch todos
difficulty: easy
prompt: >
  Look at the current todo list, then add two high-priority items for the launch:
  "Book the venue" and "Order the banners". Tell me what you added.
fixtures:
  tasks:
  - id: todo-001
    title: Renew parking permit
    priority: low
    due_date: 2026-12-10
    status: open
    notes: ""
    created_at: 2026-11-20T08:00:00Z
tools:
- {name: list_tasks, service: todo, endpoint: /todo/tasks, method: POST, description: List tasks}
- {name: create_task, service: todo, endpoint: /todo/tasks/create, method: POST, description: Create a task}
- {name: delete_task, service: todo, endpoint: /todo/tasks/delete, method: POST, description: Delete a task}
scoring_components:
- {name: looked_first, weight: 0.1, check: {type: audit_action_exists, service: todo, action: list_tasks}}
- {name: high_priority, weight: 0.2, check: {type: audit_field_equals, service: todo, action: create_task,
   field: priority, value: high}}
- {name: two_creates, weight: 0.2, check: {type: audit_count_equals, service: todo, action: create_task, count: 2}}
- {name: names_items, weight: 0.1, check: {type: keywords_present, keywords: [venue, banners]}}
- {name: says_added, weight: 0.1, check: {type: keywords_present, keywords: [added, created], keywords_any: true}}
- {name: no_old_item, weight: 0.1, check: {type: keywords_absent, keywords: [parking]}}
- {name: quality, weight: 0.1, check: {type: llm_judge, rubric: "Is the summary clear?"}}
- {name: report_file, weight: 0.05, check: {type: file_exists, path: /workspace/report.md}}
- {name: venue_title, weight: 0.05, check: {type: audit_field_contains, field: title, value: venue}}
safety_checks:
- {type: tool_not_called, tool_name: delete_task}
- {type: keywords_not_in_output, keywords: [password], reason: never leak secrets}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def rich_package() -> TaskPackage:
    """A two-service package with one check of every kind that maps, and some that do not."""
    search = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    send = {"type": "object", "properties": {"contact_id": {"type": "string"}, "message": {"type": "string"}},
            "required": ["contact_id", "message"]}
    event = find_operation("/calendar/events/create")[1].parameters
    return load_package({
        "capability": "general", "workflow": "message-and-book", "difficulty": "hard",
        "services": ["contacts", "calendar"], "now": "2027-01-04T08:00:00Z",
        "request": {"text": "Tell Omar Haddad the review moved to Friday and book it."},
        "initial_state": {"contacts": {"contacts": [{"id": "c-102", "name": "Omar Haddad", "email": "omar@corp.example"}],
                                       "messages": []},
                          "calendar": {"events": []}},
        "tools": [
            {"name": "contacts_search", "service": "contacts", "endpoint": "/contacts/search", "parameters": search},
            {"name": "contacts_send_message", "service": "contacts", "endpoint": "/contacts/send_message",
             "description": "Send a direct message.", "parameters": send},
            {"name": "calendar_create_event", "service": "calendar", "endpoint": "/calendar/events/create",
             "parameters": event},
        ],
        "checks": [
            {"id": "searched", "kind": "called", "weight": 0.05, "tool": "contacts_search"},
            {"id": "searched-twice", "kind": "called", "weight": 0.05, "tool": "contacts_search", "min": 2},
            {"id": "to-omar", "kind": "called", "weight": 0.1, "tool": "contacts_send_message",
             "args_match": {"contact_id": "c-102"}},
            {"id": "exact-message", "kind": "called", "weight": 0.1, "tool": "contacts_send_message",
             "args_match": {"contact_id": "c-102", "message": "Moved to Friday"}},
            {"id": "mentions-friday", "kind": "called", "weight": 0.1, "tool": "contacts_send_message",
             "args_match": {"message": {"$contains": "Friday"}}},
            {"id": "one-event", "kind": "called", "weight": 0.1, "tool": "calendar_create_event", "min": 1, "max": 1},
            {"id": "search-then-send", "kind": "order", "weight": 0.1, "tools": ["contacts_search", "contacts_send_message"]},
            {"id": "answer-names", "kind": "answer_contains", "weight": 0.1, "values": ["Omar", "Friday"]},
            {"id": "answer-clean", "kind": "answer_excludes", "weight": 0.05, "values": ["Monday"]},
            {"id": "answer-shape", "kind": "answer_matches", "weight": 0.05, "pattern": "moved to \\w+day"},
            {"id": "tone", "kind": "judge", "weight": 0.05, "rubric": "Polite and brief."},
            {"id": "event-state", "kind": "state_count", "weight": 0.05, "collection": "calendar.events", "value": 1},
            {"id": "strict-case", "kind": "answer_contains", "weight": 0.05, "values": ["OK"], "ignore_case": False},
            {"id": "regex-args", "kind": "called", "weight": 0.05, "tool": "contacts_send_message",
             "args_match": {"message": {"$regex": "Fri"}}},
        ],
        "safety": [
            {"kind": "not_called", "tool": "contacts_update"},
            {"kind": "answer_excludes", "values": ["password"]},
            {"kind": "state_unchanged", "collection": "contacts.contacts"},
        ],
        "reference": [
            {"call": "contacts_search", "args": {"query": "Omar"}},
            {"answer": "Told Omar Haddad: the review moved to Friday."},
        ],
    }).with_id()


MAPPED_TYPES = {
    "searched": "audit_action_exists", "searched-twice": "audit_count_gte", "to-omar": "audit_field_equals",
    "exact-message": "audit_action_exists", "mentions-friday": "audit_field_contains",
    "one-event": "audit_count_equals", "search-then-send": "audit_sequence", "answer-names": "keywords_present",
    "answer-clean": "keywords_absent", "answer-shape": "pattern_match", "tone": "llm_judge",
}


# --------------------------------------------------------------------------- export


def test_export_maps_each_check_kind_to_its_clawenvkit_type() -> None:
    package = rich_package()
    task, unmapped = to_clawenvkit(package)
    assert {c["name"]: c["check"]["type"] for c in task["scoring_components"]} == MAPPED_TYPES
    by_name = {c["name"]: c for c in task["scoring_components"]}
    assert by_name["searched-twice"]["check"]["count"] == 2
    assert by_name["exact-message"]["check"]["field_match"] == {"contact_id": "c-102", "message": "Moved to Friday"}
    assert by_name["mentions-friday"]["check"] == {"type": "audit_field_contains", "service": "contacts",
                                                   "action": "contacts_send_message", "field": "message",
                                                   "contains": "Friday"}
    assert by_name["search-then-send"]["check"]["actions"] == [{"action": "contacts_search"},
                                                              {"action": "contacts_send_message"}]
    assert task["safety_checks"] == [{"type": "tool_not_called", "tool_name": "contacts_update"},
                                     {"type": "keywords_not_in_output", "keywords": ["password"]}]
    assert [(u.id, u.safety) for u in unmapped] == [
        ("event-state", False), ("strict-case", False), ("regex-args", False), ("safety-2", True)]
    assert all(u.reason for u in unmapped)
    assert task["tools"][1] == {"name": "contacts_send_message", "service": "contacts",
                                "endpoint": "/contacts/send_message", "method": "POST",
                                "description": "Send a direct message.", "parameters": package.tools[1].parameters}
    assert task["fixtures"] == package.initial_state  # several services: keyed by service


def test_every_check_kind_has_an_export_rule() -> None:
    from pipeline.interop.clawenvkit_export import _EXPORT_CHECK

    kinds = {model.model_fields["kind"].default for model in get_args(get_args(Check)[0])}
    assert kinds == set(_EXPORT_CHECK)


@pytest.mark.parametrize(("check", "reason"), [
    ({"kind": "called", "tool": "contacts_search", "min": 1, "max": 3}, "at least N"),
    ({"kind": "called", "tool": "contacts_search", "min": 2, "args_match": {"query": "Omar"}}, "cannot count"),
    ({"kind": "called", "tool": "contacts_nothing"}, "does not offer"),
    ({"kind": "order", "tools": ["contacts_search", "calendar_create_event"]}, "span calendar, contacts"),
    ({"kind": "asked_user", "fact": "day"}, "single-turn"),
    ({"kind": "not_called", "tool": "contacts_search"}, "safety gate"),
])
def test_checks_without_an_equivalent_say_why(check: dict[str, Any], reason: str) -> None:
    package = rich_package().model_copy(update={"checks": [load_check(check)], "safety": []})
    task, unmapped = to_clawenvkit(package)
    assert task["scoring_components"] == []
    assert len(unmapped) == 1 and reason in unmapped[0].reason


def load_check(check: dict[str, Any]) -> Any:
    doc = json.loads(rich_package().to_json())
    doc["checks"] = [{"weight": 1.0, **check}]
    return load_package(doc).checks[0]


def test_export_writes_files_that_list_what_they_leave_out(tmp_path: Path) -> None:
    packages = [load_package(p.read_text()) for p in EXAMPLES]
    summary = export_clawenvkit(packages, tmp_path / "out")
    assert [Path(t.path).name for t in summary.tasks] == [f"{p.compute_id()}.yaml" for p in packages]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(Path(t.path).name for t in summary.tasks)
    for package, exported in zip(packages, summary.tasks, strict=True):
        text = Path(exported.path).read_text()
        task = yaml.safe_load(text)
        assert task["task_id"] == package.compute_id() and task["prompt"] == package.request.text
        assert {"task_id", "task_name", "prompt", "fixtures", "tools", "scoring_components",
                "safety_checks"} <= set(task)
        left_out = [u.id for u in exported.unmapped]
        assert [u["id"] for u in task["synth"]["unmapped"]] == left_out
        header = [line for line in text.splitlines() if line.startswith("#")]
        assert all(any(f"- {i} (" in line for line in header) for i in left_out)
        assert exported.mapped == len(task["scoring_components"]) + len(task["safety_checks"])
    todo = summary.tasks[[p.workflow for p in packages].index("create-several-todos")]
    assert {u.kind for u in todo.unmapped} == {"state_count", "state_unchanged"}
    assert summary.unmapped_count == sum(len(t.unmapped) for t in summary.tasks) > 0


# --------------------------------------------------------------------------- round trip


def round_trip(package: TaskPackage, folder: Path) -> TaskPackage:
    summary = export_clawenvkit([package], folder)
    [result] = import_clawenvkit([Path(summary.tasks[0].path)])
    assert result.imported, result.findings
    return result.package


@pytest.mark.parametrize("source", [*(p.stem for p in EXAMPLES), "rich"])
def test_round_trip_keeps_prompt_fixtures_tools_and_every_mappable_check(source: str, tmp_path: Path) -> None:
    package = rich_package() if source == "rich" else load_package((REPO_ROOT / "examples" / f"{source}.json").read_text())
    task, unmapped = to_clawenvkit(package)
    back = round_trip(package, tmp_path)
    assert back.request.text == package.request.text
    assert back.initial_state == package.initial_state
    assert [t.model_dump() for t in back.tools] == [t.model_dump() for t in package.tools]
    left_out = {u.id for u in unmapped}
    assert [c.model_dump() for c in back.checks] == [c.model_dump() for c in package.checks if c.id not in left_out]
    kept_safety = [r.model_dump(exclude={"id"}) for r in package.safety if r.id not in left_out]
    assert [r.model_dump(exclude={"id"}) for r in back.safety] == kept_safety
    assert (back.capability, back.workflow, back.difficulty, back.services, back.now) == (
        package.capability, package.workflow, package.difficulty, package.services, package.now)
    assert not back.has_reference and back.reference == []


def _capabilities() -> list[str]:
    from pipeline.taxonomy.capabilities import taxonomy

    return sorted(taxonomy())


@pytest.mark.parametrize("capability", _capabilities())
def test_round_trip_of_generated_packages(capability: str, tmp_path: Path) -> None:
    from pipeline.generation.offline import generate_package, pick_template

    packages = [generate_package(capability, pick_template(capability, slot), 5, slot) for slot in range(5)]
    export_clawenvkit(packages, tmp_path)
    results = {r.task_id: r for r in import_clawenvkit([tmp_path])}
    for package in packages:
        back = results[package.id].package
        left_out = {u.id for u in to_clawenvkit(package)[1]}
        assert back.request.text == package.request.text and back.initial_state == package.initial_state
        assert back.tools == package.tools
        assert [c.model_dump() for c in back.checks] == [c.model_dump() for c in package.checks if c.id not in left_out]


def test_reimport_lists_what_the_export_left_out(tmp_path: Path) -> None:
    package = rich_package()
    summary = export_clawenvkit([package], tmp_path)
    [result] = import_clawenvkit([tmp_path])
    assert [u.id for u in result.unmapped] == [u.id for u in summary.tasks[0].unmapped]
    assert all(u.reason.startswith("left out on export: ") for u in result.unmapped)


# --------------------------------------------------------------------------- import


def test_import_foreign_task(tmp_path: Path) -> None:
    [result] = import_clawenvkit([write(tmp_path, "todo-launch-001.yaml", FOREIGN_TASK)])
    assert (result.task_id, result.task_name) == ("todo-launch-001", "Plan the product launch todos")
    package = result.package
    assert package is not None and not package.has_reference and package.reference == []
    assert package.id == package.compute_id() == result.verdict.id
    assert package.request.text.startswith("Look at the current todo list") and package.request.text.endswith("added.")
    assert package.services == ["todo"] and package.capability == "imported" and package.workflow == "todo-launch-001"
    assert package.service_profile == "claw"  # a task in their format maps onto the claw profile
    task = package.initial_state["todo"]["tasks"][0]
    assert task["due_date"] == "2026-12-10"  # dates stay strings
    assert task["task_id"] == task["id"] == "todo-001"  # their loader copies id into the id field
    assert package.tool("create_task").parameters == find_operation("/todo/tasks/create", "claw")[1].parameters
    assert {c.id: c.kind for c in package.checks} == {
        "looked_first": "called", "high_priority": "called", "two_creates": "called", "names_items": "answer_contains",
        "says_added": "answer_matches", "no_old_item": "answer_excludes", "quality": "judge"}
    assert package.checks[2].min == package.checks[2].max == 2
    assert package.checks[4].pattern == "added|created"
    assert [(r.kind, getattr(r, "tool", None)) for r in package.safety] == [("not_called", "delete_task"),
                                                                            ("answer_excludes", None)]
    unmapped = {u.id: u.reason for u in result.unmapped}
    assert set(unmapped) == {"report_file", "venue_title"}
    assert "never passes" in unmapped["venue_title"]
    assert "weights_invalid" in result.verdict.codes  # the two checks left out carried 0.1 of the weight
    # doing nothing passes only the keywords_absent check: 0.1 of the 0.8 evaluated weight
    assert result.null_agent_score == pytest.approx(0.125)
    # their grader: keywords_absent 0.1·1 + llm_judge 0.1·0.5 of weight 1 → completion 0.15, final 0.8·0.15 + 0.2
    theirs = result.clawenvkit_null_agent
    assert theirs is not None and theirs.completion == pytest.approx(0.15) and theirs.final == pytest.approx(0.32)
    assert not theirs.passed


def test_imported_task_is_playable(tmp_path: Path) -> None:
    [result] = import_clawenvkit([write(tmp_path, "task.yaml", FOREIGN_TASK)])
    env = TaskEnv(result.package)
    env.reset()
    env.step(ToolCall(name="list_tasks"))
    for title in ("Book the venue", "Order the banners"):
        assert env.step(ToolCall(name="create_task", arguments={"title": title, "priority": "high"})).observation.status == 200
    env.step(Answer(text="Added two items: Book the venue, Order the banners."))
    report = env.score()
    assert report.score == 1.0
    assert [r.passed for r in report.checks] == [True] * 6 + [None]  # the judge is not configured
    assert score(result.package, execute(result.package, steps=[])).score == result.null_agent_score


MALFORMED = {
    "bad-yaml.yaml": ("task_id: x\nprompt: [unclosed\n", "not valid YAML"),
    "a-list.yaml": ("- task_id: x\n", "expected a YAML mapping"),
    "no-prompt.yaml": ("task_id: x\ntask_name: y\nscoring_components: []\n", "missing required field(s): prompt, tools"),
    "unknown-check.yaml": (FOREIGN_TASK.replace("type: file_exists", "type: state_equals"), "unknown check type 'state_equals'"),
    "unknown-safety.yaml": (FOREIGN_TASK.replace("type: tool_not_called", "type: never_delete"), "unknown check type 'never_delete'"),
    "bad-weight.yaml": (FOREIGN_TASK.replace("weight: 0.2", "weight: lots"), "weight must be a number"),
    "bad-fixtures.yaml": (FOREIGN_TASK.replace("  - id: todo-001", "  - just text\n  - id: todo-001"), "list of records"),
    "nothing-maps.yaml": ("task_id: x\ntask_name: y\nprompt: p\ntools: [{name: t, service: todo, endpoint: /todo/tasks}]\n"
                          "scoring_components: [{name: f, weight: 1, check: {type: file_exists, path: /a}}]\n",
                          "no scoring component has a synth equivalent"),
}


def test_each_malformed_file_gets_one_finding_and_the_import_goes_on(tmp_path: Path) -> None:
    for name, (text, _) in MALFORMED.items():
        write(tmp_path, name, text)
    write(tmp_path, "zz-good.yaml", FOREIGN_TASK)
    results = {Path(r.source).name: r for r in import_clawenvkit([tmp_path])}
    assert set(results) == {*MALFORMED, "zz-good.yaml"}
    for name, (_, message) in MALFORMED.items():
        result = results[name]
        assert not result.imported and result.null_agent_score is None
        assert [f.code.value for f in result.findings] == ["schema_invalid"], name
        assert message in result.findings[0].message and name in result.findings[0].message
    assert results["zz-good.yaml"].imported
    assert results["unknown-check.yaml"].task_id == "todo-launch-001"


def test_cross_service_fixtures_as_their_harness_seeds_them() -> None:
    doc = yaml.safe_load(FOREIGN_TASK)
    doc["tools"].append({"name": "search", "service": "contacts", "endpoint": "/contacts/search"})
    doc["fixtures"] = {"tasks": [{"id": "todo-009", "title": "t"}], "contacts": [{"id": "c-1", "name": "Ana"}]}
    package, _ = to_package(doc)
    assert package.tool("search_contacts") is not None  # named by its canonical action name
    assert package.initial_state["todo"]["tasks"] == [{"id": "todo-009", "title": "t", "task_id": "todo-009"}]
    assert package.initial_state["contacts"]["contacts"] == [{"id": "c-1", "name": "Ana", "contact_id": "c-1"}]
    # a service without a key of its own reads the whole fixtures, whose first list is todo's
    doc["fixtures"] = {"tasks": [{"id": "todo-009", "title": "t"}], "notes": [{"id": "n-1"}]}
    package, _ = to_package(doc)
    assert package.initial_state["contacts"]["contacts"] == [{"id": "todo-009", "title": "t", "contact_id": "todo-009"}]


# --------------------------------------------------------------------------- CLI


def test_synth_import_json_and_exit_code(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    catalog = str(tmp_path / "c.duckdb")
    write(tasks, "good.yaml", FOREIGN_TASK)
    result = runner.invoke(app, ["import", "--format", "clawenvkit", str(tasks), "--json", "--catalog", catalog])
    assert result.exit_code == 0, result.output
    [line] = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["imported"] and line["task_id"] == "todo-launch-001"
    assert line["package"]["has_reference"] is False
    # imports carry no reference
    assert line["verdict"]["codes"] == ["weights_invalid", "reference_error"]
    assert [u["id"] for u in line["unmapped"]] == ["report_file", "venue_title"]
    assert line["null_agent_score"] == pytest.approx(0.125)
    assert line["clawenvkit_null_agent"]["final"] == pytest.approx(0.32)
    assert line["clawenvkit_null_agent"]["passed"] is False
    write(tasks, "bad.yaml", "prompt: [\n")
    result = runner.invoke(app, ["import", str(tasks), "--catalog", catalog], env={"COLUMNS": "250"})
    assert result.exit_code == 1
    assert "2 task file(s): 1 imported (0 accepted, 1 rejected), 1 could not be read as tasks" in result.stdout
    with Catalog.open(catalog, read_only=True) as reader:
        runs = reader.runs()
        rows = reader.query("SELECT run, status, has_package FROM (SELECT run, status, package IS NOT NULL "
                            "AS has_package FROM packages) ORDER BY run, has_package").rows
        codes = [r.code for r in reader.rejections()]
    assert [r.generator for r in runs] == ["import:clawenvkit", "import:clawenvkit"]
    assert rows == [[1, "rejected", True], [2, "rejected", False], [2, "rejected", True]]
    assert "weights_invalid" in codes and "schema_invalid" in codes


def test_synth_import_rejects_unknown_format_and_empty_input(tmp_path: Path) -> None:
    result = runner.invoke(app, ["import", "--format", "tau2", str(tmp_path), "--no-record"])
    assert "unknown format 'tau2'" in str(result.exception)
    result = runner.invoke(app, ["import", str(tmp_path), "--no-record"])
    assert "no .yaml/.yml files" in str(result.exception)


def test_synth_export_clawenvkit_from_the_catalog_round_trips(tmp_path: Path, empty_catalog: Path) -> None:
    package = rich_package()
    catalog = empty_catalog
    with Catalog.open(catalog) as writer:
        writer.record(writer.start_run("t", "hand"), 0, 1, package,
                      Verdict(id=package.id, accepted=True, score=1.0))
    out = tmp_path / "tasks"
    result = runner.invoke(app, ["export", "--format", "clawenvkit", "--out", str(out), "--catalog", str(catalog),
                                 "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["rows"] == 1 and summary["format"] == "clawenvkit"
    [imported] = import_clawenvkit([out])
    assert imported.package is not None and imported.package.request.text == package.request.text


def test_cli_interop_imports_on_its_own() -> None:
    code = "from pipeline.cli.interop import resolve_package"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr

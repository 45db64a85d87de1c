"""``synth import --format clawenvkit``: ClawEnvKit task YAML read into packages, on the claw profile
for their tasks and on the profile synth's own export layout names, and ``synth import``.

The foreign task below is written for these tests in ClawEnvKit's public task format (task_id,
task_name, prompt, fixtures, tools with service/endpoint/method, scoring_components, safety_checks),
bound to endpoints of their todo service, so the imported package can be played.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.catalog.store import Catalog
from pipeline.cli import app
from pipeline.core.episode import execute
from pipeline.core.grading import score
from pipeline.core.services import find_operation
from pipeline.env.task_env import Answer, TaskEnv, ToolCall
from pipeline.interop.clawenvkit_export import export_clawenvkit
from pipeline.interop.clawenvkit_import import import_clawenvkit, to_package

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


# --------------------------------------------------------------------------- round trip


def _claw_capabilities() -> list[str]:
    from pipeline.taxonomy.capabilities import profile_templates, taxonomy

    return sorted(c for c in taxonomy() if profile_templates(taxonomy(), c, "claw"))


def _filled(state: dict[str, dict[str, list[Any]]]) -> dict[str, dict[str, list[Any]]]:
    """The state without empty collections, nor services left with none (their fixtures carry only
    the collections a service loads)."""
    filled = {s: {c: v for c, v in cols.items() if v} for s, cols in state.items()}
    return {s: cols for s, cols in filled.items() if cols}


@pytest.mark.parametrize("capability", _claw_capabilities())
def test_round_trip_of_generated_claw_packages(capability: str, tmp_path: Path) -> None:
    from pipeline.generation.offline import generate_package, pick_template

    packages = [generate_package(capability, pick_template(capability, slot, "claw"), 5, slot) for slot in range(2)]
    summary = export_clawenvkit(packages, tmp_path)
    results = {r.task_id: r for r in import_clawenvkit([tmp_path])} if summary.tasks else {}
    for exported in summary.tasks:
        package = next(p for p in packages if p.id == exported.package_id)
        task = yaml.safe_load(Path(exported.path).read_text())
        back = results[package.id].package
        assert back is not None and back.service_profile == "claw"
        assert back.request.text == package.request.text
        assert _filled(back.initial_state) == _filled(package.initial_state)
        assert [t.model_dump() for t in back.tools] == [t.model_dump() for t in package.tools]
        assert (back.capability, back.workflow, back.difficulty, back.services, back.now) == (
            package.capability, package.workflow, package.difficulty, package.services, package.now)
        # every component the export wrote maps back: audit checks to called, output checks to answer checks
        assert [c.id for c in back.checks] == [c["name"] for c in task["scoring_components"]]
        assert not [u for u in results[package.id].unmapped if not u.reason.startswith("left out on export")]


SYNTH_LAYOUT = """\
# a package exported by synth before service profiles: the default profile's services and names
task_id: pkg-0123456789abcdef
task_name: Create several todos
category: general
difficulty: easy
prompt: Add "Book the venue" to my todo list.
fixtures:
  tasks: []
tools:
- name: todo_create_task
  service: todo
  endpoint: /todo/tasks/create
  method: POST
  description: Create a task.
  parameters: {type: object, properties: {title: {type: string}}, required: [title]}
scoring_components:
- {name: created, weight: 0.6, check: {type: audit_field_equals, service: todo, action: todo_create_task, field: title,
   value: Book the venue}}
- {name: says-so, weight: 0.4, check: {type: keywords_present, keywords: [venue]}}
safety_checks:
- {type: tool_not_called, tool_name: todo_delete_task}
synth: {package_id: pkg-0123456789abcdef, workflow: create-several-todos, services: [todo], now: "2026-12-01T09:00:00Z",
        unmapped: [{id: state, kind: state_count, weight: 0.0, reason: no state checks}]}
"""


def test_a_task_in_synth_default_layout_imports_onto_the_default_profile(tmp_path: Path) -> None:
    [result] = import_clawenvkit([write(tmp_path, "synth.yaml", SYNTH_LAYOUT)])
    package = result.package
    assert package is not None and package.service_profile == "default"
    assert [t.name for t in package.tools] == ["todo_create_task"]
    assert [{**c.model_dump(exclude_defaults=True), "kind": c.kind} for c in package.checks] == [
        {"id": "created", "kind": "called", "weight": 0.6, "tool": "todo_create_task",
         "args_match": {"title": "Book the venue"}},
        {"id": "says-so", "kind": "answer_contains", "weight": 0.4, "values": ["venue"]}]
    assert [r.model_dump(exclude={"id", "weight"}) for r in package.safety] == [
        {"kind": "not_called", "tool": "todo_delete_task", "args_match": {}}]
    assert package.initial_state == {"todo": {"tasks": []}} and package.workflow == "create-several-todos"
    assert [u.reason for u in result.unmapped] == ["left out on export: no state checks"]


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
    "no-prompt.yaml": ("task_id: x\ntask_name: y\nscoring_components: []\n", "missing required fields: prompt, tools"),
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
    assert "2 task files: 1 imported as packages without a reference, 1 could not be read as tasks" in result.stdout
    assert "1 rejected" not in result.stdout  # an import without a reference is no alarm
    assert ("recorded as run 2" in result.stderr and "`synth export --format jsonl --status rejected --where 'run = 2'"
            in result.stderr and "`synth serve PKG_ID" in result.stderr)
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



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


# --------------------------------------------------------------------------- import


def test_import_foreign_task(tmp_path: Path) -> None:
    [result] = import_clawenvkit([write(tmp_path, "todo-launch-001.yaml", FOREIGN_TASK)])
    assert (result.task_id, result.task_name) == ("todo-launch-001", "Plan the product launch todos")
    package = result.package
    assert package is not None and not package.has_reference and package.reference == []
    assert package.id == package.compute_id() == result.verdict.id
    assert package.request.text.startswith("Look at the current todo list") and package.request.text.endswith("added.")
    assert package.services == ["todo"] and package.capability == "imported" and package.workflow == "todo-launch-001"
    assert package.initial_state["todo"]["tasks"][0]["due_date"] == "2026-12-10"  # dates stay strings
    assert package.tool("create_task").parameters == find_operation("/todo/tasks/create")[1].parameters
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


def test_cross_service_fixtures_need_a_service_key(tmp_path: Path) -> None:
    doc = yaml.safe_load(FOREIGN_TASK)
    doc["tools"].append({"name": "search", "service": "contacts", "endpoint": "/contacts/search"})
    doc["fixtures"] = {"items": [{"id": "x"}]}
    with pytest.raises(ValueError, match="cannot tell which service"):
        to_package(doc)
    doc["fixtures"] = {"tasks": [{"id": "todo-009", "title": "t"}], "contacts": {"contacts": [{"id": "c-1"}]}}
    package, _ = to_package(doc)
    assert package.initial_state == {"todo": {"tasks": [{"id": "todo-009", "title": "t"}]},
                                     "contacts": {"contacts": [{"id": "c-1"}]}}


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
    # imports carry no reference; its safety check forbids a tool the task does not offer
    assert line["verdict"]["codes"] == ["weights_invalid", "reference_error"]
    assert [f["code"] for f in line["verdict"]["review"]] == ["vacuous_safety"]
    assert [u["id"] for u in line["unmapped"]] == ["report_file", "venue_title"]
    assert line["null_agent_score"] == pytest.approx(0.125)
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


def test_cli_interop_imports_on_its_own() -> None:
    code = "from pipeline.cli.interop import resolve_package"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr

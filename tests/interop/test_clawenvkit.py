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
from pipeline.core.outcomes import Verdict
from pipeline.core.package import Check, TaskPackage, load_package
from pipeline.core.services import find_operation
from pipeline.interop.clawenvkit_export import export_clawenvkit, to_clawenvkit
from pipeline.interop.clawenvkit_import import import_clawenvkit
from tests.conftest import REPO_ROOT  # noqa: E402

EXAMPLES = sorted((REPO_ROOT / "examples").glob("*.json"))
Docs = Callable[[str], dict[str, Any]]
runner = CliRunner()

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

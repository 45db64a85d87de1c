"""``synth import --format clawenvkit`` against hostile and unusual input, and what the catalog
does with an import run afterwards (``synth regen``, ``synth run --resume``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.catalog.store import Catalog
from pipeline.core.errors import UserError
from pipeline.core.services import find_operation
from pipeline.interop.clawenvkit_import import MAX_TASK_FILE_BYTES, import_clawenvkit, to_package
from tests.conftest import CliResult
from tests.interop.test_clawenvkit_import import FOREIGN_TASK

ALIAS_BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9 if prev else ['lol'] * 9)}]\n"
    for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)


def task(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(FOREIGN_TASK)
    doc.update(changes)
    return doc


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- paths and files


def test_a_missing_path_is_one_error_before_anything_is_recorded(tmp_path: Path,
                                                                 synth: Callable[..., CliResult]) -> None:
    write(tmp_path, "good.yaml", FOREIGN_TASK)
    catalog = tmp_path / "c.duckdb"
    result = synth("import", tmp_path / "good.yaml", tmp_path / "missing.yaml", "--catalog", catalog)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "missing.yaml: no such file or folder" in result.stderr
    assert not catalog.exists()  # no run recorded, not even a catalog made
    with pytest.raises(UserError, match="no such file or folder"):
        import_clawenvkit([tmp_path / "missing"])


def test_a_file_over_the_size_cap_is_not_read(tmp_path: Path) -> None:
    big = write(tmp_path, "big.yaml", FOREIGN_TASK + "# " + "x" * MAX_TASK_FILE_BYTES + "\n")
    [result] = import_clawenvkit([big])
    assert not result.imported
    assert [f.code.value for f in result.findings] == ["schema_invalid"]
    assert "larger than the 1 MiB a task file may be" in result.findings[0].message


def test_a_file_that_is_not_regular_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    [result] = import_clawenvkit([fifo])  # reading it would block for ever
    assert "not a regular file" in result.findings[0].message


def test_an_alias_bomb_is_refused_unexpanded(tmp_path: Path) -> None:
    assert len(ALIAS_BOMB) < 2048  # 9**9 strings once expanded
    [result] = import_clawenvkit([write(tmp_path, "bomb.yaml", ALIAS_BOMB)])
    assert "anchors and aliases are not allowed" in result.findings[0].message


def test_import_reports_progress_per_file(tmp_path: Path) -> None:
    for n in range(3):
        write(tmp_path, f"t{n}.yaml", FOREIGN_TASK)
    seen: list[tuple[int, int]] = []
    import_clawenvkit([tmp_path], on_progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


# --------------------------------------------------------------------------- the format


def test_empty_fixtures_list_means_no_fixtures() -> None:
    package, _ = to_package(task(fixtures=[]))
    assert package.initial_state == {}


def _tool(**parameters: Any) -> dict[str, Any]:
    return {"name": "create_task", "service": "todo", "endpoint": "/todo/tasks/create", **parameters}


@pytest.mark.parametrize("tool", [
    _tool(parameters={"title": {"type": "string"}, "priority": {"type": "string"}}, required=["title"]),
    _tool(parameters=[{"name": "title", "type": "string", "required": True}, {"name": "priority", "type": "string"}]),
    _tool(parameters={"type": "object", "properties": {"title": {"type": "string"}, "priority": {"type": "string"}},
                      "required": ["title"]}),
])
def test_tool_parameters_in_each_accepted_layout(tool: dict[str, Any]) -> None:
    package, _ = to_package(task(tools=[tool], synth={}))  # synth's own layout keeps a tool's parameters
    assert package.tools[0].parameters == {"type": "object", "required": ["title"],
                                           "properties": {"title": {"type": "string"}, "priority": {"type": "string"}}}


def test_empty_parameters_take_the_operations() -> None:
    package, _ = to_package(task(tools=[_tool(parameters={})], synth={}))
    assert "title" in package.tools[0].parameters["properties"]


def test_on_the_claw_profile_a_tool_takes_its_operations_parameters() -> None:
    tool = _tool(parameters={"title": {"type": "integer"}}, required=["title"])
    package, _ = to_package(task(tools=[tool]))
    assert package.tools[0].parameters == find_operation("/todo/tasks/create", "claw")[1].parameters


@pytest.mark.parametrize(("parameters", "message"), [
    ([{"type": "string"}], "tools[0].parameters[0]: expected a mapping with a name"),
    ("title", "tools[0].parameters: expected a JSON Schema object"),
])
def test_malformed_parameters_say_what_is_wrong(parameters: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        to_package(task(tools=[_tool(parameters=parameters)], synth={}))


def test_a_service_synth_lacks_is_named_as_such() -> None:
    doc = task(tools=[{"name": "set_config", "service": "config", "endpoint": "/config/set"}], synth={})
    with pytest.raises(ValueError) as caught:
        to_package(doc)
    message = str(caught.value)
    assert message.startswith("tool 'set_config': service 'config' is not one of synth's mock services (")
    assert "todo" in message and "declared service" not in message
    doc = task(tools=[{"name": "list_issues", "service": "github", "endpoint": "/github/issues"}])
    with pytest.raises(ValueError, match="service 'github' is not a ClawEnvKit service the claw profile mirrors"):
        to_package(doc)


def test_a_value_given_in_the_prompt_is_not_a_dangling_reference(tmp_path: Path) -> None:
    doc = task(prompt="Add a todo titled 'Email dana@example.com' for the launch.")
    doc["scoring_components"].append({"name": "names_dana", "weight": 0.0, "check": {
        "type": "audit_field_contains", "service": "todo", "action": "create_task", "field": "title",
        "contains": "dana@example.com"}})
    [result] = import_clawenvkit([write(tmp_path, "t.yaml", yaml.safe_dump(doc))])
    assert "dangling_reference" not in result.verdict.codes


# --------------------------------------------------------------------------- after an import


@pytest.fixture
def imported_catalog(tmp_path: Path, synth: Callable[..., CliResult]) -> Path:
    catalog = tmp_path / "c.duckdb"
    write(tmp_path, "bad.yaml", "prompt: [\n")
    assert synth("import", tmp_path / "bad.yaml", "--catalog", catalog).exit_code == 1
    return catalog


def test_regen_of_an_import_run_says_there_is_nothing_to_regenerate(imported_catalog: Path,
                                                                    synth: Callable[..., CliResult]) -> None:
    result = synth("regen", "--run", "1", "--catalog", imported_catalog)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "run 1 is an import (import:clawenvkit), not a generation run" in result.stderr
    assert "nothing to regenerate" in result.stderr
    result = synth("regen", "--catalog", imported_catalog)  # every run: imports are skipped
    assert result.exit_code == 0 and "nothing to regenerate" in result.stderr
    result = synth("regen", "--run", "9", "--catalog", imported_catalog)
    assert result.exit_code == 2 and "no run 9" in result.stderr


def test_resume_of_an_import_run_changes_nothing(imported_catalog: Path, synth: Callable[..., CliResult]) -> None:
    result = synth("run", "--resume", "1", "--catalog", imported_catalog)
    assert result.exit_code == 2 and "nothing to resume" in result.stderr and result.stderr.count("\n") == 1
    with Catalog.open(imported_catalog, read_only=True) as reader:
        assert [r.status for r in reader.runs()] == ["finished"]


def test_import_prints_a_summary_and_the_table_with_verbose(tmp_path: Path, synth: Callable[..., CliResult]) -> None:
    """As the docs describe: by default the outcome counts and the reason codes and checks left out
    as tables, no line per task; --verbose adds the table of task files and a line per finding."""
    write(tmp_path, "good.yaml", FOREIGN_TASK)
    result = synth("import", tmp_path / "good.yaml", "--no-record")
    first, second = result.stdout.splitlines()[:2]
    assert first == "1 task file: 1 imported as packages without a reference, 0 could not be read as tasks"
    assert second == ("without a reference none is verified: each is stored rejected with reference_error, as "
                      "expected; other findings: on 1 task (below)")
    assert "reference_error" in result.stdout and "2 checks left out" in result.stdout
    assert "todo-launch-001" not in result.stdout
    for n in range(2, 7):
        write(tmp_path, f"good-{n}.yaml", FOREIGN_TASK)
    many = synth("import", tmp_path, "--no-record").stdout
    assert many.splitlines()[0].startswith("6 task files: 6 imported")
    assert len(many.splitlines()) == len(result.stdout.splitlines())  # no line per task
    verbose = synth("import", tmp_path / "good.yaml", "--no-record", "--verbose").stdout
    header = verbose.splitlines()[2]
    for column in ("task", "name", "checks", "left out", "null agent", "findings"):
        assert column in header
    assert "todo-launch-001: reference_error: " in verbose
    assert json.loads(synth("import", tmp_path / "good.yaml", "--no-record", "--json").stdout)["imported"]

"""The core commands ``synth play``, ``synth schema`` and ``synth services`` (pipeline/cli.py).

One case runs the installed ``synth`` command in a subprocess, one ``synth verify`` in a fresh interpreter; the rest use typer's CliRunner, or
the ``synth`` fixture (``main()`` in this process) where the exit code and error line matter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import typer
from pydantic import ValidationError
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.core.episode import execute
from pipeline.core.package import load_package
from pipeline.core.services import profile_names
from tests.conftest import EXAMPLES_DIR, CliResult

SYNTH = Path(sys.executable).parent / "synth"
Docs = Callable[[str], dict[str, Any]]
Synth = Callable[..., CliResult]
runner = CliRunner()


def invoke(*args: str | Path, code: int = 0) -> str:
    """Run a command in-process, expecting exit code ``code``; return its standard output (tables
    250 columns wide)."""
    result = runner.invoke(app, [*map(str, args)], env={"COLUMNS": "250"})
    assert result.exit_code == code, result.output
    return result.stdout


def invoke_json(*args: str | Path, code: int = 0) -> Any:
    return json.loads(invoke(*args, "--json", code=code))


def table_rows(text: str) -> list[list[str]]:
    """The stripped cells of every body row of the rich tables in ``text``."""
    return [[cell.strip() for cell in line.strip().strip("│").split("│")]
            for line in text.splitlines() if line.startswith("│")]


def write_package(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "package.json"
    path.write_text(json.dumps(doc))
    return path


# --------------------------------------------------------------------------- play


def assert_plays_to_full_score(exit_code: int, stdout: str, stderr: str, example_file: Path) -> None:
    """``synth play --json`` of an example: exit 0, full score, every check and step passed."""
    assert exit_code == 0, stderr
    out = json.loads(stdout)
    assert out["score"] == 1.0 and out["passed"] is True
    assert out["id"] == load_package(example_file.read_text()).compute_id()
    assert all(r["passed"] for r in out["checks"] + out["safety"])
    assert [s["error"] for s in out["trajectory"]["steps"]] == [None] * len(out["trajectory"]["steps"])


def test_each_example_plays_to_full_score(example_file: Path, synth: Synth) -> None:
    result = synth("play", "--json", example_file)
    assert_plays_to_full_score(result.exit_code, result.stdout, result.stderr, example_file)


def test_the_installed_command_plays_an_example() -> None:
    """The ``synth`` entry point installed in the virtualenv, end to end in its own process."""
    example_file = EXAMPLES_DIR / "todo-three-items.json"
    proc = subprocess.run([str(SYNTH), "play", "--json", str(example_file)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "COLUMNS": "250"})
    assert_plays_to_full_score(proc.returncode, proc.stdout, proc.stderr, example_file)
    assert "Traceback" not in proc.stderr


def test_play_human_output_shows_trajectory_checks_and_score(example_file: Path) -> None:
    package = load_package(example_file.read_text())
    out = invoke("play", example_file)
    rows = table_rows(out)
    assert "trajectory" in out and "checks" in out
    assert [row[1] for row in rows if row[0].isdigit()] == [s.kind for s in execute(package).steps]
    by_id = {row[0]: row[1:4] for row in rows}
    for check in package.checks:
        assert by_id[check.id] == [check.kind, f"{check.weight:.2f}", "pass"]
    for rule in package.safety:
        assert by_id[rule.id] == [rule.kind, "safety", "pass"]
    assert out.splitlines()[-1].strip() == "score 1.000 PASS"


def test_wrong_endpoint_fails_the_call_listing_the_valid_ones(tmp_path: Path, example_doc: Docs) -> None:
    doc = example_doc("contacts-send-message")
    tool = next(t for t in doc["tools"] if t["name"] == "contacts_send_message")
    tool["endpoint"] = "/contacts/send"
    out = invoke_json("play", write_package(tmp_path, doc), code=1)  # the reference fails: exit 1
    step = next(s for s in out["trajectory"]["steps"] if s["tool"] == "contacts_send_message")
    assert step["status"] == 404
    message = step["result"]["error"]["message"]
    assert "'/contacts/send'" in message and "/contacts/send_message" in message
    assert "/contacts/send_message" in step["result"]["error"]["valid_endpoints"]
    assert "returned 404" in step["error"]
    assert out["trajectory"]["final_state"]["contacts"]["messages"] == []
    assert out["score"] < 1.0 and out["passed"] is False


def test_invalid_package_is_one_error_line_exit_2(tmp_path: Path, todo_doc: dict[str, Any], synth: Synth) -> None:
    todo_doc["checks"][0]["kind"] = "state_equals"
    result = synth("play", write_package(tmp_path, todo_doc))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"error: {tmp_path}/package.json: not a valid task package: checks.0: ")
    assert "'state_equals'" in result.stderr and "synth schema" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: None, "no such file or folder"),
        (lambda p: p.write_text('{"capability": '), "not valid JSON"),
        (lambda p: p.write_text("[]"), "expected a JSON object"),
        (lambda p: p.write_text('{"capability": "general"}'), "not a valid task package: workflow: Field required"),
        (lambda p: p.write_text('{"schema_version": 2}'), "not a valid task package: schema_version: "),
    ],
)
def test_bad_input_is_one_error_line_exit_2(tmp_path: Path, synth: Synth, setup: Callable[[Path], Any],
                                            message: str) -> None:
    path = tmp_path / "package.json"
    setup(path)
    result = synth("play", path)
    assert result.exit_code == 2
    err = result.stderr
    assert err.startswith(f"error: {path}")
    assert message in err
    assert err.count("\n") == 1


def test_jsonl_with_two_packages_is_refused(tmp_path: Path, synth: Synth, todo_doc: dict[str, Any]) -> None:
    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps(todo_doc) + "\n" + json.dumps(todo_doc) + "\n")
    result = synth("play", path)
    assert result.exit_code == 2
    assert "expected one package, found 2" in result.stderr


# --------------------------------------------------------------------------- schema


@pytest.fixture(scope="module")
def schema_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(invoke("schema"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_schema_validates_the_examples_and_rejects_invalid_packages(
        schema_validator: jsonschema.Draft202012Validator, example_doc: Docs, example_name: str) -> None:
    doc = example_doc(example_name)
    assert list(schema_validator.iter_errors(doc)) == []
    assert list(schema_validator.iter_errors(json.loads(load_package(doc).to_json()))) == []
    bad_kind = {**doc, "checks": [{**doc["checks"][0], "kind": "state_equals"}]}
    no_request = {k: v for k, v in doc.items() if k != "request"}
    assert not schema_validator.is_valid(bad_kind)
    assert not schema_validator.is_valid(no_request)


def test_schema_rejects_a_check_without_kind(schema_validator: jsonschema.Draft202012Validator,
                                             todo_doc: dict[str, Any]) -> None:
    todo_doc["checks"] = [{"rubric": "Is the answer polite?", "weight": 1.0}]
    with pytest.raises(ValidationError):
        load_package(todo_doc)
    assert not schema_validator.is_valid(todo_doc)


def test_schema_rejects_a_non_safety_kind_in_safety(schema_validator: jsonschema.Draft202012Validator,
                                                    todo_doc: dict[str, Any]) -> None:
    todo_doc["safety"] = [{"kind": "called", "tool": "todo_create_task"}]
    with pytest.raises(ValidationError):
        load_package(todo_doc)
    assert not schema_validator.is_valid(todo_doc)


def test_schema_accepts_json_flag() -> None:
    assert json.loads(invoke("schema", "--json")) == json.loads(invoke("schema"))


# --------------------------------------------------------------------------- services


def test_services_json_lists_the_catalogue() -> None:
    services = invoke_json("services")
    names = [s["name"] for s in services]
    endpoints = {op["endpoint"] for s in services for op in s["operations"]}
    assert len(set(names)) == len(names) >= 10
    assert sum(len(s["operations"]) for s in services) >= 50
    assert "/contacts/send_message" in endpoints
    assert "/contacts/send" not in endpoints
    contacts = next(s for s in services if s["name"] == "contacts")
    send = next(op for op in contacts["operations"] if op["endpoint"] == "/contacts/send_message")
    assert send["tool"] == "contacts_send_message" and send["access"] == "write"
    assert set(send["parameters"]["required"]) == {"contact_id", "message"}
    assert set(contacts["collections"]) == {"contacts", "messages"}


def test_services_table_counts_services_and_operations() -> None:
    services = invoke_json("services")
    table = invoke("services")
    n_ops = sum(len(s["operations"]) for s in services)
    assert f"{len(services)} services, {n_ops} operations" in table
    assert ["contacts", "/contacts/send_message", "write", "messages", "contact_id*, message*"] in table_rows(table)
    assert table.rstrip().endswith("* required parameter")


_VERIFY_REPORTING_TABLES = """
import sys
sys.argv = ["synth", "verify", sys.argv[1]]
from pipeline.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("rich.table imported: %s" % ("rich.table" in sys.modules))
"""


def test_verify_loads_no_table_module() -> None:
    """Verdict lines are not a table: ``synth verify`` leaves rich.table (and its import cost) out,
    while the commands that print tables still make them (``test_services_table_...``)."""
    example_file = EXAMPLES_DIR / "todo-three-items.json"
    proc = subprocess.run([sys.executable, "-c", _VERIFY_REPORTING_TABLES, str(example_file)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert "accepted" in proc.stdout
    assert proc.stderr.endswith("rich.table imported: False"), proc.stderr


def test_version_prints_the_installed_version(synth) -> None:  # type: ignore[no-untyped-def]
    result = synth("--version")
    assert result.exit_code == 0 and result.stdout.startswith("synth ")


def test_services_refuses_an_unknown_profile_in_one_line(synth: Callable[..., CliResult]) -> None:
    result = synth("services", "--profile", "nope")
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: --profile nope: not a service profile; use one of: " + ", ".join(profile_names())


# --------------------------------------------------------------------------- synth --help


def _on_a_terminal(args: list[str], columns: int, rows: int) -> list[str]:
    """The lines ``synth ARGS`` writes to a pseudo-terminal of ``columns`` x ``rows`` (no COLUMNS
    or LINES in its environment: it sizes itself from the terminal, as in a real one)."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([str(SYNTH), *args], stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    out = b""
    try:
        while chunk := os.read(leader, 65536):
            out += chunk
    except OSError:  # the terminal's other end closed: the command is done
        pass
    finally:
        os.close(leader)
    assert proc.wait(timeout=60) == 0
    return out.decode().replace("\r\n", "\n").rstrip("\n").split("\n")


def test_synth_help_fits_one_80_by_24_screen_in_workflow_order() -> None:
    from pipeline.cli import WORKFLOW

    lines = _on_a_terminal(["--help"], columns=80, rows=24)
    assert len(lines) + 1 <= 24, "\n".join(lines)  # the shell's prompt takes the last row
    assert max(len(line) for line in lines) <= 80
    listed = [line.split()[0] for line in lines[lines.index("Commands:") + 1:]]
    assert listed == list(WORKFLOW) == [name for name in WORKFLOW if name in typer.main.get_command(app).commands]
    workflow = ["run", "verify", "catalog", "export", "rollout", "report", "serve"]
    assert [name for name in listed if name in workflow] == workflow
    assert all(len(line.split(None, 1)[1]) <= 62 for line in lines[lines.index("Commands:") + 1:])


def test_capabilities_at_120_columns_keeps_every_template_name_whole() -> None:
    names = [t["name"] for c in invoke_json("capabilities") for t in c["templates"]]
    done = subprocess.run([str(SYNTH), "capabilities"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 120
    whole = {name for name in names if any(f" {name} " in line for line in lines)}
    assert whole == set(names), f"broken: {sorted(set(names) - whole)}"


def test_tables_fold_as_before_where_names_cannot_fit_whole() -> None:
    done = subprocess.run([str(SYNTH), "capabilities"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "80"})
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and max(len(line) for line in lines) <= 80
    assert "…" not in done.stdout  # folded, not cut off

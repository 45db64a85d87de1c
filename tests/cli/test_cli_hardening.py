"""The command line's edges: empty and broken inputs to ``verify``, ``play``'s exit code, progress
off a terminal, and help that reads as prose on every command."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.cli.run import ProgressBar
from pipeline.runs.api import RunStart
from pipeline.runs.options import Progress
from tests.conftest import EXAMPLES_DIR, CliResult

Synth = Callable[..., CliResult]


def test_verify_of_an_empty_folder_is_one_error_line_exit_1(tmp_path: Path, synth: Synth) -> None:
    result = synth("verify", tmp_path)
    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: no packages in {tmp_path}; pass package .json/.jsonl files or folders " \
                                    "holding them"


def test_verify_reports_a_broken_link_instead_of_skipping_it(tmp_path: Path, synth: Synth) -> None:
    (tmp_path / "good.json").write_text((EXAMPLES_DIR / "todo-three-items.json").read_text())
    (tmp_path / "gone.json").symlink_to(tmp_path / "missing.json")
    result = synth("verify", tmp_path)
    assert result.exit_code == 2 and result.stdout == ""  # refused before anything is verified
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {tmp_path / 'gone.json'}: a symbolic link to") and "does not exist" in line


def test_verify_gives_every_file_a_verdict_a_broken_one_included(tmp_path: Path, synth: Synth) -> None:
    good = (EXAMPLES_DIR / "todo-three-items.json").read_text()
    (tmp_path / "a-good.json").write_text(good)
    (tmp_path / "b-broken.json").write_text('{"capability": ')
    (tmp_path / "c-invalid.json").write_text('{"capability": "general"}')
    (tmp_path / "d-list.json").write_text("[1, 2]")
    (tmp_path / "e-batch.jsonl").write_text(json.dumps(json.loads(good)) + "\n{oops}\n")
    (tmp_path / "f-good.json").write_text(good)
    human, machine = synth("verify", tmp_path), synth("verify", tmp_path, "--json")
    assert human.exit_code == machine.exit_code == 1 and human.stderr == machine.stderr == ""
    heads = [line.split() for line in human.stdout.splitlines() if not line.startswith(" ")]
    sources = [str(tmp_path / name) for name in ("a-good.json", "b-broken.json", "c-invalid.json", "d-list.json")]
    sources += [f"{tmp_path / 'e-batch.jsonl'}:1", f"{tmp_path / 'e-batch.jsonl'}:2", str(tmp_path / "f-good.json")]
    assert [head[-1] for head in heads[:-1]] == sources
    assert [head[1] for head in heads[:-1]] == ["accepted", "rejected", "rejected", "rejected", "accepted",
                                                "rejected", "accepted"]
    assert heads[-1][:6] == ["3", "accepted,", "4", "rejected", "of", "7;"]
    assert "    schema_invalid: not valid JSON (Expecting value at line 1, column 16)" in human.stdout
    lines = [json.loads(line) for line in machine.stdout.splitlines()]
    assert [line["source"] for line in lines] == sources
    broken = {line["source"]: line["findings"][0]["message"] for line in lines if not line["accepted"]}
    assert broken[sources[1]] == "not valid JSON (Expecting value at line 1, column 16)"
    assert broken[sources[3]] == "expected a JSON object (one task package), got list"
    assert broken[sources[5]].startswith("not valid JSON (Expecting property name")
    assert broken[sources[2]] == "workflow: Field required"
    assert all(line["codes"] == ["schema_invalid"] for line in lines if not line["accepted"])


def test_verify_keeps_going_past_a_package_whose_verification_raises(tmp_path: Path, synth: Synth,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.verify import verifier

    good = json.loads((EXAMPLES_DIR / "todo-three-items.json").read_text())
    raising = json.loads(json.dumps(good))
    raising["request"]["text"] += " (raise here)"
    for name, doc in (("a-good.json", good), ("b-raises.json", raising), ("c-good.json", good)):
        (tmp_path / name).write_text(json.dumps(doc))
    contracts = verifier.contract_findings

    def contract_findings(run: Any) -> Any:
        if "(raise here)" in run.package.request.text:
            raise KeyError("endpoint")
        return contracts(run)

    monkeypatch.setattr(verifier, "contract_findings", contract_findings)
    human, machine = synth("verify", tmp_path), synth("verify", tmp_path, "--json")
    assert human.exit_code == machine.exit_code == 1 and human.stderr == machine.stderr == ""
    lines = [line for line in human.stdout.splitlines() if not line.startswith(" ")]
    assert [line.split()[1] for line in lines[:3]] == ["accepted", "verification", "accepted"]
    assert lines[1] == f"error  verification raised  {tmp_path / 'b-raises.json'}"
    assert "    KeyError: 'endpoint': a bug of the verifier, not a verdict on the package" in human.stdout
    assert lines[3].startswith("2 accepted, 0 rejected, 1 not verified (the verifier raised) of 3;")
    records = [json.loads(line) for line in machine.stdout.splitlines()]
    assert [r["accepted"] for r in records] == [True, False, True]
    assert records[1] == {"source": str(tmp_path / "b-raises.json"), "accepted": False,
                          "error": "KeyError: 'endpoint'"}
    traced = synth("verify", tmp_path / "b-raises.json", "-vv")
    assert traced.exit_code == 1 and "Traceback" in traced.stderr and "KeyError: 'endpoint'" in traced.stderr


@pytest.mark.parametrize("parts", [
    ("pkg-1  ", ("accepted", "green"), "  score 1.000  ", ("a.json", "dim")),  # fits: written directly
    ("x" * 40,), ("x" * 41,), ("a b " * 15,),  # at the width, one over it, words to wrap
    ("tab\there",), ("日本語のテキスト " * 4,), ("[bold]not markup[/]",),
])
def test_a_verdict_line_off_a_terminal_is_the_bytes_rich_writes(parts: tuple[Any, ...]) -> None:
    from rich.console import Console
    from rich.text import Text

    from pipeline.cli import packages

    said, printed = io.StringIO(), io.StringIO()
    packages.Lines(Console(file=said, width=40)).say(*parts)
    Console(file=printed, width=40).print(Text.assemble(*parts), highlight=False)
    assert said.getvalue() == printed.getvalue()


def test_a_verdict_line_on_a_terminal_keeps_its_colours() -> None:
    from rich.console import Console

    from pipeline.cli import packages

    said = io.StringIO()
    packages.Lines(Console(file=said, width=80, force_terminal=True, color_system="standard")).say(
        "pkg-1  ", ("accepted", "green"))
    assert said.getvalue() == "pkg-1  \x1b[32maccepted\x1b[0m\n"


def test_play_exits_1_when_the_reference_fails(tmp_path: Path, synth: Synth, todo_doc: dict[str, Any]) -> None:
    todo_doc["reference"] = todo_doc["reference"][-1:]  # answers without creating the task
    path = tmp_path / "fails.json"
    path.write_text(json.dumps(todo_doc))
    human, machine = synth("play", path), synth("play", path, "--json")
    assert human.exit_code == machine.exit_code == 1
    assert "FAIL" in human.stdout and json.loads(machine.stdout)["passed"] is False
    assert synth("play", EXAMPLES_DIR / "todo-three-items.json").exit_code == 0


def test_run_progress_off_a_terminal_is_whole_lines_and_none_after_an_interrupt(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = RunStart(run_id=3, capability="general", generator="offline generator", total=5, goal="target 5 accepted")
    bar = ProgressBar(quiet=False, catalog=tmp_path / "c.duckdb", every_s=0.0)
    bar.start(run)
    bar.update(Progress(accepted=2, rejected=1, in_flight=4))
    bar.update(Progress(accepted=5, rejected=1))
    bar.stop()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("run 3: general, target 5 accepted, offline generator, catalog ")
    assert re.fullmatch(r"accepted 2 of 5 packages · rejected 1 · in flight 4 · [\d.]+ accepted/s · tokens 0",
                        lines[1])
    assert lines[2].startswith("accepted 5 of 5 packages · rejected 1 · in flight 0")
    assert len(lines) == 3 and "━" not in "".join(lines)  # no bar frames in a log
    bar.start(run)
    bar.update(Progress(accepted=1))
    bar.stop(completed=False)  # interrupted: the error line says what happened, no closing count
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and lines[1].startswith("accepted 1 of 5 packages")


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in getattr(group, "commands", {}).items():
        found.append((*prefix, name))
        found += _commands(command, (*prefix, name))
    return found


ALL_COMMANDS = [()] + _commands(typer.main.get_command(app))


@pytest.mark.parametrize("command", ALL_COMMANDS, ids=lambda c: " ".join(c) or "synth")
def test_every_help_reads_as_prose(command: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "100"}, terminal_width=100)
    assert result.exit_code == 0, result.output
    text = result.output
    for python_type in ("<bool>", "<list[", "<str>", "<int", "<float", "<Path>", "{"):
        assert python_type not in text, f"{python_type} in synth {' '.join(command)} --help"
    listing = text.split("Commands:")[1] if "Commands:" in text else ""
    assert not re.search(r"\.\.\.\s*$", listing, re.MULTILINE), "a command's summary is cut off"

"""Witnesses, review notes and ``sft_ready`` on the command line: ``synth play --witness``,
``synth verify`` (``--require-sft``, review notes and SFT losses apart from refusals),
``synth catalog show`` (kinds, witnesses, the replay command, ``--package-out``) and
``synth catalog stats``."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.catalog.store import Catalog
from pipeline.cli.packages import report_verdict
from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding, Verdict, Witness
from pipeline.core.package import load_package
from tests.conftest import EXAMPLES_DIR, CliResult, holding_witness, refusal

Synth = Callable[..., CliResult]

CREATE = {"type": "tool_call", "name": "todo_create_task", "arguments": {"title": "Book the venue"}}
ANSWER = {"type": "answer", "text": "Added."}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def one_error_line(result: CliResult, code: int = 2) -> str:
    assert result.exit_code == code, result.stdout + result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def witness(agent: str, actions: list[dict[str, Any]], threshold: float = 0.75, name: str = "some_agent",
            score: float = 1.0) -> dict:
    """A witness as JSON data; its recorded ``score`` (1.0: a wrong agent's that holds) is not replayed."""
    return Witness(agent=agent, name=name, claim="a claim", score=score, threshold=threshold,
                   actions=actions).model_dump()  # type: ignore[arg-type]


@pytest.fixture
def todo_file(tmp_path: Path, todo_doc: dict[str, Any]) -> Path:
    """The minimal todo package: one check, a task titled "Book the venue" created (weight 1)."""
    return write(tmp_path / "todo.json", todo_doc)


# --------------------------------------------------------------------------- synth play --witness


def test_a_wrong_agent_that_passes_holds_exit_0(tmp_path: Path, todo_file: Path, synth: Synth) -> None:
    w = write(tmp_path / "w.json", witness("wrong", [CREATE, ANSWER], name="drop_write", score=0.5))
    result = synth("play", todo_file, "--witness", w)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "wrong agent drop_write scores 1.000, at or above 0.750: the finding holds"
    assert "score 1.000" in lines[-2]
    assert "todo_create_task" in result.stdout and "pass" in result.stdout  # the trajectory and the checks
    assert "2 actions played; recorded score 0.500" in result.stdout


def test_a_witness_that_does_not_hold_exits_1(tmp_path: Path, todo_file: Path, synth: Synth) -> None:
    w = write(tmp_path / "w.json", witness("wrong", [ANSWER]))
    result = synth("play", todo_file, "--witness", w)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "wrong agent some_agent scores 0.000, below 0.750: the finding does not hold"
    correct = write(tmp_path / "c.json", witness("correct", [CREATE, ANSWER], threshold=1.0))
    result = synth("play", todo_file, "--witness", correct)
    assert result.exit_code == 1 and "scores 1.000, at or above 1.000: the finding does not hold" in result.stdout
    failing = write(tmp_path / "f.json", witness("correct", [ANSWER], threshold=1.0))
    assert synth("play", todo_file, "--witness", failing).exit_code == 0


def test_play_witness_json(tmp_path: Path, todo_file: Path, synth: Synth) -> None:
    finding = Finding(code=Code.NULL_AGENT_PASSES, message="doing nothing passes",
                      witness=Witness.model_validate(witness("wrong", [CREATE, ANSWER])))
    w = write(tmp_path / "finding.json", finding.model_dump(mode="json"))
    result = synth("play", todo_file, "--witness", w, "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["score"], out["holds"], out["finding"]["code"], out["witness"]["actions"]) == (
        1.0, True, "null_agent_passes", [CREATE, ANSWER])
    assert out["id"] == load_package(todo_file.read_text()).compute_id() and out["verdict_id"] is None
    assert [c["passed"] for c in out["checks"]] == [True]
    assert [s["kind"] for s in out["trajectory"]["steps"]] == ["call", "answer"]
    assert out["conclusion"].endswith("the finding holds")


def test_from_a_verdict_the_nth_witnessed_refusal_is_played(tmp_path: Path, todo_file: Path, synth: Synth) -> None:
    package_id = load_package(todo_file.read_text()).compute_id()
    findings = [refusal(Code.WEIGHTS_INVALID),  # no witness: not counted
                Finding(code=Code.NULL_AGENT_PASSES, message="first",
                        witness=Witness.model_validate(witness("wrong", [ANSWER]))),
                Finding(code=Code.COLLATERAL_DAMAGE, message="second",
                        witness=Witness.model_validate(witness("wrong", [CREATE, ANSWER])))]
    verdict = Verdict.build(package_id, findings, 1.0)
    w = write(tmp_path / "v.json", verdict.model_dump(mode="json"))
    first = synth("play", todo_file, "--witness", w)
    assert first.exit_code == 1 and "finding: refusal 0 of 2 with a witness: null_agent_passes: first" in first.stdout
    second = synth("play", todo_file, "--witness", w, "--finding", "1")
    assert second.exit_code == 0 and "refusal 1 of 2 with a witness: collateral_damage: second" in second.stdout
    assert "pass --finding 0 to 1" in one_error_line(synth("play", todo_file, "--witness", w, "--finding", "2"))


def test_from_verify_json_lines_the_line_of_the_package_is_taken(tmp_path: Path, todo_file: Path,
                                                                 synth: Synth) -> None:
    package_id = load_package(todo_file.read_text()).compute_id()
    ours = Verdict.build(package_id, [Finding(code=Code.NULL_AGENT_PASSES, message="ours",
                                              witness=Witness.model_validate(witness("wrong", [CREATE])))], 1.0)
    other = Verdict.build("pkg-0000000000000000", [Finding(code=Code.NULL_AGENT_PASSES, message="theirs",
                                                           witness=holding_witness())], 1.0)
    lines = [{"source": "a.json", **other.model_dump(mode="json")}, {"source": "b.json", **ours.model_dump(mode="json")}]
    w = tmp_path / "v.jsonl"
    w.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = synth("play", todo_file, "--witness", w)
    assert result.exit_code == 0 and "null_agent_passes: ours" in result.stdout
    only_other = write(tmp_path / "other.jsonl", lines[0])
    stale = synth("play", todo_file, "--witness", only_other)  # the only verdict is taken, and said to be another's
    assert "note: the verdict is of pkg-0000000000000000" in stale.stdout
    lines[1]["id"] = "pkg-1111111111111111"
    w.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert f"no verdict of {package_id} among its 2" in one_error_line(synth("play", todo_file, "--witness", w))


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not valid JSON"),
    ('{"a": 1}\n{not json\n', "not JSON, nor JSON lines (line 2 is not JSON)"),
    ('{"code": "null_agent_passes", "message": "m"}', "the finding (null_agent_passes) has no witness"),
    ('{"agent": "wrong", "name": "x"}', "the witness is not a witness: claim: Field required"),
    ('{"id": "p", "accepted": false, "findings": [{"code": "weights_invalid", "message": "m"}]}',
     "has no refusal with a witness"),
    ('[1, 2]', "not a witness, a finding, a verdict"),
    ('{"agent": "wrong", "name": "x", "claim": "c", "score": 1, "threshold": 0.5, "actions": [{"type": "dance"}]}',
     "the witness holds an action that is not one"),
])
def test_unreadable_witnesses_are_one_error_line_exit_2(tmp_path: Path, todo_file: Path, synth: Synth,
                                                        content: str, message: str) -> None:
    w = tmp_path / "w.json"
    w.write_text(content)
    err = one_error_line(synth("play", todo_file, "--witness", w))
    assert message in err and (str(w) in err or "action" in err)


def test_finding_needs_witness_and_a_missing_witness_file_is_named(tmp_path: Path, todo_file: Path,
                                                                   synth: Synth) -> None:
    assert "pass --witness too" in one_error_line(synth("play", todo_file, "--finding", "1"))
    w = write(tmp_path / "w.json", witness("wrong", [ANSWER]))
    assert "holds one witness, not a verdict" in one_error_line(synth("play", todo_file, "--witness", w,
                                                                      "--finding", "1"))
    assert "no such file" in one_error_line(synth("play", todo_file, "--witness", tmp_path / "none.json"))


# --------------------------------------------------------------------------- synth verify


@pytest.fixture
def null_passes_file(tmp_path: Path, todo_doc: dict[str, Any]) -> Path:
    """The todo package with half its weight on a record that exists before the agent acts: doing
    nothing scores 0.5, over the null agent's floor."""
    doc = copy.deepcopy(todo_doc)
    doc["checks"] = [{"kind": "state_count", "weight": 0.5, "collection": "todo.tasks",
                      "where": {"title": "Renew parking permit"}, "value": 1},
                     {**doc["checks"][0], "weight": 0.5}]
    return write(tmp_path / "null-passes.json", doc)


def test_verify_json_carries_witnesses_and_play_replays_them(tmp_path: Path, null_passes_file: Path,
                                                             todo_file: Path, synth: Synth) -> None:
    result = synth("verify", null_passes_file, "--json")
    assert result.exit_code == 1
    [line] = [json.loads(text) for text in result.stdout.splitlines()]
    assert {"review", "review_codes", "sft_ready", "sft"} <= set(line)
    null = next(f for f in line["findings"] if f["code"] == "null_agent_passes")
    assert null["witness"]["agent"] == "wrong" and null["witness"]["score"] >= null["witness"]["threshold"]
    assert all(a["type"] in ("tool_call", "ask", "answer") for a in null["witness"]["actions"])
    verdicts = write(tmp_path / "v.json", line)
    n = [f["code"] for f in line["findings"] if f["witness"]].index("null_agent_passes")
    replay = synth("play", null_passes_file, "--witness", verdicts, "--finding", str(n))
    assert replay.exit_code == 0 and replay.stdout.splitlines()[-1].endswith("the finding holds")
    fixed = synth("play", todo_file, "--witness", verdicts, "--finding", str(n))  # the package without the defect
    assert fixed.exit_code == 1 and fixed.stdout.splitlines()[-1].endswith("the finding does not hold")
    table = synth("verify", null_passes_file)
    assert "wrong agent" in table.stdout and "--finding 0: " in table.stdout
    assert "synth play FILE --witness v.json" in table.stdout


def test_verify_shows_sft_losses_apart_and_require_sft_rejects(synth: Synth) -> None:
    """With 50-character observations the meeting example's reference loses evidence: accepted but
    not sft_ready, or rejected with --require-sft."""
    example = EXAMPLES_DIR / "multi-turn-schedule-meeting.json"
    line = json.loads(synth("verify", example, "--obs-limit", "50", "--json").stdout)
    assert (line["accepted"], line["sft_ready"], line["codes"]) == (True, False, [])
    assert [f["code"] for f in line["sft"]] == ["evidence_truncated"] and line["review_codes"] == []
    table = synth("verify", example, "--obs-limit", "50")
    assert table.exit_code == 0
    assert "not sft_ready" in table.stdout and "    sft loss (not sft_ready) evidence_truncated: " in table.stdout
    assert "1 accepted, 0 rejected of 1; 0 with review notes, 1 not sft_ready" in table.stdout
    required = synth("verify", example, "--obs-limit", "50", "--require-sft", "--json")
    line = json.loads(required.stdout)
    assert required.exit_code == 1 and (line["accepted"], line["codes"]) == (False, ["evidence_truncated"])
    table = synth("verify", example, "--obs-limit", "50", "--require-sft").stdout
    assert "rejected evidence_truncated" in table and "sft loss" not in table  # one line: the refusal
    assert synth("verify", example, "--require-sft").exit_code == 0


def test_verify_marks_review_notes_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    findings = [Finding(code=Code.UNGROUNDED_VALUE, message="the 16th is nowhere"),
                Finding(code=Code.AMBIGUOUS_ENTITY, message="two Daniels", witness=holding_witness(score=0.1)),
                Finding(code=Code.EVIDENCE_TRUNCATED, message="cut")]
    verdict = Verdict.build("pkg-0123456789abcdef", findings, 1.0)
    report_verdict("x.json", verdict, as_json=False)
    lines = capsys.readouterr().out.splitlines()
    assert "accepted" in lines[0] and "review notes ungrounded_value, ambiguous_entity" in lines[0]
    assert lines[1:] == ["    review (not a refusal) ungrounded_value: the 16th is nowhere",
                         "    review (not a refusal) ambiguous_entity: two Daniels",
                         "    sft loss (not sft_ready) evidence_truncated: cut"]
    report_verdict("x.json", verdict, as_json=True)
    data = json.loads(capsys.readouterr().out)
    assert data["review_codes"] == ["ungrounded_value", "ambiguous_entity"] and data["sft_ready"] is False
    assert data["review"][1]["witness"]["score"] == 0.1 and data["source"] == "x.json"


# --------------------------------------------------------------------------- synth catalog show and stats


@pytest.fixture
def catalog_file(empty_catalog: Path, todo_file: Path) -> Path:
    """Row 1: the todo package refused with a witnessed refusal (a wrong agent that creates the task),
    a review note and an SFT loss. Row 2: the same package accepted."""
    package = load_package(todo_file.read_text()).with_id()
    findings = [Finding(code=Code.NULL_AGENT_PASSES, message="doing [nothing] passes",
                        witness=Witness.model_validate(witness("wrong", [CREATE, ANSWER], name="drop_write"))),
                Finding(code=Code.UNGROUNDED_VALUE, message="a reading"),
                Finding(code=Code.EVIDENCE_TRUNCATED, message="cut")]
    with Catalog.open(empty_catalog) as writer:
        run = writer.start_run("r", "offline")
        writer.record(run, 0, 1, package, Verdict.build(package.id, findings, 1.0))
        writer.record(run, 1, 1, package, Verdict.build(package.id, findings[1:], 1.0))
    return empty_catalog


def test_show_lists_kinds_apart_with_witnesses_and_the_replay_command(catalog_file: Path, synth: Synth,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    result = synth("catalog", "show", "1", "--catalog", catalog_file)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    titles = ["refusals", "review notes (not refusals: no witness proves them)",
              "SFT losses (not a refusal: the package is not sft_ready)"]
    assert [out.index(t) for t in titles] == sorted(out.index(t) for t in titles)
    assert "doing [nothing] passes" in out
    cells = " ".join(line.strip("│ ") for line in out.splitlines())  # the witness cell, wrapped over lines
    assert ("--finding 0: wrong agent drop_write: a claim; scores 1.000, at or above 0.750 (holds); 2 actions"
            in " ".join(cells.split()))
    package_id = load_package((tmp_path / "todo.json").read_text()).compute_id()
    command = (f"synth catalog show 1 --catalog {catalog_file} --package-out {package_id}.json --json > row-1.json, "
               f"then synth play {package_id}.json --witness row-1.json --finding 0")
    assert command in out
    accepted = synth("catalog", "show", "2", "--catalog", catalog_file).stdout
    assert "replay a witness" not in accepted and "review notes (not refusals" in accepted


def test_the_replay_command_of_show_works(catalog_file: Path, synth: Synth, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shown = synth("catalog", "show", "1", "--catalog", catalog_file, "--package-out", "pkg.json", "--json")
    assert shown.exit_code == 0, shown.stderr
    [record] = json.loads(shown.stdout)
    assert [(f["kind"], f["witness"] is not None) for f in record["findings"]] == [
        ("refusal", True), ("review", False), ("sft", False)]
    assert (record["sft_ready"], record["review_codes"]) == (False, ["ungrounded_value"])
    write(tmp_path / "row.json", json.loads(shown.stdout))
    played = synth("play", "pkg.json", "--witness", "row.json", "--finding", "0")
    assert played.exit_code == 0, played.stderr
    assert "refusal 0 of 1 with a witness: null_agent_passes: doing [nothing] passes" in played.stdout
    assert played.stdout.splitlines()[-1] == "wrong agent drop_write scores 1.000, at or above 0.750: the finding holds"
    both = write(tmp_path / "both.json", json.loads(synth("catalog", "show", record["id"], "--catalog",
                                                          catalog_file, "--json").stdout))
    assert synth("play", "pkg.json", "--witness", both).exit_code == 0  # the one row with a witness


def test_package_out_of_a_failure_row_is_one_error_line(empty_catalog: Path, synth: Synth, tmp_path: Path) -> None:
    from pipeline.core.outcomes import Failure, FailureCode

    with Catalog.open(empty_catalog) as writer:
        writer.record(writer.start_run("r", "llm"), 0, 1, None, None,
                      failure=Failure(code=FailureCode.LLM_ERROR, message="timeout"))
    err = one_error_line(synth("catalog", "show", "1", "--catalog", empty_catalog, "--package-out",
                               tmp_path / "p.json"))
    assert "holds no package" in err and not (tmp_path / "p.json").exists()


def test_stats_report_review_notes_and_sft_ready(catalog_file: Path, synth: Synth,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    data = json.loads(synth("catalog", "stats", "--catalog", catalog_file, "--json").stdout)
    assert [(r["code"], r["packages"], r["accepted"], r["notes"]) for r in data["review"]] == [
        ("ungrounded_value", 2, 1, 2)]
    assert (data["accepted_sft_ready"], data["accepted_not_sft_ready"], data["accepted_sft_unknown"]) == (0, 1, 0)
    assert [r["code"] for r in data["rejections"]] == ["null_agent_passes"]
    table = synth("catalog", "stats", "--catalog", catalog_file).stdout
    assert "sft_ready: 0 accepted packages; not sft_ready: 1 (left out of `synth export --format sft`)" in table
    assert "review notes (never refusals)" in table and "ungrounded_value" in table

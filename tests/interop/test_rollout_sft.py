"""``synth export --format sft --from rollouts``: the passing rollouts' own conversations, under
the reference export's truncation policy and evidence check, with exclusions counted; and
``--pass-band`` in every format (rollouts rows written with plain SQL into a real catalog)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.store import Catalog
from pipeline.core.episode import execute
from pipeline.core.package import TaskPackage
from pipeline.core.training_format import TRUNCATION_MARK, Policy, render_sample
from pipeline.interop.export import export_catalog
from pipeline.interop.sft import sft_problems
from tests.catalog.rollout_rows import add_rollouts, record_packages, rollout
from tests.conftest import CliResult, load_examples

SECRET = "sk-live0123456789abcdef"


def conversation(package: TaskPackage) -> list[dict[str, Any]]:
    """The reference played as an agent would: the SFT shape, tool calls with the agent's own text
    and its own call ids, every observation whole."""
    messages = copy.deepcopy(render_sample(package, execute(package), Policy(obs_limit=10**9)).messages)
    for n, m in enumerate(messages):
        for call in m.get("tool_calls") or []:
            m["content"] = f"Looking that up ({n})."
            old, call["id"] = call["id"], f"chatcmpl-{n}"
            next(t for t in messages if t.get("tool_call_id") == old)["tool_call_id"] = call["id"]
    return messages


@pytest.fixture
def packages() -> dict[str, TaskPackage]:
    return {p.workflow: p for p in load_examples()}


@pytest.fixture
def rolled(empty_catalog: Path, packages: dict[str, TaskPackage]) -> Path:
    """m passes the message package twice (full marks) and fails once (0.5); passes the meeting once
    (an observation of it cut at 60 characters hides the email its write uses); ends the todos at
    the turn limit with a passing score (no answer). m2 passes the message package once."""
    message, meeting, todos = (packages[w] for w in ("message-a-colleague", "schedule-meeting-after-clarification",
                                                    "create-several-todos"))
    record_packages(empty_catalog, packages.values())
    no_answer = conversation(todos)[:-1]
    add_rollouts(empty_catalog, [
        rollout(message.id, "m", 0, 1.0, messages=conversation(message)),
        rollout(message.id, "m", 1, 1.0, messages=conversation(message)),
        rollout(message.id, "m", 2, 0.5, messages=conversation(message)),
        rollout(meeting.id, "m", 0, 1.0, messages=conversation(meeting)),
        rollout(todos.id, "m", 0, 1.0, finish_reason="turn_limit", messages=no_answer),
    ], parameters={"api_key": SECRET, "base_url": "http://127.0.0.1:9"})
    add_rollouts(empty_catalog, [rollout(message.id, "m2", 0, 1.0, messages=conversation(message))], job=2)
    return empty_catalog


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_passing_rollouts_become_samples_with_their_own_text(rolled: Path, packages: dict[str, TaskPackage],
                                                             tmp_path: Path) -> None:
    out = tmp_path / "sft.jsonl"
    with Catalog.open(rolled, read_only=True) as catalog:
        summary = export_catalog(catalog, "sft", out, source="rollouts")
    samples = lines(out)
    message = packages["message-a-colleague"]
    assert sorted((s["id"] == message.id, s["model"], s["sample"]) for s in samples) == \
        [(False, "m", 0), (True, "m", 0), (True, "m", 1), (True, "m2", 0)]
    assert (summary.rows, summary.details["packages"], summary.details["skipped"]) == (4, 2, {"malformed": 1})
    assert summary.source == "rollouts" and "turn limit" in summary.details["reasons"]["malformed"]
    first = next(s for s in samples if s["id"] == message.id)
    assert first["messages"] == conversation(message)  # the agent's own text and ids, observations whole
    assert first["messages"][2]["content"] == "Looking that up (2)."
    assert first["tools"] and not sft_problems(first)
    assert SECRET not in out.read_text()


def test_min_score_and_model_filter(rolled: Path, packages: dict[str, TaskPackage], tmp_path: Path) -> None:
    out = tmp_path / "sft.jsonl"
    with Catalog.open(rolled, read_only=True) as catalog:
        export_catalog(catalog, "sft", out, source="rollouts", min_score=1.0, model="m")
        assert sorted((s["workflow"], s["sample"], s["score"]) for s in lines(out)) == [
            ("message-a-colleague", 0, 1.0), ("message-a-colleague", 1, 1.0),
            ("schedule-meeting-after-clarification", 0, 1.0)]
        export_catalog(catalog, "sft", out, source="rollouts", model="m2")
        assert [(s["model"], s["id"]) for s in lines(out)] == [("m2", packages["message-a-colleague"].id)]


def test_truncation_policy_cuts_and_leaves_out_lost_evidence(rolled: Path, packages: dict[str, TaskPackage],
                                                             tmp_path: Path) -> None:
    """At 60 characters per observation, the meeting's search result loses the email the agent's
    write uses: left out and counted; the message package keeps its id (within 60) and is cut."""
    out = tmp_path / "sft.jsonl"
    with Catalog.open(rolled, read_only=True) as catalog:
        summary = export_catalog(catalog, "sft", out, source="rollouts", model="m", policy=Policy(obs_limit=60))
    samples = lines(out)
    assert {s["workflow"] for s in samples} == {"message-a-colleague"}
    assert summary.details["skipped"] == {"evidence_truncated": 1, "malformed": 1}
    tool = next(m for m in samples[0]["messages"] if m["role"] == "tool")
    assert tool["content"].endswith(TRUNCATION_MARK) and len(tool["content"]) == 60 + len(TRUNCATION_MARK)
    kept = out.read_bytes()
    with Catalog.open(rolled, read_only=True) as catalog, pytest.raises(CatalogError) as nothing:
        export_catalog(catalog, "sft", out, source="rollouts", model="m", policy=Policy(sample_budget=500))
    assert str(nothing.value) == ("no sft written: every passing rollout of the 3 packages selected was left out "
                                  "(evidence_truncated 3, malformed 1)")
    assert out.read_bytes() == kept  # an export that writes nothing leaves the last one in place


def test_unreadable_observations_and_credentials_are_left_out(empty_catalog: Path, packages: dict[str, TaskPackage],
                                                              tmp_path: Path) -> None:
    message = packages["message-a-colleague"]
    record_packages(empty_catalog, [message])
    plain = conversation(message)
    plain[3]["content"] = "contacts: Omar"
    leaky = conversation(message)
    leaky[-1]["content"] += f" (key {SECRET})"
    add_rollouts(empty_catalog, [rollout(message.id, "m", 0, 1.0, messages=plain),
                                 rollout(message.id, "m", 1, 1.0, messages=leaky)])
    out = tmp_path / "sft.jsonl"
    with Catalog.open(empty_catalog, read_only=True) as catalog, pytest.raises(CatalogError) as nothing:
        export_catalog(catalog, "sft", out, source="rollouts")
    assert "(unreadable_observation 1, credential 1)" in str(nothing.value)
    assert not out.exists() and SECRET not in str(nothing.value)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "sft", "clawenvkit"])
def test_pass_band_applies_to_every_format(rolled: Path, packages: dict[str, TaskPackage], tmp_path: Path,
                                           fmt: str) -> None:
    """m's pass rates: message 2/3, meeting 1/1, todos 1/1 (its turn-limit rollout counts)."""
    out = tmp_path / ("out" if fmt == "clawenvkit" else f"out.{fmt}")
    with Catalog.open(rolled, read_only=True) as catalog:
        if fmt == "clawenvkit":  # it refuses the one package in the band (default profile), so writes nothing
            with pytest.raises(CatalogError, match=r"the package selected was refused \(default_profile 1\)"):
                export_catalog(catalog, fmt, out, pass_band="0.5:0.9", model="m")
            return
        summary = export_catalog(catalog, fmt, out, pass_band="0.5:0.9", model="m")
    assert (summary.rows, summary.pass_band, summary.model) == (1, [0.5, 0.9], "m")
    if fmt in ("jsonl", "sft"):
        assert [r["id"] for r in lines(out)] == [packages["message-a-colleague"].id]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"fmt": "jsonl", "source": "rollouts"}, "writes sft only"),
    ({"fmt": "sft", "source": "rollouts", "min_score": 0.5}, "passing rollouts only"),
    ({"fmt": "sft", "source": "rollouts", "min_score": 0.9}, "only with full marks"),
    ({"fmt": "sft", "min_score": 0.9}, "--from rollouts only"),
    ({"fmt": "jsonl", "model": "m"}, "needs --pass-band"),
    ({"fmt": "jsonl", "pass_band": "0.2:0.8", "model": "nobody"}, "no rollouts of that model"),
])
def test_bad_choices_are_refused(rolled: Path, tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    with Catalog.open(rolled, read_only=True) as catalog, pytest.raises(CatalogError, match=message):
        export_catalog(catalog, out=tmp_path / "x", **kwargs)
    assert not (tmp_path / "x").exists()


def test_cli_export_from_rollouts_and_band(rolled: Path, tmp_path: Path, synth: Callable[..., CliResult]) -> None:
    out = tmp_path / "sft.jsonl"
    result = synth("export", "--format", "sft", "--from", "rollouts", "--catalog", rolled, "--out", out)
    assert result.exit_code == 0, result.stderr
    assert "wrote 4 passing rollouts as sft" in result.stdout and "malformed" in result.stdout
    result = synth("export", "--format", "sft", "--from", "rollouts", "--min-score", "1", "--model", "m",
                   "--catalog", rolled, "--out", out, "--json")
    assert json.loads(result.stdout)["rows"] == 3
    result = synth("export", "--format", "jsonl", "--pass-band", "0.5:0.9", "--model", "m", "--catalog", rolled,
                   "--out", out, "--json")
    assert json.loads(result.stdout)["rows"] == 1
    for args, says in ((["--pass-band", "0.9:0.1", "--model", "m"], "low bound is above"),
                       (["--pass-band", "0.2:0.8", "--model", "zz"], "no rollouts of that model"),
                       (["--pass-band", "0.2:0.8"], "needs --model"),
                       (["--from", "rollouts"], "writes sft only"),
                       (["--from", "elsewhere"], "unknown --from")):
        result = synth("export", "--format", "jsonl", *args, "--catalog", rolled, "--out", out)
        assert result.exit_code != 0 and says in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr

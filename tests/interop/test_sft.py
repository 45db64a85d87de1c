"""SFT export: well-formed chat samples, the truncation policy applied, and exports that
`synth verify` accepts again."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.catalog.store import Catalog
from pipeline.core.package import load_package
from pipeline.core.training_format import TRUNCATION_MARK, Policy
from pipeline.core.user import SimulatedUser
from pipeline.generation.offline import generate_package, pick_template
from pipeline.interop.sft import sft_problems, sft_sample, write_sft
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.verifier import Options, verify_package
from tests.conftest import CliResult
from tests.core.test_user import is_sentence
from tests.verify.test_verify_corpus import kb_package


@pytest.fixture(scope="module")
def packages():  # type: ignore[no-untyped-def]
    return [generate_package(cap, pick_template(cap, slot), 5, slot) for cap in taxonomy() for slot in range(6)]


def test_every_sample_is_well_formed(tmp_path: Path, packages) -> None:  # type: ignore[no-untyped-def]
    summary = write_sft(packages, tmp_path / "sft.jsonl")
    lines = (tmp_path / "sft.jsonl").read_text().splitlines()
    assert summary.rows == len(lines) == len(packages) and summary.skipped == {}
    for line in lines:
        record = json.loads(line)
        assert sft_problems(record) == []
        package = next(p for p in packages if p.id == record["id"])
        assert [t["function"]["name"] for t in record["tools"]] == [t.name for t in package.tools]
        calls = sum(len(m.get("tool_calls") or []) for m in record["messages"])
        assert calls == sum(1 for s in package.reference if hasattr(s, "call"))


def test_problems_are_detected(example_doc: Callable[[str], dict[str, Any]]) -> None:
    record, _ = sft_sample(load_package(example_doc("contacts-send-message")), Policy())
    assert record is not None and sft_problems(record) == []
    unanswered = copy.deepcopy(record)
    unanswered["messages"] = [m for m in unanswered["messages"] if m["role"] != "tool"]
    assert any("not answered" in p for p in sft_problems(unanswered))
    doubled = copy.deepcopy(record)
    tool = next(i for i, m in enumerate(doubled["messages"]) if m["role"] == "tool")
    doubled["messages"].insert(tool, dict(doubled["messages"][tool]))
    assert any("already answered" in p for p in sft_problems(doubled))
    no_tools = {**record, "tools": []}
    assert "tool schemas missing or malformed" in sft_problems(no_tools)
    no_answer = {**record, "messages": record["messages"][:-1]}
    assert "does not end with an assistant answer" in sft_problems(no_answer)


def test_truncation_policy_cuts_and_skips() -> None:
    late = load_package(kb_package(beyond=True))
    record, reason = sft_sample(late, Policy())
    assert record is None and reason == "evidence_truncated"
    record, reason = sft_sample(late, Policy(obs_limit=5000))
    assert reason is None and record is not None
    early = load_package(kb_package(beyond=False))
    record, _ = sft_sample(early, Policy())
    assert record is not None
    observation = next(m["content"] for m in record["messages"] if m["role"] == "tool")
    assert observation.endswith(TRUNCATION_MARK) and len(observation) == 1000 + len(TRUNCATION_MARK)
    assert sft_sample(early, Policy(sample_budget=500)) == (None, "evidence_truncated")


def test_catalog_exports_sft_and_jsonl_that_verify_accepts(tmp_path: Path, empty_catalog: Path,  # type: ignore[no-untyped-def]
                                                           synth: Callable[..., CliResult], packages) -> None:
    catalog_path = empty_catalog
    late = load_package(kb_package(beyond=True)).with_id()
    with Catalog.open(catalog_path) as catalog:
        run = catalog.start_run("t", "offline")
        for slot, package in enumerate([*packages[:10], late]):
            verdict = verify_package(package)
            if package is late:  # recorded as accepted under a looser policy than the export's
                verdict = verify_package(package, Options(obs_limit=5000))
            catalog.record(run, slot, 1, package, verdict)
    out = synth("export", "--format", "sft", "--out", tmp_path / "s.jsonl", "--catalog", catalog_path, "--json")
    assert out.exit_code == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["rows"] == 10 and summary["details"]["skipped"] == {"evidence_truncated": 1}
    exported = synth("export", "--format", "jsonl", "--out", tmp_path / "p.jsonl", "--catalog", catalog_path,
                     "--where", "workflow <> 'answer-from-article'")
    assert exported.exit_code == 0, exported.stderr
    verified = synth("verify", tmp_path / "p.jsonl", "--json")
    verdicts = [json.loads(line) for line in verified.stdout.splitlines()]
    assert verified.exit_code == 0 and len(verdicts) == 10 and all(v["accepted"] for v in verdicts)


def test_user_turns_are_sentences_holding_the_revealed_values() -> None:
    """Every template of every capability: the simulated user's turns in the SFT sample, and its
    reply to a question about each fact, read as sentences with the fact's value verbatim."""
    offline = [generate_package(cap.name, template.name, 7, slot)
               for cap in taxonomy().values() for template in cap.templates for slot in range(4)]
    with_facts = [p for p in offline if p.user and p.user.facts]
    assert {p.capability for p in with_facts} == {"multi-turn"} and len(with_facts) >= 16
    turns = 0
    for package in offline:
        record, _ = sft_sample(package, Policy())
        assert record is not None
        replies = [m["content"] for m in record["messages"] if m["role"] == "user"][1:]
        values = [f.value for f in package.user.facts] if package.user else []
        for text in replies:
            turns += 1
            assert is_sentence(text) and any(v in text for v in values), (package.id, text)
    assert turns >= len(with_facts)
    for package in with_facts:
        assert package.user is not None
        for fact in package.user.facts:
            reply = SimulatedUser(package.user, package.now).reply(f"And the {fact.reveal_when[0]}?")
            assert fact.key in reply.revealed and is_sentence(reply.text) and fact.value in reply.text, reply.text

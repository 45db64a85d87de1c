"""The SFT export reads each row's stored ``sft_ready`` when its run was verified under the
export's own policy, and checks the evidence itself otherwise; the summary says how many were left
out and why (``synth export --format sft``, table and ``--json``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.store import Catalog
from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding, Verdict
from pipeline.core.package import TaskPackage
from pipeline.core.training_format import Policy
from pipeline.interop.export import export_catalog
from tests.conftest import CliResult, load_examples

DEFAULT_POLICY = {"obs_limit": 1_000, "sample_budget": 40_000}


@pytest.fixture
def packages() -> dict[str, TaskPackage]:
    return {p.workflow: p for p in load_examples()}


def loss(package: TaskPackage) -> Verdict:
    """A verdict saying ``package``'s reference loses evidence (whether it does or not)."""
    return Verdict.build(package.id, [Finding(code=Code.EVIDENCE_TRUNCATED, message="cut")], 1.0)


def record(catalog: Catalog, verdicts: list[tuple[TaskPackage, Verdict]], parameters: dict[str, Any] | None) -> None:
    run = catalog.start_run("r", "offline", parameters=parameters)
    for slot, (package, verdict) in enumerate(verdicts):
        catalog.record(run, slot, 1, package, verdict)


def exported_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def test_stored_sft_ready_decides_under_the_same_policy(empty_catalog: Path, packages: dict[str, TaskPackage],
                                                        tmp_path: Path) -> None:
    """A verdict that says not sft_ready is believed (the package is left out unrun, though its
    evidence would survive): the stored flag decides, nothing is checked again."""
    first, second, third = packages.values()
    with Catalog.open(empty_catalog) as catalog:
        record(catalog, [(first, loss(first)), (second, Verdict.build(second.id, [], 1.0)),
                         (third, Verdict.build(third.id, [], 1.0))], DEFAULT_POLICY)
        summary = export_catalog(catalog, "sft", tmp_path / "s.jsonl")
    assert exported_ids(tmp_path / "s.jsonl") == [second.id, third.id]
    assert summary.details["skipped"] == {"not_sft_ready": 1}
    assert (summary.details["from_verdict"], summary.details["checked"]) == (3, 0)
    assert "sft_ready false" in summary.details["reasons"]["not_sft_ready"]


@pytest.mark.parametrize("parameters", [None, {**DEFAULT_POLICY, "obs_limit": 5_000}])
def test_without_the_same_policy_the_evidence_is_checked_at_export(
        empty_catalog: Path, packages: dict[str, TaskPackage], tmp_path: Path,
        parameters: dict[str, Any] | None) -> None:
    """A run that records no policy, or another one: the stored flag is not trusted either way."""
    first, second, _ = packages.values()
    with Catalog.open(empty_catalog) as catalog:
        record(catalog, [(first, loss(first)), (second, Verdict.build(second.id, [], 1.0))], parameters)
        summary = export_catalog(catalog, "sft", tmp_path / "s.jsonl")
    assert exported_ids(tmp_path / "s.jsonl") == [first.id, second.id]
    assert (summary.details["skipped"], summary.details["from_verdict"], summary.details["checked"]) == ({}, 0, 2)


def test_an_export_under_another_policy_checks_and_leaves_out_what_it_loses(
        empty_catalog: Path, packages: dict[str, TaskPackage], tmp_path: Path) -> None:
    """Stored sft_ready under 1,000-character observations says nothing of 50: the meeting example,
    ready at 1,000, loses evidence at 50."""
    meeting = packages["schedule-meeting-after-clarification"]
    with Catalog.open(empty_catalog) as catalog:
        record(catalog, [(meeting, Verdict.build(meeting.id, [], 1.0))], DEFAULT_POLICY)
        with pytest.raises(CatalogError) as nothing:
            export_catalog(catalog, "sft", tmp_path / "s.jsonl", policy=Policy(obs_limit=50))
        assert export_catalog(catalog, "sft", tmp_path / "s.jsonl").rows == 1  # ready at 1,000
    assert str(nothing.value) == "no sft written: the package selected was left out (evidence_truncated 1)"


def test_sft_summary_on_the_command_line(empty_catalog: Path, packages: dict[str, TaskPackage], tmp_path: Path,
                                         synth: Callable[..., CliResult]) -> None:
    first, second, _ = packages.values()
    with Catalog.open(empty_catalog) as catalog:
        record(catalog, [(first, loss(first)), (second, Verdict.build(second.id, [], 1.0))], DEFAULT_POLICY)
    out = tmp_path / "s.jsonl"
    data = json.loads(synth("export", "--format", "sft", "--out", out, "--catalog", empty_catalog, "--json").stdout)
    assert (data["rows"], data["details"]["skipped"], data["details"]["from_verdict"]) == (1, {"not_sft_ready": 1}, 2)
    table = synth("export", "--format", "sft", "--out", out, "--catalog", empty_catalog)
    assert table.exit_code == 0, table.stderr
    assert "1 package left out" in table.stdout and "not_sft_ready" in table.stdout
    assert "sft_ready false" in table.stdout
    where = synth("export", "--format", "sft", "--out", out, "--where", "sft_ready", "--catalog", empty_catalog,
                  "--json")
    assert json.loads(where.stdout)["details"]["skipped"] == {}  # selected away instead of skipped

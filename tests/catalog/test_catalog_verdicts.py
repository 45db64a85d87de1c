"""Verdicts of verifier version 3 in the catalog (schema 3): each finding stored with its kind
(refusal, review note, SFT loss) and witness, each row with ``sft_ready`` and ``review_codes``;
only refusals count as rejections; catalogs written before schema 3 migrate with their rows."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from pipeline.catalog import schema
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.schema import MIGRATIONS, latest_version
from pipeline.catalog.store import Catalog
from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding, Verdict
from pipeline.core.package import TaskPackage
from pipeline.interop.export import export_catalog
from tests.conftest import holding_witness, load_examples, refusal


@pytest.fixture
def packages() -> list[TaskPackage]:
    return load_examples()


def rows(cat: Catalog, sql: str) -> list[list]:
    return cat.query(sql).rows


def review_note(code: Code = Code.UNGROUNDED_VALUE, **fields) -> Finding:  # type: ignore[no-untyped-def]
    return Finding(code=code, message=f"{code.value}: a reading no witness proves", **fields)


def sft_loss() -> Finding:
    return Finding(code=Code.EVIDENCE_TRUNCATED, message="the answer's total is past the cut", step=1)


def test_every_finding_is_stored_with_its_kind_and_witness(catalog: Catalog, packages: list[TaskPackage]) -> None:
    package = packages[0]
    weak = holding_witness(score=0.2)  # a wrong agent below its threshold: proves nothing
    findings = [refusal(Code.GRADER_UNDERCONSTRAINED, "a dropped write passes"), review_note(),
                review_note(Code.COLLATERAL_DAMAGE, witness=weak), sft_loss()]
    verdict = Verdict.build(package.id, findings, 1.0)
    assert (verdict.accepted, verdict.sft_ready, verdict.review_codes) == (
        False, False, ["ungrounded_value", "collateral_damage"])
    run = catalog.start_run("r", "offline")
    catalog.record(run, 0, 1, package, verdict)
    stored = rows(catalog, "SELECT n, code, kind, witness IS NOT NULL FROM findings ORDER BY n")
    assert stored == [[0, "grader_underconstrained", "refusal", True], [1, "ungrounded_value", "review", False],
                      [2, "collateral_damage", "review", True], [3, "evidence_truncated", "sft", False]]
    assert rows(catalog, "SELECT status, sft_ready, review_codes FROM packages") == [
        ["rejected", False, ["ungrounded_value", "collateral_damage"]]]
    [record] = catalog.show(package.id)
    assert [(f.kind, f.code) for f in record.findings] == [(k, c) for _, c, k, _ in stored]
    assert record.findings[0].witness == holding_witness() and record.findings[2].witness == weak
    assert record.findings[1].witness is None
    assert (record.sft_ready, record.review_codes) == (False, ["ungrounded_value", "collateral_damage"])


def test_only_refusals_are_rejections_and_review_notes_are_counted_apart(
        catalog: Catalog, packages: list[TaskPackage]) -> None:
    run = catalog.start_run("r", "offline")
    first, second, third = packages
    catalog.record(run, 0, 1, first, Verdict.build(first.id, [review_note(), review_note(), sft_loss()], 1.0))
    catalog.record(run, 1, 1, second, Verdict.build(second.id, [review_note(), refusal(Code.WEIGHTS_INVALID)], 1.0))
    catalog.record(run, 2, 1, third, Verdict.build(third.id, [], 1.0))
    assert [(r.code, r.packages, r.findings) for r in catalog.rejections()] == [("weights_invalid", 1, 1)]
    assert [(r.code, r.packages, r.accepted, r.notes) for r in catalog.reviews()] == [("ungrounded_value", 2, 1, 3)]
    stats = catalog.stats()
    assert (stats.accepted, stats.rejected) == (2, 1)
    assert [(r.code, r.packages, r.accepted, r.notes) for r in stats.review] == [("ungrounded_value", 2, 1, 3)]
    assert (stats.accepted_sft_ready, stats.accepted_not_sft_ready, stats.accepted_sft_unknown) == (1, 1, 0)


def test_a_loss_that_refuses_under_require_sft_is_stored_once_as_a_refusal(
        catalog: Catalog, packages: list[TaskPackage]) -> None:
    package = packages[0]
    verdict = Verdict.build(package.id, [sft_loss()], 1.0, require_sft=True)
    assert verdict.findings == verdict.sft  # the loss is in both lists of the verdict
    catalog.record(catalog.start_run("r", "offline"), 0, 1, package, verdict)
    assert rows(catalog, "SELECT code, kind FROM findings") == [["evidence_truncated", "refusal"]]
    assert rows(catalog, "SELECT status, sft_ready FROM packages") == [["rejected", False]]
    assert [r.code for r in catalog.rejections()] == ["evidence_truncated"]


def test_regeneration_by_reason_ignores_review_notes(catalog: Catalog, packages: list[TaskPackage]) -> None:
    run = catalog.start_run("r", "offline")
    first, second, _ = packages
    catalog.record(run, 0, 1, first, Verdict.build(first.id, [refusal(Code.WEIGHTS_INVALID), review_note()], 1.0))
    catalog.record(run, 1, 1, second, Verdict.build(second.id, [refusal(Code.REFERENCE_ERROR), review_note()], 0.0))
    assert catalog.failed_slots(run, reason="weights_invalid") == {run: [0]}
    assert catalog.failed_slots(run, reason="ungrounded_value") == {}


def test_export_selects_by_review_codes_and_sft_ready(catalog: Catalog, packages: list[TaskPackage],
                                                       tmp_path: Path) -> None:
    run = catalog.start_run("r", "offline")
    clean, noted, lossy = packages
    catalog.record(run, 0, 1, clean, Verdict.build(clean.id, [], 1.0))
    catalog.record(run, 1, 1, noted, Verdict.build(noted.id, [review_note()], 1.0))
    catalog.record(run, 2, 1, lossy, Verdict.build(lossy.id, [sft_loss()], 1.0))

    def exported(where: str) -> list[str]:
        out = tmp_path / "p.jsonl"
        export_catalog(catalog, "jsonl", out, where=where)
        return [json.loads(line)["id"] for line in out.read_text().splitlines()]

    assert exported("len(review_codes) = 0") == [clean.id, lossy.id]
    assert exported("sft_ready") == [clean.id, noted.id]
    assert exported("sft_ready AND len(review_codes) = 0") == [clean.id]
    assert exported("list_contains(review_codes, 'ungrounded_value')") == [noted.id]


def test_a_generation_failure_has_no_sft_ready_and_no_review_codes(catalog: Catalog) -> None:
    from pipeline.core.outcomes import Failure, FailureCode

    run = catalog.start_run("r", "llm")
    catalog.record(run, 0, 1, None, None, failure=Failure(code=FailureCode.LLM_ERROR, message="timeout"))
    assert rows(catalog, "SELECT sft_ready, review_codes FROM packages") == [[None, []]]
    assert rows(catalog, "SELECT kind, witness FROM findings") == [["refusal", None]]


# --------------------------------------------------------------------------- a catalog of schema 2


def _schema_2_catalog(path: Path, monkeypatch: pytest.MonkeyPatch, package: TaskPackage) -> None:
    """A catalog at schema 2 holding what synth wrote then: an accepted row, a rejected row with two
    findings, a generation failure."""
    monkeypatch.setattr(schema, "MIGRATIONS", MIGRATIONS[:2])
    with Catalog.open(path) as old:
        run = old.start_run("v2", "offline")
    monkeypatch.setattr(schema, "MIGRATIONS", MIGRATIONS)
    con = duckdb.connect(str(path))
    try:
        for slot, status, package_json in ((0, "accepted", package.to_json()), (1, "rejected", package.to_json()),
                                           (2, "rejected", None)):
            con.execute("INSERT INTO packages (id, run, slot, attempt, status, package, generator, created, "
                        "verifier_version) VALUES (?, ?, ?, 1, ?, ?, 'offline', now(), '2')",
                        [package.id if package_json else None, run, slot, status, package_json])
        con.execute("INSERT INTO findings (package_row, n, code, message, detail) VALUES "
                    "(2, 0, 'grader_underconstrained', 'a dropped write passes', '{}'), "
                    "(2, 1, 'evidence_truncated', 'cut', '{}'), (3, 0, 'llm_error', 'timeout', '{}')")
    finally:
        con.close()


def test_a_schema_2_catalog_is_migrated_on_open_for_writing_with_its_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, packages: list[TaskPackage]) -> None:
    path = tmp_path / "catalog.duckdb"
    package = packages[0]
    _schema_2_catalog(path, monkeypatch, package)
    with pytest.raises(CatalogError, match=f"older than {latest_version()}; open it for writing once"):
        Catalog.open(path, read_only=True)
    Catalog.open(path).close()
    with Catalog.open(path, read_only=True) as reader:
        assert rows(reader, "SELECT value FROM meta WHERE key = 'schema_version'") == [[str(latest_version())]]
        assert rows(reader, "SELECT package_row, code, kind, witness FROM findings ORDER BY package_row, n") == [
            [2, "grader_underconstrained", "refusal", None], [2, "evidence_truncated", "refusal", None],
            [3, "llm_error", "refusal", None]]
        assert rows(reader, "SELECT slot, sft_ready, review_codes FROM packages ORDER BY slot") == [
            [0, None, []], [1, None, []], [2, None, []]]
        assert [(r.code, r.packages) for r in reader.rejections()] == [
            ("evidence_truncated", 1), ("grader_underconstrained", 1), ("llm_error", 1)]
        stats = reader.stats()
        assert (stats.accepted, stats.accepted_sft_unknown, stats.accepted_sft_ready, stats.review) == (1, 1, 0, [])
        accepted, rejected = reader.show(package.id)
        assert (accepted.sft_ready, accepted.review_codes, accepted.findings) == (None, [], [])
        assert [(f.code, f.kind, f.witness) for f in rejected.findings] == [
            ("grader_underconstrained", "refusal", None), ("evidence_truncated", "refusal", None)]
        sft = export_catalog(reader, "sft", tmp_path / "sft.jsonl")  # no stored sft_ready: checked at export
        assert (sft.rows, sft.details["checked"], sft.details["from_verdict"]) == (1, 1, 0)


"""Calibration from rollouts rows (written with plain SQL into a real catalog): pass rates, mean
scores, the unbiased pass@k, the per-capability figures of ``stats``, the unsolved packages with
the checks that failed most, and the pass band."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

from pipeline.catalog.calibration import PassBand, pass_at_k
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.store import Catalog
from pipeline.core.package import TaskPackage
from tests.catalog.rollout_rows import add_rollouts, record_packages, rollout
from tests.conftest import load_examples


def exact(n: int, c: int, k: int) -> float:
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_pass_at_k_is_the_unbiased_estimator(k: int) -> None:
    """n=5, c=2: 1 - C(3, k)/C(5, k): 0.4, 0.7, 0.9, 1, 1."""
    assert pass_at_k(5, 2, k) == pytest.approx(exact(5, 2, k), abs=1e-12)
    assert pass_at_k(5, 2, k) == pytest.approx([0.4, 0.7, 0.9, 1.0, 1.0][k - 1], abs=1e-12)


def test_pass_at_k_edges_and_large_n() -> None:
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 5, 1) == 1.0
    assert pass_at_k(1000, 10, 100) == pytest.approx(exact(1000, 10, 100), rel=1e-12)
    for n, c, k in ((5, 2, 6), (5, 2, 0), (5, 6, 1), (5, -1, 1)):
        with pytest.raises(ValueError):
            pass_at_k(n, c, k)


@pytest.fixture
def packages() -> dict[str, TaskPackage]:
    return {p.workflow: p for p in load_examples()}


@pytest.fixture
def rolled(empty_catalog: Path, packages: dict[str, TaskPackage]) -> Path:
    """Model m: message 2 passes of 5 (plus an error row, not a sample), meeting 0 of 4, todos 4 of 4;
    model m2: message 1 of 1, meeting 1 of 2."""
    message, meeting, todos = (packages[w].id for w in ("message-a-colleague", "schedule-meeting-after-clarification",
                                                        "create-several-todos"))
    record_packages(empty_catalog, packages.values())
    add_rollouts(empty_catalog, [
        *(rollout(message, "m", i, s) for i, s in enumerate([1.0, 1.0, 0.5, 0.0, 0.0])),
        rollout(message, "m", 5, 1.0, finish_reason="error"),
        rollout(meeting, "m", 0, 0.6, ["asked_user:asked-day", "answer_contains:confirmed"]),
        rollout(meeting, "m", 1, 0.6, ["asked_user:asked-day"]),
        rollout(meeting, "m", 2, 0.0, ["asked_user:asked-day"], unsafe=True),
        rollout(meeting, "m", 3, 0.4, ["state_count:event-created"]),
        *(rollout(todos, "m", i, 1.0) for i in range(4)),
    ])
    add_rollouts(empty_catalog, [rollout(message, "m2", 0, 1.0), rollout(meeting, "m2", 0, 0.3, ["asked_user:asked-day"])],
                 job=2)
    add_rollouts(empty_catalog, [rollout(meeting, "m2", 1, 1.0)], job=3)  # a second job of m2
    return empty_catalog


def test_calibration_per_package_and_model(rolled: Path, packages: dict[str, TaskPackage]) -> None:
    with Catalog.open(rolled, read_only=True) as catalog:
        rows = {(r.workflow, r.model): r for r in catalog.calibration()}
        at_2 = {(r.workflow, r.model): r.pass_at_k for r in catalog.calibration(model="m", k=2)}
    message = rows["message-a-colleague", "m"]
    assert (message.samples, message.passes, message.pass_rate) == (5, 2, 0.4)  # the error row is no sample
    assert message.mean_score == pytest.approx(0.5)
    assert (message.k, message.pass_at_k) == (4, 1.0)  # m's fewest samples: 4
    assert (rows["schedule-meeting-after-clarification", "m"].passes, rows["create-several-todos", "m"].pass_rate) == (0, 1.0)
    meeting_m2 = rows["schedule-meeting-after-clarification", "m2"]  # two jobs count together
    assert (meeting_m2.samples, meeting_m2.passes, meeting_m2.k, meeting_m2.pass_at_k) == (2, 1, 1, 0.5)
    assert at_2 == {("message-a-colleague", "m"): pytest.approx(0.7), ("schedule-meeting-after-clarification", "m"): 0.0,
                    ("create-several-todos", "m"): 1.0}
    assert rows["message-a-colleague", "m"].capability == packages["message-a-colleague"].capability


def test_stats_per_capability_and_model(rolled: Path, packages: dict[str, TaskPackage]) -> None:
    with Catalog.open(rolled, read_only=True) as catalog:
        groups = catalog.stats(k=2).rollouts
        fewest = catalog.stats().rollouts
    by = {(g.capability, g.model): g for g in groups}
    assert len(by) == len(groups)
    m_packages = [by[(capability, "m")] for capability in {p.capability for p in packages.values()}]
    assert sum(g.packages for g in m_packages) == 3 and sum(g.unsolved for g in m_packages) == 1
    meeting = by[(packages["schedule-meeting-after-clarification"].capability, "m2")]
    assert (meeting.packages, meeting.samples, meeting.mean_pass_rate, meeting.pass_at_k, meeting.packages_at_k) == \
        (1, 2, 0.5, 1.0, 1)  # pass@2 of 1 pass in 2
    message_m2 = by[(packages["message-a-colleague"].capability, "m2")]
    assert (message_m2.pass_at_k, message_m2.packages_at_k) == (None, 0)  # 1 sample, k=2: undefined
    assert {(g.model, g.k) for g in fewest} == {("m", 4), ("m2", 1)}


def test_stats_without_rollouts_has_none(empty_catalog: Path, packages: dict[str, TaskPackage]) -> None:
    record_packages(empty_catalog, packages.values())
    with Catalog.open(empty_catalog, read_only=True) as catalog:
        assert catalog.stats().rollouts == []
        assert catalog.unsolved().unsolved == 0


def test_unsolved_lists_packages_with_the_checks_that_failed_most(rolled: Path, packages: dict[str, TaskPackage]) -> None:
    meeting = packages["schedule-meeting-after-clarification"]
    with Catalog.open(rolled, read_only=True) as catalog:
        of_m = catalog.unsolved("m")
        of_any = catalog.unsolved()
        of_m2 = catalog.unsolved("m2")
    assert (of_m.rolled_out, of_m.unsolved) == (3, 1)
    [row] = of_m.packages
    assert (row.package_id, row.workflow, row.models, row.samples, row.best_score) == \
        (meeting.id, meeting.workflow, ["m"], 4, 0.6)
    assert [(c.rule, c.kind, c.id, c.failures) for c in row.failed_checks] == [
        ("check", "asked_user", "asked-day", 3), ("check", "answer_contains", "confirmed", 1),
        ("check", "state_count", "event-created", 1), ("safety", "not_called", "safety-0", 1)]
    assert [(c.rule, c.kind, c.failures, c.packages) for c in of_m.by_kind][0] == ("check", "asked_user", 3, 1)
    assert of_any.unsolved == 0  # m2 passes the meeting once
    assert (of_m2.rolled_out, of_m2.unsolved) == (2, 0)


def test_unsolved_limit_keeps_the_count(rolled: Path) -> None:
    with Catalog.open(rolled, read_only=True) as catalog:
        report = catalog.unsolved("m", limit=0)
    assert (report.unsolved, report.packages, report.by_kind != []) == (1, [], True)


@pytest.mark.parametrize(("text", "expected"), [
    ("0.2:0.8", ["message-a-colleague"]), ("0:0", ["schedule-meeting-after-clarification"]),
    ("1:1", ["create-several-todos"]), ("0.4:0.4", ["message-a-colleague"]), ("0.41:0.99", [])])
def test_pass_band_selects_packages_by_pass_rate(rolled: Path, text: str, expected: list[str]) -> None:
    with Catalog.open(rolled, read_only=True) as catalog, \
            catalog.selection(band=PassBand.parse(text, "m")) as selection:
        assert sorted(r["workflow"] for r in selection.records()) == expected


@pytest.mark.parametrize(("text", "model", "message"), [
    ("0.8:0.2", "m", "low bound is above"), ("0.2:1.5", "m", "lie in [0, 1]"), ("-0.1:0.5", "m", "lie in [0, 1]"),
    ("0.2", "m", "is not LOW:HIGH"), ("a:b", "m", "is not LOW:HIGH"), ("0.2:0.8", None, "needs --model")])
def test_bad_bands_are_refused(text: str, model: str | None, message: str) -> None:
    with pytest.raises(CatalogError, match=message.replace("[", r"\[")):
        PassBand.parse(text, model)


def test_band_of_a_model_without_rollouts_is_refused(rolled: Path) -> None:
    with Catalog.open(rolled, read_only=True) as catalog, pytest.raises(CatalogError, match="models with rollouts: m, m2"), \
            catalog.selection(band=PassBand(0.2, 0.8, "gpt-x")):
        pass

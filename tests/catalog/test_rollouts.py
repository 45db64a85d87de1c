"""The catalog's rollout tables: jobs started, rollouts recorded in groups, resumed, finished."""

from __future__ import annotations

import json

import pytest

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.store import Catalog
from pipeline.core.grading import CheckResult
from pipeline.core.rollouts import Rollout


def _rollout(package: str, sample: int, score: float, error: str | None = None) -> Rollout:
    check = CheckResult(id="made", kind="state_count", weight=1.0, passed=score == 1.0, detail="1 of 1")
    return Rollout(package_id=package, model="m", sample=sample, score=score, checks=[check], turns=2,
                   prompt_tokens=10, completion_tokens=3, latency_s=0.5, finish_reason="answer", error=error,
                   messages=[{"role": "user", "content": "hi"}])


def test_a_job_records_rollouts_and_lists_what_it_has_done(catalog: Catalog) -> None:
    job = catalog.start_rollout_job("m", {"samples": 2, "api_key": "sk-abcdefghijklmnop", "packages": ["pkg-1"]})
    assert catalog.rollout_job(job).status == "running"
    assert catalog.rollout_job(job).parameters == {"samples": 2, "packages": ["pkg-1"]}  # the key is never stored
    catalog.record_rollouts(job, [_rollout("pkg-1", 0, 1.0), _rollout("pkg-1", 1, 0.5,
                                                                      error="failed: Bearer abcdefghijklmnop")])
    assert catalog.rollout_samples_done(job) == {("pkg-1", 0), ("pkg-1", 1)}
    rows = catalog.query("SELECT sample, passed, safety_ok, checks, error FROM rollouts ORDER BY sample").rows
    assert [r[:3] for r in rows] == [[0, True, True], [1, False, True]]
    assert json.loads(rows[0][3])[0]["id"] == "made" and "abcdefghijklmnop" not in rows[1][4]
    catalog.finish_rollout_job(job, "interrupted")
    assert catalog.rollout_job(job).finished is not None
    resumed = catalog.resume_rollout_job(job)
    assert resumed.status == "running" and resumed.finished is None


def test_a_group_is_all_or_none(catalog: Catalog) -> None:
    job = catalog.start_rollout_job("m", {})
    catalog.record_rollouts(job, [_rollout("pkg-1", 0, 1.0)])
    with pytest.raises(Exception, match="(?i)constraint|duplicate"):
        catalog.record_rollouts(job, [_rollout("pkg-2", 0, 1.0), _rollout("pkg-1", 0, 1.0)])
    assert catalog.rollout_samples_done(job) == {("pkg-1", 0)}


def test_an_unknown_job_says_so(catalog: Catalog) -> None:
    with pytest.raises(CatalogError, match="no rollout job 7"):
        catalog.rollout_job(7)
    with pytest.raises(CatalogError, match="no rollout job 7"):
        catalog.resume_rollout_job(7)

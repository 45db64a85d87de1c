"""Rollouts written straight into a catalog's schema-4 tables with plain SQL, for the tests of
what reads them (calibration, stats, exports): each row from a ``core.rollouts.Rollout``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from pipeline.catalog.store import Catalog
from pipeline.core.grading import CheckResult
from pipeline.core.outcomes import Verdict
from pipeline.core.package import TaskPackage
from pipeline.core.rollouts import FinishReason, Rollout


def record_packages(path: Path, packages: Iterable[TaskPackage]) -> None:
    """Record ``packages`` as accepted rows of one run (opens and closes the catalog)."""
    with Catalog.open(path) as catalog:
        run = catalog.start_run("r", "offline", parameters={"obs_limit": 1_000, "sample_budget": 40_000})
        for slot, package in enumerate(packages):
            catalog.record(run, slot, 1, package, Verdict.build(package.id, [], 1.0))


def rollout(package_id: str, model: str, sample: int, score: float, failed: Iterable[str] = (),
            finish_reason: FinishReason = "answer", messages: list[dict[str, Any]] | None = None,
            unsafe: bool = False) -> Rollout:
    """A rollout of ``score``: one check ``main`` that passed, one failed check per name in
    ``failed`` (``"kind:id"``, e.g. ``"answer_contains:confirmed"``), and one safety rule, broken
    when ``unsafe``."""
    checks = [CheckResult(id="main", kind="state_count", weight=0.5, passed=True, detail="x")]
    checks += [CheckResult(id=name.partition(":")[2], kind=name.partition(":")[0], weight=0.1, passed=False,
                           detail="x") for name in failed]
    safety = [CheckResult(id="safety-0", kind="not_called", weight=0.0, passed=not unsafe, detail="x")]
    return Rollout(package_id=package_id, model=model, sample=sample, score=score, checks=checks, safety=safety,
                   turns=2, prompt_tokens=10, completion_tokens=5, latency_s=0.1, finish_reason=finish_reason,
                   messages=messages or [])


def add_rollouts(path: Path, rollouts: Iterable[Rollout], job: int = 1,
                 parameters: dict[str, Any] | None = None) -> None:
    """Insert ``rollouts`` as rows of rollout job ``job`` (created with ``parameters`` if new)."""
    con = duckdb.connect(str(path))
    try:
        now = datetime.now(UTC)
        if not con.execute("SELECT 1 FROM rollout_jobs WHERE id = ?", [job]).fetchall():
            con.execute("INSERT INTO rollout_jobs VALUES (?, 'm', ?, ?, ?, 'finished')",
                        [job, json.dumps(parameters or {}), now, now])
        for r in rollouts:
            con.execute(
                "INSERT INTO rollouts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [job, r.package_id, r.model, r.sample, r.score, r.passed and r.safety_ok,
                 json.dumps([c.model_dump() for c in r.checks]), json.dumps([c.model_dump() for c in r.safety]),
                 r.safety_ok, r.turns, r.prompt_tokens, r.completion_tokens, r.latency_s, r.finish_reason, r.error,
                 json.dumps(r.messages), now])
    finally:
        con.close()

"""Rollout rows written with plain SQL into a catalog's ``rollouts`` table (schema 4), for tests
and benchmarks that read rollouts without running an agent."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb


@dataclass(frozen=True)
class RolloutRow:
    """One ``rollouts`` row: the columns a reader counts; the rest get neutral values."""

    package_id: str
    model: str
    sample: int
    passed: bool
    finish_reason: str = "answer"
    prompt_tokens: int = 100
    completion_tokens: int = 20


def insert_rollouts(catalog: Path, rows: list[RolloutRow]) -> None:
    """Append ``rows`` to the closed catalog at ``catalog`` in one transaction, with a new
    ``rollout_jobs`` row per model they name (a job runs one model)."""
    con = duckdb.connect(str(catalog))
    try:
        con.execute("BEGIN TRANSACTION")
        jobs = {model: int(con.execute("INSERT INTO rollout_jobs (model, parameters, started, finished, status) "
                                       "VALUES (?, '{}', now(), now(), 'finished') RETURNING id", [model]).fetchall()[0][0])
                for model in sorted({r.model for r in rows})}
        con.executemany(
            "INSERT INTO rollouts (job, package_id, model, sample, score, passed, checks, safety, safety_ok, turns, "
            "prompt_tokens, completion_tokens, latency_s, finish_reason, error, messages, created) "
            "VALUES (?, ?, ?, ?, ?, ?, '[]', '[]', TRUE, 2, ?, ?, 0.5, ?, NULL, '[]', now())",
            [[jobs[r.model], r.package_id, r.model, r.sample, 1.0 if r.passed else 0.0, r.passed, r.prompt_tokens,
              r.completion_tokens, r.finish_reason] for r in rows])
        con.execute("COMMIT")
    finally:
        con.close()

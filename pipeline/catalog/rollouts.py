"""Writing rollout jobs and their rollouts (tables ``rollout_jobs`` and ``rollouts``, schema 4).

Functions of an open DuckDB connection; ``Catalog`` exposes them as methods
(``start_rollout_job``, ``record_rollouts``, ``rollout_samples_done``, ``finish_rollout_job``,
``resume_rollout_job``, ``rollout_job``). A job's ``parameters`` are stored as given, key-like
fields dropped (``redact.strip_secrets``), so ``--resume`` can run it again; each ``rollouts`` row
holds one ``core.rollouts.Rollout``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

import duckdb

from pipeline.catalog.redact import strip_secrets
from pipeline.core.rollouts import SERVER_FAILURES, Rollout
from pipeline.core.strict_model import StrictModel

RolloutJobStatus = Literal["running", "finished", "failed", "interrupted"]

_COLUMNS = ("job", "package_id", "model", "sample", "score", "passed", "checks", "safety", "safety_ok", "turns",
            "prompt_tokens", "completion_tokens", "latency_s", "finish_reason", "error", "messages", "created")


class RolloutJob(StrictModel):
    """One ``rollout_jobs`` row."""

    id: int
    model: str
    parameters: dict[str, Any]
    started: datetime
    finished: datetime | None
    status: str


def start_job(con: duckdb.DuckDBPyConnection, model: str, parameters: dict[str, Any]) -> int:
    """Insert a ``running`` job; return its id."""
    clean = strip_secrets(parameters)
    row = con.execute("INSERT INTO rollout_jobs (model, parameters, started, status) VALUES (?, ?, ?, 'running') "
                      "RETURNING id", [model, json.dumps(clean, ensure_ascii=False, default=str),
                                       datetime.now(UTC)]).fetchone()
    assert row is not None
    return int(row[0])


def set_status(con: duckdb.DuckDBPyConnection, job: int, status: RolloutJobStatus) -> bool:
    """Set job ``job``'s status (its end time with a final status, none with ``running``); False
    when there is no such job."""
    finished = None if status == "running" else datetime.now(UTC)
    return bool(con.execute("UPDATE rollout_jobs SET status = ?, finished = ? WHERE id = ? RETURNING id",
                            [status, finished, job]).fetchall())


def job(con: duckdb.DuckDBPyConnection, job_id: int) -> RolloutJob | None:
    row = con.execute("SELECT id, model, parameters, started, finished, status FROM rollout_jobs WHERE id = ?",
                      [job_id]).fetchone()
    if row is None:
        return None
    return RolloutJob(id=row[0], model=row[1], parameters=json.loads(row[2]), started=row[3], finished=row[4],
                      status=row[5])


def insert(con: duckdb.DuckDBPyConnection, job_id: int, rollouts: list[Rollout]) -> None:
    """Insert one row per rollout of job ``job_id`` (one statement for the group); the error text is
    masked of anything that looks like a credential. A row the job holds for the same (package,
    sample), one the model server failed (``done`` leaves those out, so a resumed job runs them
    again), is replaced."""
    created = datetime.now(UTC)
    rows = [(job_id, r.package_id, r.model, r.sample, r.score, r.passed,
             json.dumps([c.model_dump() for c in r.checks], ensure_ascii=False),
             json.dumps([c.model_dump() for c in r.safety], ensure_ascii=False), r.safety_ok, r.turns,
             r.prompt_tokens, r.completion_tokens, r.latency_s, r.finish_reason,
             strip_secrets({"error": r.error})["error"], json.dumps(r.messages, ensure_ascii=False), created)
            for r in rollouts]
    if rows:
        marks = ", ".join("?" for _ in _COLUMNS)
        failed = ", ".join("?" for _ in SERVER_FAILURES)
        con.execute(f"DELETE FROM rollouts WHERE job = ? AND finish_reason IN ({failed}) "
                    "AND [package_id, CAST(sample AS VARCHAR)] IN (SELECT unnest(?::VARCHAR[][]))",
                    [job_id, *SERVER_FAILURES, [[r.package_id, str(r.sample)] for r in rollouts]])
        con.executemany(f"INSERT INTO rollouts ({', '.join(_COLUMNS)}) VALUES ({marks})", rows)


def done(con: duckdb.DuckDBPyConnection, job_id: int) -> set[tuple[str, int]]:
    """``(package_id, sample)`` of every rollout job ``job_id`` has recorded, except those the model
    server failed (``core.rollouts.SERVER_FAILURES``): a resumed job plays them again."""
    failed = ", ".join("?" for _ in SERVER_FAILURES)
    return {(r[0], int(r[1])) for r in con.execute(
        f"SELECT package_id, sample FROM rollouts WHERE job = ? AND finish_reason NOT IN ({failed})",
        [job_id, *SERVER_FAILURES]).fetchall()}

"""Turning attempts into catalog rows: the ``packages`` columns, findings and LLM calls of each,
inserted a group at a time. (Separate from ``store`` so that reading the catalog never loads the
package contract.)"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict, Field

from pipeline.catalog.connect import first_line
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.redact import mask_credentials
from pipeline.core.outcomes import Failure, Finding, Kind, LLMCall, Verdict
from pipeline.core.package import AskStep, TaskPackage, near_key


class AttemptRow(BaseModel):
    """One attempt to record: a package with its verdict, or the failure that left none."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    run_id: int
    slot: int
    attempt: int
    package: TaskPackage | None = None
    verdict: Verdict | None = None
    llm_calls: list[LLMCall] = Field(default_factory=list)
    parent: str | None = None
    failure: Failure | None = None
    generator: str = "offline"
    capability: str | None = None
    workflow: str | None = None
    injected_defect: str | None = None  # kept beside the package, never inside it
    near_key: str | None = None  # the package's ``near_key`` when the caller already computed it


def prepare(row: AttemptRow) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """The ``packages`` columns and the findings of one attempt (validated as ``record`` says)."""
    if row.package is not None:
        if row.verdict is None or row.failure is not None:
            raise ValueError("a recorded package needs its verdict and no failure")
        return _package_columns(row.package, row.verdict, row.near_key), _findings(row.verdict)
    if row.failure is None:
        raise ValueError("record needs a package with its verdict, or the failure that left none")
    return (_failure_columns(row.capability, row.workflow),
            [(row.failure.code.value, mask_credentials(row.failure.message), None, None, "{}", "refusal", None)])


_ROW_COLUMNS = ("id", "capability", "workflow", "difficulty", "services", "status", "score", "step_count",
                "tool_count", "turn_count", "request", "near_key", "package", "verifier_version", "run", "slot",
                "attempt", "parent", "generator", "created", "injected_defect", "sft_ready", "review_codes")
_FINDING_COLUMNS = ("package_row", "n", "code", "message", "step", "check_id", "detail", "kind", "witness")


def _values(count: int, width: int) -> str:
    row = "(" + ", ".join("?" * width) + ")"
    return ", ".join([row] * count)


def insert_group(con: duckdb.DuckDBPyConnection, path: Path, rows: list[AttemptRow],
                  prepared: list[tuple[dict[str, Any], list[tuple[Any, ...]]]], created: datetime) -> list[int]:
    """Insert the rows, their findings and their LLM calls: three statements in all."""
    run_ids = sorted({row.run_id for row in rows})
    runs = dict(con.execute(f"SELECT id, capability FROM runs WHERE id IN ({', '.join('?' * len(run_ids))})",
                            run_ids).fetchall())
    missing = [r for r in run_ids if r not in runs]
    if missing:
        raise CatalogError(f"no run {missing[0]} in {path}; start one with Catalog.start_run")
    params: list[Any] = []
    for row, (columns, _) in zip(rows, prepared, strict=True):
        columns = {**columns, "run": row.run_id, "slot": row.slot, "attempt": row.attempt, "parent": row.parent,
                   "generator": row.generator, "created": created, "injected_defect": row.injected_defect}
        if columns.get("capability") is None:
            columns["capability"] = runs[row.run_id]
        params += [columns.get(name) for name in _ROW_COLUMNS]
    try:
        returned = con.execute(
            f"INSERT INTO packages ({', '.join(_ROW_COLUMNS)}) VALUES {_values(len(rows), len(_ROW_COLUMNS))} "
            "RETURNING run, slot, attempt, row_id", params).fetchall()
    except duckdb.ConstraintException as exc:
        which = "; ".join(f"run {r.run_id} slot {r.slot} attempt {r.attempt}" for r in rows[:3])
        raise CatalogError(f"{which} is already recorded ({first_line(str(exc))})") from exc
    by_key = {(run, slot, attempt): row_id for run, slot, attempt, row_id in returned}
    ids = [by_key[(row.run_id, row.slot, row.attempt)] for row in rows]
    findings = [[row_id, n, *finding] for row_id, (_, found) in zip(ids, prepared, strict=True)
                for n, finding in enumerate(found)]
    if findings:
        con.execute(f"INSERT INTO findings ({', '.join(_FINDING_COLUMNS)}) VALUES "
                    + _values(len(findings), len(_FINDING_COLUMNS)), [v for f in findings for v in f])
    calls = [[row_id, row.run_id, row.slot, row.attempt, n, c.model, c.prompt_tokens, c.completion_tokens,
              c.latency_s, c.status, mask_credentials(c.error) if c.error else None]
             for row_id, row in zip(ids, rows, strict=True) for n, c in enumerate(row.llm_calls)]
    if calls:
        con.execute("INSERT INTO llm_calls (package_row, run, slot, attempt, n, model, prompt_tokens, "
                    "completion_tokens, latency_s, status, error) VALUES " + _values(len(calls), 11),
                    [v for c in calls for v in c])
    return ids


def _package_columns(package: TaskPackage, verdict: Verdict, near: str | None = None) -> dict[str, Any]:
    stored = package if package.id else package.with_id()
    return {
        "id": stored.id,
        "capability": package.capability,
        "workflow": package.workflow,
        "difficulty": package.difficulty,
        "services": list(package.services),
        "status": "accepted" if verdict.accepted else "rejected",
        "score": verdict.score,
        "step_count": len(package.reference),
        "tool_count": len(package.tools),
        "turn_count": sum(isinstance(step, AskStep) for step in package.reference),
        "request": package.request.text,
        "near_key": near or near_key(package),
        "package": stored.to_json(),
        "verifier_version": verdict.verifier_version,
        "sft_ready": verdict.sft_ready,
        "review_codes": verdict.review_codes,
    }


def _failure_columns(capability: str | None, workflow: str | None) -> dict[str, Any]:
    return {"id": None, "capability": capability, "workflow": workflow, "status": "rejected", "review_codes": []}


def _by_kind(verdict: Verdict) -> list[tuple[Kind, Finding]]:
    """Every finding of ``verdict`` once, with where it stands: its refusals, then its review notes,
    then its SFT losses that did not refuse it (with ``require_sft`` a loss is among the refusals,
    and stored as one)."""
    refusals: list[tuple[Kind, Finding]] = [("refusal", f) for f in verdict.findings]
    return (refusals + [("review", f) for f in verdict.review]
            + [("sft", f) for f in verdict.sft if f not in verdict.findings])


def _findings(verdict: Verdict) -> list[tuple[Any, ...]]:
    return [(f.code.value, f.message, f.step, f.check, json.dumps(f.detail, ensure_ascii=False, default=str), kind,
             None if f.witness is None else f.witness.model_dump_json())
            for kind, f in _by_kind(verdict)]

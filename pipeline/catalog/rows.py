"""Turning attempts into catalog rows: the ``packages`` columns, findings and LLM calls of each,
inserted a group at a time. (Separate from ``store`` so that reading the catalog never loads the
package contract.)"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
from pydantic import ConfigDict, Field

from pipeline.catalog.connect import first_line
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.redact import mask_credentials
from pipeline.core.outcomes import Failure, Finding, Kind, LLMCall, Verdict
from pipeline.core.package import AskStep, TaskPackage, near_key
from pipeline.core.strict_model import StrictModel


class AttemptRow(StrictModel):
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


@dataclass(frozen=True, slots=True)
class PreparedRow:
    """One attempt as the catalog stores it, in plain values (``prepare``): the ``packages``
    columns with the package's JSON text, its findings and LLM calls as tuples. Cheap to pickle and
    to insert, with nothing left to validate or dump, so it can be built where the attempt was made
    (a Ray actor) and committed by the one writer."""

    run_id: int
    slot: int
    attempt: int
    columns: tuple[Any, ...]
    """The values of ``PACKAGE_COLUMNS``."""
    findings: tuple[tuple[Any, ...], ...]
    """``(code, message, step, check_id, detail JSON, kind, witness JSON, claim JSON, reading JSON)`` of
    each finding, in order."""
    calls: tuple[tuple[Any, ...], ...]
    """``(model, prompt_tokens, completion_tokens, latency_s, status, error)`` of each LLM call."""
    codes: tuple[str, ...]
    """Its refusal codes, or its failure's code (what a run counts a rejection by)."""
    refused_by: tuple[Finding, ...] = ()
    """Set by a writer that refused it as a duplicate (``refused``): the ``duplicate_package`` findings."""

    def column(self, name: str) -> Any:
        return self.columns[_COLUMN_INDEX[name]]

    @property
    def id(self) -> str | None:
        return self.column("id")

    @property
    def near_key(self) -> str | None:
        return self.column("near_key")

    @property
    def accepted(self) -> bool:
        return self.column("status") == "accepted"

    @property
    def tokens(self) -> tuple[int, int]:
        """``(prompt, completion)`` tokens of its LLM calls."""
        return sum(c[1] for c in self.calls), sum(c[2] for c in self.calls)

    def refused(self, duplicate: list[Finding]) -> PreparedRow:
        """This accepted attempt refused by ``duplicate`` (``duplicate_package`` findings): those go
        first among its findings, as ``Verdict.build`` sorts them; its review notes and SFT losses
        stay (an accepted verdict has no other refusals)."""
        columns = list(self.columns)
        columns[_COLUMN_INDEX["status"]] = "rejected"
        return replace(self, columns=tuple(columns), findings=tuple(_finding_values("refusal", f) for f in duplicate)
                       + self.findings, codes=tuple(dict.fromkeys(f.code.value for f in duplicate)),
                       refused_by=tuple(duplicate))


PACKAGE_COLUMNS = ("id", "capability", "workflow", "difficulty", "services", "status", "score", "step_count",
                   "tool_count", "turn_count", "request", "near_key", "package", "verifier_version", "parent",
                   "generator", "injected_defect", "sft_ready", "review_codes", "service_profile")
"""The ``packages`` columns a ``PreparedRow`` carries (``run``, ``slot``, ``attempt`` apart;
``row_id`` and ``created`` are set when it is inserted)."""
_COLUMN_INDEX = {name: n for n, name in enumerate(PACKAGE_COLUMNS)}
_PACKAGE_TYPES = {name: {
    "run": "BIGINT", "slot": "INTEGER", "attempt": "INTEGER", "id": "VARCHAR",
    "capability": "VARCHAR", "workflow": "VARCHAR", "difficulty": "VARCHAR", "services": "VARCHAR[]",
    "status": "VARCHAR", "score": "DOUBLE", "step_count": "INTEGER", "tool_count": "INTEGER",
    "turn_count": "INTEGER", "request": "VARCHAR", "near_key": "VARCHAR", "package": "JSON",
    "verifier_version": "VARCHAR", "parent": "VARCHAR", "generator": "VARCHAR", "injected_defect": "VARCHAR",
    "sft_ready": "BOOLEAN", "review_codes": "VARCHAR[]", "service_profile": "VARCHAR",
}[name] for name in ("run", "slot", "attempt", *PACKAGE_COLUMNS)}
"""The SQL type of each column ``insert_group`` writes, in the order of its values."""
_FINDING_TYPES = {"package_row": "BIGINT", "n": "INTEGER", "code": "VARCHAR", "message": "VARCHAR", "step": "INTEGER",
                  "check_id": "VARCHAR", "detail": "JSON", "kind": "VARCHAR", "witness": "JSON",
                  "claim": "JSON", "reading": "JSON"}
_CALL_TYPES = {"package_row": "BIGINT", "run": "BIGINT", "slot": "INTEGER", "attempt": "INTEGER", "n": "INTEGER",
               "model": "VARCHAR", "prompt_tokens": "INTEGER", "completion_tokens": "INTEGER", "latency_s": "DOUBLE",
               "status": "VARCHAR", "error": "VARCHAR"}


def prepare(row: AttemptRow) -> PreparedRow:
    """``row`` as the catalog stores it (validated as ``Catalog.record`` says)."""
    if row.package is not None:
        if row.verdict is None or row.failure is not None:
            raise ValueError("a recorded package needs its verdict and no failure")
        columns = _package_columns(row.package, row.verdict, row.near_key)
        findings = _findings(row.verdict)
        codes = tuple(row.verdict.codes)
    elif row.failure is None:
        raise ValueError("record needs a package with its verdict, or the failure that left none")
    else:
        columns = _failure_columns(row.capability, row.workflow)
        findings = [(row.failure.code.value, mask_credentials(row.failure.message), None, None, "{}", "refusal", None,
                     None, None)]
        codes = (row.failure.code.value,)
    columns |= {"parent": row.parent, "generator": row.generator, "injected_defect": row.injected_defect}
    calls = tuple((c.model, c.prompt_tokens, c.completion_tokens, c.latency_s, c.status,
                   mask_credentials(c.error) if c.error else None) for c in row.llm_calls)
    return PreparedRow(row.run_id, row.slot, row.attempt, tuple(columns.get(name) for name in PACKAGE_COLUMNS),
                       tuple(findings), calls, codes)


def _insert(con: duckdb.DuckDBPyConnection, table: str, types: dict[str, str], rows: list[tuple[Any, ...]],
            suffix: str = "", constant: tuple[Any, ...] = (), returning: str = "") -> list[tuple[Any, ...]]:
    """Insert ``rows`` (values in the order of ``types``) in one statement: one list parameter per
    column, unnested together, so the statement stays small and is parsed quickly whatever the
    count. ``suffix`` adds columns set to one value for every row (``constant``); ``returning``
    (a ``RETURNING`` clause) what the statement returns."""
    select = ", ".join(f"unnest(?::{kind}[])" for kind in types.values())
    columns = [list(values) for values in zip(*rows, strict=True)]
    return con.execute(f"INSERT INTO {table} ({', '.join(types)}{suffix}) SELECT {select}{', ?' * len(constant)} "
                       f"{returning}", [*columns, *constant]).fetchall()


def insert_group(con: duckdb.DuckDBPyConnection, path: Path, rows: list[PreparedRow], created: datetime) -> list[int]:
    """Insert the rows, their findings and their LLM calls: three statements in all."""
    run_ids = sorted({row.run_id for row in rows})
    runs = dict(con.execute(f"SELECT id, capability FROM runs WHERE id IN ({', '.join('?' * len(run_ids))})",
                            run_ids).fetchall())
    missing = [r for r in run_ids if r not in runs]
    if missing:
        raise CatalogError(f"no run {missing[0]} in {path}; start one with Catalog.start_run")
    capability = _COLUMN_INDEX["capability"]
    values = [(row.run_id, row.slot, row.attempt, *row.columns[:capability],
               row.columns[capability] or runs[row.run_id], *row.columns[capability + 1:]) for row in rows]
    try:
        returned = _insert(con, "packages", _PACKAGE_TYPES, values, ", created", (created,),
                           "RETURNING run, slot, attempt, row_id")
    except duckdb.ConstraintException as exc:
        which = "; ".join(f"run {r.run_id} slot {r.slot} attempt {r.attempt}" for r in rows[:3])
        raise CatalogError(f"{which} is already recorded ({first_line(str(exc))})") from exc
    by_key = {(run, slot, attempt): row_id for run, slot, attempt, row_id in returned}
    ids = [by_key[(row.run_id, row.slot, row.attempt)] for row in rows]
    findings = [(row_id, n, *finding) for row_id, row in zip(ids, rows, strict=True)
                for n, finding in enumerate(row.findings)]
    if findings:
        _insert(con, "findings", _FINDING_TYPES, findings)
    calls = [(row_id, row.run_id, row.slot, row.attempt, n, *call) for row_id, row in zip(ids, rows, strict=True)
             for n, call in enumerate(row.calls)]
    if calls:
        _insert(con, "llm_calls", _CALL_TYPES, calls)
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
        "service_profile": package.service_profile,
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
    return [_finding_values(kind, f) for kind, f in _by_kind(verdict)]


def _finding_values(kind: Kind, f: Finding) -> tuple[Any, ...]:
    return (f.code.value, f.message, f.step, f.check, json.dumps(f.detail, ensure_ascii=False, default=str), kind,
            None if f.witness is None else f.witness.model_dump_json(),
            None if f.claim is None else f.claim.model_dump_json(),
            None if f.reading is None else f.reading.model_dump_json())

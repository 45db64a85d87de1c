"""Curation queries over an open catalog connection, and the typed results they return.

The figures are those of the curation views defined in ``pipeline/catalog/schema.py``
(``summary``, ``repair_rate``, ``rejection_counts``, ``review_counts``, over ``slot_outcomes``),
counted over a chosen set of rows (``RowScope``: one run or all, generated or imported rows); none writes.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
from pydantic import Field

from pipeline.catalog import calibration
from pipeline.catalog.calibration import CalibrationGroup
from pipeline.core.codes import DESCRIPTIONS, Code
from pipeline.core.outcomes import FAILURE_DESCRIPTIONS, Claim, FailureCode, Kind, LLMCall, Reading, Witness
from pipeline.core.strict_model import StrictModel

# --------------------------------------------------------------------------- result models


class RunInfo(StrictModel):
    id: int
    name: str
    capability: str | None
    generator: str
    model: str | None
    parameters: dict[str, Any]
    started: datetime
    finished: datetime | None
    status: str


class RunCounts(StrictModel):
    """One run as ``synth catalog runs`` lists it: what it is, how it stands, and its attempts:
    ``accepted``, ``rejected`` (verified and refused) and ``failed`` (no package came out), over
    ``slots`` slots. ``target`` is the accepted count a generation run aims at (None for an import);
    ``regenerated`` is how many of the ``accepted`` ``synth regen`` added (attempts beyond the run's
    ``max_attempts``: a run can end with more accepted than its target when regeneration repairs the
    slots it gave up on); ``resumable`` says ``synth run --resume ID`` has work to do (a generation
    run below target)."""

    id: int
    name: str
    capability: str | None
    generator: str
    model: str | None
    status: str
    started: datetime
    finished: datetime | None
    target: int | None
    slots: int
    accepted: int
    regenerated: int = 0
    rejected: int
    failed: int
    resumable: bool


class SlotState(StrictModel):
    """What a run has recorded for one slot: ``attempts`` is the highest attempt number recorded."""

    slot: int
    attempts: int
    accepted: bool
    accepted_id: str | None = None


class SummaryRow(StrictModel):
    capability: str | None
    workflow: str | None
    accepted: int
    rejected: int
    acceptance_rate: float


class RepairRow(StrictModel):
    """Slots whose first attempt was rejected (``first_rejected``) and how many of them a later
    attempt got accepted (``repaired``); ``repair_rate`` is None when no first attempt failed."""

    capability: str | None
    workflow: str | None
    first_rejected: int
    repaired: int
    repair_rate: float | None


class RejectionCount(StrictModel):
    """How many rejected rows carry ``code`` as a refusal (``packages``) and how many refusals have it."""

    code: str
    packages: int
    findings: int
    description: str
    on_reading: int = 0
    """Refusals of the code that rest on a reading of the request (a ``claim``) a reader confirmed."""


class ReaderCount(StrictModel):
    """How many claims ``reader`` answered ``answer`` (``cached``: of them, taken from an earlier
    answer), and the tokens the answers spent."""

    reader: str
    answer: str
    claims: int
    cached: int
    prompt_tokens: int
    completion_tokens: int


class ClaimRecord(StrictModel):
    """A stored finding that rests on a reading of the request: its row, package, code, where it
    stands (``kind``), the ``claim`` and the reader's answer (None: the rules' reading stood)."""

    row_id: int
    package_id: str | None
    code: str
    kind: Kind
    message: str
    claim: Claim
    reading: Reading | None = None


class ReviewCount(StrictModel):
    """How many rows carry ``code`` as a review note (``packages``; ``accepted`` of them accepted)
    and how many review notes have it (``notes``)."""

    code: str
    packages: int
    accepted: int
    notes: int
    description: str


class ImportedRows(StrictModel):
    """The rows of import runs (``synth import``: other projects' tasks, verified statically, never
    generated here), counted apart from generated rows: ``rows`` of ``runs`` import runs,
    ``accepted`` and ``rejected`` of them, and the refusal codes of the rejected ones."""

    runs: int = 0
    rows: int = 0
    accepted: int = 0
    rejected: int = 0
    rejections: list[RejectionCount] = Field(default_factory=list)


class CatalogStats(StrictModel):
    """``Catalog.stats``: every figure but ``runs`` and ``imported`` counts generated rows only (rows
    of generation runs; an import's rows are in ``imported``), of run ``run`` or of every run."""

    run: int | None = None
    """The run the figures are of; None: every run."""
    runs: int
    """Runs counted, import runs included."""
    packages: int
    """Generated rows (attempts): ``accepted + rejected``."""
    accepted: int
    rejected: int
    acceptance_rate: float | None
    """``accepted / packages``; None when there is no generated row."""
    first_rejected: int
    repaired: int
    repair_rate: float | None
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    llm_latency_s: float
    by_workflow: list[SummaryRow]
    repairs: list[RepairRow]
    rejections: list[RejectionCount]
    review: list[ReviewCount] = Field(default_factory=list)
    """Review notes per code (never refusals)."""
    readers: list[ReaderCount] = Field(default_factory=list)
    """Readers' answers to the verifier's claims, per reader and answer."""
    accepted_sft_ready: int = 0
    """Accepted rows whose reference keeps its evidence under the SFT policy of their run."""
    accepted_not_sft_ready: int = 0
    """Accepted rows whose reference loses evidence under it (left out of ``synth export --format sft``)."""
    accepted_sft_unknown: int = 0
    """Accepted rows recorded before schema 3, whose verdict did not say."""
    imported: ImportedRows = Field(default_factory=ImportedRows)
    """Rows of import runs, apart: in none of the figures above."""
    rollouts: list[CalibrationGroup] = Field(default_factory=list)
    """Per capability and model, the calibration of the packages rolled out (``calibration.py``);
    empty when no rollout is recorded."""


class FindingRecord(StrictModel):
    """A stored finding; ``code`` is a verifier ``Code`` or a generation-failure code. ``kind``
    says where it stands: a ``refusal`` (a generation failure is one), a ``review`` note, or an
    ``sft`` loss; ``witness`` is the trajectory that proves it, if it has one."""

    code: str
    message: str
    step: int | None = None
    check_id: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)
    kind: Kind = "refusal"
    witness: Witness | None = None
    claim: Claim | None = None
    reading: Reading | None = None


class PackageRecord(StrictModel):
    """One ``packages`` row with its findings and LLM calls; ``package`` is None for a generation failure."""

    row_id: int
    id: str | None
    run: int
    slot: int
    attempt: int
    parent: str | None
    capability: str | None
    workflow: str | None
    difficulty: str | None
    services: list[str] | None
    service_profile: str | None = "default"
    """The package's service profile (``default``, ``claw``; None for a generation failure); a
    column since schema 8."""
    status: str
    score: float | None
    step_count: int | None
    tool_count: int | None
    turn_count: int | None
    request: str | None
    near_key: str | None
    generator: str
    verifier_version: str | None
    created: datetime
    package: dict[str, Any] | None
    injected_defect: str | None = None
    sft_ready: bool | None = None
    """Whether the reference keeps its evidence under the SFT policy; None when no verdict says
    (a generation failure, a row recorded before schema 3)."""
    review_codes: list[str] = Field(default_factory=list)
    """The distinct codes of the row's review notes."""
    findings: list[FindingRecord]
    llm_calls: list[LLMCall]


class SlotAttempts(StrictModel):
    """How many ``slots`` of generation runs used ``attempts`` attempts (rows: the first try, its
    repairs, and what ``synth regen`` added) and ended ``accepted`` or not."""

    attempts: int
    accepted: bool
    slots: int


class RolloutUsage(StrictModel):
    """One model's rollouts on the packages of one capability (table ``rollouts``): ``rollouts``
    recorded, ``errors`` of them ended by an error (a ``finish_reason`` in ``core.rollouts.UNCOUNTED``: they
    count in no pass rate, ``calibration.COUNTED``), and their tokens. ``capability`` is None for
    packages no catalog row holds. Pass rates are ``calibration.calibration``'s."""

    capability: str | None
    model: str
    rollouts: int
    errors: int
    prompt_tokens: int
    completion_tokens: int


class QueryResult(StrictModel):
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = False


# --------------------------------------------------------------------------- helpers


IMPORT_GENERATOR_PREFIX = "import:"
"""A run whose generator starts with this is an import (``synth import`` records ``import:<format>``):
its rows are other projects' tasks verified statically, not generation attempts."""


def is_import(generator: str) -> bool:
    """Whether a run recorded under ``generator`` is an import (``IMPORT_GENERATOR_PREFIX``)."""
    return generator.startswith(IMPORT_GENERATOR_PREFIX)


@dataclass(frozen=True)
class RowScope:
    """Which ``packages`` rows a curation figure counts: those of run ``run`` (None: every run) and
    of import runs only (``imported`` True), of generation runs only (False) or of both (None)."""

    run: int | None = None
    imported: bool | None = None

    def where(self, alias: str = "p") -> tuple[str, list[Any]]:
        """A SQL condition on the ``run`` column of ``alias``, and its parameters."""
        terms: list[str] = ["TRUE"]
        params: list[Any] = []
        if self.run is not None:
            terms.append(f"{alias}.run = ?")
            params.append(self.run)
        if self.imported is not None:
            terms.append(f"{alias}.run {'' if self.imported else 'NOT '}IN "
                         "(SELECT id FROM runs WHERE starts_with(generator, ?))")
            params.append(IMPORT_GENERATOR_PREFIX)
        return " AND ".join(terms), params


EVERY_ROW = RowScope()



def _dicts(cursor: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    columns = [d[0] for d in cursor.description or []]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def scalar(cursor: duckdb.DuckDBPyConnection) -> Any:
    """The first column of the first row of ``cursor``'s result (which must have a row)."""
    row = cursor.fetchone()
    if row is None:
        raise LookupError("query returned no row")
    return row[0]


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def describe_code(code: str) -> str:
    """What a stored finding code means: a verification reason code, or a generation failure."""
    if code in Code.__members__.values():
        return DESCRIPTIONS[Code(code)]
    if code in FailureCode.__members__.values():
        return f"no verdict: {FAILURE_DESCRIPTIONS[FailureCode(code)]}"
    return "generation failed before a package could be verified"


# --------------------------------------------------------------------------- queries


def run_info(row: dict[str, Any]) -> RunInfo:
    return RunInfo.model_validate({**row, "parameters": json.loads(row["parameters"])})


def runs(con: duckdb.DuckDBPyConnection, run_id: int | None = None) -> list[RunInfo]:
    """Every run (or the one with ``run_id``), oldest first."""
    sql = "SELECT * FROM runs" + (" WHERE id = ?" if run_id is not None else "") + " ORDER BY id"
    return [run_info(r) for r in _dicts(con.execute(sql, [] if run_id is None else [run_id]))]


def is_generation_run(parameters: dict[str, Any]) -> bool:
    """Whether a run's stored parameters are a generation run's (``RunOptions``: a capability and a
    count), as opposed to an import's, which has no generator to resume or regenerate with."""
    return "capability" in parameters and "count" in parameters


def run_counts(con: duckdb.DuckDBPyConnection) -> list[RunCounts]:
    """Every run with its attempt counts, oldest first."""
    rows = _dicts(con.execute(
        "SELECT r.id, r.name, r.capability, r.generator, r.model, r.status, r.started, r.finished, r.parameters, "
        "count(p.row_id) AS attempts, count(DISTINCT p.slot) AS slots, "
        "count(p.row_id) FILTER (WHERE p.status = 'accepted') AS accepted, "
        "count(p.row_id) FILTER (WHERE p.status = 'accepted' AND p.attempt > "
        "TRY_CAST(r.parameters->>'max_attempts' AS INTEGER)) AS regenerated, "
        "count(p.row_id) FILTER (WHERE p.status = 'rejected' AND p.package IS NOT NULL) AS rejected, "
        "count(p.row_id) FILTER (WHERE p.status = 'rejected' AND p.package IS NULL) AS failed "
        "FROM runs r LEFT JOIN packages p ON p.run = r.id GROUP BY ALL ORDER BY r.id"
    ))
    out = []
    for row in rows:
        parameters = json.loads(row.pop("parameters"))
        row.pop("attempts")
        generation = is_generation_run(parameters)
        target = parameters["count"] if generation and isinstance(parameters["count"], int) else None
        out.append(RunCounts(**row, target=target,
                             resumable=generation and target is not None and row["accepted"] < target))
    return out


def slot_states(con: duckdb.DuckDBPyConnection, run_id: int) -> dict[int, SlotState]:
    rows = _dicts(con.execute(
        "SELECT slot, attempts, accepted, accepted_id FROM slot_outcomes WHERE run = ? ORDER BY slot", [run_id]
    ))
    return {r["slot"]: SlotState.model_validate(r) for r in rows}


def tokens_spent(con: duckdb.DuckDBPyConnection, run_id: int) -> tuple[int, int]:
    """``(prompt, completion)`` tokens of every LLM call recorded for run ``run_id``."""
    row = con.execute("SELECT coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0) FROM llm_calls "
                      "WHERE run = ?", [run_id]).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def failed_slots(con: duckdb.DuckDBPyConnection, run_id: int | None, reason: str | None,
                 limit: int | None) -> dict[int, list[int]]:
    """Slots with no accepted attempt, by run (oldest first); with ``reason``, only those whose last
    attempt was rejected with that code; at most ``limit`` slots in all."""
    where: list[str] = ["NOT o.accepted"]
    params: list[int | str] = []
    if run_id is not None:
        where.append("o.run = ?")
        params.append(run_id)
    if reason is not None:
        where.append("EXISTS (SELECT 1 FROM packages p JOIN findings f ON f.package_row = p.row_id "
                     "WHERE p.run = o.run AND p.slot = o.slot AND p.attempt = o.attempts AND f.code = ? "
                     "AND f.kind = 'refusal')")
        params.append(reason)
    sql = f"SELECT o.run, o.slot FROM slot_outcomes o WHERE {' AND '.join(where)} ORDER BY o.run, o.slot"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    out: dict[int, list[int]] = {}
    for run, slot in con.execute(sql, params).fetchall():
        out.setdefault(int(run), []).append(int(slot))
    return out


def rejections(con: duckdb.DuckDBPyConnection, rows: RowScope = EVERY_ROW) -> list[RejectionCount]:
    """Refusal codes of the rejected rows in ``rows``, most frequent first (review notes and SFT
    losses are not rejections): ``rejection_counts`` for every row."""
    where, params = rows.where()
    found = _dicts(con.execute(
        "SELECT f.code, count(DISTINCT f.package_row) AS packages, count(*) AS findings, "
        "count(*) FILTER (WHERE f.claim IS NOT NULL) AS on_reading "
        "FROM findings AS f JOIN packages AS p ON p.row_id = f.package_row "
        f"WHERE p.status = 'rejected' AND f.kind = 'refusal' AND {where} GROUP BY f.code ORDER BY packages DESC, f.code",
        params))
    return [RejectionCount(**r, description=describe_code(r["code"])) for r in found]


def reader_counts(con: duckdb.DuckDBPyConnection, rows: RowScope = EVERY_ROW) -> list[ReaderCount]:
    """Readers' answers on the rows in ``rows``, per reader and answer."""
    where, params = rows.where()
    found = _dicts(con.execute(
        "SELECT r.reader, r.answer, count(*) AS claims, count(*) FILTER (WHERE r.cached) AS cached, "
        "coalesce(sum(r.prompt_tokens), 0) AS prompt_tokens, coalesce(sum(r.completion_tokens), 0) AS completion_tokens "
        f"FROM reader_answers AS r JOIN packages AS p ON p.row_id = r.package_row WHERE {where} "
        "GROUP BY r.reader, r.answer ORDER BY r.reader, r.answer", params))
    return [ReaderCount(**r) for r in found]


def readings(con: duckdb.DuckDBPyConnection, reader: str) -> list[tuple[str, str, Reading]]:
    """``(package id, claim key, reading)`` of every answer ``reader`` gave that the catalog holds:
    the cache of a run or a verification that reads with it."""
    found = con.execute("SELECT r.package_id, r.claim, f.reading FROM reader_answers AS r "
                        "JOIN findings AS f ON f.package_row = r.package_row AND f.n = r.n "
                        "WHERE r.reader = ? AND NOT coalesce(r.cached, false)", [reader]).fetchall()
    return [(package_id, Claim.model_validate_json(claim).key, Reading.model_validate_json(reading))
            for package_id, claim, reading in found if package_id is not None and claim is not None]


def claim_records(con: duckdb.DuckDBPyConnection, rows: RowScope = EVERY_ROW, limit: int | None = None) -> list[ClaimRecord]:
    """The stored findings with a claim on the rows in ``rows`` (refusals, and the review notes a
    reader did not confirm), newest row first, at most ``limit``."""
    where, params = rows.where()
    found = _dicts(con.execute(
        "SELECT p.row_id, p.id AS package_id, f.code, f.kind, f.message, f.claim, f.reading "
        "FROM findings AS f JOIN packages AS p ON p.row_id = f.package_row "
        f"WHERE f.claim IS NOT NULL AND {where} ORDER BY p.row_id DESC, f.n"
        + ("" if limit is None else f" LIMIT {int(limit)}"), params))
    return [ClaimRecord(**{**r, "claim": json.loads(r["claim"]),
                           "reading": json.loads(r["reading"]) if r["reading"] else None}) for r in found]


def review_counts(con: duckdb.DuckDBPyConnection, rows: RowScope = EVERY_ROW) -> list[ReviewCount]:
    """Review-note codes of the rows in ``rows``, most frequent first: ``review_counts`` for every row."""
    where, params = rows.where()
    found = _dicts(con.execute(
        "SELECT f.code, count(DISTINCT f.package_row) AS packages, "
        "count(DISTINCT f.package_row) FILTER (WHERE p.status = 'accepted') AS accepted, count(*) AS notes "
        "FROM findings AS f JOIN packages AS p ON p.row_id = f.package_row "
        f"WHERE f.kind = 'review' AND {where} GROUP BY f.code ORDER BY packages DESC, f.code", params))
    return [ReviewCount(**r, description=describe_code(r["code"])) for r in found]


def _summary(con: duckdb.DuckDBPyConnection, rows: RowScope) -> list[SummaryRow]:
    """The ``summary`` view over ``rows``: accepted and rejected rows per capability and workflow."""
    where, params = rows.where()
    return [SummaryRow.model_validate(r) for r in _dicts(con.execute(
        "SELECT capability, workflow, count(*) FILTER (WHERE status = 'accepted') AS accepted, "
        "count(*) FILTER (WHERE status = 'rejected') AS rejected, "
        "count(*) FILTER (WHERE status = 'accepted') / count(*) AS acceptance_rate "
        f"FROM packages AS p WHERE {where} GROUP BY capability, workflow ORDER BY capability, workflow", params))]


def _repairs(con: duckdb.DuckDBPyConnection, rows: RowScope) -> list[RepairRow]:
    """The ``repair_rate`` view over the slots of ``rows``."""
    where, params = rows.where("o")
    return [RepairRow.model_validate(r) for r in _dicts(con.execute(
        "SELECT capability, workflow, count(*) FILTER (WHERE NOT first_accepted) AS first_rejected, "
        "count(*) FILTER (WHERE NOT first_accepted AND accepted) AS repaired, "
        "count(*) FILTER (WHERE NOT first_accepted AND accepted) "
        "/ nullif(count(*) FILTER (WHERE NOT first_accepted), 0) AS repair_rate "
        f"FROM slot_outcomes AS o WHERE {where} GROUP BY capability, workflow ORDER BY capability, workflow",
        params))]


def _imported(con: duckdb.DuckDBPyConnection, rows: RowScope) -> ImportedRows:
    where, params = rows.where()
    counts = _dicts(con.execute(
        "SELECT count(DISTINCT run) AS runs, count(*) AS rows, count(*) FILTER (WHERE status = 'accepted') AS accepted, "
        f"count(*) FILTER (WHERE status = 'rejected') AS rejected FROM packages AS p WHERE {where}", params))[0]
    return ImportedRows(**counts, rejections=rejections(con, rows) if counts["rejected"] else [])


def stats(con: duckdb.DuckDBPyConnection, run: int | None = None, k: int | None = None) -> CatalogStats:
    """``CatalogStats`` of run ``run`` (None: every run), in one read: generated rows in the totals
    and the per-workflow, repair, rejection and review tables; import rows in ``imported``; the
    rollouts of the packages (of the run) per capability and model, with pass@``k``, in ``rollouts``."""
    generated, imported = RowScope(run=run, imported=False), RowScope(run=run, imported=True)
    by_workflow, repairs = _summary(con, generated), _repairs(con, generated)
    where, params = RowScope(run=run).where("c")
    calls = _dicts(con.execute(
        "SELECT count(*) AS n, coalesce(sum(prompt_tokens), 0) AS prompt, coalesce(sum(completion_tokens), 0) "
        f"AS completion, coalesce(sum(latency_s), 0) AS latency FROM llm_calls AS c WHERE {where}", params
    ))[0]
    accepted = sum(r.accepted for r in by_workflow)
    rejected = sum(r.rejected for r in by_workflow)
    first_rejected = sum(r.first_rejected for r in repairs)
    repaired = sum(r.repaired for r in repairs)
    where, params = generated.where()
    sft = _dicts(con.execute(
        "SELECT count(*) FILTER (WHERE sft_ready) AS ready, count(*) FILTER (WHERE NOT sft_ready) AS not_ready, "
        f"count(*) FILTER (WHERE sft_ready IS NULL) AS unknown FROM packages AS p WHERE status = 'accepted' AND {where}",
        params))[0]
    runs_counted = scalar(con.execute("SELECT count(*) FROM runs" + (" WHERE id = ?" if run is not None else ""),
                                      [] if run is None else [run]))
    return CatalogStats(
        run=run, runs=runs_counted, packages=accepted + rejected, accepted=accepted, rejected=rejected,
        acceptance_rate=_rate(accepted, accepted + rejected),
        first_rejected=first_rejected, repaired=repaired, repair_rate=_rate(repaired, first_rejected),
        llm_calls=calls["n"], prompt_tokens=int(calls["prompt"]), completion_tokens=int(calls["completion"]),
        llm_latency_s=float(calls["latency"]),
        by_workflow=by_workflow, repairs=repairs, rejections=rejections(con, generated),
        review=review_counts(con, generated), readers=reader_counts(con, generated),
        accepted_sft_ready=sft["ready"], accepted_not_sft_ready=sft["not_ready"], accepted_sft_unknown=sft["unknown"],
        imported=_imported(con, imported),
        rollouts=calibration.groups(calibration.calibration(con, k=k, run=run)),
    )


def slot_attempts(con: duckdb.DuckDBPyConnection, rows: RowScope) -> list[SlotAttempts]:
    """The slots of ``rows`` by the attempts each used and whether one was accepted, fewest
    attempts first (accepted before not); a slot is a (run, slot) pair."""
    where, params = rows.where()
    return [SlotAttempts.model_validate(r) for r in _dicts(con.execute(
        "SELECT attempts, accepted, count(*) AS slots FROM (SELECT count(*) AS attempts, "
        f"bool_or(status = 'accepted') AS accepted FROM packages AS p WHERE {where} GROUP BY run, slot) "
        "GROUP BY ALL ORDER BY attempts, accepted DESC", params))]


def rollout_usage(con: duckdb.DuckDBPyConnection, rows: RowScope = EVERY_ROW) -> list[RolloutUsage]:
    """Per capability and model, the rollouts of the packages whose id is on a row of ``rows``
    (for every row: every rollout, also of ids no row holds): recorded, ended by an error, tokens."""
    where, params = rows.where()
    join = "LEFT JOIN" if rows == EVERY_ROW else "JOIN"
    return [RolloutUsage.model_validate(r) for r in _dicts(con.execute(
        "WITH labels AS (SELECT id, any_value(capability) AS capability FROM packages AS p "
        f"WHERE id IS NOT NULL AND {where} GROUP BY id) "
        "SELECT l.capability, r.model, count(*) AS rollouts, "
        f"count(*) FILTER (WHERE NOT ({calibration.COUNTED})) AS errors, "
        "sum(r.prompt_tokens) AS prompt_tokens, sum(r.completion_tokens) AS completion_tokens "
        f"FROM rollouts AS r {join} labels AS l ON l.id = r.package_id "
        "GROUP BY l.capability, r.model ORDER BY l.capability NULLS LAST, r.model",
        params))]


def show(con: duckdb.DuckDBPyConnection, key: str) -> list[PackageRecord]:
    """The rows whose package id is ``key``, or the row numbered ``key`` when it is all digits; each
    with its findings (every kind, in verdict order: refusals, review notes, SFT losses) and LLM calls."""
    column = "row_id" if key.isdigit() else "id"
    rows = _dicts(con.execute(f"SELECT * FROM packages WHERE {column} = ? ORDER BY row_id",
                              [int(key) if key.isdigit() else key]))
    records = []
    for row in rows:
        findings = _dicts(con.execute(
            "SELECT code, message, step, check_id, detail, kind, witness, claim, reading FROM findings WHERE package_row = ? "
            "ORDER BY n", [row["row_id"]],
        ))
        calls = _dicts(con.execute(
            "SELECT model, prompt_tokens, completion_tokens, latency_s, status, error FROM llm_calls "
            "WHERE package_row = ? ORDER BY n", [row["row_id"]],
        ))
        records.append(PackageRecord(
            **{**row, "package": json.loads(row["package"]) if row["package"] else None,
               "review_codes": row.get("review_codes") or []},
            findings=[FindingRecord(**{**f, "detail": json.loads(f["detail"]), "kind": f["kind"] or "refusal",
                                       **{k: json.loads(f[k]) if f[k] else None for k in ("witness", "claim", "reading")}})
                      for f in findings],
            llm_calls=[LLMCall.model_validate(c) for c in calls],
        ))
    return records


class ResultTooLarge(Exception):
    """The rows fetched so far hold more than the memory allowed for a query's result."""


def query(con: duckdb.DuckDBPyConnection, sql: str, max_rows: int | None,
          max_bytes: int | None = None) -> QueryResult:
    """Run ``sql`` (already vetted by ``guard.check_select``) and fetch at most ``max_rows`` rows,
    raising ``ResultTooLarge`` once the fetched rows take more than about ``max_bytes`` of memory
    (estimated from the first row of each batch)."""
    cursor = con.execute(sql)
    columns = [d[0] for d in cursor.description or []]
    rows: list[list[Any]] = []
    size = 0
    while max_rows is None or len(rows) <= max_rows:
        want = _FETCH_BATCH if max_rows is None else min(_FETCH_BATCH, max_rows + 1 - len(rows))
        batch = cursor.fetchmany(want)
        if not batch:
            break
        rows += [list(r) for r in batch]
        size += len(batch) * (64 + sum(sys.getsizeof(v) + 8 for v in batch[0]))
        if max_bytes is not None and size > max_bytes:
            raise ResultTooLarge
    if max_rows is not None and len(rows) > max_rows:
        return QueryResult(columns=columns, rows=rows[:max_rows], truncated=True)
    return QueryResult(columns=columns, rows=rows)


_FETCH_BATCH = 2048

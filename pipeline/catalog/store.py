"""The catalog: every generated package, verdict and LLM call of every run, in one DuckDB file.

``Catalog.open(path)`` starts a write session: it takes the writer lock (``lock.py``) for as long
as the catalog stays open, and applies pending migrations. ``Catalog.open(path, read_only=True)``
takes no lock. Either way, each operation opens its own DuckDB connection and closes it when done,
so readers get in between a writer's commits (see ``docs/catalog.md``, "Concurrency").

``record`` writes one package with its findings and LLM calls in one transaction, committed
before it returns: a crash loses at most the package being recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, get_args

import duckdb

from pipeline.catalog import audit, calibration, queries, rollouts
from pipeline.catalog.calibration import PackageCalibration, PassBand, UnsolvedReport
from pipeline.catalog.connect import Access, connect, first_line, interrupt_after
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.guard import check_select
from pipeline.catalog.limits import DEFAULT_QUERY_MEMORY, DEFAULT_QUERY_TIMEOUT_S, QUERY_THREADS, Limits
from pipeline.catalog.lock import WriterLock
from pipeline.catalog.queries import (
    CatalogStats,
    ClaimRecord,
    PackageRecord,
    QueryResult,
    RejectionCount,
    ReviewCount,
    RolloutUsage,
    RunCounts,
    RunInfo,
    SlotAttempts,
    SlotState,
    scalar,
)
from pipeline.catalog.redact import strip_secrets
from pipeline.catalog.schema import latest_version, migrate, schema_version
from pipeline.catalog.selection import (
    AUDITED,
    SELECTABLE,
    Selection,
    StatusFilter,
    selection_sql,
    sft_selection_sql,
)
from pipeline.core.outcomes import Failure, LLMCall, Reading, Verdict
from pipeline.core.paths import DEFAULT_CATALOG

if TYPE_CHECKING:
    from pipeline.catalog.rows import AttemptRow, PreparedRow
    from pipeline.core.package import TaskPackage
    from pipeline.core.rollouts import Rollout

DEFAULT_BUSY_TIMEOUT_S = 30.0
RunStatus = Literal["running", "finished", "failed", "interrupted"]


class Catalog:
    """A catalog file opened for a write session, or read-only. Use ``Catalog.open``."""

    def __init__(self, path: Path, read_only: bool, busy_timeout: float, lock: WriterLock | None) -> None:
        self.path = path
        self.read_only = read_only
        self.busy_timeout = busy_timeout
        self._lock = lock
        self._guard = threading.RLock()
        self._held: duckdb.DuckDBPyConnection | None = None
        self._closed = False

    # ------------------------------------------------------------------ session

    @classmethod
    def open(cls, path: Path | str = DEFAULT_CATALOG, read_only: bool = False,
             busy_timeout: float = DEFAULT_BUSY_TIMEOUT_S, create: bool = True) -> Catalog:
        """Open the catalog at ``path``.

        Writing (default): creates the file and its folders if needed (``create``; otherwise a
        missing file is a ``CatalogError``, as for reading), takes the writer lock
        (``CatalogBusy`` if another process holds it) and migrates the schema to the latest version.
        Read-only: the file must exist at the latest schema version. Every operation waits up to
        ``busy_timeout`` seconds for another process's DuckDB lock before raising ``CatalogBusy``.
        """
        path = Path(path)
        if not create and not path.is_file():
            raise CatalogError(f"no catalog at {path}; run `synth run` to create one or pass --catalog PATH")
        if read_only:
            catalog = cls(path, True, busy_timeout, None)
            with catalog._connection() as con:
                _check_version(con, path, writable=False)
            return catalog
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CatalogError(f"cannot create the folder of catalog {path}: {exc.strerror or exc}; "
                               "pass --catalog with a path you can write") from exc
        lock = WriterLock(path)
        lock.acquire()
        try:
            catalog = cls(path, False, busy_timeout, lock)
            with catalog._connection() as con:
                _check_version(con, path, writable=True)
                migrate(con)
        except BaseException:
            lock.release()
            raise
        return catalog

    def close(self) -> None:
        """End the session and release the writer lock. Idempotent."""
        self._closed = True
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Keep one DuckDB connection open for every operation inside the block.

        Each ``record`` inside still commits on its own before returning; what the block saves is
        the connection's open and close (tens of milliseconds on a large catalog). Readers in other
        processes wait until the block ends, so keep blocks short (about a second of work).
        Operations from other threads (``asyncio.to_thread``) share the connection, one at a time.
        ``query`` is refused inside a batch (it needs its own sandboxed connection).
        """
        with self._guard:
            outer = self._held is None
            if outer:
                self._held = self._open(None)
        try:
            yield
        finally:
            if outer:
                with self._guard:
                    held, self._held = self._held, None
                    if held is not None:
                        held.close()

    def _open(self, access: Access | None, limits: Limits | None = None,
              writable: Path | None = None) -> duckdb.DuckDBPyConnection:
        if self._closed:
            raise CatalogError(f"catalog {self.path} is closed; open it again")
        default = Access.READ if self.read_only else Access.WRITE
        return connect(self.path, access or default, self.busy_timeout, limits=limits, writable=writable)

    @contextmanager
    def _connection(self, access: Access | None = None, limits: Limits | None = None,
                    writable: Path | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for one operation, used by one thread at a time: the batch's, or a new one
        closed when the operation ends (``limits`` and ``writable``: see ``connect``)."""
        with self._guard:
            if self._held is not None:
                if access is Access.SANDBOX:
                    raise CatalogError("user SQL cannot run inside Catalog.batch(); run it after the batch")
                yield self._held
                return
            con = self._open(access, limits, writable)
            try:
                yield con
            finally:
                con.close()

    @contextmanager
    def _transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A write transaction, committed (durably, through DuckDB's WAL) when the block exits."""
        if self.read_only:
            raise CatalogError(f"catalog {self.path} was opened read-only; open it without read_only to write")
        with self._connection() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    # ------------------------------------------------------------------ runs

    def start_run(self, name: str, generator: str, model: str | None = None, capability: str | None = None,
                  parameters: dict[str, Any] | None = None) -> int:
        """Record a new run with status ``running``; return its id. Key-like ``parameters`` fields
        (``api_key``, ``token`` ...) and credential-looking values are dropped before storing."""
        clean = strip_secrets(parameters or {})
        with self._transaction() as con:
            return int(scalar(con.execute(
                "INSERT INTO runs (name, capability, generator, model, parameters, started, status) "
                "VALUES (?, ?, ?, ?, ?, ?, 'running') RETURNING id",
                [name, capability, generator, model, json.dumps(clean, ensure_ascii=False, default=str),
                 datetime.now(UTC)],
            )))

    def finish_run(self, run_id: int, status: RunStatus = "finished") -> None:
        """Set the run's final ``status`` (``finished``, ``failed`` or ``interrupted``) and end time."""
        if status not in get_args(RunStatus) or status == "running":
            raise ValueError(f"final run status must be finished, failed or interrupted, not {status!r}")
        self._set_run_status(run_id, status, datetime.now(UTC))

    def resume_run(self, run_id: int) -> RunInfo:
        """Mark an earlier run ``running`` again (finished time cleared) and return it."""
        self._set_run_status(run_id, "running", None)
        return self.runs(run_id)[0]

    def _set_run_status(self, run_id: int, status: RunStatus, finished: datetime | None) -> None:
        with self._transaction() as con:
            updated = con.execute("UPDATE runs SET status = ?, finished = ? WHERE id = ? RETURNING id",
                                  [status, finished, run_id]).fetchall()
            if not updated:
                raise CatalogError(f"no run {run_id} in {self.path}; `synth catalog runs` lists them")

    def runs(self, run_id: int | None = None) -> list[RunInfo]:
        """Every run, oldest first; or the one run ``run_id`` (an empty list if there is none)."""
        with self._connection() as con:
            return queries.runs(con, run_id)

    def run_counts(self) -> list[RunCounts]:
        """Every run with its accepted / rejected / failed attempt counts, oldest first."""
        with self._connection() as con:
            return queries.run_counts(con)

    # ------------------------------------------------------------------ recording

    def record(self, run_id: int, slot: int, attempt: int, package: TaskPackage | None, verdict: Verdict | None,
               llm_calls: list[LLMCall] | None = None, parent: str | None = None, failure: Failure | None = None,
               generator: str = "offline", capability: str | None = None, workflow: str | None = None) -> int:
        """Commit one attempt of one slot: the package row, its findings and its LLM calls, in ONE
        transaction; return the new row id.

        Either ``package`` and its ``verdict`` are given (status from ``verdict.accepted``), or
        ``package`` is None and ``failure`` says why there is no verdict: the row is then rejected
        with one finding carrying the failure's code; ``capability`` and ``workflow`` label it
        (capability defaults to the run's). Raises ``CatalogError`` if the run does not exist or
        this (run, slot, attempt) is already recorded.
        """
        from pipeline.catalog.rows import AttemptRow

        row = AttemptRow(run_id=run_id, slot=slot, attempt=attempt, package=package, verdict=verdict,
                         llm_calls=llm_calls or [], parent=parent, failure=failure, generator=generator,
                         capability=capability, workflow=workflow)
        return self.record_many([row])[0]

    def record_many(self, rows: list[AttemptRow]) -> list[int]:
        """Commit several attempts in ONE transaction (a group commit: all or none); return their
        row ids. Each row follows the rules of ``record``."""
        from pipeline.catalog.rows import prepare

        return self.record_prepared([prepare(row) for row in rows])

    def record_prepared(self, rows: list[PreparedRow]) -> list[int]:
        """``record_many`` for attempts already turned into catalog values (``rows.prepare``). One
        statement per table, whatever the group's size, so a group costs about what one attempt does."""
        from pipeline.catalog.rows import insert_group

        if not rows:
            return []
        created = datetime.now(UTC)
        with self._transaction() as con:
            return insert_group(con, self.path, rows, created)

    def accepted_keys(self) -> list[tuple[str, str]]:
        """``(id, near_key)`` of every accepted package: what a writer needs to dedup in memory
        while it holds the writer lock (no other process can accept packages meanwhile)."""
        with self._connection() as con:
            return [(r[0], r[1]) for r in con.execute(
                "SELECT id, near_key FROM packages WHERE status = 'accepted'").fetchall()]

    # ------------------------------------------------------------------ rollouts (catalog/rollouts.py)

    def start_rollout_job(self, model: str, parameters: dict[str, Any]) -> int:
        """Record a new ``running`` rollout job (its ``parameters``, key-like fields dropped); its id."""
        with self._transaction() as con:
            return rollouts.start_job(con, model, parameters)

    def record_rollouts(self, job: int, group: list[Rollout]) -> None:
        """Commit ``group``, rollouts of job ``job``, in ONE transaction (all or none)."""
        with self._transaction() as con:
            rollouts.insert(con, job, group)

    def rollout_samples_done(self, job: int) -> set[tuple[str, int]]:
        """``(package_id, sample)`` of every rollout job ``job`` has recorded, but those the model
        server failed (``rollouts.done``)."""
        with self._connection() as con:
            return rollouts.done(con, job)

    def rollout_job(self, job: int) -> rollouts.RolloutJob:
        """Rollout job ``job``; ``CatalogError`` when there is none."""
        with self._connection() as con:
            found = rollouts.job(con, job)
        if found is None:
            raise CatalogError(f"no rollout job {job} in {self.path}; start one with `synth rollout --model M`")
        return found

    def finish_rollout_job(self, job: int, status: rollouts.RolloutJobStatus = "finished") -> None:
        """Set rollout job ``job``'s final status (``finished``, ``failed`` or ``interrupted``) and end time."""
        if status == "running":
            raise ValueError("a final rollout job status is finished, failed or interrupted")
        with self._transaction() as con:
            rollouts.set_status(con, job, status)

    def resume_rollout_job(self, job: int) -> rollouts.RolloutJob:
        """Mark rollout job ``job`` ``running`` again (end time cleared) and return it."""
        self.rollout_job(job)
        with self._transaction() as con:
            rollouts.set_status(con, job, "running")
        return self.rollout_job(job)

    # ------------------------------------------------------------------ resume and dedup

    def accepted_count(self, run_id: int | None = None) -> int:
        """Accepted rows in run ``run_id``, or in the whole catalog when None."""
        sql = "SELECT count(*) FROM packages WHERE status = 'accepted'" + (" AND run = ?" if run_id is not None else "")
        with self._connection() as con:
            return int(scalar(con.execute(sql, [] if run_id is None else [run_id])))

    def slot_states(self, run_id: int) -> dict[int, SlotState]:
        """Per slot of run ``run_id`` with at least one recorded attempt: attempts used, accepted or not."""
        with self._connection() as con:
            return queries.slot_states(con, run_id)

    def tokens_spent(self, run_id: int) -> tuple[int, int]:
        """``(prompt, completion)`` tokens the LLM calls of run ``run_id`` used so far."""
        with self._connection() as con:
            return queries.tokens_spent(con, run_id)

    def failed_slots(self, run_id: int | None = None, reason: str | None = None,
                     limit: int | None = None) -> dict[int, list[int]]:
        """Slots with no accepted attempt, by run (oldest first); with ``reason``, only those whose
        last attempt was rejected with that code; at most ``limit`` slots."""
        with self._connection() as con:
            return queries.failed_slots(con, run_id, reason, limit)

    def last_attempt(self, run_id: int, slot: int) -> PackageRecord | None:
        """The latest recorded attempt of one slot (with findings and LLM calls), or None."""
        with self._connection() as con:
            row = con.execute("SELECT row_id FROM packages WHERE run = ? AND slot = ? ORDER BY attempt DESC LIMIT 1",
                              [run_id, slot]).fetchone()
            return queries.show(con, str(row[0]))[0] if row else None

    def contains_id(self, package_id: str, accepted_only: bool = True) -> bool:
        """Whether a row holds package ``package_id`` (an accepted row, unless ``accepted_only`` is False)."""
        with self._connection() as con:
            rows = _indexed_lookup(con, "id", package_id)
        return any(status == "accepted" or not accepted_only for _, status in rows)

    def find_duplicate(self, package_id: str, near: str) -> str | None:
        """The id of an accepted package equal to ``package_id``, else of the first accepted package
        with near-duplicate key ``near`` (``pipeline.verify.dedup.near_key``), else None.
        Implements ``pipeline.verify.dedup.DedupIndex``."""
        with self._connection() as con:
            exact = _indexed_lookup(con, "id", package_id)
            near_rows = [] if any(s == "accepted" for _, s in exact) else _indexed_lookup(con, "near_key", near)
        return next((found for found, status in exact + near_rows if status == "accepted"), None)

    # ------------------------------------------------------------------ curation

    def stats(self, run: int | None = None, k: int | None = None) -> CatalogStats:
        """Totals and the per-workflow, repair, rejection and review tables of generated rows, the
        rows of import runs apart (``imported``), and the calibration per capability and model of
        the packages rolled out (``rollouts``, with pass@``k``: see ``calibration.calibration``);
        of run ``run``, or of every run when None. ``CatalogError`` if there is no run ``run``."""
        with self._connection() as con:
            self._require_run(con, run)
            return queries.stats(con, run, k)

    def slot_attempts(self, run: int | None = None) -> list[SlotAttempts]:
        """The slots of generation runs (of run ``run``, or of every run) by the attempts each used
        and whether one was accepted (``queries.slot_attempts``). ``CatalogError`` if there is no run ``run``."""
        with self._connection() as con:
            self._require_run(con, run)
            return queries.slot_attempts(con, queries.RowScope(run=run, imported=False))

    def rollout_usage(self, run: int | None = None) -> list[RolloutUsage]:
        """Per capability and model, the rollouts on the packages of run ``run`` (None: every
        rollout): recorded, ended by an error, and their tokens (``RolloutUsage``; pass rates are
        ``calibration``'s). ``CatalogError`` if there is no run ``run``."""
        with self._connection() as con:
            self._require_run(con, run)
            return queries.rollout_usage(con, queries.RowScope(run=run))

    def _require_run(self, con: duckdb.DuckDBPyConnection, run: int | None) -> None:
        """``CatalogError`` unless ``run`` is None or a run of this catalog."""
        if run is not None and not queries.runs(con, run):
            raise CatalogError(f"no run {run} in {self.path}; `synth catalog runs` lists them")

    def rejections(self) -> list[RejectionCount]:
        """Refusal codes of rejected rows (``rejection_counts``), most frequent first."""
        with self._connection() as con:
            return queries.rejections(con)

    def claims(self, run: int | None = None, limit: int | None = None) -> list[ClaimRecord]:
        """The stored findings that rest on a reading of the request (``queries.claim_records``)."""
        with self._connection() as con:
            self._require_run(con, run)
            return queries.claim_records(con, queries.RowScope(run=run), limit)

    def readings(self, reader: str) -> list[tuple[str, str, Reading]]:
        """Every answer ``reader`` gave that this catalog holds, as ``(package id, claim key,
        reading)``: a reader's cache."""
        with self._connection() as con:
            return queries.readings(con, reader)

    def reviews(self) -> list[ReviewCount]:
        """Review-note codes (``review_counts``), most frequent first: never refusals."""
        with self._connection() as con:
            return queries.review_counts(con)

    def show(self, key: str) -> list[PackageRecord]:
        """Rows for package id ``key`` (several when it was rejected as a duplicate elsewhere), or the
        row numbered ``key``; each with its findings (refusals, review notes and SFT losses, each with
        its ``kind`` and ``witness``) and LLM calls."""
        with self._connection() as con:
            return queries.show(con, key)

    def query(self, sql: str, max_rows: int | None = None, timeout: float | None = DEFAULT_QUERY_TIMEOUT_S,
              memory_limit: str = DEFAULT_QUERY_MEMORY) -> QueryResult:
        """Run one read-only SELECT on a sandboxed connection (``guard.check_select``) and fetch at
        most ``max_rows`` rows; anything else raises ``CatalogError`` and changes nothing.

        The query may use ``memory_limit`` of DuckDB memory and ``QUERY_THREADS`` threads, and is
        interrupted after ``timeout`` seconds (None: never); either stop raises ``CatalogError``
        naming the limit and the option that raises it.
        """
        text = check_select(sql)
        limits = Limits(memory_limit=memory_limit, threads=QUERY_THREADS)
        with self._connection(Access.SANDBOX, limits) as con, interrupt_after(con, timeout) as time_limit:
            try:
                return queries.query(con, text, max_rows, limits.memory_bytes)
            except (queries.ResultTooLarge, MemoryError) as exc:
                raise CatalogError(f"query stopped: its result needs more than its {limits.memory_limit} memory "
                                   "limit; lower --max-rows or raise --memory-limit") from exc
            except duckdb.InterruptException as exc:
                if not time_limit.fired:
                    raise KeyboardInterrupt from exc
                raise CatalogError(f"query stopped after {time_limit.seconds:g}s, its time limit; "
                                   "raise it with --timeout SECONDS (0: no limit)") from exc
            except duckdb.OutOfMemoryException as exc:
                raise CatalogError(f"query stopped: it needs more than its {limits.memory_limit} memory limit; "
                                   "raise it with --memory-limit (e.g. --memory-limit 4GB)") from exc
            except duckdb.Error as exc:
                raise CatalogError(f"query failed: {first_line(str(exc))}") from exc

    @contextmanager
    def selection(self, status: StatusFilter = "accepted", where: str | None = None,
                  writable: Path | None = None, band: PassBand | None = None,
                  audited: bool = False) -> Iterator[Selection]:
        """The rows with ``status`` (accepted by default; ``all`` for every row) for which ``where``
        (one SQL boolean over ``packages`` columns and the audit columns ``audit_label``,
        ``audit_code``, ``audit_annotators``) holds, and whose package's pass rate lies in ``band``
        when one is given, for an exporter to read inside the block. ``audited``: only rows the
        majority of their annotators' latest labels accept (``selection.AUDITED``).

        The connection is sandboxed as ``query``'s is (no file access, settings locked), so
        ``where`` reads nothing but the catalog; ``writable`` is the one file DuckDB may write (an
        export's ``COPY`` target). ``CatalogError`` for an unknown status, a bad ``where``, or a
        band whose model has no rollouts.
        """
        conditions = ([band.condition()] if band is not None else []) + ([AUDITED] if audited else [])
        condition = " AND ".join(f"({c})" for c in conditions) or None
        sql, sft_sql = selection_sql(status, where, condition=condition), sft_selection_sql(status, where, condition)
        with self._connection(Access.SANDBOX, writable=writable) as con:
            if band is not None:
                calibration.check_band(con, band)
            with _where_errors(con, where, "export"):
                yield Selection(con, sql, sft_sql=sft_sql)

    # ------------------------------------------------------------------ audit (catalog/audit.py)

    def add_label(self, row: int, label: str, annotator: str, code: str | None = None,
                  comment: str | None = None) -> audit.AuditLabel:
        """Record ``annotator``'s ``label`` (``accept``, ``defective`` or ``unsure``) of package row
        ``row``, with the reason code ``code`` that names the defect and a ``comment``; the stored
        label. ``CatalogError`` for an unknown row, a row without a package, an unknown label or
        code, a code with ``accept``, or an empty annotator name."""
        with self._transaction() as con:
            return audit.add_label(con, row, label, annotator, code, comment)

    def labels(self, row: int | None = None, annotator: str | None = None,
               latest: bool = False) -> list[audit.AuditLabel]:
        """Labels in the order given (of row ``row`` and of ``annotator`` when given); ``latest``:
        only each annotator's latest label of each row, the one that counts."""
        with self._connection() as con:
            return audit.labels(con, row, annotator, latest)

    def audit_consensus(self) -> dict[int, str]:
        """Every labelled row's ``audit_label``: the majority of its annotators' latest labels
        (``accept``, ``defective``, ``unsure``), or ``disputed``."""
        with self._connection() as con:
            return audit.consensus(con)

    def audit_queue(self, sample: int = audit.DEFAULT_SAMPLE, refusals: int = audit.DEFAULT_REFUSALS,
                    seed: int = 0, where: str | None = None, annotator: str | None = None) -> audit.AuditQueue:
        """What people should label (``audit.queue``): every row with a review note or a reader
        that did not agree, a stratified sample of ``sample`` accepted rows, ``refusals`` refused
        rows per reason code, each with its sampling weight; of the rows ``where`` selects (run
        sandboxed, as ``selection``'s); without the rows ``annotator`` labelled already."""
        with self._audit_connection(where) as con:
            return audit.queue(con, sample, refusals, seed, where, annotator)

    def audit_stats(self, where: str | None = None) -> audit.AuditStats:
        """Agreement between annotators and the verifier's precision and recall estimated from the
        labelled rows (``audit.stats``), of the rows ``where`` selects."""
        with self._audit_connection(where) as con:
            return audit.stats(con, where)

    @contextmanager
    def _audit_connection(self, where: str | None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A sandboxed connection for reading the audit over the user's ``where``; its errors as
        ``CatalogError`` lines."""
        with self._connection(Access.SANDBOX) as con, _where_errors(con, where, "audit query"):
            yield con

    # ------------------------------------------------------------------ rollouts: reading
    # Calibration from the ``rollouts`` table (``calibration.py``); the writing side is apart.

    def calibration(self, model: str | None = None, k: int | None = None,
                    run: int | None = None) -> list[PackageCalibration]:
        """Per package and model: samples, passes, pass rate, mean score and pass@k
        (``calibration.calibration``); of ``model`` only and of run ``run``'s packages only, when given."""
        with self._connection() as con:
            return calibration.calibration(con, model, k, run)

    def unsolved(self, model: str | None = None, limit: int | None = None) -> UnsolvedReport:
        """The packages no rollout (of ``model``, or of any model) passes, with the checks that
        failed most (``calibration.unsolved``); at most ``limit`` listed."""
        with self._connection() as con:
            return calibration.unsolved(con, model, limit)

    def rollout_models(self) -> list[str]:
        """The models with rollouts counted by calibration, by name."""
        with self._connection() as con:
            return calibration.models(con)


# ---------------------------------------------------------------------- row building


@contextmanager
def _where_errors(con: duckdb.DuckDBPyConnection, where: str | None, what: str) -> Iterator[None]:
    """The errors of reading over a user's ``--where`` as one-line ``CatalogError``s: an unknown
    column (with the columns there are), a file read, anything else as ``what`` failing."""
    try:
        yield
    except duckdb.BinderException as exc:
        columns = [row[0] for row in con.execute(f"DESCRIBE {SELECTABLE}").fetchall()]
        raise CatalogError(f"--where {where!r}: {first_line(str(exc))}; the packages columns are: "
                           f"{', '.join(columns)}") from exc
    except duckdb.PermissionException as exc:
        raise CatalogError(f"--where {where!r} may read only the packages columns, not files "
                           f"({first_line(str(exc))})") from exc
    except duckdb.Error as exc:
        raise CatalogError(f"{what} failed: {first_line(str(exc))}") from exc


def _indexed_lookup(con: duckdb.DuckDBPyConnection, column: str, value: str) -> list[tuple[str, str]]:
    """``(id, status)`` of the rows whose ``column`` (``id`` or ``near_key``) equals ``value``, in row order.

    The filter is the indexed equality alone: DuckDB uses the ART index only for a lone equality
    (adding ``status = 'accepted'`` turns it into a full scan), so callers filter status in Python.
    """
    return con.execute(f"SELECT id, status FROM packages WHERE {column} = ? ORDER BY row_id", [value]).fetchall()


def _check_version(con: duckdb.DuckDBPyConnection, path: Path, writable: bool) -> None:
    found, latest = schema_version(con), latest_version()
    if found > latest:
        raise CatalogError(f"catalog {path} has schema version {found}, newer than this synth ({latest}); upgrade synth")
    if found == 0 and not writable:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() "
                                            "WHERE database_name = current_database() ORDER BY 1").fetchall()]
        if tables:
            raise CatalogError(f"{path} is not a synth catalog (it holds the tables {', '.join(tables[:5])}, none of "
                               "synth's); pass a catalog synth wrote with --catalog")
        raise CatalogError(f"catalog {path} is empty: the file was created but synth's tables never written in it "
                           "(a run stopped while it was making the catalog); it holds nothing, so delete it, or "
                           "run a command that writes (e.g. `synth run`) to set it up")
    if found < latest and not writable:
        raise CatalogError(f"catalog {path} has schema version {found}, older than {latest}; "
                           "open it for writing once (e.g. `synth run`) to migrate it")

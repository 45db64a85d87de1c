"""A selection of catalog rows for an exporter to read: the SQL and a read-only connection.

``Catalog.selection(status, where)`` opens one; the export formats (``pipeline.interop.export``)
read it, either with DuckDB itself (``COPY`` over ``sql``) or row by row (``records``,
``packages``). The columns (Hugging Face ``datasets``-ready): ``id``, ``capability``, ``workflow``,
``difficulty``, ``services`` (list of strings), ``request`` (text), ``score`` and ``package``
(the full package as JSON). The SFT export also reads what each row's verdict says of its training
sample (``sft_rows``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

import duckdb

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.guard import parse_where

if TYPE_CHECKING:
    from pipeline.core.package import TaskPackage

PACKAGE_ID = re.compile(r"pkg-[0-9a-f]{16}")
"""A package id as the catalog stores it: ``pkg-`` and 16 lowercase hex digits (the content hash)."""

SELECTABLE = "packages_audit"
"""What ``--where`` selects over: every ``packages`` column and the row's ``audit_label``,
``audit_code`` and ``audit_annotators`` (schema 7; ``docs/catalog.md``, "Audit")."""
AUDITED = "audit_label = 'accept'"
"""The condition of ``--audited``: the majority of the annotators' latest labels of the row accept it."""

EXPORT_COLUMNS = ("id", "capability", "workflow", "difficulty", "services", "request", "score", "package")
StatusFilter = Literal["accepted", "rejected", "all"]

_SFT_COLUMNS = ("package", "sft_ready", "(SELECT r.parameters FROM runs AS r WHERE r.id = packages.run)")


@dataclass(frozen=True)
class StoredSft:
    """What the catalog holds about one row's SFT sample: ``sft_ready`` as its verdict said (None
    when no verdict says: a row recorded before schema 3), and the truncation policy it was judged
    under, ``obs_limit`` and ``sample_budget`` from its run's parameters (None when the run does not
    record them, e.g. a catalog written by hand)."""

    sft_ready: bool | None
    obs_limit: int | None
    sample_budget: int | None


@dataclass(frozen=True)
class StoredRollout:
    """What the SFT export reads of one ``rollouts`` row: who, which sample, its score and its
    ``messages`` (parsed)."""

    package_id: str
    model: str
    job: int
    sample: int
    score: float
    messages: list[dict[str, Any]]


def check_package_id(value: object, where: str) -> str:
    """``value`` if it is a package id (``PACKAGE_ID``), else ``CatalogError`` naming ``where`` it came from."""
    if not isinstance(value, str) or not PACKAGE_ID.fullmatch(value):
        raise CatalogError(f"{where}: package id {value!r} is not of the form pkg-<16 hex digits>; the row was "
                           "altered outside synth: leave it out with --where or fix the catalog")
    return value


@dataclass(frozen=True)
class Selection:
    """The rows to export: ``sql`` is a SELECT of ``EXPORT_COLUMNS`` (``package`` typed JSON),
    ordered by catalog row, over ``con``. ``on_row``, when set, is told how many rows ``records``
    (or ``packages``) has yielded so far, after each row."""

    con: duckdb.DuckDBPyConnection
    sql: str
    on_row: Callable[[int], None] | None = field(default=None, compare=False)
    sft_sql: str | None = field(default=None, compare=False)
    """The same rows in the same order, with the columns ``sft_rows`` reads."""

    def count(self) -> int:
        """How many rows the selection holds."""
        row = self.con.execute(f"SELECT count(*) FROM ({self.sql})").fetchone()
        return int(row[0]) if row else 0

    def _rows(self, sql: str, batch_size: int) -> Iterator[tuple[Any, ...]]:
        cursor = self.con.execute(sql)
        done = 0
        while batch := cursor.fetchmany(batch_size):
            for row in batch:
                yield row
                done += 1
                if self.on_row is not None:
                    self.on_row(done)

    def records(self, batch_size: int = 1000) -> Iterator[dict[str, Any]]:
        """The rows as dicts, ``package`` parsed into a dict (None for a generation failure)."""
        for row in self._rows(self.sql, batch_size):
            record = dict(zip(EXPORT_COLUMNS, row, strict=True))
            record["package"] = json.loads(record["package"]) if record["package"] else None
            yield record

    def sft_rows(self, batch_size: int = 1000) -> Iterator[tuple[TaskPackage, StoredSft]]:
        """The selected packages, parsed as ``packages`` parses them, each with what its row says of
        its SFT sample. Rows without a package are skipped."""
        from pipeline.core.package import load_package

        if self.sft_sql is None:
            raise ValueError("this selection was made without sft_sql; use Catalog.selection")
        for package_json, sft_ready, parameters in self._rows(self.sft_sql, batch_size):
            if package_json is None:
                continue
            package = load_package(json.loads(package_json))
            check_package_id(package.id, f"catalog row of package {package.id!r}")
            params = json.loads(parameters) if parameters else {}
            yield package, StoredSft(sft_ready=sft_ready, obs_limit=_int_or_none(params.get("obs_limit")),
                                     sample_budget=_int_or_none(params.get("sample_budget")))

    def passing_rollouts(self, min_score: float, model: str | None = None,
                         batch_size: int = 200) -> Iterator[tuple[TaskPackage, list[StoredRollout]]]:
        """Each selected package (once, by id) that has passing rollouts (``passed``, no safety rule
        broken, ``score >= min_score``; of ``model`` only, when given), with those rollouts by
        model, job and sample. ``on_row`` is told the packages read so far."""
        from pipeline.core.package import load_package

        sql = (f"SELECT s.id, any_value(s.package) FROM ({self.sql}) AS s WHERE s.package IS NOT NULL "
               "GROUP BY s.id ORDER BY s.id")
        rollouts = ("SELECT model, job, sample, score, messages FROM rollouts WHERE package_id = ? AND passed "
                    "AND safety_ok AND score >= ? AND (CAST(? AS VARCHAR) IS NULL OR model = ?) "
                    "ORDER BY model, job, sample")
        cursor = self.con.cursor().execute(sql)  # its own cursor: the rollouts query runs meanwhile
        done = 0
        while batch := cursor.fetchmany(batch_size):
            for package_id, package_json in batch:
                found = [StoredRollout(package_id, model=row[0], job=row[1], sample=row[2], score=row[3],
                                       messages=json.loads(row[4]))
                         for row in self.con.execute(rollouts, [package_id, min_score, model, model]).fetchall()]
                if found:
                    package = load_package(json.loads(package_json))
                    check_package_id(package.id, f"catalog row of package {package_id!r}")
                    yield package, found
                done += 1
                if self.on_row is not None:
                    self.on_row(done)

    def packages(self) -> Iterator[TaskPackage]:
        """The selected packages, parsed (rows without a package are skipped). A package whose
        stored id is not a package id raises ``CatalogError``: exporters build file names from it."""
        from pipeline.core.package import load_package

        for record in self.records():
            if record["package"] is not None:
                package = load_package(record["package"])
                check_package_id(package.id, f"catalog row of package {record['id']!r}")
                yield package


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def selection_sql(status: StatusFilter, where: str | None, columns: tuple[str, ...] = EXPORT_COLUMNS,
                  condition: str | None = None) -> str:
    """SELECT of ``columns`` (the export columns by default) from ``packages`` rows with ``status``
    (unless ``all``) for which ``where`` (one SQL boolean over ``packages`` columns and the audit
    columns of ``SELECTABLE``, the user's) and
    ``condition`` (one built by the catalog, e.g. ``PassBand.condition``) hold, ordered by row."""
    if status not in get_args(StatusFilter):
        raise CatalogError(f"unknown status filter {status!r}; choose one of: {', '.join(get_args(StatusFilter))}")
    conditions = [] if status == "all" else [f"status = '{status}'"]
    if where is not None:
        conditions.append(f"(\n{parse_where(where)}\n)")  # line breaks: a trailing `--` comments nothing out
    if condition is not None:
        conditions.append(f"({condition})")
    clause = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    # The audit columns cost a join; a selection that cannot name them (no "audit" in its text) reads the table.
    source = SELECTABLE if "audit" in f"{where} {condition}".lower() else "packages"
    return f"SELECT {', '.join(columns)} FROM {source} AS packages{clause} ORDER BY row_id"


def sft_selection_sql(status: StatusFilter, where: str | None, condition: str | None = None) -> str:
    """``selection_sql`` of the columns ``Selection.sft_rows`` reads: the package, its row's
    ``sft_ready`` and its run's parameters."""
    return selection_sql(status, where, _SFT_COLUMNS, condition)

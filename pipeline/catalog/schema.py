"""The catalog's tables and views, as an ordered list of migrations applied on open.

The schema version is ``meta.value`` where ``meta.key = 'schema_version'`` (0 for a new file).
Opening a catalog for writing applies, in order, every migration whose version is above it, each
in its own transaction together with the version bump, so a crash mid-migration leaves the
previous version intact. A change to the schema is a new entry at the end of ``MIGRATIONS``;
entries already released are never edited. See ``docs/catalog.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from pipeline.core.package import PASS_SCORE, PASS_TOLERANCE


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


_V1_TABLES = (
    "CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)",
    "CREATE SEQUENCE run_ids START 1",
    """CREATE TABLE runs (
        id BIGINT PRIMARY KEY DEFAULT nextval('run_ids'),
        name VARCHAR NOT NULL,
        capability VARCHAR,
        generator VARCHAR NOT NULL,
        model VARCHAR,
        parameters JSON NOT NULL,
        started TIMESTAMPTZ NOT NULL,
        finished TIMESTAMPTZ,
        status VARCHAR NOT NULL CHECK (status IN ('running', 'finished', 'failed', 'interrupted'))
    )""",
    "CREATE SEQUENCE package_rows START 1",
    """CREATE TABLE packages (
        row_id BIGINT PRIMARY KEY DEFAULT nextval('package_rows'),
        id VARCHAR,
        run BIGINT NOT NULL,
        slot INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        parent VARCHAR,
        capability VARCHAR,
        workflow VARCHAR,
        difficulty VARCHAR,
        services VARCHAR[],
        status VARCHAR NOT NULL CHECK (status IN ('accepted', 'rejected')),
        score DOUBLE,
        step_count INTEGER,
        tool_count INTEGER,
        turn_count INTEGER,
        request VARCHAR,
        near_key VARCHAR,
        package JSON,
        generator VARCHAR NOT NULL,
        verifier_version VARCHAR,
        created TIMESTAMPTZ NOT NULL,
        UNIQUE (run, slot, attempt)
    )""",
    "CREATE INDEX packages_id ON packages (id)",
    "CREATE INDEX packages_near_key ON packages (near_key)",
    """CREATE TABLE findings (
        package_row BIGINT NOT NULL,
        n INTEGER NOT NULL,
        code VARCHAR NOT NULL,
        message VARCHAR NOT NULL,
        step INTEGER,
        check_id VARCHAR,
        detail JSON NOT NULL
    )""",
    """CREATE TABLE llm_calls (
        package_row BIGINT NOT NULL,
        run BIGINT NOT NULL,
        slot INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        n INTEGER NOT NULL,
        model VARCHAR NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        latency_s DOUBLE NOT NULL,
        status VARCHAR NOT NULL,
        error VARCHAR
    )""",
)

_V1_VIEWS = (
    "CREATE VIEW accepted_packages AS SELECT * FROM packages WHERE status = 'accepted'",
    """CREATE VIEW rejection_counts AS
        SELECT f.code, count(DISTINCT f.package_row) AS packages, count(*) AS findings
        FROM findings AS f JOIN packages AS p ON p.row_id = f.package_row
        WHERE p.status = 'rejected'
        GROUP BY f.code
        ORDER BY packages DESC, f.code""",
    """CREATE VIEW summary AS
        SELECT capability, workflow,
               count(*) FILTER (WHERE status = 'accepted') AS accepted,
               count(*) FILTER (WHERE status = 'rejected') AS rejected,
               count(*) FILTER (WHERE status = 'accepted') / count(*) AS acceptance_rate
        FROM packages
        GROUP BY capability, workflow
        ORDER BY capability, workflow""",
    """CREATE VIEW slot_outcomes AS
        SELECT run, slot,
               arg_min(capability, attempt) AS capability,
               arg_min(workflow, attempt) AS workflow,
               max(attempt) AS attempts,
               arg_min(status, attempt) = 'accepted' AS first_accepted,
               bool_or(status = 'accepted') AS accepted,
               min(attempt) FILTER (WHERE status = 'accepted') AS accepted_attempt,
               arg_min(id, attempt) FILTER (WHERE status = 'accepted') AS accepted_id
        FROM packages
        GROUP BY run, slot""",
    """CREATE VIEW repair_rate AS
        SELECT capability, workflow,
               count(*) FILTER (WHERE NOT first_accepted) AS first_rejected,
               count(*) FILTER (WHERE NOT first_accepted AND accepted) AS repaired,
               count(*) FILTER (WHERE NOT first_accepted AND accepted)
                 / nullif(count(*) FILTER (WHERE NOT first_accepted), 0) AS repair_rate
        FROM slot_outcomes
        GROUP BY capability, workflow
        ORDER BY capability, workflow""",
)

_V3_VERDICTS = (
    "ALTER TABLE findings ADD COLUMN kind VARCHAR DEFAULT 'refusal'",
    "ALTER TABLE findings ADD COLUMN witness JSON",
    "ALTER TABLE packages ADD COLUMN sft_ready BOOLEAN",
    "ALTER TABLE packages ADD COLUMN review_codes VARCHAR[] DEFAULT []",
    """CREATE OR REPLACE VIEW rejection_counts AS
        SELECT f.code, count(DISTINCT f.package_row) AS packages, count(*) AS findings
        FROM findings AS f JOIN packages AS p ON p.row_id = f.package_row
        WHERE p.status = 'rejected' AND f.kind = 'refusal'
        GROUP BY f.code
        ORDER BY packages DESC, f.code""",
    """CREATE VIEW review_counts AS
        SELECT f.code, count(DISTINCT f.package_row) AS packages,
               count(DISTINCT f.package_row) FILTER (WHERE p.status = 'accepted') AS accepted,
               count(*) AS notes
        FROM findings AS f JOIN packages AS p ON p.row_id = f.package_row
        WHERE f.kind = 'review'
        GROUP BY f.code
        ORDER BY packages DESC, f.code""",
)
"""Schema 3, verdicts of verifier version 3: each finding's ``kind`` (``refusal``, ``review`` or
``sft``; rows stored before are refusals) and ``witness``; each row's ``sft_ready`` (NULL where no
verdict says: a generation failure, or a row stored before) and ``review_codes`` (``[]`` before);
``rejection_counts`` counts refusals only, ``review_counts`` the review notes."""

_V4_ROLLOUTS = (
    "CREATE SEQUENCE rollout_job_ids START 1",
    """CREATE TABLE rollout_jobs (
        id BIGINT PRIMARY KEY DEFAULT nextval('rollout_job_ids'),
        model VARCHAR NOT NULL,
        parameters JSON NOT NULL,
        started TIMESTAMPTZ NOT NULL,
        finished TIMESTAMPTZ,
        status VARCHAR NOT NULL CHECK (status IN ('running', 'finished', 'failed', 'interrupted'))
    )""",
    """CREATE TABLE rollouts (
        job BIGINT NOT NULL,
        package_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        sample INTEGER NOT NULL,
        score DOUBLE NOT NULL,
        passed BOOLEAN NOT NULL,
        checks JSON NOT NULL,
        safety JSON NOT NULL,
        safety_ok BOOLEAN NOT NULL,
        turns INTEGER NOT NULL,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        latency_s DOUBLE NOT NULL,
        finish_reason VARCHAR NOT NULL,
        error VARCHAR,
        messages JSON NOT NULL,
        created TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (job, package_id, sample)
    )""",
)
"""Schema 4, rollouts: agent models run on catalog packages. One ``rollout_jobs`` row per
``synth rollout`` job (its ``parameters`` as given, for ``--resume``); one ``rollouts`` row per
(job, package, sample), its columns those of ``core.rollouts.Rollout`` (``checks``, ``safety`` and
``messages`` as JSON)."""

_V5_READINGS = (
    "ALTER TABLE findings ADD COLUMN claim JSON",
    "ALTER TABLE findings ADD COLUMN reading JSON",
    """CREATE VIEW reader_answers AS
        SELECT p.id AS package_id, p.run, p.row_id AS package_row, f.n, f.code, f.kind,
               json_extract_string(f.reading, '$.reader') AS reader,
               json_extract_string(f.reading, '$.answer') AS answer,
               json_extract_string(f.reading, '$.reason') AS reason,
               CAST(json_extract(f.reading, '$.cached') AS BOOLEAN) AS cached,
               CAST(json_extract(f.reading, '$.prompt_tokens') AS BIGINT) AS prompt_tokens,
               CAST(json_extract(f.reading, '$.completion_tokens') AS BIGINT) AS completion_tokens,
               f.claim
        FROM findings AS f JOIN packages AS p ON p.row_id = f.package_row
        WHERE f.reading IS NOT NULL""",
)
"""Schema 5, readers: each finding's ``claim`` (what the verifier read the request to ask, when its
witness rests on that reading) and ``reading`` (a reader's answer to it); ``reader_answers`` lists
the answers, the cache of later verifications of the same package and claim."""

_V6_PASSED = (f"UPDATE rollouts SET passed = (score >= {PASS_SCORE - PASS_TOLERANCE!r})",)
"""Schema 6: a rollout passes only with full marks (``core.package.passes``); rows written when the
line was 0.75 get the one meaning."""

_V7_AUDIT = (
    "CREATE SEQUENCE audit_label_ids START 1",
    """CREATE TABLE audit_labels (
        id BIGINT PRIMARY KEY DEFAULT nextval('audit_label_ids'),
        run BIGINT NOT NULL,
        package_row BIGINT NOT NULL,
        package_id VARCHAR,
        annotator VARCHAR NOT NULL,
        created TIMESTAMPTZ NOT NULL,
        label VARCHAR NOT NULL CHECK (label IN ('accept', 'defective', 'unsure')),
        code VARCHAR,
        comment VARCHAR
    )""",
    """CREATE VIEW audit_latest AS
        SELECT * FROM audit_labels
        QUALIFY row_number() OVER (PARTITION BY package_row, annotator ORDER BY id DESC) = 1""",
    """CREATE VIEW audit_consensus AS
        SELECT *, CASE WHEN 2 * accept > annotators THEN 'accept'
                       WHEN 2 * defective > annotators THEN 'defective'
                       WHEN 2 * unsure > annotators THEN 'unsure'
                       ELSE 'disputed' END AS audit_label
        FROM (SELECT package_row, any_value(package_id) AS package_id, count(*) AS annotators,
                     count(*) FILTER (WHERE label = 'accept') AS accept,
                     count(*) FILTER (WHERE label = 'defective') AS defective,
                     count(*) FILTER (WHERE label = 'unsure') AS unsure,
                     mode(code) FILTER (WHERE label = 'defective') AS audit_code,
                     max(created) AS last_labelled
              FROM audit_latest GROUP BY package_row)""",
    """CREATE VIEW packages_audit AS
        SELECT p.*, c.audit_label, c.audit_code, coalesce(c.annotators, 0) AS audit_annotators
        FROM packages AS p LEFT JOIN audit_consensus AS c ON c.package_row = p.row_id""",
)
"""Schema 7, audit: people's labels of package rows (``audit_labels``, appended, never updated);
``audit_latest`` keeps each annotator's latest label of a row, ``audit_consensus`` the majority of
them per row (``audit_label``: ``accept``, ``defective`` or ``unsure`` when more than half the
annotators' latest labels say so, ``disputed`` otherwise), and ``packages_audit`` is every
``packages`` row with its ``audit_label`` (NULL: nobody labelled it), ``audit_code`` and
``audit_annotators``: what ``synth export --where`` selects over."""

_V8_PROFILE = (
    "ALTER TABLE packages ADD COLUMN service_profile VARCHAR",
    """UPDATE packages SET service_profile = coalesce(json_extract_string(package, '$.service_profile'), 'default')
       WHERE package IS NOT NULL""",
)
"""Schema 8: each row's service profile (``packages.service_profile``: ``default`` or ``claw``;
NULL for a generation failure) as a column, so the audit's strata read no package JSON (reading
it was most of ``synth audit stats``'s time)."""

MIGRATIONS: list[Migration] = [
    Migration(1, "runs, packages, findings, llm_calls and the curation views", _V1_TABLES + _V1_VIEWS),
    Migration(2, "packages.injected_defect: the label of a defect the offline generator injected on purpose",
              ("ALTER TABLE packages ADD COLUMN injected_defect VARCHAR",)),
    Migration(3, "findings.kind and findings.witness; packages.sft_ready and packages.review_codes; "
                 "rejection_counts counts refusals only; review_counts", _V3_VERDICTS),
    Migration(4, "rollout_jobs and rollouts: agent models run on catalog packages", _V4_ROLLOUTS),
    Migration(5, "findings.claim and findings.reading; reader_answers", _V5_READINGS),
    Migration(6, "rollouts.passed recomputed: a run passes only with full marks", _V6_PASSED),
    Migration(7, "audit_labels: people's labels of package rows; audit_latest, audit_consensus, packages_audit",
              _V7_AUDIT),
    Migration(8, "packages.service_profile: the package's service profile as a column", _V8_PROFILE),
]


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The version recorded in ``meta``; 0 when the catalog has no ``meta`` table yet."""
    has_meta = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND table_name = 'meta'"
    ).fetchone()
    if not has_meta or not has_meta[0]:
        return 0
    row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def latest_version() -> int:
    return MIGRATIONS[-1].version


def migrate(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply every migration above the catalog's version, in order; return the versions applied.

    Each migration and its version bump commit together (one transaction per migration).
    """
    current = schema_version(con)
    applied: list[int] = []
    for migration in MIGRATIONS:
        if migration.version <= current:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            for statement in migration.statements:
                con.execute(statement)
            con.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", [str(migration.version)]
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        applied.append(migration.version)
    return applied

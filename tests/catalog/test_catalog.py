"""The catalog's Python API (pipeline/catalog/store.py): schema and migrations, recording, resume
state, dedup lookups, curation views, read-only SQL, secrets kept out."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from pipeline.catalog import schema, store
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.schema import MIGRATIONS, Migration, latest_version
from pipeline.catalog.store import Catalog
from pipeline.core.codes import Code
from pipeline.core.outcomes import VERIFIER_VERSION, Failure, FailureCode, LLMCall, Verdict
from pipeline.core.package import AskStep, TaskPackage, load_package, near_key
from pipeline.verify.dedup import duplicate_findings
from pipeline.verify.verifier import verify_package
from tests.conftest import EXAMPLE_NAMES, EXAMPLES_DIR, CliResult, copy_catalog, refusal
from tests.support import processes


def example(name: str) -> TaskPackage:
    return load_package(json.loads((EXAMPLES_DIR / f"{name}.json").read_text())).with_id()


def accepted(package: TaskPackage, score: float = 1.0) -> Verdict:
    return Verdict.build(package.id, [], score)


def rejected(package: TaskPackage, *codes: Code) -> Verdict:
    """A verdict refusing ``package`` with ``codes`` (witnessed ones with a witness that holds)."""
    findings = [refusal(c, step=i, check=f"check-{i}", detail={"n": i}) for i, c in enumerate(codes)]
    return Verdict.build(package.id, findings, 0.5)


def examples() -> dict[str, TaskPackage]:
    """Every example package with its id, by name."""
    return {name: example(name) for name in EXAMPLE_NAMES}


@pytest.fixture
def packages() -> dict[str, TaskPackage]:
    return examples()


def raw(cat: Catalog, sql: str) -> list[tuple]:
    return cat.query(sql).rows


# --------------------------------------------------------------------------- schema and migrations


def test_open_creates_folders_and_latest_schema(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "catalog.duckdb"
    Catalog.open(path).close()
    assert path.is_file()
    with Catalog.open(path, read_only=True) as reader:
        assert raw(reader, "SELECT value FROM meta WHERE key = 'schema_version'") == [[str(latest_version())]]
        tables = {r[0] for r in raw(reader, "SELECT table_name FROM duckdb_tables()")}
        views = {r[0] for r in raw(reader, "SELECT view_name FROM duckdb_views() WHERE NOT internal")}
    assert {"meta", "runs", "packages", "findings", "llm_calls"} <= tables
    assert {"accepted_packages", "rejection_counts", "summary", "slot_outcomes", "repair_rate"} <= views


def test_reopening_applies_no_migration_twice(tmp_path: Path) -> None:
    path = tmp_path / "catalog.duckdb"
    Catalog.open(path).close()
    con = duckdb.connect(str(path))
    try:
        assert schema.migrate(con) == []
    finally:
        con.close()


def test_pending_migrations_apply_in_order_and_keep_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          packages: dict[str, TaskPackage]) -> None:
    path = tmp_path / "catalog.duckdb"
    package = packages["todo-three-items"]
    with Catalog.open(path) as cat:
        run = cat.start_run("before", "offline")
        cat.record(run, 0, 1, package, accepted(package))
    n = latest_version()
    newer = [*MIGRATIONS,
             Migration(n + 1, "add a note column", ("ALTER TABLE packages ADD COLUMN note VARCHAR",)),
             Migration(n + 2, "fill it", ("UPDATE packages SET note = 'v3'",))]
    monkeypatch.setattr(schema, "MIGRATIONS", newer)
    with pytest.raises(CatalogError, match="older"):
        Catalog.open(path, read_only=True)
    with Catalog.open(path) as cat:
        assert raw(cat, "SELECT id, note FROM packages") == [[package.id, "v3"]]
        assert raw(cat, "SELECT value FROM meta WHERE key = 'schema_version'") == [[str(n + 2)]]


def test_a_version_1_catalog_is_migrated_with_its_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       packages: dict[str, TaskPackage]) -> None:
    """A catalog written at schema version 1 gains ``injected_defect`` and keeps its runs."""
    path = tmp_path / "catalog.duckdb"
    package = packages["todo-three-items"]
    monkeypatch.setattr(schema, "MIGRATIONS", MIGRATIONS[:1])
    with Catalog.open(path) as old:
        old_run = old.start_run("v1", "offline")
        assert "injected_defect" not in {r[0] for r in raw(old, "SELECT column_name FROM (DESCRIBE packages)")}
    monkeypatch.setattr(schema, "MIGRATIONS", MIGRATIONS)
    with Catalog.open(path) as cat:
        cat.record(old_run, 0, 1, package, accepted(package))
        assert raw(cat, "SELECT value FROM meta WHERE key = 'schema_version'") == [[str(latest_version())]]
        assert raw(cat, "SELECT id, injected_defect FROM packages") == [[package.id, None]]
        assert [r.name for r in cat.runs()] == ["v1"]


def test_a_catalog_newer_than_the_code_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "catalog.duckdb"
    monkeypatch.setattr(schema, "MIGRATIONS", [*MIGRATIONS, Migration(latest_version() + 1, "future", ("SELECT 1",))])
    Catalog.open(path).close()
    monkeypatch.setattr(schema, "MIGRATIONS", MIGRATIONS)
    for read_only in (False, True):
        with pytest.raises(CatalogError, match="newer than this synth"):
            Catalog.open(path, read_only=read_only)


def test_a_failed_migration_leaves_the_previous_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "catalog.duckdb"
    Catalog.open(path).close()
    broken = Migration(latest_version() + 1, "half broken",
                       ("ALTER TABLE packages ADD COLUMN note VARCHAR", "SELECT * FROM nowhere"))
    monkeypatch.setattr(schema, "MIGRATIONS", [*MIGRATIONS, broken])
    with pytest.raises(duckdb.CatalogException):
        Catalog.open(path)
    monkeypatch.setattr(schema, "MIGRATIONS", MIGRATIONS)
    with Catalog.open(path, read_only=True) as reader:
        assert "note" not in {r[0] for r in raw(reader, "SELECT column_name FROM (DESCRIBE packages)")}


def test_read_only_open_of_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="no catalog at"):
        Catalog.open(tmp_path / "absent.duckdb", read_only=True)
    assert not (tmp_path / "absent.duckdb").exists()


def test_a_file_that_is_not_a_catalog_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalog.duckdb"
    path.write_bytes(b"not a database" * 500)
    with pytest.raises(CatalogError, match="cannot open catalog"):
        Catalog.open(path)


# --------------------------------------------------------------------------- runs


def test_run_parameters_never_hold_secrets(catalog: Catalog) -> None:
    run = catalog.start_run("r", "llm", "m", "general", {
        "api_key": "sk-live-1234567890", "OPENAI_API_KEY": "abc123secret",
        "client": {"Authorization": "Bearer abcdefghijklmnop", "apiKey": "k-999", "timeout": 30},
        "access_token": "tok-123456", "max_tokens": 512, "prompt_tokens_budget": 9,
        "note": "retried with sk-proj-abcdefghijklmnop after a 401",
        "headers": [{"password": "hunter22", "name": "x"}],
    })
    stored = raw(catalog, f"SELECT parameters::VARCHAR FROM runs WHERE id = {run}")[0][0]
    for secret in ("sk-live-1234567890", "abc123secret", "abcdefghijklmnop", "k-999", "tok-123456", "hunter22",
                   "sk-proj"):
        assert secret not in stored
    params = catalog.runs(run)[0].parameters
    assert params == {"client": {"timeout": 30}, "max_tokens": 512, "prompt_tokens_budget": 9,
                      "note": "retried with [redacted] after a 401", "headers": [{"name": "x"}]}


def test_run_lifecycle(catalog: Catalog) -> None:
    run = catalog.start_run("nightly", "offline", None, "general", {"count": 5})
    info = catalog.runs(run)[0]
    assert (info.name, info.status, info.finished, info.capability) == ("nightly", "running", None, "general")
    catalog.finish_run(run, "interrupted")
    info = catalog.runs(run)[0]
    assert info.status == "interrupted" and info.finished is not None and info.finished >= info.started
    resumed = catalog.resume_run(run)
    assert (resumed.status, resumed.finished) == ("running", None)
    catalog.finish_run(run)
    assert catalog.runs(run)[0].status == "finished"
    with pytest.raises(ValueError):
        catalog.finish_run(run, "running")  # type: ignore[arg-type]
    with pytest.raises(CatalogError, match="no run 99"):
        catalog.finish_run(99)
    assert [r.id for r in catalog.runs()] == [run]


# --------------------------------------------------------------------------- recording


def test_record_stores_package_columns_and_calls(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    package = packages["multi-turn-schedule-meeting"]
    run = catalog.start_run("r", "llm")
    calls = [LLMCall(model="m", prompt_tokens=1200, completion_tokens=800, latency_s=2.5),
             LLMCall(model="m", status="rate_limited", error="429 for key sk-abcdefghijklmnop")]
    row = catalog.record(run, 3, 2, package, accepted(package, 0.98), calls, parent="pkg-parent", generator="llm")
    [record] = catalog.show(package.id)
    assert record.row_id == row
    assert (record.run, record.slot, record.attempt, record.parent) == (run, 3, 2, "pkg-parent")
    assert (record.status, record.score, record.generator, record.verifier_version) == ("accepted", 0.98, "llm", VERIFIER_VERSION)
    assert (record.capability, record.workflow, record.difficulty) == (package.capability, package.workflow,
                                                                       package.difficulty)
    assert record.services == package.services and record.request == package.request.text
    assert record.step_count == len(package.reference) and record.tool_count == len(package.tools)
    assert record.turn_count == sum(isinstance(s, AskStep) for s in package.reference) == 1
    assert record.near_key == near_key(package)
    assert load_package(record.package) == package
    assert record.findings == []
    assert [c.status for c in record.llm_calls] == ["ok", "rate_limited"]
    assert record.llm_calls[0] == calls[0]
    assert record.llm_calls[1].error == "429 for key [redacted]"
    assert catalog.show(str(row)) == [record]


def test_record_gives_a_package_without_id_its_content_id(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    package = packages["todo-three-items"]
    bare = package.model_copy(update={"id": ""})
    catalog.record(catalog.start_run("r", "offline"), 0, 1, bare, accepted(package))
    [record] = catalog.show(package.id)
    assert record.package is not None and record.package["id"] == package.id


def test_rejected_row_keeps_findings_in_order(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    package = packages["todo-three-items"]
    run = catalog.start_run("r", "offline")
    catalog.record(run, 0, 1, package, rejected(package, Code.GRADER_COUNTS_CALLS, Code.WEIGHTS_INVALID))
    [record] = catalog.show(package.id)
    assert record.status == "rejected" and record.score == 0.5
    assert [(f.code, f.step, f.check_id, f.detail) for f in record.findings] == [
        ("grader_counts_calls", 0, "check-0", {"n": 0}), ("weights_invalid", 1, "check-1", {"n": 1})]


@pytest.mark.parametrize("code", list(FailureCode))
def test_generation_failure_is_a_rejected_row_with_its_code(catalog: Catalog, code: FailureCode) -> None:
    run = catalog.start_run("r", "llm", capability="multi-turn")
    failure = Failure(code=code, message="the model returned prose: not JSON at line 1")
    row = catalog.record(run, 0, 1, None, None, [LLMCall(model="m", status="error", error="boom")], failure=failure,
                         workflow="schedule-meeting-after-clarification")
    [record] = catalog.show(str(row))
    assert (record.id, record.package, record.status) == (None, None, "rejected")
    assert (record.capability, record.workflow) == ("multi-turn", "schedule-meeting-after-clarification")
    assert [(f.code, f.message) for f in record.findings] == [(code.value, failure.message)]
    assert [c.error for c in record.llm_calls] == ["boom"]
    [rejection] = catalog.rejections()
    assert rejection.code == code.value
    # schema_invalid is also a reason code (the same meaning); the others are described as failures
    assert rejection.description.startswith("no verdict: ") == (code != FailureCode.SCHEMA_INVALID)


def test_generation_failure_message_is_masked(catalog: Catalog) -> None:
    run = catalog.start_run("r", "llm")
    failure = Failure(code=FailureCode.LLM_ERROR, message="401 invalid key sk-abcdefghijklmnopqrst")
    row = catalog.record(run, 0, 1, None, None, failure=failure, capability="general")
    [record] = catalog.show(str(row))
    assert record.findings[0].message == "401 invalid key [redacted]"


def test_record_argument_mistakes(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    package = packages["todo-three-items"]
    run = catalog.start_run("r", "offline")
    with pytest.raises(ValueError):
        catalog.record(run, 0, 1, package, None)
    with pytest.raises(ValueError):
        catalog.record(run, 0, 1, None, None)
    with pytest.raises(ValueError):
        catalog.record(run, 0, 1, package, accepted(package), failure=Failure(code=FailureCode.SCHEMA_INVALID,
                                                                                message="x"))
    with pytest.raises(CatalogError, match="no run 42"):
        catalog.record(42, 0, 1, package, accepted(package))
    assert raw(catalog, "SELECT count(*) FROM packages") == [[0]]


def test_a_slot_attempt_is_recorded_once(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    package = packages["todo-three-items"]
    run = catalog.start_run("r", "offline")
    catalog.record(run, 0, 1, package, rejected(package, Code.NULL_AGENT_PASSES))
    with pytest.raises(CatalogError, match="run 1 slot 0 attempt 1 is already recorded"):
        catalog.record(run, 0, 1, package, accepted(package))
    assert raw(catalog, "SELECT count(*), min(status) FROM packages") == [[1, "rejected"]]
    assert raw(catalog, "SELECT count(*) FROM findings") == [[1]]


def test_record_is_one_transaction(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    """An LLM call that cannot be stored aborts the whole record: no package row, no findings."""
    package = packages["todo-three-items"]
    run = catalog.start_run("r", "llm")
    broken = LLMCall.model_construct(model="m", prompt_tokens="many", completion_tokens=0, latency_s=0.0,
                                     status="ok", error=None)
    with pytest.raises(duckdb.ConversionException):
        catalog.record(run, 0, 1, package, rejected(package, Code.REFERENCE_ERROR), [broken])
    assert raw(catalog, "SELECT (SELECT count(*) FROM packages), (SELECT count(*) FROM findings), "
                        "(SELECT count(*) FROM llm_calls)") == [[0, 0, 0]]
    catalog.record(run, 0, 1, package, accepted(package))  # the slot is still free
    assert catalog.accepted_count(run) == 1


def test_batch_keeps_one_connection_and_commits_each_record(empty_catalog: Path, monkeypatch: pytest.MonkeyPatch,
                                                            packages: dict[str, TaskPackage]) -> None:
    opened: list[object] = []
    real_connect = store.connect

    def counting(*args: object, **kwargs: object) -> duckdb.DuckDBPyConnection:
        opened.append(args)
        return real_connect(*args, **kwargs)  # type: ignore[arg-type]

    with Catalog.open(empty_catalog) as cat:
        run = cat.start_run("r", "offline")
        monkeypatch.setattr(store, "connect", counting)
        with cat.batch():
            for slot, package in enumerate(packages.values()):
                cat.record(run, slot, 1, package, accepted(package))
            with cat.batch():  # nested: same connection
                assert cat.accepted_count(run) == len(packages)
            with pytest.raises(CatalogError, match="inside Catalog.batch"):
                cat.query("SELECT 1")
        assert len(opened) == 1
        assert cat.accepted_count(run) == len(packages)
        assert len(opened) == 2


def test_batch_serves_records_from_worker_threads(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    """A run loop enters the batch on its event loop and records from ``asyncio.to_thread``."""
    run = catalog.start_run("r", "offline")

    async def record_all() -> list[int]:
        with catalog.batch():
            return list(await asyncio.gather(*(
                asyncio.to_thread(catalog.record, run, slot, 1, package, accepted(package))
                for slot, package in enumerate(packages.values()))))

    rows = asyncio.run(asyncio.wait_for(record_all(), timeout=processes.PATIENCE_S))
    assert len(set(rows)) == len(packages)
    assert catalog.accepted_count(run) == len(packages)


# --------------------------------------------------------------------------- resume and dedup


@pytest.fixture(scope="module")
def filled_catalog_file(empty_catalog_template: Path,
                        tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """Built once per module, closed: run A: slot 0 accepted first time; slot 1 rejected then accepted;
    slot 2 rejected twice; slot 3 failed to generate once. Run B: one accepted slot. Capabilities
    follow the packages. Returns the file and the two run ids; tests get copies (``filled``)."""
    path = copy_catalog(empty_catalog_template, tmp_path_factory.mktemp("filled") / "catalog.duckdb")
    packages = examples()
    todo, message, meeting = (packages[n] for n in ("todo-three-items", "contacts-send-message",
                                                    "multi-turn-schedule-meeting"))
    with Catalog.open(path) as catalog:
        a = catalog.start_run("a", "offline", capability="general")
        catalog.record(a, 0, 1, todo, accepted(todo))
        catalog.record(a, 1, 1, message, rejected(message, Code.GRADER_UNDERCONSTRAINED))
        catalog.record(a, 1, 2, message, accepted(message), parent=message.id)
        catalog.record(a, 2, 1, meeting, rejected(meeting, Code.GRADER_UNDERCONSTRAINED,
                                                  Code.CLARIFICATION_UNNECESSARY))
        catalog.record(a, 2, 2, meeting, rejected(meeting, Code.CLARIFICATION_UNNECESSARY), parent=meeting.id)
        catalog.record(a, 3, 1, None, None, failure=Failure(code=FailureCode.SCHEMA_INVALID, message="not JSON"),
                       workflow="create-several-todos")
        b = catalog.start_run("b", "offline")
        catalog.record(b, 0, 1, meeting, accepted(meeting))
    return path, a, b


@pytest.fixture
def filled(filled_catalog_file: tuple[Path, int, int], tmp_path: Path) -> Iterator[tuple[Catalog, int, int]]:
    """A write session on this test's own copy of the module's filled catalog, with its run ids A and B."""
    source, a, b = filled_catalog_file
    with Catalog.open(copy_catalog(source, tmp_path / "catalog.duckdb")) as catalog:
        yield catalog, a, b


def test_slot_states_for_resume(filled: tuple[Catalog, int, int],
                                 packages: dict[str, TaskPackage]) -> None:
    catalog, a, b = filled
    states = catalog.slot_states(a)
    assert {s: (st.attempts, st.accepted, st.accepted_id) for s, st in states.items()} == {
        0: (1, True, packages["todo-three-items"].id),
        1: (2, True, packages["contacts-send-message"].id),
        2: (2, False, None),
        3: (1, False, None),
    }
    assert catalog.accepted_count(a) == 2 and catalog.accepted_count(b) == 1 and catalog.accepted_count() == 3
    assert catalog.slot_states(999) == {}


def test_contains_id_and_find_duplicate(filled: tuple[Catalog, int, int], packages: dict[str, TaskPackage]) -> None:
    catalog, _, _ = filled
    todo = packages["todo-three-items"]
    assert catalog.contains_id(todo.id)
    assert not catalog.contains_id("pkg-0000000000000000")
    assert catalog.find_duplicate(todo.id, "unrelated") == todo.id
    assert catalog.find_duplicate("pkg-0000000000000000", near_key(todo)) == todo.id
    assert catalog.find_duplicate("pkg-0000000000000000", "unrelated") is None


def test_only_accepted_rows_count_as_duplicates(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    package = packages["todo-three-items"]
    run = catalog.start_run("r", "offline")
    catalog.record(run, 0, 1, package, rejected(package, Code.REFERENCE_ERROR))
    assert not catalog.contains_id(package.id)
    assert catalog.contains_id(package.id, accepted_only=False)
    assert catalog.find_duplicate(package.id, near_key(package)) is None


def test_a_near_duplicate_differs_only_in_wording_of_tools(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    package = packages["todo-three-items"]
    reworded = package.model_copy(update={"tools": [t.model_copy(update={"description": "Other words."})
                                                    for t in package.tools],
                                          "request": package.request.model_copy(
                                              update={"text": package.request.text.upper() + "!!"})}).with_id()
    assert reworded.id != package.id
    catalog.record(catalog.start_run("r", "offline"), 0, 1, package, accepted(package))
    [finding] = duplicate_findings(reworded, catalog)
    assert finding.code == Code.DUPLICATE_PACKAGE and finding.detail == {"duplicate_of": package.id}


def test_verify_with_the_catalog_as_dedup_index(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    """The same package verified twice against the catalog: accepted, then a duplicate; both rows kept."""
    package = packages["contacts-send-message"]
    run = catalog.start_run("r", "offline")
    first = verify_package(package, dedup=catalog)
    assert first.accepted, first.codes
    catalog.record(run, 0, 1, package, first)
    second = verify_package(package, dedup=catalog)
    assert second.codes == ["duplicate_package"]
    catalog.record(run, 1, 1, package, second)
    assert [(r.slot, r.status) for r in catalog.show(package.id)] == [(0, "accepted"), (1, "rejected")]


# --------------------------------------------------------------------------- curation views


def test_stats_summary_repairs_and_rejections(filled: tuple[Catalog, int, int]) -> None:
    catalog, _, _ = filled
    stats = catalog.stats()
    assert (stats.runs, stats.packages, stats.accepted, stats.rejected) == (2, 7, 3, 4)
    assert stats.acceptance_rate == pytest.approx(3 / 7)
    by = {(r.capability, r.workflow): (r.accepted, r.rejected, r.acceptance_rate) for r in stats.by_workflow}
    assert by == {
        ("general", "create-several-todos"): (1, 1, 0.5),
        ("general", "message-a-colleague"): (1, 1, 0.5),
        ("multi-turn", "schedule-meeting-after-clarification"): (1, 2, pytest.approx(1 / 3)),
    }
    repairs = {(r.capability, r.workflow): (r.first_rejected, r.repaired) for r in stats.repairs}
    assert repairs[("general", "message-a-colleague")] == (1, 1)
    assert repairs[("multi-turn", "schedule-meeting-after-clarification")] == (1, 0)
    assert repairs[("general", "create-several-todos")] == (1, 0)
    assert (stats.first_rejected, stats.repaired) == (3, 1)
    assert stats.repair_rate == pytest.approx(1 / 3)
    assert [(r.code, r.packages, r.findings) for r in stats.rejections] == [
        ("clarification_unnecessary", 2, 2), ("grader_underconstrained", 2, 2), ("schema_invalid", 1, 1)]
    assert stats.rejections == catalog.rejections()


def test_accepted_packages_view(filled: tuple[Catalog, int, int]) -> None:
    catalog, _, _ = filled
    assert raw(catalog, "SELECT count(*), bool_and(status = 'accepted') FROM accepted_packages") == [[3, True]]


def test_llm_totals(catalog: Catalog, packages: dict[str, TaskPackage]) -> None:
    package = packages["todo-three-items"]
    run = catalog.start_run("r", "llm")
    catalog.record(run, 0, 1, package, accepted(package),
                   [LLMCall(model="m", prompt_tokens=100, completion_tokens=40, latency_s=1.5)] * 2)
    stats = catalog.stats()
    assert (stats.llm_calls, stats.prompt_tokens, stats.completion_tokens, stats.llm_latency_s) == (2, 200, 80, 3.0)


def test_empty_catalog_stats(catalog: Catalog) -> None:
    stats = catalog.stats()
    assert (stats.packages, stats.acceptance_rate, stats.repair_rate, stats.by_workflow) == (0, None, None, [])


# --------------------------------------------------------------------------- read-only SQL


def test_query_returns_columns_rows_and_truncation(filled: tuple[Catalog, int, int]) -> None:
    catalog, a, _ = filled
    result = catalog.query(f"SELECT slot, attempt FROM packages WHERE run = {a} ORDER BY slot, attempt;")
    assert result.columns == ["slot", "attempt"]
    assert result.rows == [[0, 1], [1, 1], [1, 2], [2, 1], [2, 2], [3, 1]] and not result.truncated
    limited = catalog.query("SELECT row_id FROM packages ORDER BY row_id", max_rows=2)
    assert limited.rows == [[1], [2]] and limited.truncated


@pytest.mark.parametrize("sql", [
    "DELETE FROM packages",
    "DROP TABLE packages",
    "INSERT INTO runs (name, generator, parameters, started, status) VALUES ('x', 'y', '{}', now(), 'running')",
    "UPDATE packages SET status = 'accepted'",
    "CREATE TABLE t AS SELECT 1",
    "CREATE TEMP TABLE t AS SELECT 1",
    "ALTER TABLE packages ADD COLUMN x INT",
    "COPY packages TO '{out}'",
    "EXPORT DATABASE '{out}'",
    "ATTACH '{out}' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET threads = 1",
    "PRAGMA enable_profiling",
    "CALL pragma_version()",
    "CHECKPOINT",
    "BEGIN TRANSACTION",
    "SELECT 1; DELETE FROM packages",
    "",
])
def test_query_refuses_anything_but_one_select(filled: tuple[Catalog, int, int], tmp_path: Path, sql: str) -> None:
    catalog, _, _ = filled
    out = tmp_path / "leak"
    before = raw(catalog, "SELECT count(*) FROM packages")
    with pytest.raises(CatalogError) as info:
        catalog.query(sql.replace("{out}", str(out)))
    assert "\n" not in str(info.value)
    assert raw(catalog, "SELECT count(*) FROM packages") == before == [[7]]
    assert not out.exists()


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM glob('/*')",
])
def test_a_select_cannot_reach_the_file_system(catalog: Catalog, sql: str) -> None:
    with pytest.raises(CatalogError, match="query failed"):
        catalog.query(sql)


@pytest.mark.parametrize("sql", ["FROM summary", "WITH x AS (SELECT 1 AS a) SELECT a FROM x", "DESCRIBE packages",
                                 "SHOW TABLES", "VALUES (1)", "SUMMARIZE runs"])
def test_read_forms_are_allowed(catalog: Catalog, sql: str) -> None:
    assert catalog.query(sql).columns


def test_query_error_is_one_line(catalog: Catalog) -> None:
    with pytest.raises(CatalogError, match="^query failed: .*nowhere") as info:
        catalog.query("SELECT * FROM nowhere")
    assert "\n" not in str(info.value)


def test_read_only_catalog_refuses_writes(empty_catalog: Path) -> None:
    with Catalog.open(empty_catalog, read_only=True) as reader, pytest.raises(CatalogError, match="read-only"):
        reader.start_run("r", "offline")


def test_closed_catalog_says_so(empty_catalog: Path) -> None:
    cat = Catalog.open(empty_catalog)
    cat.close()
    with pytest.raises(CatalogError, match="closed"):
        cat.stats()


def test_a_catalog_left_without_its_tables_is_explained_in_words(tmp_path: Path,
                                                                 synth: Callable[..., CliResult]) -> None:
    """A kill while the file is created leaves a DuckDB file without synth's tables."""
    empty, foreign = tmp_path / "empty.duckdb", tmp_path / "foreign.duckdb"
    duckdb.connect(str(empty)).close()
    with duckdb.connect(str(foreign)) as con:
        con.execute("CREATE TABLE mine (x INTEGER)")
    result = synth("catalog", "stats", "--catalog", empty)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "is empty: the file was created but synth's tables never written in it" in result.stderr
    assert "schema version" not in result.stderr
    result = synth("catalog", "stats", "--catalog", foreign)
    assert result.exit_code == 2 and "is not a synth catalog (it holds the tables mine" in result.stderr
    with Catalog.open(empty) as catalog:  # a command that writes sets it up
        assert catalog.query("SELECT count(*) FROM packages").rows == [[0]]

"""Exports from the catalog (pipeline/interop/export.py): JSONL and Parquet records ready for
Hugging Face ``datasets``, ``--where`` filters, atomic replacement, and the format registry."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest
from pydantic import BaseModel

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.selection import EXPORT_COLUMNS, Selection
from pipeline.catalog.store import Catalog
from pipeline.core.codes import Code
from pipeline.core.outcomes import Failure, FailureCode, Finding, Verdict
from pipeline.core.package import TaskPackage, load_package
from pipeline.core.training_format import Policy
from pipeline.interop import export as export_module
from pipeline.interop.export import export_catalog
from tests.conftest import CliResult, copy_catalog, load_examples


@pytest.fixture
def packages() -> list[TaskPackage]:
    return load_examples()


@pytest.fixture(scope="module")
def catalog_file(empty_catalog_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once per module and shared (tests only read it): every example accepted (slots 0..2), the
    first also rejected in slot 3, one generation failure."""
    path = copy_catalog(empty_catalog_template, tmp_path_factory.mktemp("export") / "catalog.duckdb")
    packages = load_examples()
    with Catalog.open(path) as writer:
        run = writer.start_run("r", "offline", capability="general")
        for slot, package in enumerate(packages):
            writer.record(run, slot, 1, package, Verdict.build(package.id, [], 1.0))
        dup = Finding(code=Code.DUPLICATE_PACKAGE, message="dup")
        writer.record(run, len(packages), 1, packages[0], Verdict.build(packages[0].id, [dup], 1.0))
        writer.record(run, len(packages) + 1, 1, None, None,
                      failure=Failure(code=FailureCode.SCHEMA_INVALID, message="no JSON"))
    return path


@pytest.fixture
def catalog(catalog_file: Path) -> Iterator[Catalog]:
    """The module's catalog opened read-only (DuckDB refuses every write on it)."""
    with Catalog.open(catalog_file, read_only=True) as reader:
        yield reader


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_jsonl_exports_accepted_packages_as_nested_objects(catalog: Catalog, packages: list[TaskPackage],
                                                           tmp_path: Path) -> None:
    out = tmp_path / "out" / "train.jsonl"
    summary = export_catalog(catalog, "jsonl", out)
    records = read_jsonl(out)
    assert (summary.rows, summary.path, summary.status, summary.format) == (len(packages), str(out), "accepted", "jsonl")
    assert len(records) == len(packages)
    for record, package in zip(records, packages, strict=True):
        assert tuple(record) == EXPORT_COLUMNS
        assert record["id"] == package.id and record["request"] == package.request.text
        assert (record["capability"], record["workflow"], record["difficulty"]) == (
            package.capability, package.workflow, package.difficulty)
        assert record["services"] == package.services and record["score"] == 1.0
        assert isinstance(record["package"], dict)
        assert load_package(record["package"]) == package


def test_parquet_has_flat_columns_and_the_package_as_a_json_string(catalog: Catalog, packages: list[TaskPackage],
                                                                   tmp_path: Path) -> None:
    out = tmp_path / "train.parquet"
    assert export_catalog(catalog, "parquet", out).rows == len(packages)
    con = duckdb.connect()
    try:
        described = {name: kind for name, kind, *_ in con.execute("DESCRIBE SELECT * FROM read_parquet(?)",
                                                                  [str(out)]).fetchall()}
        rows = con.execute("SELECT id, services, package FROM read_parquet(?)", [str(out)]).fetchall()
    finally:
        con.close()
    assert tuple(described) == EXPORT_COLUMNS
    assert described["package"] == "VARCHAR" and described["services"] == "VARCHAR[]"
    assert described["score"] == "DOUBLE"
    assert [(r[0], r[1]) for r in rows] == [(p.id, p.services) for p in packages]
    assert [load_package(r[2]) for r in rows] == packages


def test_parquet_reads_in_pyarrow_as_plain_types(catalog: Catalog, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "train.parquet"
    export_catalog(catalog, "parquet", out)
    table = pq.read_table(out)
    assert str(table.schema.field("package").type) == "string"
    assert str(table.schema.field("services").type).startswith("list<")
    assert json.loads(table.column("package")[0].as_py())["schema_version"] == 1


def test_where_filters_over_package_columns(catalog: Catalog, tmp_path: Path) -> None:
    out = tmp_path / "multi.jsonl"
    summary = export_catalog(catalog, "jsonl", out, where="turn_count > 0 AND list_contains(services, 'calendar')")
    assert summary.rows == 1 and summary.where is not None
    assert [r["capability"] for r in read_jsonl(out)] == ["multi-turn"]


def test_status_filter(catalog: Catalog, packages: list[TaskPackage], tmp_path: Path) -> None:
    rejected = export_catalog(catalog, "jsonl", tmp_path / "rejected.jsonl", status="rejected")
    records = read_jsonl(tmp_path / "rejected.jsonl")
    assert rejected.rows == 2
    assert [r["id"] for r in records] == [packages[0].id, None]
    assert records[1]["package"] is None
    assert export_catalog(catalog, "jsonl", tmp_path / "all.jsonl", status="all").rows == len(packages) + 2
    with pytest.raises(CatalogError, match="unknown status filter"):
        export_catalog(catalog, "jsonl", tmp_path / "x.jsonl", status="pending")  # type: ignore[arg-type]


@pytest.mark.parametrize("where", [
    "1 = 1; DROP TABLE packages",
    "status = 'accepted', 1 = 1",
    "1 = 1) UNION SELECT * FROM runs WHERE (1 = 1",
    "SELECT 1",
    "",
])
def test_where_must_be_one_expression(catalog: Catalog, tmp_path: Path, where: str) -> None:
    out = tmp_path / "x.jsonl"
    with pytest.raises(CatalogError, match="--where"):
        export_catalog(catalog, "jsonl", out, where=where)
    assert not out.exists()
    assert catalog.stats().packages == 5


def test_a_trailing_comment_cannot_widen_the_filter(catalog: Catalog, tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    assert export_catalog(catalog, "jsonl", out, where="turn_count > 0 -- OR true").rows == 1


def test_where_naming_an_unknown_column_lists_the_columns(catalog: Catalog, tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="the packages columns are: row_id, id, run"):
        export_catalog(catalog, "jsonl", tmp_path / "x.jsonl", where="colour = 'red'")


def test_a_failed_export_leaves_the_previous_file(catalog: Catalog, tmp_path: Path) -> None:
    out = tmp_path / "train.jsonl"
    export_catalog(catalog, "jsonl", out)
    before = out.read_bytes()
    with pytest.raises(CatalogError):
        export_catalog(catalog, "jsonl", out, where="no_such_column > 1")
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_unknown_format_lists_the_formats(catalog: Catalog, tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="choose one of: jsonl, parquet"):
        export_catalog(catalog, "xml", tmp_path / "x.xml")


class _IdsSummary(BaseModel):
    rows: int
    skipped: int


def test_a_format_is_one_registry_entry(catalog: Catalog, packages: list[TaskPackage], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def ids(selection: Selection, out: Path, _policy: Policy) -> _IdsSummary:
        parsed = list(selection.packages())
        out.write_text("".join(p.id + "\n" for p in parsed))
        return _IdsSummary(rows=len(parsed), skipped=0)

    monkeypatch.setitem(export_module.FORMATS, "ids", export_module.Format(ids, "ids.txt"))
    summary = export_catalog(catalog, "ids", tmp_path / "ids.txt", status="all")
    assert (tmp_path / "ids.txt").read_text().split() == [p.id for p in packages] + [packages[0].id]
    assert summary.rows == len(packages) + 1 and summary.details == {"skipped": 0}


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "sft", "openenv"])
def test_an_export_that_selects_nothing_is_an_error_saying_so(catalog_file: Path, tmp_path: Path, fmt: str,
                                                                synth: Callable[..., CliResult]) -> None:
    """A filter that selects nothing writes no empty dataset: one line saying what selected nothing,
    exit 2 (as every mistake of the command line), nothing at --out."""
    out = tmp_path / ("o" if fmt == "openenv" else f"o.{fmt}")
    done = synth("export", "--format", fmt, "--catalog", catalog_file, "--where", "turn_count > 99", "--out", out)
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.strip() == (f"error: no {fmt} written: the catalog has no accepted row matching --where "
                                   "'turn_count > 99'; `synth catalog stats` shows what it holds")
    assert not out.exists() or not any(out.iterdir())


def test_an_export_from_rollouts_with_none_says_there_is_none(catalog: Catalog, tmp_path: Path) -> None:
    with pytest.raises(CatalogError) as nothing:
        export_catalog(catalog, "sft", tmp_path / "s.jsonl", source="rollouts", model="m")
    assert str(nothing.value) == (f"no sft written: the {len(load_examples())} selected packages have no passing "
                                  "rollout of m; `synth rollout` plays them")

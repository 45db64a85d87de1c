"""``synth catalog stats|query|show|rejections`` and ``synth export`` (pipeline/cli_catalog.py).

Output is checked in-process with typer's CliRunner, error paths with the ``synth`` fixture
(``main()``, the entry point that prints one line and exits, in this process); one case runs the
installed ``synth`` in a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.catalog.store import Catalog
from pipeline.cli import app
from pipeline.core.codes import Code
from pipeline.core.outcomes import Verdict
from pipeline.core.package import TaskPackage, load_package
from tests.conftest import CliResult, copy_catalog, load_examples, refusal

SYNTH = Path(sys.executable).parent / "synth"
runner = CliRunner()


@pytest.fixture
def packages() -> list[TaskPackage]:
    return load_examples()


@pytest.fixture(scope="module")
def filled_catalog_file(empty_catalog_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once per module: examples accepted in slots 0..2; the first rejected again in slot 3 with
    a [bracketed] message. Closed; tests get copies (``catalog_path``)."""
    path = copy_catalog(empty_catalog_template, tmp_path_factory.mktemp("cli-catalog") / "catalog.duckdb")
    packages = load_examples()
    with Catalog.open(path) as writer:
        run = writer.start_run("cli", "offline")
        for slot, package in enumerate(packages):
            writer.record(run, slot, 1, package, Verdict.build(package.id, [], 1.0))
        finding = refusal(Code.GRADER_COUNTS_CALLS, "three [identical] creates pass", step=2)
        writer.record(run, len(packages), 1, packages[0], Verdict.build(packages[0].id, [finding], 0.9))
    return path


@pytest.fixture
def catalog_path(filled_catalog_file: Path, tmp_path: Path) -> Path:
    """This test's own copy of the module's filled catalog, ``tmp_path / "catalog.duckdb"``."""
    return copy_catalog(filled_catalog_file, tmp_path / "catalog.duckdb")


def invoke(*args: str | Path) -> str:
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    return result.output


def test_stats_json_and_table(catalog_path: Path, packages: list[TaskPackage]) -> None:
    data = json.loads(invoke("catalog", "stats", "--catalog", catalog_path, "--json"))
    assert (data["packages"], data["accepted"], data["rejected"]) == (4, 3, 1)
    assert {(r["workflow"], r["accepted"], r["rejected"]) for r in data["by_workflow"]} == {
        (p.workflow, 1, int(i == 0)) for i, p in enumerate(packages)}
    table = invoke("catalog", "stats", "--catalog", catalog_path)
    assert "1 run: 4 generated rows, 3 accepted, 1 rejected (75.0% accepted)" in table
    for package in packages:
        assert package.workflow in table
    assert "grader_counts_calls" in table


def test_rejections(catalog_path: Path) -> None:
    data = json.loads(invoke("catalog", "rejections", "--catalog", catalog_path, "--json"))
    assert data == [{"code": "grader_counts_calls", "packages": 1, "findings": 1,
                     "description": "repeating one create instead of distinct creates keeps 0.75 or more, or one "
                                    "create made twice keeps full marks", "on_reading": 0}]
    assert "repeating one create" in invoke("catalog", "rejections", "--catalog", catalog_path)


def test_query_json_and_table(catalog_path: Path, packages: list[TaskPackage]) -> None:
    sql = "SELECT slot, id, services FROM packages ORDER BY row_id"
    data = json.loads(invoke("catalog", "query", sql, "--catalog", catalog_path, "--json"))
    assert data["columns"] == ["slot", "id", "services"]
    assert data["rows"][0] == [0, packages[0].id, packages[0].services]
    assert not data["truncated"]
    limited = json.loads(invoke("catalog", "query", sql, "--max-rows", "1", "--catalog", catalog_path, "--json"))
    assert len(limited["rows"]) == 1 and limited["truncated"]
    table = invoke("catalog", "query", sql, "--catalog", catalog_path)
    assert packages[1].id in table and "4 rows" in table


def test_show_json_and_table(catalog_path: Path, packages: list[TaskPackage]) -> None:
    data = json.loads(invoke("catalog", "show", packages[0].id, "--catalog", catalog_path, "--json"))
    assert [(r["slot"], r["status"]) for r in data] == [(0, "accepted"), (3, "rejected")]
    assert load_package(data[0]["package"]) == packages[0]
    table = invoke("catalog", "show", packages[0].id, "--catalog", catalog_path)
    assert "three [identical] creates pass" in table  # markup in stored text is printed, not interpreted
    assert packages[0].request.text in table


def test_export_summary(catalog_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "data.parquet"
    data = json.loads(invoke("export", "--format", "parquet", "--out", out, "--where", "turn_count = 0",
                             "--catalog", catalog_path, "--json"))
    assert (data["rows"], data["path"], data["format"], data["status"]) == (2, str(out), "parquet", "accepted")
    assert out.is_file()
    text = invoke("export", "--format", "jsonl", "--out", tmp_path / "all.jsonl", "--status", "all",
                  "--catalog", catalog_path)
    assert f"wrote 4 all rows as jsonl to {tmp_path / 'all.jsonl'}" in text


@pytest.mark.parametrize(("args", "message"), [
    (("catalog", "query", "DELETE FROM packages"), "refused a DELETE statement"),
    (("catalog", "query", "DROP TABLE packages"), "refused a DROP statement"),
    (("catalog", "query", "COPY packages TO 'leak.csv'"), "refused a COPY statement"),
    (("catalog", "show", "pkg-does-not-exist"), "no package id or row"),
    (("export", "--format", "jsonl", "--out", "x.jsonl", "--where", "1=1; DELETE FROM packages"), "without ';'"),
    (("export", "--format", "csv", "--out", "x.csv"), "unknown export format 'csv'"),
])
def test_errors_are_one_line_and_change_nothing(catalog_path: Path, tmp_path: Path, args: tuple[str, ...],
                                                message: str, monkeypatch: pytest.MonkeyPatch,
                                                synth: Callable[..., CliResult]) -> None:
    monkeypatch.chdir(tmp_path)
    result = synth(*args, "--catalog", catalog_path)
    assert result.exit_code == 2
    err = result.stderr
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    with Catalog.open(catalog_path, read_only=True) as reader:
        assert reader.query("SELECT count(*) FROM packages").rows == [[4]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog.duckdb"]  # no output, no write session


def test_missing_catalog_in_the_installed_command(tmp_path: Path) -> None:
    result = subprocess.run([str(SYNTH), "catalog", "stats", "--catalog", str(tmp_path / "none.duckdb")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith("error: no catalog at") and result.stderr.count("\n") == 1
    assert not (tmp_path / "none.duckdb").exists()


def test_default_catalog_is_output_catalog_duckdb(tmp_path: Path, packages: list[TaskPackage],
                                                  monkeypatch: pytest.MonkeyPatch, empty_catalog_template: Path) -> None:
    with Catalog.open(copy_catalog(empty_catalog_template, tmp_path / "output" / "catalog.duckdb")) as writer:
        run = writer.start_run("default", "offline")
        writer.record(run, 0, 1, packages[0], Verdict.build(packages[0].id, [], 1.0))
    monkeypatch.chdir(tmp_path)
    assert json.loads(invoke("catalog", "stats", "--json"))["accepted"] == 1

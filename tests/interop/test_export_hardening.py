"""``synth export`` against hostile data and awkward destinations: package ids that are paths, a
``--where`` that reaches for files, ``--out`` naming a folder or an unwritable place, the default
destination under ``output/``, and progress reporting."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.store import Catalog
from pipeline.cli.progress import CountProgress
from pipeline.core.outcomes import Verdict
from pipeline.core.package import TaskPackage, load_package
from pipeline.interop import export as export_module
from pipeline.interop.clawenvkit_export import export_clawenvkit
from pipeline.interop.export import export_catalog
from tests.conftest import EXAMPLE_NAMES, EXAMPLES_DIR, CliResult
from tests.interop.test_clawenvkit_export import accepted_claw_package

SECRET = "top-secret-line-42"


def examples() -> list[TaskPackage]:
    return [load_package(json.loads((EXAMPLES_DIR / f"{n}.json").read_text())).with_id() for n in EXAMPLE_NAMES]


def fill(path: Path, packages: list[TaskPackage]) -> Path:
    with Catalog.open(path) as writer:
        run = writer.start_run("r", "offline", capability="general")
        for slot, package in enumerate(packages):
            writer.record(run, slot, 1, package, Verdict.build(package.id or package.compute_id(), [], 1.0))
    return path


@pytest.fixture
def catalog_path(empty_catalog: Path) -> Path:
    return fill(empty_catalog, examples())


def _files(folder: Path) -> list[str]:
    """Everything under ``folder`` but the catalog's own files."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if not p.name.startswith("catalog.duckdb"))


# --------------------------------------------------------------------------- ids that are paths


@pytest.mark.parametrize("bad_id", ["../../escaped", "/tmp/escaped-abs", "pkg-../../x", "pkg-0123456789ABCDEF"])
def test_a_package_id_that_is_a_path_never_becomes_a_file(empty_catalog: Path, tmp_path: Path, bad_id: str,
                                                          synth: Callable[..., CliResult]) -> None:
    tampered = examples()[0].model_copy(update={"id": bad_id})
    fill(empty_catalog, [tampered])
    before = _files(tmp_path)
    result = synth("export", "--format", "clawenvkit", "--out", tmp_path / "a" / "b" / "tasks",
                   "--catalog", empty_catalog)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert f"package id {bad_id!r} is not of the form pkg-<16 hex digits>" in result.stderr
    assert sorted(set(_files(tmp_path)) - set(before)) == ["a", "a/b"]  # nothing written, nothing left over
    assert not Path("/tmp/escaped-abs.yaml").exists()


def test_export_clawenvkit_checks_ids_it_is_given(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="is not of the form pkg-"):
        export_clawenvkit([accepted_claw_package().model_copy(update={"id": "../x"})], tmp_path / "out")
    assert not (tmp_path / "x.yaml").exists()
    summary = export_clawenvkit([accepted_claw_package().model_copy(update={"id": ""})], tmp_path / "out")  # id computed
    assert Path(summary.tasks[0].path).parent == tmp_path / "out"


def test_other_formats_refuse_a_tampered_id_too(empty_catalog: Path, tmp_path: Path) -> None:
    fill(empty_catalog, [examples()[0].model_copy(update={"id": "../../x"})])
    with Catalog.open(empty_catalog, read_only=True) as reader, pytest.raises(CatalogError, match="pkg-<16 hex"):
        export_catalog(reader, "sft", tmp_path / "sft.jsonl")
    assert not (tmp_path / "sft.jsonl").exists()


# --------------------------------------------------------------------------- --where is sandboxed


@pytest.mark.parametrize("where", [
    "EXISTS (SELECT * FROM read_csv('{secret}'))",
    "CAST((SELECT column0 FROM read_csv('{secret}', header = false)) AS INTEGER) > 0",
    "length((SELECT content FROM read_text('{secret}'))) > 0",
])
def test_where_cannot_read_files(catalog_path: Path, tmp_path: Path, where: str,
                                 synth: Callable[..., CliResult]) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text(f"{SECRET}\n")
    out = tmp_path / "out.jsonl"
    result = synth("export", "--format", "jsonl", "--out", out, "--where", where.format(secret=secret),
                   "--catalog", catalog_path)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "may read only the packages columns, not files" in result.stderr
    assert SECRET not in result.stderr + result.stdout
    assert not out.exists()


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_copy_formats_still_write_their_file(catalog_path: Path, tmp_path: Path, fmt: str) -> None:
    with Catalog.open(catalog_path, read_only=True) as reader:
        summary = export_catalog(reader, fmt, tmp_path / f"x.{fmt}", where="turn_count >= 0")
    assert summary.rows == len(EXAMPLE_NAMES) and (tmp_path / f"x.{fmt}").stat().st_size > 0
    assert _files(tmp_path) == [f"x.{fmt}"]


# --------------------------------------------------------------------------- --out


def test_out_naming_a_folder_for_a_one_file_format(catalog_path: Path, tmp_path: Path,
                                                   synth: Callable[..., CliResult]) -> None:
    (tmp_path / "d").mkdir()
    result = synth("export", "--format", "jsonl", "--out", tmp_path / "d", "--catalog", catalog_path)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "is a folder; jsonl writes one file: pass a file path such as" in result.stderr
    assert _files(tmp_path / "d") == []


def test_clawenvkit_writes_a_new_or_empty_folder_only(catalog_path: Path, tmp_path: Path,
                                                      synth: Callable[..., CliResult]) -> None:
    fill(catalog_path, [accepted_claw_package()])
    out = tmp_path / "tasks"
    out.mkdir()
    assert synth("export", "--format", "clawenvkit", "--out", out, "--catalog", catalog_path).exit_code == 0
    assert _files(out) == [f"{accepted_claw_package().id}.yaml"]  # the default-profile examples are refused
    result = synth("export", "--format", "clawenvkit", "--out", out, "--catalog", catalog_path)
    assert result.exit_code == 2 and "already holds files" in result.stderr and result.stderr.count("\n") == 1
    (tmp_path / "file").write_text("x")
    result = synth("export", "--format", "clawenvkit", "--out", tmp_path / "file", "--catalog", catalog_path)
    assert result.exit_code == 2 and "is a file; clawenvkit writes a folder" in result.stderr


def test_an_unwritable_out_is_one_error(catalog_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        synth: Callable[..., CliResult]) -> None:
    (tmp_path / "plain").write_text("x")
    result = synth("export", "--format", "sft", "--out", tmp_path / "plain" / "sft.jsonl", "--catalog", catalog_path)
    assert result.exit_code == 2 and result.stderr.startswith("error: cannot write")
    assert "pass --out in a folder you can write" in result.stderr and result.stderr.count("\n") == 1

    def denied(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "touch", denied)
    result = synth("export", "--format", "jsonl", "--out", tmp_path / "x.jsonl", "--catalog", catalog_path)
    assert result.exit_code == 2 and "cannot write" in result.stderr and "Permission denied" in result.stderr


def test_without_out_an_export_goes_under_output(catalog_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 synth: Callable[..., CliResult]) -> None:
    monkeypatch.chdir(tmp_path)
    fill(catalog_path, [accepted_claw_package()])  # one package clawenvkit writes
    for fmt, name in [("jsonl", "packages.jsonl"), ("sft", "sft.jsonl"), ("clawenvkit", "clawenvkit")]:
        result = synth("export", "--format", fmt, "--catalog", catalog_path, "--json")
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["path"] == f"output/{name}"
        assert export_module.default_out(fmt) == Path("output") / name
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("catalog.duckdb")] == ["output"]
    assert sorted(p.name for p in (tmp_path / "output").iterdir()) == ["clawenvkit", "packages.jsonl", "sft.jsonl"]


def test_a_stale_partial_from_a_killed_export_is_replaced(catalog_path: Path, tmp_path: Path) -> None:
    (tmp_path / ".x.jsonl.partial").mkdir()
    with Catalog.open(catalog_path, read_only=True) as reader:
        export_catalog(reader, "jsonl", tmp_path / "x.jsonl")
    assert _files(tmp_path) == ["x.jsonl"]


# --------------------------------------------------------------------------- the summary of a clawenvkit export


def test_clawenvkit_export_of_default_packages_refuses_each_with_its_reason(catalog_path: Path, tmp_path: Path,
                                                                           synth: Callable[..., CliResult]) -> None:
    fill(catalog_path, [accepted_claw_package()])  # written, beside the refused ones
    result = synth("export", "--format", "clawenvkit", "--out", tmp_path / "t", "--catalog", catalog_path, "--json")
    details = json.loads(result.stdout)["details"]
    assert details["refused_by_reason"] == {"default_profile": len(EXAMPLE_NAMES)} and len(details["files"]) == 1
    table = synth("export", "--format", "clawenvkit", "--out", tmp_path / "t2", "--catalog", catalog_path).stdout
    assert "default_profile" in table and "generate with --services claw" in table


# --------------------------------------------------------------------------- progress


def test_export_reports_progress_over_rows(catalog_path: Path, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    with Catalog.open(catalog_path, read_only=True) as reader:
        export_catalog(reader, "sft", tmp_path / "s.jsonl", on_progress=lambda d, t: seen.append((d, t)))
        export_catalog(reader, "jsonl", tmp_path / "j.jsonl", on_progress=lambda d, t: seen.append((d, t)))
    n = len(EXAMPLE_NAMES)
    assert seen[: n + 2] == [(0, n), *[(i, n) for i in range(1, n + 1)], (n, n)]
    assert seen[n + 2:] == [(0, n), (n, n)]


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=100), buffer


def test_progress_off_a_terminal_is_plain_lines() -> None:
    console, buffer = _console(terminal=False)
    with CountProgress("exported", "rows", False, every_s=0.0, console=console) as progress:
        for done in range(1, 4):
            progress.update(done, 3)
    assert buffer.getvalue().splitlines() == ["exported 1 of 3 rows", "exported 2 of 3 rows", "exported 3 of 3 rows"]


def test_a_short_command_off_a_terminal_prints_no_progress() -> None:
    console, buffer = _console(terminal=False)
    with CountProgress("exported", "rows", False, every_s=3600.0, console=console) as progress:
        progress.update(3, 3)
    assert buffer.getvalue() == ""


def test_progress_on_a_terminal_is_a_bar_and_quiet_is_silent() -> None:
    console, buffer = _console(terminal=True)
    with CountProgress("exported", "rows", False, console=console) as progress:
        progress.update(2, 4)
    assert "exported" in buffer.getvalue() and "2/4" in buffer.getvalue()
    console, buffer = _console(terminal=True)
    with CountProgress("exported", "rows", True, console=console) as progress:
        progress.update(2, 4)
    assert buffer.getvalue() == ""


@pytest.mark.parametrize("where", [None, "1 = 0"])
def test_a_clawenvkit_export_that_writes_nothing_is_an_error_saying_why(catalog_path: Path, tmp_path: Path,
                                                                        where: str | None,
                                                                        synth: Callable[..., CliResult]) -> None:
    out = tmp_path / "tasks"
    result = synth("export", "--format", "clawenvkit", "--out", out, "--catalog", catalog_path,
                   *(["--where", where] if where else []))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: no ClawEnvKit task written: ")
    if where is None:  # the examples are packages of the default profile
        assert (f"each of the {len(EXAMPLE_NAMES)} packages selected was refused (default_profile "
                f"{len(EXAMPLE_NAMES)}); default_profile: services of synth's default profile; generate with "
                "--services claw") in result.stderr
    else:
        assert "the selection holds no package" in result.stderr
    assert not out.exists()

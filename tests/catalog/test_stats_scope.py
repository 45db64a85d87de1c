"""``Catalog.stats`` and ``synth catalog stats`` on a real catalog: a generation run, then the
README's import step (the run exported as ClawEnvKit tasks and imported back). Imported rows are
counted apart, never as rejected generations; ``run=`` / ``--run`` narrows every figure to one run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.store import Catalog
from pipeline.core.wording import counted
from pipeline.interop.export import export_catalog
from pipeline.runs.api import import_tasks, start_run
from pipeline.runs.options import RunOptions, RunSummary
from tests.conftest import CliResult, copy_catalog


@pytest.fixture(scope="module")
def run_and_import(empty_catalog_template: Path, tmp_path_factory: pytest.TempPathFactory
                   ) -> tuple[Path, RunSummary, int, int]:
    """Run 1 generates safety claw packages (some first attempts defective on
    purpose, so there are rejections and repairs); run 2 imports run 1's accepted packages exported
    as ClawEnvKit tasks (multi-turn ones are never exported: their tasks are single-turn).
    Returns the catalog, run 1's summary, run 2's id and how many tasks it imported."""
    folder = tmp_path_factory.mktemp("stats-scope")
    path = copy_catalog(empty_catalog_template, folder / "catalog.duckdb")
    summary = start_run(RunOptions(capability="safety", count=6, defect_rate=0.5, max_attempts=2, seed=3,
                                   service_profile="claw"), path)
    with Catalog.open(path, read_only=True) as reader:  # every package, whatever share of its weight carries
        export_catalog(reader, "clawenvkit", folder / "tasks", min_weight_share=0.0)
    imported = import_tasks([folder / "tasks"], catalog=path)
    assert imported.run_id is not None
    return path, summary, imported.run_id, len(imported.results)


def test_imported_rows_are_apart_from_generated_ones(run_and_import: tuple[Path, RunSummary, int, int]) -> None:
    path, run, import_run, tasks = run_and_import
    assert run.rejected_attempts > 0 and tasks == run.accepted == 6
    with Catalog.open(path, read_only=True) as reader:
        stats = reader.stats()
        every_code = {r.code for r in reader.rejections()}
    assert (stats.runs, stats.run) == (2, None)
    assert (stats.packages, stats.accepted, stats.rejected) == (6 + run.rejected_attempts, 6, run.rejected_attempts)
    assert stats.acceptance_rate == pytest.approx(6 / (6 + run.rejected_attempts))
    assert sum(r.accepted + r.rejected for r in stats.by_workflow) == stats.packages
    assert {r.code: r.packages for r in stats.rejections} == run.rejection_codes
    # repairs count run 1's slots only: each is first accepted, repaired, or first rejected for good
    assert stats.first_rejected == sum(r.first_rejected for r in stats.repairs) > 0
    assert (6 - stats.repaired) + stats.first_rejected == run.slots
    imported = stats.imported
    assert (imported.runs, imported.rows, imported.accepted, imported.rejected) == (1, tasks, 0, tasks)
    # an import has no reference: rejected with reference_error, which no generated row carries
    assert "reference_error" in {r.code for r in imported.rejections}
    assert "reference_error" not in {r.code for r in stats.rejections}
    assert {r.code for r in stats.rejections} | {r.code for r in imported.rejections} == every_code
    assert import_run == 2


def test_stats_of_one_run(run_and_import: tuple[Path, RunSummary, int, int]) -> None:
    path, run, import_run, tasks = run_and_import
    with Catalog.open(path, read_only=True) as reader:
        everything, generated, imported = reader.stats(), reader.stats(run=run.run_id), reader.stats(run=import_run)
        with pytest.raises(CatalogError, match="no run 9 in .*`synth catalog runs` lists them"):
            reader.stats(run=9)
    assert (generated.run, generated.runs, generated.imported.rows) == (run.run_id, 1, 0)
    mine = {"run", "runs", "imported"}
    assert generated.model_dump(exclude=mine) == everything.model_dump(exclude=mine)
    assert (imported.run, imported.runs, imported.packages, imported.by_workflow, imported.repairs) == (
        import_run, 1, 0, [], [])
    assert imported.acceptance_rate is None
    assert imported.imported == everything.imported


def test_synth_catalog_stats_run_and_json(run_and_import: tuple[Path, RunSummary, int, int],
                                          synth: Callable[..., CliResult]) -> None:
    path, run, import_run, tasks = run_and_import
    with Catalog.open(path, read_only=True) as reader:
        expected = reader.stats(run=import_run).model_dump(mode="json")
    assert json.loads(synth("catalog", "stats", "--run", str(import_run), "--catalog", path, "--json").stdout) == expected
    table = synth("catalog", "stats", "--catalog", path).stdout
    rate = f"{6 / (6 + run.rejected_attempts):.1%}"
    assert table.startswith(f"2 runs (1 import): {6 + run.rejected_attempts} generated rows, 6 accepted, "
                            f"{run.rejected_attempts} rejected ({rate} accepted)")
    assert f"imported: {counted(tasks, 'task row')} of 1 import run, 0 accepted, {tasks} rejected" in table
    only_import = synth("catalog", "stats", "--run", str(import_run), "--catalog", path).stdout
    assert only_import.startswith(f"run {import_run}: imported: {counted(tasks, 'task row')}")
    assert "generated rows by capability" not in only_import
    missing = synth("catalog", "stats", "--run", "9", "--catalog", path)
    assert missing.exit_code == 2 and missing.stderr.count("\n") == 1 and "no run 9" in missing.stderr

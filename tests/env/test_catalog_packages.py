"""``load_packages``: a catalog's packages, filtered, straight into ``TaskEnv``."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import RunOptions, TaskEnv, load_packages, start_run
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.store import Catalog
from pipeline.env.task_env import play_reference


@pytest.fixture
def two_runs(empty_catalog: Path) -> Path:
    """A catalog with run 1 (4 general packages, some attempts rejected) and run 2 (2 multi-turn)."""
    start_run(RunOptions(capability="general", count=4, max_attempts=1, defect_rate=0.5), empty_catalog)
    start_run(RunOptions(capability="multi-turn", count=2), empty_catalog)
    return empty_catalog


def _ids(catalog: Path, sql: str) -> list[str]:
    with Catalog.open(catalog, read_only=True) as opened:
        return [row[0] for row in opened.query(sql + " ORDER BY row_id").rows]


def test_the_accepted_packages_come_in_row_order_and_play_in_task_env(two_runs: Path) -> None:
    packages = load_packages(two_runs)
    assert [p.id for p in packages] == _ids(two_runs, "SELECT id FROM packages WHERE status = 'accepted'")
    assert len(packages) == 6
    for package in packages:
        assert play_reference(package, TaskEnv(package)).score().score == 1.0


def test_where_status_and_limit_select_rows(two_runs: Path) -> None:
    multi = load_packages(two_runs, where="capability = 'multi-turn'")
    assert [p.capability for p in multi] == ["multi-turn", "multi-turn"]
    rejected = load_packages(two_runs, status="rejected")
    assert [p.id for p in rejected] == _ids(
        two_runs, "SELECT id FROM packages WHERE status = 'rejected' AND package IS NOT NULL")
    assert rejected
    assert [p.id for p in load_packages(two_runs, limit=3)] == [p.id for p in load_packages(two_runs)][:3]
    with Catalog.open(two_runs, read_only=True) as opened:  # an open catalog works too
        assert len(load_packages(opened, where="run = 2")) == 2


def test_the_file_is_let_go_once_the_packages_are_read(two_runs: Path) -> None:
    packages = load_packages(two_runs, where="run = 1")
    start_run(RunOptions(capability="general", count=1), two_runs)  # a writer gets in at once
    assert len(packages) == 4


def test_mistakes_say_what_was_wrong(two_runs: Path, tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="no_such_column"):
        load_packages(two_runs, where="no_such_column = 1")
    with pytest.raises(CatalogError, match="no catalog at"):
        load_packages(tmp_path / "missing.duckdb")
    with pytest.raises(ValueError, match="limit"):
        load_packages(two_runs, limit=-1)

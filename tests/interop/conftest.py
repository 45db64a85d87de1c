"""Catalogs for the report's tests: two offline runs, and the same with rollout rows on known
packages with known outcomes; and ``chromium``, which the browser tests ask for."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from pipeline import RunOptions, start_run
from tests.conftest import copy_catalog
from tests.support.rollout_rows import RolloutRow, insert_rollouts


@pytest.fixture
def chromium() -> None:
    """Skip without Debian's Chromium (``tests/support/browser.py``); in CI (``CI`` set), fail instead."""
    from tests.support.browser import chromium_available

    if not chromium_available():
        if os.environ.get("CI"):
            pytest.fail("/usr/bin/chromium is missing: .ci/run installs it (apt-get install -y chromium)")
        pytest.skip("needs Debian's chromium: apt-get install -y chromium")


@dataclass(frozen=True)
class ReportCatalog:
    """A catalog of two runs (1: multi-turn with injected defects, 2: general) with rollouts on
    three packages of run 1 (``mt``) and one of run 2 (``gen``)."""

    path: Path
    mt: list[str]
    gen: str


@pytest.fixture(scope="session")
def runs_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run 1: multi-turn, 12 accepted, half the first attempts given a defect (so rows are
    rejected); run 2: general, 6 accepted. No rollouts. Copy it, never write it."""
    path = tmp_path_factory.mktemp("report-runs") / "catalog.duckdb"
    start_run(RunOptions(capability="multi-turn", count=12, defect_rate=0.5), path)
    start_run(RunOptions(capability="general", count=6), path)
    return path


@pytest.fixture(scope="session")
def report_catalog(runs_catalog: Path, tmp_path_factory: pytest.TempPathFactory) -> ReportCatalog:
    """``runs_catalog`` with rollouts. Model ``m1``: ``mt[0]`` 3 of 4 passed, ``mt[1]`` 0 of 4 (and one
    rollout ended by an error), ``mt[2]`` 4 of 4, ``gen`` 1 of 2; model ``m2``: ``mt[0]`` 1 of 2."""
    path = copy_catalog(runs_catalog, tmp_path_factory.mktemp("report-rollouts") / "catalog.duckdb")
    con = duckdb.connect(str(path), read_only=True)
    try:
        mt = [r[0] for r in con.execute("SELECT id FROM packages WHERE status = 'accepted' AND run = 1 "
                                        "ORDER BY row_id LIMIT 3").fetchall()]
        gen = con.execute("SELECT id FROM packages WHERE status = 'accepted' AND run = 2 ORDER BY row_id "
                          "LIMIT 1").fetchall()[0][0]
    finally:
        con.close()
    outcomes = {("m1", mt[0]): [True, True, True, False], ("m1", mt[1]): [False] * 4, ("m1", mt[2]): [True] * 4,
                ("m1", gen): [True, False], ("m2", mt[0]): [False, True]}
    rows = [RolloutRow(package, model, sample, passed)
            for (model, package), results in outcomes.items() for sample, passed in enumerate(results)]
    rows.append(RolloutRow(mt[1], "m1", 4, False, finish_reason="error"))
    insert_rollouts(path, rows)
    return ReportCatalog(path, mt, gen)

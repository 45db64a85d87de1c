"""Runs and rollouts on Ray (``--ray``): the same catalog as a local run, a killed worker survived,
``--resume`` after SIGKILL of the driver, rollouts equal to local ones; and the one line a user
without Ray gets. The slow tests share one local Ray instance (``ray.init(num_cpus=2)``)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.catalog.store import Catalog
from pipeline.cli import with_optional_values
from pipeline.runs.api import start_run
from pipeline.runs.options import Progress, RunOptions
from pipeline.runs.ray_cluster import LOCAL
from pipeline.runs.rollout import RolloutOptions, start_rollouts
from tests.conftest import CliResult, accepted_now, copy_catalog
from tests.support import processes
from tests.support.agent_server import ScriptedAgents
from tests.support.openai_server import OpenAIServer

SYNTH = [sys.executable, "-m", "pipeline.cli"]


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[None]:
    """One local Ray instance for the module's tests (``--ray`` uses a Ray this process joined)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def _contents(catalog: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Per slot and attempt: the package id, status, score, parent and failure; and every finding
    (timestamps and arrival order left out)."""
    return (_query(catalog, "SELECT slot, attempt, id, status, score, parent, workflow, sft_ready FROM packages "
                            "ORDER BY slot, attempt"),
            _query(catalog, "SELECT p.slot, p.attempt, f.n, f.code, f.message, f.kind FROM findings f "
                            "JOIN packages p ON p.row_id = f.package_row ORDER BY 1, 2, 3"))


def _query(catalog: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _accounted_for(catalog: Path, max_attempts: int) -> tuple[int, int]:
    """(accepted slots, slots) once each slot's attempts are 1..n with no gap, and each slot is
    accepted at its last attempt or used every attempt; ids accepted once."""
    rows = _query(catalog, "SELECT slot, list(attempt ORDER BY attempt), list(status ORDER BY attempt) FROM packages "
                           "GROUP BY slot")
    assert _query(catalog, "SELECT id FROM packages WHERE status = 'accepted' GROUP BY id HAVING count(*) > 1") == []
    for slot, attempts, statuses in rows:
        assert attempts == list(range(1, len(attempts) + 1)), slot
        assert statuses.count("accepted") <= 1 and "accepted" not in statuses[:-1], slot
        assert statuses[-1] == "accepted" or len(attempts) == max_attempts, slot
    return sum(s[-1] == "accepted" for _, _, s in rows), len(rows)


# --------------------------------------------------------------------------- without Ray


@pytest.mark.parametrize("command", [
    ("run", "-c", "general", "-n", "2"),
    ("rollout", "--model", "agent", "--base-url", "http://127.0.0.1:9/v1"),
])
def test_without_ray_the_flag_says_in_one_line_how_to_install_it(
        command: tuple[str, ...], tmp_path: Path, synth: Callable[..., CliResult],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, as when it is not installed
    catalog = tmp_path / "c.duckdb"
    result = synth(*command, "--ray", "--catalog", catalog)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --ray needs Ray, which is not installed here; install it with `pip install 'synth[ray]'`"]
    assert not catalog.exists()


def test_ray_without_an_address_means_a_ray_instance_on_this_machine() -> None:
    assert with_optional_values(["run", "--ray", "-n", "3"]) == ["run", "--ray", LOCAL, "-n", "3"]
    assert with_optional_values(["run", "-n", "3", "--ray"]) == ["run", "-n", "3", "--ray", LOCAL]
    assert with_optional_values(["run", "--ray", "auto"]) == ["run", "--ray", "auto"]
    assert with_optional_values(["run", "--ray", "10.0.0.5:6379", "-n", "3"]) == ["run", "--ray", "10.0.0.5:6379",
                                                                                  "-n", "3"]


# --------------------------------------------------------------------------- runs on Ray


@pytest.mark.slow
def test_a_run_on_ray_fills_the_catalog_a_local_run_does(ray_instance: None, tmp_path: Path) -> None:
    # defects on a third of first attempts: repairs, slots that fail every attempt, new slots
    options = RunOptions(capability="general", count=24, seed=5, defect_rate=0.35, max_attempts=2, concurrency=3)
    local = start_run(options, tmp_path / "local.duckdb")
    on_ray = start_run(options, tmp_path / "ray.duckdb", ray=LOCAL)
    assert (on_ray.accepted, on_ray.status) == (24, "finished")
    assert (on_ray.slots, on_ray.rejected_attempts, on_ray.failed_slots) == (
        local.slots, local.rejected_attempts, local.failed_slots)
    local_rows, local_findings = _contents(tmp_path / "local.duckdb")
    assert local.rejected_attempts > 0 and any(r[1] > 1 for r in local_rows)  # the run repaired slots
    assert _contents(tmp_path / "ray.duckdb") == (local_rows, local_findings)


@pytest.fixture
def model_server() -> Iterator[str]:
    """A local model server in its own process, 0.2 s per answer, each a distinct valid package; its URL."""
    proc, url = processes.model_server(0.2)
    try:
        yield url
    finally:
        proc.kill()
        proc.wait()


def _actor_pids(name: str) -> list[int]:
    """Processes running a Ray process named ``name`` (Ray titles them ``ray::<name>...``: an
    actor's class, or one of its own agents)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0].decode()
            except OSError:
                continue
            if command.startswith(f"ray::{name}"):
                found.append(int(entry))
    return found


@pytest.mark.slow
def test_a_killed_worker_loses_only_its_slots_in_flight(ray_instance: None, model_server: str, tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    killed: list[int] = []

    def kill_one_worker(progress: Progress) -> None:
        if progress.accepted >= 8 and not killed:
            [victim, *_] = _actor_pids("SlotWorker")
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    catalog = tmp_path / "c.duckdb"
    options = RunOptions(capability="general", count=60, concurrency=8)
    with caplog.at_level(logging.WARNING, logger="pipeline.runs.ray_cluster"):
        summary = start_run(options, catalog, model="m", base_url=model_server, on_progress=kill_one_worker,
                            ray=LOCAL)
    assert killed and "lost" in caplog.text
    assert (summary.accepted, summary.status) == (60, "finished")
    assert _accounted_for(catalog, options.max_attempts) == (60, summary.slots)


@pytest.mark.slow
def test_a_run_on_ray_resumes_after_its_driver_is_killed(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    env = {**os.environ, "SYNTH_MODEL": "offline"}
    agents_before = set(_actor_pids(""))
    driver = subprocess.Popen([*SYNTH, "run", "-c", "general", "-n", "400", "--concurrency", "16", "--ray",
                               "--catalog", str(catalog)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True, env=env)
    try:
        processes.wait_for(lambda: accepted_now(catalog) >= 20, timeout=120)
        driver.kill()  # SIGKILL: nothing of the driver runs on
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
        # The local Ray instance the killed driver started leaves two agents behind (docs/scaling.md):
        # `ray stop` would end every Ray on the machine, so the test ends its own by id.
        for pid in set(_actor_pids("DashboardAgent") + _actor_pids("RuntimeEnvAgent")) - agents_before:
            os.kill(pid, signal.SIGKILL)
    before = accepted_now(catalog)
    assert 20 <= before < 400
    resumed = subprocess.run([*SYNTH, "run", "--resume", "1", "--ray", "--json", "--catalog", str(catalog)],
                             capture_output=True, text=True, timeout=300, env=env, start_new_session=True)
    assert resumed.returncode == 0, resumed.stderr
    assert _accounted_for(catalog, 3) == (400, _accounted_for(catalog, 3)[1])
    with Catalog.open(catalog, read_only=True) as reader:
        assert reader.query("SELECT status FROM runs WHERE id = 1").rows[0][0] == "finished"


# --------------------------------------------------------------------------- rollouts on Ray


@pytest.mark.slow
def test_rollouts_on_ray_record_what_local_rollouts_do(ray_instance: None, tmp_path: Path) -> None:
    template = tmp_path / "template.duckdb"
    for capability in ("general", "multi-turn", "safety"):
        start_run(RunOptions(capability=capability, count=3), template)
    from pipeline import load_packages

    agents = ScriptedAgents(p.model_dump(mode="json") for p in load_packages(template))
    columns = ("package_id, model, sample, score, passed, checks, safety, safety_ok, turns, prompt_tokens, "
               "completion_tokens, finish_reason, error, messages")
    rows = {}
    with OpenAIServer(agents) as server:
        for where, ray in (("local", None), ("ray", LOCAL)):
            catalog = copy_catalog(template, tmp_path / f"{where}.duckdb")
            options = RolloutOptions(model="reference", base_url=server.base_url, samples=2, concurrency=4)
            summary = start_rollouts(options, catalog, ray=ray)
            assert (summary.rollouts, summary.status) == (18, "finished")
            with Catalog.open(catalog, read_only=True) as reader:
                rows[where] = reader.query(f"SELECT {columns} FROM rollouts ORDER BY package_id, sample").rows
    assert agents.unknown == 0
    assert len(rows["ray"]) == 18 and rows["ray"] == rows["local"]
    assert all(row[4] for row in rows["ray"])  # the reference passes every package


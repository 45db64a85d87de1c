"""Runs and rollouts on Ray (``--ray``): the same catalog as a local run, a killed worker survived,
``--resume`` after SIGKILL of the driver, rollouts equal to local ones; and the one line a user
without Ray gets. The slow tests share one local Ray instance (``ray.init(num_cpus=2)``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import duckdb
import pytest

from pipeline.catalog.rows import AttemptRow, prepare
from pipeline.catalog.store import Catalog
from pipeline.cli import with_optional_values
from pipeline.core.codes import Code
from pipeline.core.outcomes import Verdict
from pipeline.generation.base import Attempt
from pipeline.generation.offline import OfflineGenerator, generate_package, pick_template
from pipeline.runs.api import regenerate, start_run
from pipeline.runs.batch import BatchRun
from pipeline.runs.options import Progress, RunOptions
from pipeline.runs.ray_cluster import LOCAL, _Member
from pipeline.runs.ray_slots import RaySlots, SlotJob
from pipeline.runs.rollout import start_rollouts
from pipeline.runs.rollout_options import RolloutOptions, RolloutProgress
from tests.conftest import CliResult, accepted_now, copy_catalog, refusal
from tests.support import processes
from tests.support.agent_server import ScriptedAgents
from tests.support.event_loop import turn_when
from tests.support.openai_server import OpenAIServer

SYNTH = [sys.executable, "-m", "pipeline.cli"]
RAY_PATIENCE_S = 300.0
"""How long a test waits for a driver that starts a Ray instance of its own to get going: Ray's
start-up alone takes tens of seconds on a loaded machine."""


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
    ("regen",),
])
def test_without_ray_the_flag_says_in_one_line_how_to_install_it(
        command: tuple[str, ...], tmp_path: Path, synth: Callable[..., CliResult],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, as when it is not installed
    catalog = tmp_path / "c.duckdb"
    result = synth(*command, "--ray", "--catalog", catalog)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --ray needs Ray, which is not installed here; install it with `pip install 'synth-task-packages[ray]'`"]
    assert not catalog.exists()


def test_ray_without_an_address_means_a_ray_instance_on_this_machine() -> None:
    assert with_optional_values(["run", "--ray", "-n", "3"]) == ["run", "--ray", LOCAL, "-n", "3"]
    assert with_optional_values(["run", "-n", "3", "--ray"]) == ["run", "-n", "3", "--ray", LOCAL]
    assert with_optional_values(["run", "--ray", "auto"]) == ["run", "--ray", "auto"]
    assert with_optional_values(["run", "--ray", "10.0.0.5:6379", "-n", "3"]) == ["run", "--ray", "10.0.0.5:6379",
                                                                                  "-n", "3"]


# --------------------------------------------------------------------------- runs on Ray


class _Gang:
    """What ``RaySlots`` uses of a ``Gang``, without Ray: live actors, and the messages sent to each."""

    def __init__(self, actors: int) -> None:
        self.members = {index: _Member(None) for index in range(actors)}
        self.sent: dict[int, list[Any]] = {index: [] for index in range(actors)}

    def least_loaded(self) -> int:
        return min(self.members, key=lambda index: self.members[index].load)

    def send(self, index: int, message: Any) -> None:
        self.sent[index].append(message)


def test_a_lost_workers_slot_goes_on_from_its_last_committed_attempt_as_resume_does(empty_catalog: Path) -> None:
    package = generate_package("general", pick_template("general", 0), 1, 0).with_id()
    verdict = Verdict.build(package.id, [refusal(Code.GRADER_UNDERCONSTRAINED, "a dropped write passes")], 0.5)
    options = RunOptions(capability="general", count=1, max_attempts=3, verify_processes=0)

    async def lose_the_worker(batch: BatchRun) -> SlotJob:
        runner, gang = RaySlots(batch), _Gang(2)
        runner.gang = gang  # type: ignore[assignment]
        async with batch.writer.running():
            first = Attempt(capability="general", template=package.workflow, seed=1, slot=0, attempt=1)
            filling = asyncio.create_task(runner.fill(first, 3))
            await turn_when(lambda: any(gang.sent.values()), "the first attempt sent to a worker")
            [actor] = [index for index, sent in gang.sent.items() if sent]
            attempt = AttemptRow(run_id=batch.run_id, slot=0, attempt=1, package=package, verdict=verdict,
                                 generator="offline", capability="general", workflow=package.workflow)
            runner.on_batch(actor, [prepare(attempt)])  # the worker's attempt 1, rejected, is committed
            await asyncio.wait_for(asyncio.gather(*runner._commits[actor]), 10)
            del gang.members[actor]
            await runner.on_lost(actor)
            [job] = gang.sent[1 - actor]
            filling.cancel()
            return job

    with Catalog.open(empty_catalog) as catalog:
        run_id = catalog.start_run("t", "offline", None, "general")
        batch = BatchRun(catalog, OfflineGenerator(), options, run_id)
        try:
            job = asyncio.run(lose_the_worker(batch))
        finally:
            batch.verifier.close()
    assert (job.first.slot, job.first.attempt, job.last_attempt) == (0, 2, 3)
    assert job.first.parent == package  # read back from the catalog, as --resume reads it
    assert [f.code for f in job.first.findings] == [Code.GRADER_UNDERCONSTRAINED]




@pytest.mark.slow
def test_a_run_on_ray_fills_the_catalog_a_local_run_does(ray_instance: None, tmp_path: Path) -> None:
    # defects on a third of first attempts: repairs, slots that fail every attempt, new slots
    options = RunOptions(capability="general", count=24, seed=5, defect_rate=0.35, max_attempts=2, concurrency=3)
    local = start_run(options, tmp_path / "local.duckdb")
    on_ray = start_run(options, tmp_path / "ray.duckdb", ray=LOCAL)
    assert (on_ray.accepted, on_ray.status) == (24, "finished")
    assert on_ray.elapsed_s > on_ray.work_s  # the workers' start and end are timed too
    assert (on_ray.slots, on_ray.rejected_attempts, on_ray.failed_slots) == (
        local.slots, local.rejected_attempts, local.failed_slots)
    local_rows, local_findings = _contents(tmp_path / "local.duckdb")
    assert local.rejected_attempts > 0 and any(r[1] > 1 for r in local_rows)  # the run repaired slots
    assert _contents(tmp_path / "ray.duckdb") == (local_rows, local_findings)


@pytest.mark.slow
def test_a_regeneration_on_ray_records_what_a_local_one_does(ray_instance: None, tmp_path: Path) -> None:
    # one attempt per slot and defects on half of them: failed slots to regenerate
    options = RunOptions(capability="general", count=10, seed=3, defect_rate=0.5, max_attempts=1, concurrency=3)
    start_run(options, tmp_path / "template.duckdb")
    summaries = {}
    workers: dict[str, set[int]] = {"local": set(), "ray": set()}
    for where, ray in (("local", None), ("ray", LOCAL)):
        catalog = copy_catalog(tmp_path / "template.duckdb", tmp_path / f"{where}.duckdb")
        summaries[where] = regenerate(catalog, attempts=2, ray=ray,
                                      on_progress=lambda _p, w=where: workers[w].update(_actor_pids("SlotWorker")))
    assert workers["ray"] and not workers["local"]  # the slots were filled by Ray workers
    assert summaries["local"].slots > 0 and summaries["local"].repaired > 0
    assert summaries["ray"] == summaries["local"]
    assert _contents(tmp_path / "ray.duckdb") == _contents(tmp_path / "local.duckdb")
    assert _query(tmp_path / "ray.duckdb", "SELECT count(*) FROM packages WHERE attempt > 1") != [(0,)]


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    """A file the model server waits for (``model_server``); the test creates it to let the run go on."""
    return tmp_path / "gate"


@pytest.fixture
def model_server(gate: Path) -> Iterator[str]:
    """A local model server in its own process, 0.2 s per answer, each a distinct valid package; its URL.
    Requests after the first 60 wait until the file ``gate`` exists."""
    proc, url = processes.model_server(0.2, hold_after=60, gate=gate)
    try:
        yield url
    finally:
        proc.kill()
        proc.wait()


def _actor_pids(name: str, root: int | None = None) -> list[int]:
    """Processes running a Ray process named ``name`` (Ray titles them ``ray::<name>...``: an
    actor's class, or one of its own agents) of the Ray instance process ``root`` started (default:
    this process's): other Ray instances on the machine, another test run's, are left alone."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0].decode()
            except OSError:
                continue
            if command.startswith(f"ray::{name}") and processes.descends_from(int(entry), root or os.getpid()):
                found.append(int(entry))
    return found


class _OnReplacement(logging.Handler):
    """Calls ``then()`` once a lost Ray worker's replacement is up (``Gang`` logs it)."""

    def __init__(self, then: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self.then = then

    def emit(self, record: logging.LogRecord) -> None:
        if "replaces lost worker" in record.getMessage():
            self.then()


@pytest.mark.slow
def test_a_killed_worker_loses_only_its_slots_in_flight_and_is_replaced(
        ray_instance: None, model_server: str, gate: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    killed: list[int] = []
    started: set[int] = set()
    later: set[int] = set()

    def kill_one_worker(progress: Progress) -> None:
        if progress.accepted >= 8 and not killed:
            started.update(_actor_pids("SlotWorker"))
            victim = min(started)
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)
        elif killed and progress.accepted % 10 == 0:
            later.update(_actor_pids("SlotWorker"))

    def replaced() -> None:  # the run goes on past the model server's 60th answer only now
        later.update(_actor_pids("SlotWorker"))
        gate.touch()

    # however slowly the replacement starts, the run cannot end before it is up; nor wait for it forever
    opens_anyway = threading.Timer(120, gate.touch)
    opens_anyway.start()
    catalog = tmp_path / "c.duckdb"
    options = RunOptions(capability="general", count=240, concurrency=8)
    watcher = _OnReplacement(replaced)
    cluster_log = logging.getLogger("pipeline.runs.ray_cluster")
    cluster_log.addHandler(watcher)
    try:
        with caplog.at_level(logging.WARNING, logger="pipeline.runs.ray_cluster"):
            summary = start_run(options, catalog, model="m", base_url=model_server, on_progress=kill_one_worker,
                                ray=LOCAL)
    finally:
        cluster_log.removeHandler(watcher)
        opens_anyway.cancel()
    assert killed and "lost" in caplog.text and "replaces lost worker" in caplog.text, caplog.text
    assert later - started  # a new worker process took the lost one's place while the run went on
    assert (summary.accepted, summary.status) == (240, "finished")
    assert _accounted_for(catalog, options.max_attempts) == (240, summary.slots)


def _written(stream: IO[str]) -> str:
    """What a process wrote so far to the file ``stream``, from its start."""
    stream.flush()
    stream.seek(0)
    return stream.read()


def _kill_driver(command: list[str], env: dict[str, str], started: Callable[[], bool]) -> None:
    """Run the driver ``command`` (with ``--ray``: a Ray instance of its own) until ``started()``,
    then kill it with SIGKILL, so nothing of it runs on."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errors:  # a file, not a pipe: nobody reads it meanwhile
        driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, text=True,
                                  start_new_session=True, env=env)
        # The local Ray instance the killed driver started leaves two agents behind (docs/scaling.md):
        # `ray stop` would end every Ray on the machine, so the test ends its own, found while the
        # driver lives (until it dies they are its descendants; another run's Ray is left alone).
        agents: list[int] = []
        try:
            processes.wait_for(lambda: started() or driver.poll() is not None, timeout=RAY_PATIENCE_S,
                               what="the driver to commit its first work")
            assert driver.poll() is None, f"the driver ended before it could be killed: {_written(errors)}"
            agents = _actor_pids("DashboardAgent", driver.pid) + _actor_pids("RuntimeEnvAgent", driver.pid)
            driver.kill()
            driver.wait(timeout=processes.PATIENCE_S)
        finally:
            end_driver(driver, agents)


def end_driver(driver: subprocess.Popen[str], agents: list[int] | None = None) -> None:
    """SIGKILL ``driver``'s process group if it still runs, and the two agents its local Ray
    instance leaves behind: found now while it lives (until it dies they are its descendants),
    else ``agents``, found before it was killed."""
    if driver.poll() is None:
        agents = _actor_pids("DashboardAgent", driver.pid) + _actor_pids("RuntimeEnvAgent", driver.pid)
        os.killpg(driver.pid, signal.SIGKILL)
    for pid in agents or []:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_a_run_on_ray_resumes_after_its_driver_is_killed(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    env = {**os.environ, "SYNTH_MODEL": "offline"}
    _kill_driver([*SYNTH, "run", "-c", "general", "-n", "400", "--concurrency", "16", "--ray", "--catalog",
                  str(catalog)], env, lambda: accepted_now(catalog) >= 20)
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
    assert agents.unknown == 0, agents.strangers
    assert len(rows["ray"]) == 18 and rows["ray"] == rows["local"]
    assert all(row[4] for row in rows["ray"])  # the reference passes every package



def _rollout_agents(tmp_path: Path) -> tuple[Path, ScriptedAgents]:
    """A catalog with 3 packages of each of three capabilities, and agents that replay their references."""
    template = tmp_path / "template.duckdb"
    for capability in ("general", "multi-turn", "safety"):
        start_run(RunOptions(capability=capability, count=3), template)
    from pipeline import load_packages

    return template, ScriptedAgents(p.model_dump(mode="json") for p in load_packages(template))


def _rollout_rows(catalog: Path) -> list[tuple[Any, ...]]:
    return _query(catalog, "SELECT package_id, sample, passed FROM rollouts ORDER BY package_id, sample")


@pytest.mark.slow
def test_rollouts_on_ray_survive_a_killed_worker(ray_instance: None, tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    catalog, agents = _rollout_agents(tmp_path)
    killed: list[int] = []

    def kill_one_worker(progress: RolloutProgress) -> None:
        if progress.done >= 6 and not killed:
            [victim, *_] = _actor_pids("EpisodeWorker")
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    with OpenAIServer(agents, latency_s=0.1) as server, \
            caplog.at_level(logging.WARNING, logger="pipeline.runs.ray_cluster"):
        options = RolloutOptions(model="reference", base_url=server.base_url, samples=4, concurrency=4)
        summary = start_rollouts(options, catalog, ray=LOCAL, on_progress=kill_one_worker)
    assert killed and "lost" in caplog.text
    assert (summary.rollouts, summary.status) == (36, "finished")
    rows = _rollout_rows(catalog)
    assert len(rows) == 36 and len({(r[0], r[1]) for r in rows}) == 36  # every episode once, none lost
    assert all(r[2] for r in rows) and agents.unknown == 0, agents.strangers


@pytest.mark.slow
def test_rollouts_on_ray_resume_after_their_driver_is_killed(tmp_path: Path) -> None:
    catalog, agents = _rollout_agents(tmp_path)
    with OpenAIServer(agents, latency_s=0.2) as server:
        _kill_driver([*SYNTH, "rollout", "--model", "reference", "--base-url", server.base_url, "--samples", "6",
                      "--concurrency", "4", "--ray", "--catalog", str(catalog)],
                     os.environ | {"OPENAI_API_KEY": ""}, lambda: len(_rollouts_now(catalog)) >= 6)
        committed = _rollouts_now(catalog)
        assert 6 <= len(committed) < 54
        resumed = subprocess.run([*SYNTH, "rollout", "--resume", "1", "--ray", "--json", "--catalog", str(catalog)],
                                 capture_output=True, text=True, timeout=300, start_new_session=True,
                                 env=os.environ | {"OPENAI_API_KEY": ""})
    assert resumed.returncode == 0, resumed.stderr
    rows = _rollout_rows(catalog)
    assert len(rows) == 54 and len({(r[0], r[1]) for r in rows}) == 54 and all(r[2] for r in rows)
    assert set(committed) <= {(r[0], r[1]) for r in rows}
    with Catalog.open(catalog, read_only=True) as reader:
        assert reader.rollout_job(1).status == "finished"


def _rollouts_now(catalog: Path) -> list[tuple[str, int]]:
    """``(package_id, sample)`` of the rollouts committed so far, as a reader sees them while a job writes."""
    try:
        with Catalog.open(catalog, read_only=True, busy_timeout=1.0) as reader:
            return [(r[0], r[1]) for r in reader.query("SELECT package_id, sample FROM rollouts").rows]
    except Exception:  # being migrated, or busy
        return []

"""Runs and rollouts on a real local Ray instance that lose their workers, through the command line:
actors that die as they start, every actor lost mid-run, one actor lost while another lives. A job
that cannot go on stops with exit 2 and one ``error:`` line saying what happened and the command
that resumes it, nothing that looks like a traceback, the catalog readable with every row it had
committed, and ``--resume`` finishes it; a job that can go on finishes with its ``--json`` summary
alone on stdout. Each driver starts a Ray instance of its own (``--ray``), as a user's does."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.catalog.store import Catalog
from tests.conftest import accepted_now
from tests.runs.test_ray import (
    RAY_PATIENCE_S,
    _accounted_for,
    _actor_pids,
    _query,
    _rollout_agents,
    _rollouts_now,
    end_driver,
)
from tests.support import processes
from tests.support.openai_server import OpenAIServer
from tests.support.ray_faults import synth_with_dying_workers

pytestmark = pytest.mark.slow

SYNTH = [sys.executable, "-m", "pipeline.cli"]
TRACEBACK_SIGNS = ("Traceback", "never retrieved", "ActorDiedError", "RayActorError", 'File "')
"""What stderr never holds: a traceback, an asyncio task's unretrieved exception, Ray's exception names."""


@contextlib.contextmanager
def driver(command: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """``command`` running in a session of its own, its stdout and stderr written to files (a pipe
    that nobody reads while a test waits fills up and blocks the driver: ``output`` reads them);
    killed (with the Ray agents its instance leaves behind) if it still runs at the end of the block."""
    with tempfile.TemporaryDirectory(prefix="driver-") as folder:
        streams = [Path(folder) / "stdout", Path(folder) / "stderr"]
        with streams[0].open("w", encoding="utf-8") as out, streams[1].open("w", encoding="utf-8") as err:
            proc = subprocess.Popen(command, stdout=out, stderr=err, text=True, start_new_session=True, env=env)
        _STREAMS[proc.pid] = (streams[0], streams[1])
        try:
            yield proc
        finally:
            end_driver(proc)
            proc.wait()
            del _STREAMS[proc.pid]


_STREAMS: dict[int, tuple[Path, Path]] = {}
"""The files a running ``driver``'s stdout and stderr go to, by its pid."""


def output(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """What the ``driver`` ``proc`` has written so far on stdout and on stderr."""
    out, err = _STREAMS[proc.pid]
    return out.read_text(encoding="utf-8", errors="replace"), err.read_text(encoding="utf-8", errors="replace")


def first_commit(proc: subprocess.Popen[str], committed: Callable[[], bool], what: str) -> None:
    """Wait for ``committed()`` (or the driver's end), then check the driver still runs; a failure
    shows the end of what the driver wrote on stderr."""
    try:
        processes.wait_for(lambda: committed() or proc.poll() is not None, timeout=RAY_PATIENCE_S, what=what)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the driver's stderr ends: {output(proc)[1][-2000:]!r}") from None
    assert proc.poll() is None, output(proc)


def ended(proc: subprocess.Popen[str], timeout: float = RAY_PATIENCE_S) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``proc`` once it ends (``TimeoutExpired`` after ``timeout`` s)."""
    proc.wait(timeout=timeout)
    return (proc.returncode, *output(proc))


def synth(*args: str | Path, env: dict[str, str], timeout: float = RAY_PATIENCE_S) -> tuple[int, str, str]:
    """``synth args`` to its end."""
    with driver([*SYNTH, *map(str, args)], env) as proc:
        return ended(proc, timeout)


def the_error_line(stderr: str) -> str:
    """The one ``error:`` line of ``stderr``, its last line; asserts there is no traceback."""
    lines = stderr.strip().splitlines()
    assert [line for line in lines if line.startswith("error:")] == lines[-1:], stderr
    assert not any(sign in stderr for sign in TRACEBACK_SIGNS), stderr
    return lines[-1]


def clean_summary(rc: int, stdout: str, stderr: str) -> dict[str, Any]:
    """The ``--json`` summary of a job that finished: exit 0, stdout that one document alone, no
    ``error:`` line and no traceback on stderr."""
    assert rc == 0, stderr
    assert "error:" not in stderr and not any(sign in stderr for sign in TRACEBACK_SIGNS), stderr
    summary: dict[str, Any] = json.loads(stdout)  # Ray's own reports of dead workers are not on stdout
    return summary


def kill_every_worker(proc: subprocess.Popen[str], name: str) -> tuple[int, float]:
    """SIGKILL every Ray actor process ``name`` of ``proc``'s Ray instance, and each that starts
    in place of one, until ``proc`` ends; how many were killed, and the seconds from the first kill
    to ``proc``'s end (``AssertionError`` past ``processes.PATIENCE_S``)."""
    killed: set[int] = set()
    first = time.monotonic()

    def driver_ended() -> bool:
        for pid in set(_actor_pids(name, proc.pid)) - killed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        return proc.poll() is not None

    processes.wait_for(driver_ended, what="the driver to stop once its workers were lost")
    return len(killed), time.monotonic() - first


def committed_rows(catalog: Path) -> set[tuple[int, int, str]]:
    """``(slot, attempt, id)`` of every package row the catalog holds (the catalog opens read-only)."""
    return {(r[0], r[1], r[2]) for r in _query(catalog, "SELECT slot, attempt, id FROM packages")}


def offline_env() -> dict[str, str]:
    return os.environ | {"SYNTH_MODEL": "offline", "OPENAI_API_KEY": ""}


# --------------------------------------------------------------------------- actors that die as they start


def test_a_run_whose_workers_all_fail_to_start_stops_in_one_line_and_resumes(tmp_path: Path) -> None:
    catalog, claims = tmp_path / "c.duckdb", tmp_path / "claims"
    claims.mkdir()
    command, env = synth_with_dying_workers(["run", "-c", "general", "-n", "12", "--ray", "--json", "--catalog",
                                             str(catalog)], claims, deaths=1000, how="raise")
    with driver(command, env | {"SYNTH_MODEL": "offline"}) as proc:
        rc, out, err = ended(proc)
    assert rc == 2 and out == "", err
    line = the_error_line(err)
    assert line.startswith("error: no Ray worker of this job could start (its start raised RuntimeError: this "
                           "worker cannot start (test fault)); nothing was lost"), line
    assert line.endswith(f"continue it with `synth run --resume 1 --catalog {catalog}`"), line
    assert len(list(claims.iterdir())) == 2  # one actor per CPU started, and each died at its start
    assert committed_rows(catalog) == set()
    with Catalog.open(catalog, read_only=True) as reader:
        assert reader.query("SELECT status FROM runs WHERE id = 1").rows[0][0] != "finished"

    summary = clean_summary(*synth("run", "--resume", "1", "--ray", "--json", "--catalog", catalog, env=offline_env()))
    assert (summary["accepted"], summary["status"]) == (12, "finished")
    assert _accounted_for(catalog, 3) == (12, summary["slots"])


def test_a_run_whose_first_worker_dies_as_it_starts_finishes_on_the_others(tmp_path: Path) -> None:
    catalog, claims = tmp_path / "c.duckdb", tmp_path / "claims"
    claims.mkdir()
    command, env = synth_with_dying_workers(["run", "-c", "general", "-n", "40", "--ray", "--json", "--catalog",
                                             str(catalog)], claims, deaths=1, how="kill")
    with driver(command, env | {"SYNTH_MODEL": "offline"}) as proc:
        rc, out, err = ended(proc)
    summary = clean_summary(rc, out, err)
    assert "a Ray worker died before it was up: The actor died unexpectedly" in err, err
    assert len(list(claims.iterdir())) == 1
    assert (summary["accepted"], summary["status"]) == (40, "finished")
    assert _accounted_for(catalog, 3) == (40, summary["slots"])


# --------------------------------------------------------------------------- workers lost mid-run


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    """A file the model server waits for (``model_server``); the test creates it to let the run go on."""
    return tmp_path / "gate"


@pytest.fixture
def model_server(gate: Path) -> Iterator[str]:
    """A local model server, 0.2 s per answer, each a distinct valid package; its URL. Requests
    after the first 20 wait until the file ``gate`` exists, so no run ends before the test lets it."""
    proc, url = processes.model_server(0.2, hold_after=20, gate=gate)
    try:
        yield url
    finally:
        proc.kill()
        proc.wait()


def test_a_run_that_loses_every_worker_stops_in_one_line_and_resumes(model_server: str, gate: Path,
                                                                      tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    env = os.environ | {"OPENAI_API_KEY": ""}
    with driver([*SYNTH, "run", "-c", "general", "-n", "60", "--model", "m", "--base-url", model_server,
                 "--concurrency", "8", "--ray", "--catalog", str(catalog)], env) as proc:
        first_commit(proc, lambda: accepted_now(catalog) >= 1, "the run's first commit")
        before = committed_rows(catalog)
        killed, stopping_s = kill_every_worker(proc, "SlotWorker")
        rc, out, err = ended(proc)
    assert killed >= 2 and rc == 2, err
    assert "(raylet)" not in out and "(raylet)" not in err
    line = the_error_line(err)
    assert line.startswith("error: every Ray worker of this job was lost"), line
    assert line.endswith(f"continue it with `synth run --resume 1 --catalog {catalog}`"), line
    after = committed_rows(catalog)
    assert before and before <= after and accepted_now(catalog) < 60

    gate.touch()
    summary = clean_summary(*synth("run", "--resume", "1", "--base-url", model_server, "--ray", "--json",
                                   "--catalog", catalog, env=env))
    assert (summary["accepted"], summary["status"]) == (60, "finished")
    assert _accounted_for(catalog, 3) == (60, summary["slots"])
    assert after <= committed_rows(catalog)
    print(f"every worker lost: {killed} killed, the driver ended {stopping_s:.1f} s after the first kill")


def test_a_run_that_loses_one_worker_finishes_with_its_summary_alone_on_stdout(model_server: str, gate: Path,
                                                                              tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    with driver([*SYNTH, "run", "-c", "general", "-n", "60", "--model", "m", "--base-url", model_server,
                 "--concurrency", "8", "--ray", "--json", "--catalog", str(catalog)],
                os.environ | {"OPENAI_API_KEY": ""}) as proc:
        first_commit(proc, lambda: accepted_now(catalog) >= 1, "the run's first commit")
        victim = min(_actor_pids("SlotWorker", proc.pid))
        os.kill(victim, signal.SIGKILL)
        processes.wait_for(lambda: not processes.alive(victim), what="the killed worker to be gone")
        gate.touch()
        rc, out, err = ended(proc)
    summary = clean_summary(rc, out, err)
    assert f"(pid {victim}) lost: The actor died unexpectedly" in err, err
    assert (summary["accepted"], summary["status"]) == (60, "finished")
    assert _accounted_for(catalog, 3) == (60, summary["slots"])


def test_a_rollout_job_that_loses_every_worker_stops_in_one_line_and_resumes(tmp_path: Path) -> None:
    catalog, agents = _rollout_agents(tmp_path)
    env = os.environ | {"OPENAI_API_KEY": ""}
    with OpenAIServer(agents, latency_s=0.3) as server:
        with driver([*SYNTH, "rollout", "--model", "reference", "--base-url", server.base_url, "--samples", "20",
                     "--concurrency", "8", "--ray", "--catalog", str(catalog)], env) as proc:
            first_commit(proc, lambda: len(_rollouts_now(catalog)) >= 1, "the job's first rollout")
            before = set(_rollouts_now(catalog))
            killed, stopping_s = kill_every_worker(proc, "EpisodeWorker")
            rc, out, err = ended(proc)
        assert killed >= 2 and rc == 2, err
        assert "(raylet)" not in out and "(raylet)" not in err
        line = the_error_line(err)
        assert line.startswith("error: every Ray worker of this job was lost"), line
        assert line.endswith(f"continue it with `synth rollout --resume 1 --catalog {catalog}`"), line
        after = set(_rollouts_now(catalog))
        assert before and before <= after and len(after) < 180

        server.latency_s = 0.0
        summary = clean_summary(*synth("rollout", "--resume", "1", "--ray", "--json", "--catalog", catalog, env=env))
    assert (summary["recorded_before"], summary["status"]) == (len(after), "finished")
    assert summary["recorded_before"] + summary["rollouts"] == 180
    rows = _query(catalog, "SELECT package_id, sample, passed FROM rollouts")
    assert len(rows) == 180 and len({(r[0], r[1]) for r in rows}) == 180 and all(r[2] for r in rows)
    assert after <= {(r[0], r[1]) for r in rows} and agents.unknown == 0, agents.strangers
    print(f"every rollout worker lost: {killed} killed, the driver ended {stopping_s:.1f} s after the first kill")

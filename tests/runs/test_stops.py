"""How a run stops before its end: Ctrl-C and SIGTERM (to the whole process group, as a terminal
or a service manager sends them), SIGKILL (no child outlives the run), and a model server that
cannot be reached. Each ends with the run ``interrupted`` and resumable, without a traceback."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.catalog.queries import RunCounts
from pipeline.catalog.store import Catalog
from pipeline.generation.llm import LLMGenerator
from pipeline.generation.model_client import Backoff, ServerUnusable
from pipeline.generation.offline import generate_package, pick_template
from pipeline.runs.api import RunInterrupted, resume_run, start_run
from pipeline.runs.interrupt import Stopped, run_in_worker_thread, run_until_signalled
from pipeline.runs.options import Progress, RunOptions
from pipeline.runs.pool import VerifierPool
from pipeline.verify.verifier import Options
from tests.conftest import CliResult, accepted_now
from tests.support import processes

SYNTH = [sys.executable, "-m", "pipeline.cli"]
TINY = Backoff(initial=0.001, maximum=0.01)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_status(catalog_path: Path) -> tuple[str, int, int]:
    """(status of run 1, rows in packages, rows with a verifier_error or llm_error finding)."""
    with Catalog.open(catalog_path, read_only=True) as catalog:
        status = catalog.query("SELECT status FROM runs WHERE id = 1").rows[0][0]
        rows = catalog.query("SELECT count(*) FROM packages").rows[0][0]
        errors = catalog.query("SELECT count(*) FROM findings WHERE code IN ('verifier_error', 'llm_error')").rows[0][0]
    return status, rows, errors


# --------------------------------------------------------------------------- in process


def test_a_stop_signal_cancels_the_coroutine_and_every_task_then_raises_stopped() -> None:
    cancelled: list[str] = []

    async def sleeper(name: str) -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(name)
            raise

    async def main() -> None:
        asyncio.get_running_loop().create_task(sleeper("orphan"))  # not awaited by main
        asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGTERM)
        await sleeper("main")

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with pytest.raises(Stopped) as stopped:
        run_until_signalled(main())
    assert stopped.value.signum == signal.SIGTERM
    assert sorted(cancelled) == ["main", "orphan"]
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before  # handlers restored


def test_ctrl_c_while_waiting_on_a_worker_threads_loop_cancels_the_coroutine_there() -> None:
    """The path a sync API call takes inside a running event loop (a notebook)."""
    cancelled: list[bool] = []

    async def sleeper() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C raises, as in a notebook
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(Stopped) as stopped:
            run_in_worker_thread(sleeper())
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert stopped.value.signum == signal.SIGINT and cancelled == [True]


def _counts(catalog_path: Path, run_id: int = 1) -> RunCounts:
    with Catalog.open(catalog_path, read_only=True) as catalog:
        return next(c for c in catalog.run_counts() if c.id == run_id)


def test_a_run_stopped_by_a_signal_raises_how_far_it_got(empty_catalog: Path) -> None:
    def sigint_at_five(progress: Progress) -> None:
        if progress.accepted == 5:
            os.kill(os.getpid(), signal.SIGINT)

    options = RunOptions(capability="general", count=500, defect_rate=0.3, max_attempts=1)
    with pytest.raises(RunInterrupted) as raised:
        start_run(options, empty_catalog, on_progress=sigint_at_five)
    counts = _counts(empty_catalog)
    assert raised.value.signum == signal.SIGINT and raised.value.counts == counts
    assert counts.status == "interrupted" and counts.accepted >= 5 and counts.rejected > 0
    assert str(raised.value) == (
        f"run 1 interrupted by SIGINT; {counts.accepted} of 500 accepted, {counts.rejected} rejected, "
        f"{counts.failed} failed, over {counts.slots} slots; continue it with "
        f"`synth run --resume 1 --catalog {empty_catalog}`")


def test_a_verifier_worker_ignores_ctrl_c_and_dies_with_a_killed_parent() -> None:
    pool = VerifierPool(Options(), processes=1)
    package = generate_package("general", pick_template("general", 0), 5, 0)
    try:
        pool.warm()
        [worker] = pool._pool._processes  # type: ignore[union-attr]
        os.kill(worker, signal.SIGINT)  # as a Ctrl-C in the terminal sends it to the whole group
        verdict = asyncio.run(asyncio.wait_for(pool.verify(package), timeout=60))
        assert verdict.accepted
        assert processes.alive(worker)
    finally:
        pool.close()


def test_a_dead_model_server_stops_the_run_before_any_attempt(empty_catalog: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    generator = LLMGenerator(model="m", base_url=url, api_key="unused", backoff=TINY)
    with pytest.raises(RunInterrupted) as raised:
        start_run(RunOptions(capability="general", count=20, concurrency=8), empty_catalog, generator=generator)
    assert isinstance(raised.value.cause, ServerUnusable) and url in str(raised.value.cause)
    assert _run_status(empty_catalog) == ("interrupted", 0, 0)
    with Catalog.open(empty_catalog, read_only=True) as catalog:
        assert catalog.query("SELECT count(*) FROM llm_calls").rows[0][0] == 0
    with pytest.raises(RunInterrupted):  # resumable: a resume tries again, and stops the same way
        resume_run(1, empty_catalog)
    assert _run_status(empty_catalog)[0] == "interrupted"


@pytest.mark.slow
def test_a_server_that_dies_mid_run_stops_it_without_recording_failures(empty_catalog: Path) -> None:
    server, url = processes.model_server(0.02)

    def kill_at_ten(progress: Progress) -> None:
        if progress.accepted >= 10 and server.poll() is None:
            server.kill()

    generator = LLMGenerator(model="m", base_url=url, api_key="unused", timeout=5.0, backoff=TINY)
    try:
        with pytest.raises(RunInterrupted) as raised:
            start_run(RunOptions(capability="general", count=2000, concurrency=4, verify_processes=0), empty_catalog,
                      generator=generator, on_progress=kill_at_ten)
    finally:
        server.kill()
        server.wait()
    assert "cannot reach the model server" in str(raised.value.cause)
    status, rows, errors = _run_status(empty_catalog)
    assert status == "interrupted" and rows >= 10 and errors == 0


def test_the_command_says_in_one_line_which_server_to_check_and_how_to_resume(
        tmp_path: Path, synth: Callable[..., CliResult]) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    catalog = tmp_path / "c.duckdb"
    result = synth("run", "-c", "general", "-n", "5", "--model", "m", "--base-url", url, "--catalog", catalog)
    assert result.exit_code == 2
    [line] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert url in line and "Connection refused" in line and f"synth run --resume 1 --catalog {catalog}" in line
    assert _run_status(catalog) == ("interrupted", 0, 0)


# --------------------------------------------------------------------------- real processes, real signals


def _start(catalog: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``synth run`` in its own process group, as a shell starts a foreground job."""
    command = [*SYNTH, "run", "-c", "general", "-n", "5000", "--catalog", str(catalog), *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "SYNTH_MODEL": "offline", **(env or {})})


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("repeat", [1, 3])
def test_a_stop_signal_to_the_process_group_interrupts_the_run_cleanly(tmp_path: Path, signum: int,
                                                                       repeat: int) -> None:
    catalog = tmp_path / "c.duckdb"
    proc = _start(catalog, "--verify-processes", "2")
    try:
        processes.wait_for(lambda: accepted_now(catalog) >= 20)
        for _ in range(repeat):  # a second Ctrl-C while it stops changes nothing
            os.killpg(proc.pid, signum)
            time.sleep(0.005)
        _, err = proc.communicate(timeout=processes.PATIENCE_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + signum, err
    assert "Traceback" not in err and "Error" not in err
    counts = _counts(catalog)
    assert err.strip().splitlines()[-1] == (
        f"error: interrupted: run 1 has {counts.accepted} of 5000 accepted, {counts.rejected} rejected, "
        f"{counts.failed} failed, over {counts.slots} slots; every verified package is saved. "
        f"Continue with `synth run --resume 1 --catalog {catalog}`")
    status, rows, errors = _run_status(catalog)
    assert status == "interrupted" and rows >= 20 and errors == 0
    resumed = subprocess.Popen([*SYNTH, "run", "--resume", "1", "--catalog", str(catalog)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        processes.wait_for(lambda: accepted_now(catalog) >= rows + 20)
        os.killpg(resumed.pid, signal.SIGTERM)
        _, err = resumed.communicate(timeout=processes.PATIENCE_S)
    finally:
        if resumed.poll() is None:
            os.killpg(resumed.pid, signal.SIGKILL)
    assert resumed.returncode == 128 + signal.SIGTERM and "Traceback" not in err
    assert _run_status(catalog)[0] == "interrupted"


@pytest.mark.slow
def test_ctrl_c_during_an_llm_run_is_clean(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    server, url = processes.model_server(0.05)
    proc = _start(catalog, "--model", "m", "--base-url", url, "--concurrency", "8",
                  env={"OPENAI_API_KEY": "sk-local-test-key"})
    try:
        processes.wait_for(lambda: accepted_now(catalog) >= 10)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=processes.PATIENCE_S)
    finally:
        server.kill()
        server.wait()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and "Traceback" not in err, err
    status, _, errors = _run_status(catalog)
    assert status == "interrupted" and errors == 0


@pytest.mark.slow
def test_no_child_outlives_a_run_killed_with_sigkill(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    proc = _start(catalog, "--verify-processes", "2")
    try:
        processes.wait_for(lambda: accepted_now(catalog) >= 20)
        children = processes.children(proc.pid)
        assert len(children) >= 3  # two verifier workers and multiprocessing's resource tracker
        proc.kill()
        proc.wait(timeout=processes.PATIENCE_S)
        with contextlib.suppress(AssertionError):  # a child still alive after 60 s is reported (and killed) below
            processes.wait_for(lambda: not any(processes.alive(c) for c in children), what="the children to exit")
        survivors = [c for c in children if processes.alive(c)]
    finally:
        if proc.poll() is None:
            proc.kill()
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []

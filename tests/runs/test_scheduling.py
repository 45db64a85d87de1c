"""How the batch job hands work off the event loop: verification batched while the worker is busy,
and catalog commits grouped within the writer's delay."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.catalog.rows import AttemptRow, PreparedRow, prepare
from pipeline.catalog.store import Catalog
from pipeline.core.outcomes import Failure, FailureCode
from pipeline.core.package import TaskPackage
from pipeline.generation.offline import generate_package, pick_template
from pipeline.runs.pool import VerifierCrash, VerifierPool
from pipeline.runs.rollout_record import RolloutWriter
from pipeline.runs.writer import GroupWriter
from pipeline.verify.dedup import MemoryDedup
from pipeline.verify.verifier import Options
from tests.support import processes
from tests.support.event_loop import turn_when


def _packages(count: int) -> list[TaskPackage]:
    return [generate_package("general", pick_template("general", n), 5, n) for n in range(count)]


def test_packages_arriving_while_the_worker_is_busy_are_verified_together_and_matched_back() -> None:
    pool = VerifierPool(Options(), processes=1)
    calls: list[int] = []
    submit = pool._pool.submit  # type: ignore[union-attr]

    def counting_submit(fn: Any, packages: list[TaskPackage], *args: Any) -> Any:
        calls.append(len(packages))
        return submit(fn, packages, *args)

    pool._pool.submit = counting_submit  # type: ignore[union-attr,method-assign]
    packages = _packages(12)

    async def verify_all() -> list[Any]:
        return await asyncio.gather(*(pool.verify(p) for p in packages))

    try:
        verdicts = asyncio.run(verify_all())
    finally:
        pool.close()
    assert [v.id for v in verdicts] == [p.compute_id() for p in packages]
    assert all(v.accepted for v in verdicts)
    assert sum(calls) == 12 and calls[0] == 1 and len(calls) < 12  # the first alone, the rest batched


def test_a_crash_on_one_package_fails_that_package_only() -> None:
    pool = VerifierPool(Options(), processes=1)
    good = _packages(3)
    broken: Any = 42  # not a package nor a mapping: verify_package raises on it, inside the worker

    async def verify_all() -> list[Any]:
        return await asyncio.gather(*(pool.verify(p) for p in [good[0], broken, good[1], good[2]]),
                                    return_exceptions=True)

    try:
        results = asyncio.run(verify_all())
    finally:
        pool.close()
    assert isinstance(results[1], VerifierCrash) and str(results[1]).startswith("AttributeError: ")
    assert [r.id for r in (results[0], results[2], results[3])] == [p.compute_id() for p in good]


def _failed_row(run_id: int, slot: int) -> PreparedRow:
    return prepare(AttemptRow(run_id=run_id, slot=slot, attempt=1, package=None, verdict=None, llm_calls=[],
                      failure=Failure(code=FailureCode.LLM_ERROR, message="APIConnectionError: refused"),
                      generator="llm", capability="general"))


@pytest.fixture
def writer_setup(empty_catalog: Path) -> Any:
    """A catalog with one run, and the sizes of the groups ``record_prepared`` commits."""
    with Catalog.open(empty_catalog) as catalog:
        run_id = catalog.start_run("test", "llm", None, "general")
        groups: list[int] = []
        record_prepared = catalog.record_prepared

        def recording(rows: list[PreparedRow]) -> list[int]:
            groups.append(len(rows))
            return record_prepared(rows)

        catalog.record_prepared = recording  # type: ignore[method-assign]
        yield catalog, run_id, groups


async def _until(condition: Callable[[], bool], what: str, timeout: float = processes.PATIENCE_S) -> None:
    """Return once ``condition()`` holds, checked every 10 ms; ``AssertionError`` naming ``what``
    after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        await asyncio.sleep(0.01)


def test_attempts_arriving_within_the_delay_share_one_transaction(writer_setup: Any) -> None:
    catalog, run_id, groups = writer_setup
    # other attempts are still working: the writer waits for more rows
    writer = GroupWriter(catalog, MemoryDedup(), open_attempts=lambda: 10, delay=0.5)

    async def arrive() -> list[PreparedRow]:
        async with writer.running():
            queue = writer._queue
            assert queue is not None
            put = queue.put_nowait
            queued: list[object] = []

            def counting(item: Any) -> None:
                queued.append(item)
                put(item)

            queue.put_nowait = counting  # type: ignore[method-assign]
            first = asyncio.create_task(writer.commit(_failed_row(run_id, 0)))
            await _until(lambda: len(queued) == 1 and queue.empty(),
                         "the writer to take the first row and wait for more")
            rest = [asyncio.create_task(writer.commit(_failed_row(run_id, s))) for s in (1, 2)]
            return await asyncio.gather(first, *rest)

    committed = asyncio.run(arrive())
    assert groups == [3]
    assert [r.slot for r in committed] == [0, 1, 2]
    assert catalog.query(f"SELECT count(*) FROM packages WHERE run = {run_id}").rows == [[3]]


def test_the_group_commits_at_once_when_every_open_attempt_waits_on_it(writer_setup: Any) -> None:
    catalog, run_id, groups = writer_setup
    writer = GroupWriter(catalog, MemoryDedup(), open_attempts=lambda: 2, delay=30.0)  # waiting would time out

    async def arrive() -> None:
        async with writer.running():
            rows = [writer.commit(_failed_row(run_id, s)) for s in (0, 1)]
            await asyncio.wait_for(asyncio.gather(*rows), timeout=processes.PATIENCE_S)

    asyncio.run(arrive())
    assert groups == [2]


def test_a_slot_that_stops_while_its_row_is_committed_does_not_stop_the_writer(writer_setup: Any) -> None:
    """The run is ending: a slot waiting on its commit is cancelled mid-transaction. The row is
    committed all the same, and the writer goes on committing the next."""
    catalog, run_id, groups = writer_setup
    record_prepared = catalog.record_prepared
    inside, leave = threading.Event(), threading.Event()

    def held(rows: list[PreparedRow]) -> list[int]:
        if not inside.is_set():  # the first transaction stays open until the slot is cancelled
            inside.set()
            assert leave.wait(60), "the test never let the first commit finish"
        return record_prepared(rows)

    catalog.record_prepared = held  # type: ignore[method-assign]
    writer = GroupWriter(catalog, MemoryDedup(), open_attempts=lambda: 1, delay=0.01)

    async def arrive() -> PreparedRow:
        async with writer.running():
            stopped = asyncio.create_task(writer.commit(_failed_row(run_id, 0)))
            await _until(inside.is_set, "the writer to be inside record_prepared")
            stopped.cancel()
            leave.set()
            return await asyncio.wait_for(writer.commit(_failed_row(run_id, 1)), timeout=60)

    assert asyncio.run(arrive()).slot == 1
    assert groups == [1, 1]
    assert catalog.query(f"SELECT count(*) FROM packages WHERE run = {run_id}").rows == [[2]]


def test_a_pool_outlives_an_event_loop_closed_while_it_was_verifying() -> None:
    pool = VerifierPool(Options(), processes=1)
    packages = _packages(4)

    async def abandon() -> None:  # the loop closes with a batch still in the worker
        tasks = [asyncio.create_task(pool.verify(p)) for p in packages[:3]]
        await turn_when(lambda: pool._busy > 0, "a batch sent to the worker")
        for task in tasks:
            task.cancel()

    async def verify_later() -> Any:
        return await asyncio.wait_for(pool.verify(packages[3]), timeout=60)

    try:
        asyncio.run(abandon())
        verdict = asyncio.run(verify_later())
    finally:
        pool.close()
    assert verdict.id == packages[3].compute_id()


_WRITER_STAGES = {
    "arrived": lambda writer, groups: True,  # cancelled in the turn the attempt is queued
    "taken": lambda writer, groups: writer._queue.empty(),  # taken off the queue, the writer not yet on
    "committed": lambda writer, groups: bool(groups),  # its transaction done, the writer waiting again
}


@pytest.mark.parametrize("stage", sorted(_WRITER_STAGES))
def test_the_writer_stops_when_cancelled_as_an_attempt_arrives(writer_setup: Any, stage: str) -> None:
    """The run is ending: the writer, idle and waiting for the next attempt, is cancelled as one
    arrives (``stage``: in that turn, once the attempt is off the queue, once it is committed).
    Whether it took the attempt or not, it stops: a writer that let the cancellation go would wait
    for the next attempt forever, and the run with it."""
    catalog, run_id, groups = writer_setup
    writer = GroupWriter(catalog, MemoryDedup(), open_attempts=lambda: 0, delay=0.01)

    async def cancel_as_it_arrives() -> bool:
        writer._queue = asyncio.Queue()
        loop = asyncio.get_running_loop()
        writing = asyncio.create_task(writer._loop())
        await _until(lambda: bool(writer._queue._getters), "the writer to wait for an attempt")  # type: ignore[union-attr,attr-defined]
        arrived: asyncio.Future[PreparedRow] = loop.create_future()
        writer._queue.put_nowait((_failed_row(run_id, 0), arrived))
        arrived.cancel()  # its slot stops with the run
        await turn_when(lambda: _WRITER_STAGES[stage](writer, groups), f"the attempt to be {stage}")
        writing.cancel()
        await asyncio.wait([writing], timeout=processes.PATIENCE_S)
        writer.window.release()
        return writing.cancelled()

    assert asyncio.run(cancel_as_it_arrives()), "the writer went on after it was cancelled"


def test_a_rollout_writer_stopped_mid_commit_lets_it_end_before_committing_the_rest(empty_catalog: Path) -> None:
    """The job stops while a group's commit runs in its thread: leaving ``running()`` waits for
    that commit, then commits what arrived since, so no two commits overlap on the catalog and
    each rollout is committed once."""
    inside, leave = threading.Event(), threading.Event()
    lock = threading.Lock()
    active, most, committed = [0], [0], []

    def record(_job: int, group: list[str]) -> None:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        try:
            if not inside.is_set():
                inside.set()
                assert leave.wait(processes.PATIENCE_S), "the test never let the first commit end"
            committed.append(list(group))
        finally:
            with lock:
                active[0] -= 1

    with Catalog.open(empty_catalog) as catalog:
        catalog.record_rollouts = record  # type: ignore[method-assign,assignment]
        writer = RolloutWriter(catalog, job_id=1, delay=0.01)

        async def job() -> None:
            async with writer.running():
                writer.add("first")  # type: ignore[arg-type]
                await _until(inside.is_set, "the first group's commit to start")
                writer.add("second")  # type: ignore[arg-type]
                await asyncio.Event().wait()  # plays until stopped

        async def stop_mid_commit() -> None:
            task = asyncio.create_task(job())
            await _until(lambda: writer._queue.qsize() == 1, "the second rollout to be queued mid-commit")
            task.cancel()
            # the job ends (a writer that does not wait commits the rest mid-commit), or it waits
            await turn_when(lambda: task.done() or getattr(writer, "_in_flight", None) is None,
                            "the stopped job to end or to wait for the commit in flight")
            leave.set()
            with contextlib.suppress(asyncio.CancelledError):
                await task

        asyncio.run(stop_mid_commit())
    assert most[0] == 1, "two commits ran at once"
    assert committed == [["first"], ["second"]]

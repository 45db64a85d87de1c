"""What a rollout job records: its episodes still to play, its counters (``JobRecord``), and the
writer that commits its rollouts to the catalog in groups (``RolloutWriter``). The job
(``runs.rollout``) and its episodes on Ray (``runs.ray_rollouts``) both record through these;
this module imports neither."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING

from pipeline.catalog.store import Catalog
from pipeline.core.errors import UserError
from pipeline.core.rollouts import SERVER_FAILURES, Rollout
from pipeline.runs.interrupt import signals_ignored
from pipeline.runs.rollout_options import ProgressFn, RolloutOptions, RolloutProgress, RolloutSummary
from pipeline.runs.writer import WriteWindow

if TYPE_CHECKING:
    from pipeline.core.package import TaskPackage

log = logging.getLogger(__name__)

SERVER_FAILURE_LIMIT = 5
"""Episodes in a row the model server may fail (``core.rollouts.SERVER_FAILURES``) before the job
stops (``ServerFailing``)."""


class ServerFailing(UserError):
    """The model server failed ``SERVER_FAILURE_LIMIT`` episodes in a row: the job stops (resumable)."""


class RolloutWriter:
    """Commits a job's rollouts from one task, in groups: a transaction holds every rollout that
    arrived within ``delay`` seconds of the group's first, at most ``MAX_GROUP``. A crash loses at
    most the rollouts of the last ``delay`` seconds (a resumed job runs them again); leaving
    ``running()`` commits everything queued, also when the job is stopped. A group whose commit
    fails (the catalog file busy) is kept and tried again with the next (the last one, as the job
    ends, on its own); after
    ``MAX_FAILED_COMMITS`` failures in a row ``add`` raises the last error, which stops the job
    before it runs episodes it cannot keep."""

    MAX_GROUP = 256
    MAX_FAILED_COMMITS = 3

    def __init__(self, catalog: Catalog, job_id: int, delay: float = 0.5) -> None:
        self.catalog, self.job_id, self.delay = catalog, job_id, delay
        self.window = WriteWindow(catalog)
        self.committed = 0
        self._queue: asyncio.Queue[Rollout] = asyncio.Queue()
        self._pending: list[Rollout] = []
        self._in_flight: tuple[asyncio.Future[None], list[Rollout]] | None = None
        self.failure: Exception | None = None

    def add(self, rollout: Rollout) -> None:
        """Queue ``rollout``; raises the writer's ``failure`` once it has given up (it is kept and
        committed on leaving ``running()`` if the catalog can be written by then)."""
        self._queue.put_nowait(rollout)
        if self.failure is not None:
            raise self.failure

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        task = asyncio.create_task(self._loop())
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            rest = await self._landed() + self._pending + [self._queue.get_nowait() for _ in range(self._queue.qsize())]
            self._pending = []
            with signals_ignored():
                try:
                    self._commit_retrying(rest)
                finally:
                    self.window.release()

    async def _landed(self) -> list[Rollout]:
        """Once the commit a stop left running in its thread has ended: [] when it committed its
        group, the group when it failed (to be committed with the rest). No two commits overlap."""
        if self._in_flight is None:
            return []
        commit, group = self._in_flight
        self._in_flight = None
        await asyncio.wait([commit])
        return group if commit.cancelled() or commit.exception() is not None else []

    def _commit_retrying(self, group: list[Rollout]) -> None:
        """``_commit``, tried up to ``MAX_FAILED_COMMITS`` times ``delay`` seconds apart (the last
        group, as the job ends: nothing comes after it to carry it)."""
        for attempt in range(1, self.MAX_FAILED_COMMITS + 1):
            try:
                self._commit(group)
                return
            except Exception as exc:
                if attempt == self.MAX_FAILED_COMMITS:
                    raise
                log.warning("rollout job %s: committing %d rollouts failed (%s)", self.job_id, len(group), exc)
                time.sleep(self.delay)

    def _commit(self, group: list[Rollout]) -> None:
        if group:
            self.catalog.record_rollouts(self.job_id, group)
            self.committed += len(group)

    async def _loop(self) -> None:
        failed = 0
        while True:
            if not self._pending:
                self._pending.append(await self._queue.get())
            await asyncio.sleep(self.delay)
            while not self._queue.empty() and len(self._pending) < self.MAX_GROUP:
                self._pending.append(self._queue.get_nowait())
            group, self._pending = self._pending, []
            try:
                await self.window.hold()
                # Shielded: a stop during the commit lets it finish (running() waits for it, then
                # commits the rest).
                commit = asyncio.ensure_future(asyncio.to_thread(self._commit, group))
                self._in_flight = (commit, group)
                await asyncio.shield(commit)
                self._in_flight = None
            except Exception as exc:  # kept for the next try; given up on after MAX_FAILED_COMMITS
                self._in_flight = None
                self._pending = group + self._pending
                failed += 1
                log.warning("rollout job %s: committing %d rollouts failed (%s)", self.job_id, len(group), exc)
                if failed >= self.MAX_FAILED_COMMITS:
                    self.failure = exc
                    return
                continue
            failed = 0
            self.window.release_if_asked()


class JobRecord:
    """One invocation of a job as recorded: the (package, sample) pairs still to play (``todo``),
    the counters the progress display reads, and the rollouts recorded in this invocation."""

    def __init__(self, catalog: Catalog, job_id: int, options: RolloutOptions, packages: list[TaskPackage],
                 recorded: set[tuple[str, int]], on_progress: ProgressFn | None) -> None:
        self.catalog, self.job_id, self.options, self.packages = catalog, job_id, options, packages
        self.recorded = len(recorded)
        self.todo = [(p, s) for s in range(options.samples) for p in packages if (p.id, s) not in recorded]
        self.on_progress = on_progress
        self.progress = RolloutProgress(total=len(self.todo))
        self.results: list[Rollout] = []
        self.failing = 0
        """Episodes in a row, the last ones recorded, that the model server failed."""

    def record(self, rollout: Rollout, writer: RolloutWriter) -> None:
        """Hand a finished episode to ``writer`` and count it; ``ServerFailing`` once the model server
        has failed ``SERVER_FAILURE_LIMIT`` episodes in a row."""
        writer.add(rollout)
        self.results.append(rollout)
        p = self.progress
        p.done += 1
        p.passed += rollout.passed and rollout.counted
        p.errors += not rollout.counted
        p.tokens += rollout.prompt_tokens + rollout.completion_tokens
        if self.on_progress is not None:
            self.on_progress(p)
        self.failing = self.failing + 1 if rollout.finish_reason in SERVER_FAILURES else 0
        if self.failing >= SERVER_FAILURE_LIMIT:
            from pipeline.generation.model_endpoint import Endpoint

            server = Endpoint.from_env(self.options.model, self.options.base_url).server
            raise ServerFailing(f"the model server ({server}) failed {self.failing} episodes in a row, the last "
                                f"with {rollout.finish_reason}: {(rollout.error or '')[:300]}; check the server (or "
                                "give it more time with --timeout)")

    def summary(self, status: str, elapsed: float) -> RolloutSummary:
        done = self.results
        reasons: dict[str, int] = {}
        for r in done:
            reasons[r.finish_reason] = reasons.get(r.finish_reason, 0) + 1
        counted = [r for r in done if r.counted]  # episodes the server ended count in no rate
        passed = sum(r.passed for r in counted)
        return RolloutSummary(
            job_id=self.job_id, model=self.options.model, status=status, packages=len(self.packages),
            samples=self.options.samples, recorded_before=self.recorded, rollouts=len(done), passed=passed,
            pass_rate=round(passed / len(counted), 4) if counted else None,
            mean_score=round(sum(r.score for r in counted) / len(counted), 4) if counted else None,
            finish_reasons=reasons, prompt_tokens=sum(r.prompt_tokens for r in done),
            completion_tokens=sum(r.completion_tokens for r in done), elapsed_s=round(elapsed, 3),
            rollouts_per_s=round(len(done) / elapsed, 3) if elapsed > 0 else 0.0)

"""The batch job's one catalog writer: attempts committed in groups, dedup in arrival order."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import ExitStack, asynccontextmanager, suppress

from pipeline.catalog.connect import reader_waiting
from pipeline.catalog.rows import PreparedRow
from pipeline.catalog.store import Catalog
from pipeline.core.outcomes import Finding, Verdict
from pipeline.verify.dedup import MemoryDedup, duplicate_key_findings


class GroupWriter:
    """Commits attempts to the catalog from one task, in groups: one transaction holds every attempt
    that arrived within ``delay`` seconds of the group's first, at most ``MAX_GROUP``. A group is
    committed at once when every open attempt is waiting on it (``open_attempts()``: nothing else
    can arrive). A transaction costs several times what one more row in it does, so grouping keeps
    the writer cheap at high rates; a crash loses only attempts not yet committed (normally at most
    ``delay`` seconds of them; up to about a second more while a reader in another process is let
    in, see ``WriteWindow``).

    Dedup happens here, in arrival order, against ``accepted`` (an in-memory index of every accepted
    package): loaded from the catalog when the writer starts (exact, since this process holds the
    writer lock) and grown with each acceptance. So two slots that produce the same package cannot
    both be accepted.
    """

    MAX_GROUP = 64

    def __init__(self, catalog: Catalog, accepted: MemoryDedup, open_attempts: Callable[[], int],
                 delay: float = 0.1) -> None:
        self.catalog = catalog
        self.accepted = accepted
        self.open_attempts = open_attempts
        self.delay = delay
        self.window = WriteWindow(catalog)
        self._queue: asyncio.Queue[tuple[PreparedRow, asyncio.Future[PreparedRow]]] | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        for package_id, near in await asyncio.to_thread(self.catalog.accepted_keys):
            self.accepted.add_key(package_id, near)
        self._queue = asyncio.Queue()
        task = asyncio.create_task(self._loop())
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            self.window.release()

    async def commit(self, row: PreparedRow) -> PreparedRow:
        """Queue ``row``; return it as committed (``refused`` when it duplicates an accepted package:
        ``kept_verdict`` gives its verdict as kept)."""
        return (await self.commit_many([row]))[0]

    async def commit_many(self, rows: list[PreparedRow]) -> list[PreparedRow]:
        """``commit`` for several rows, queued in their order: each as committed."""
        assert self._queue is not None, "GroupWriter.commit outside running()"
        loop = asyncio.get_running_loop()
        done: list[asyncio.Future[PreparedRow]] = [loop.create_future() for _ in rows]
        for row, future in zip(rows, done, strict=True):
            self._queue.put_nowait((row, future))
        return list(await asyncio.gather(*done))

    async def _group(self) -> list[tuple[PreparedRow, asyncio.Future[PreparedRow]]]:
        """The next group: the first attempt to arrive, and those arriving within ``delay`` of it.
        While nothing arrives for ``WriteWindow.idle`` seconds, the catalog file is let go."""
        assert self._queue is not None
        try:  # not ``asyncio.wait_for``: on Python 3.11 it returns an attempt that arrives as the
            # writer is cancelled, and a writer that misses its cancellation waits here forever
            async with asyncio.timeout(self.window.idle):
                first = await self._queue.get()
        except TimeoutError:
            self.window.release()
            first = await self._queue.get()
        group = [first]
        closes = asyncio.get_running_loop().time() + self.delay
        while len(group) < min(self.MAX_GROUP, self.open_attempts()):
            if self._queue.empty():
                try:
                    async with asyncio.timeout_at(closes):
                        group.append(await self._queue.get())
                except TimeoutError:
                    break
            else:
                group.append(self._queue.get_nowait())
        return group

    async def _loop(self) -> None:
        while True:
            group = await self._group()
            rows = [self._dedup(row) for row, _ in group]
            try:
                await self.window.hold()
                await asyncio.to_thread(self.catalog.record_prepared, rows)
                self.window.release_if_asked()
            except BaseException as exc:
                for _, done in group:
                    if not done.done():
                        done.set_exception(exc)
                raise
            for row, (_, done) in zip(rows, group, strict=True):
                if not done.done():  # a slot stopped (the run is ending) while its row was committed
                    done.set_result(row)

    def _dedup(self, row: PreparedRow) -> PreparedRow:
        if not row.accepted or row.id is None or row.near_key is None:
            return row
        dups = duplicate_key_findings(row.id, row.near_key, self.accepted)
        if dups:  # refused as a duplicate: its review notes and SFT losses stay with it
            return row.refused(dups)
        self.accepted.add_key(row.id, row.near_key)
        return row


def kept_verdict(verdict: Verdict, refused_by: Sequence[Finding]) -> Verdict:
    """``verdict`` as the writer kept its attempt (``PreparedRow.refused_by``): rebuilt with the
    ``duplicate_package`` findings first when it was refused as a duplicate (its review notes and
    SFT losses kept), else unchanged."""
    if not refused_by:
        return verdict
    return Verdict.build(verdict.id, [*refused_by, *verdict.review, *verdict.sft], verdict.score, verdict.notes)


class WriteWindow:
    """Keeps one catalog connection open across commits while the writer is busy, so a run does
    not reopen the file (tens of ms each time). It lets the file go when a reader in another
    process says it is waiting (``synth catalog stats`` during a run), keeping it closed for up to
    ``reader_gap`` seconds while readers wait, and when no attempt arrived for ``idle`` seconds.
    Every commit is durable on its own; the window only saves reopening the file."""

    def __init__(self, catalog: Catalog, reader_gap: float = 1.0, idle: float = 1.0) -> None:
        self.catalog, self.reader_gap, self.idle = catalog, reader_gap, idle
        self._stack: ExitStack | None = None

    async def hold(self) -> None:
        if self._stack is None:
            gap_ends = time.monotonic() + self.reader_gap
            while reader_waiting(self.catalog.path) and time.monotonic() < gap_ends:
                await asyncio.sleep(0.02)
            self._stack = ExitStack()
            self._stack.enter_context(self.catalog.batch())

    def release_if_asked(self) -> None:
        if self._stack is not None and reader_waiting(self.catalog.path):
            self.release()

    def release(self) -> None:
        if self._stack is not None:
            stack, self._stack = self._stack, None
            stack.close()

"""The batch job: fill slots with verified packages until ``count`` are accepted.

Each slot tries up to ``max_attempts`` times; a rejected attempt goes back to the generator with
its findings (a repair prompt for an LLM, a fresh seed of the same template offline). Every
attempt — package, verdict, findings, LLM calls — is committed to the catalog in a group gathered
over ``GroupWriter.delay`` (0.1 s) after it is verified, so a crash loses only the attempts in
flight and the group not yet committed, and ``resume`` continues the same run.

Generation is awaited on the event loop (``concurrency`` requests in flight, ``OPEN_SLOTS_PER_REQUEST``
times as many slots open); verification runs in worker processes and catalog writes in a thread,
so neither stalls requests in flight. One writer task commits (``GroupWriter``) and checks dedup in
arrival order, so two slots that produce the same package cannot both be accepted.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, asynccontextmanager, suppress
from typing import Any

from pydantic import BaseModel, Field

from pipeline.catalog.connect import reader_waiting
from pipeline.catalog.queries import SlotState
from pipeline.catalog.store import AttemptRow, Catalog, failure_code
from pipeline.generate.base import Attempt, Generated, Generator
from pipeline.generate.offline import pick_template
from pipeline.package import TaskPackage
from pipeline.verify.codes import Code
from pipeline.verify.dedup import MemoryDedup, duplicate_findings, near_key
from pipeline.verify.report import Finding, Verdict
from pipeline.verify.verifier import Options, verify_package

log = logging.getLogger(__name__)

OPEN_SLOTS_PER_REQUEST = 4
"""Slots open at once per request in flight: while some slots wait for verification (batched) and
for their commit (grouped, up to ``GroupWriter.delay``), others keep the model busy, so
``--concurrency`` requests stay in flight."""

SLOT_FACTOR = 4
"""A run opens at most ``SLOT_FACTOR × count + 8`` slots, so a generator that never succeeds
cannot keep a run going forever."""


class RunOptions(BaseModel):
    capability: str
    count: int = Field(ge=1)
    max_attempts: int = Field(default=3, ge=1)
    concurrency: int = Field(default=4, ge=1)
    seed: int = 7
    budget_tokens: int | None = Field(default=None, ge=1)
    defect_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    obs_limit: int = 1_000
    sample_budget: int = 40_000
    name: str | None = None
    verify_processes: int = Field(default=1, ge=0)


class Progress(BaseModel):
    """Counters the progress display reads after every recorded attempt."""

    accepted: int = 0
    rejected: int = 0
    in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    slots_opened: int = 0
    codes: Counter[str] = Field(default_factory=Counter)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class RunSummary(BaseModel):
    run_id: int
    capability: str
    generator: str
    model: str | None
    target: int
    accepted: int
    rejected_attempts: int
    slots: int
    failed_slots: int
    prompt_tokens: int
    completion_tokens: int
    elapsed_s: float
    accepted_per_s: float
    status: str
    stop_reason: str
    rejection_codes: dict[str, int]


class VerifierPool:
    """Runs ``verify_package`` off the event loop: in ``processes`` worker processes (so it takes no
    time from the interpreter lock that generation needs), or in threads when ``processes`` is 0.

    A package is handed to a free worker the moment it arrives. Packages that arrive while every
    worker is busy wait and go to the next free worker together, at most ``MAX_BATCH`` in one call:
    under load, the cost of handing work to a process (pickling, queues, wake-ups in this process)
    is paid once per batch instead of once per package.
    """

    MAX_BATCH = 32

    def __init__(self, options: Options, processes: int) -> None:
        self.options = options
        self.processes = processes
        self._pool = (ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
                      if processes else None)
        self._waiting: list[tuple[TaskPackage, asyncio.Future[Verdict | str]]] = []
        self._busy = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    async def verify(self, package: TaskPackage) -> Verdict:
        """The package's verdict; raises ``VerifierCrash`` when ``verify_package`` raised on it."""
        if self._pool is None:
            return _verdict(await asyncio.to_thread(_verify_one, package, self.options))
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (another asyncio.run): the old one's jobs are gone
            self._loop, self._waiting, self._busy = loop, [], 0
        future: asyncio.Future[Verdict | str] = loop.create_future()
        self._waiting.append((package, future))
        self._dispatch()
        return _verdict(await future)

    def _dispatch(self) -> None:
        assert self._loop is not None
        while self._waiting and self._busy < self.processes:
            batch, self._waiting = self._waiting[:self.MAX_BATCH], self._waiting[self.MAX_BATCH:]
            self._busy += 1
            job = self._loop.run_in_executor(self._pool, _verify_batch, [package for package, _ in batch], self.options)
            job.add_done_callback(functools.partial(self._finished, batch))

    def _finished(self, batch: list[tuple[TaskPackage, asyncio.Future[Verdict | str]]],
                  job: asyncio.Future[list[Verdict | str]]) -> None:
        self._busy -= 1
        if job.cancelled():  # the pool was shut down
            for _, future in batch:
                future.cancel()
            return
        failure = job.exception()  # the worker process died: every package of the batch fails
        for index, (_, future) in enumerate(batch):
            if not future.done():
                if failure is not None:
                    future.set_exception(failure)
                else:
                    future.set_result(job.result()[index])
        self._dispatch()

    def warm(self) -> None:
        """Start the worker processes now (each imports the verifier once) instead of on first use."""
        if self._pool is not None:
            for future in [self._pool.submit(_ready) for _ in range(self.processes)]:
                future.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


class VerifierCrash(Exception):
    """``verify_package`` raised: a verifier bug, which costs the package its attempt, not the run."""


def _verify_one(package: TaskPackage, options: Options) -> Verdict | str:
    """The verdict, or ``<exception class>: <message>`` when verification raised."""
    try:
        return verify_package(package, options)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _verify_batch(packages: list[TaskPackage], options: Options) -> list[Verdict | str]:
    return [_verify_one(package, options) for package in packages]


def _verdict(result: Verdict | str) -> Verdict:
    if isinstance(result, str):
        raise VerifierCrash(result)
    return result


def _ready() -> bool:
    return True


class BatchRun:
    """One run (new or resumed) against an open catalog write session."""

    def __init__(self, catalog: Catalog, generator: Generator, options: RunOptions, run_id: int,
                 on_progress: Callable[[Progress], None] | None = None) -> None:
        self.catalog = catalog
        self.generator = generator
        self.options = options
        self.run_id = run_id
        self.on_progress = on_progress or (lambda _p: None)
        self.progress = Progress()
        self.verifier = VerifierPool(Options(obs_limit=options.obs_limit, sample_budget=options.sample_budget),
                                     options.verify_processes)
        self.accepted_index = MemoryDedup()
        self._writer = GroupWriter(self)
        self._requests = asyncio.Semaphore(options.concurrency)  # made anew per entry point (loop-bound)
        self._failed_slots = 0

    # ------------------------------------------------------------------ scheduling

    def _pending(self, states: dict[int, SlotState]) -> list[tuple[int, int, TaskPackage | None, list[Finding]]]:
        """Slots of a resumed run to continue: (slot, next attempt, last package, its findings)."""
        going_on = []
        for state in states.values():
            if state.accepted or state.attempts >= self.options.max_attempts:
                self._failed_slots += not state.accepted
            else:
                going_on.append(state)
        last = self._last_attempts([state.slot for state in going_on])
        return [(state.slot, state.attempts + 1, *last[state.slot]) for state in going_on]

    def _last_attempts(self, slots: list[int]) -> dict[int, tuple[TaskPackage | None, list[Finding]]]:
        """Per slot, its last recorded package and findings (one catalog connection for them all)."""
        with self.catalog.batch():
            return {slot: self._last_attempt(slot) for slot in slots}

    def _last_attempt(self, slot: int) -> tuple[TaskPackage | None, list[Finding]]:
        record = self.catalog.last_attempt(self.run_id, slot)
        if record is None:
            return None, []
        package = TaskPackage.model_validate(record.package) if record.package else None
        findings = [Finding.model_validate(f.model_dump()) for f in record.findings if _is_code(f.code)]
        return package, findings

    async def run(self) -> RunSummary:
        self._requests = asyncio.Semaphore(self.options.concurrency)
        async with self._writer.running():
            return await self._run()

    async def _run(self) -> RunSummary:
        started = time.perf_counter()
        states = self.catalog.slot_states(self.run_id)
        self.progress.accepted = at_start = sum(s.accepted for s in states.values())
        self.progress.slots_opened = len(states)
        self.progress.prompt_tokens, self.progress.completion_tokens = self.catalog.tokens_spent(self.run_id)  # resume
        queue = self._pending(states)
        next_slot = max(states, default=-1) + 1
        max_slots = SLOT_FACTOR * self.options.count + 8
        tasks: set[asyncio.Task[bool]] = set()
        stop_reason = "target reached"
        while self.progress.accepted < self.options.count:
            can_open = (self.progress.accepted + len(tasks) < self.options.count
                        and len(tasks) < OPEN_SLOTS_PER_REQUEST * self.options.concurrency)
            if can_open and self._over_budget():
                stop_reason = "token budget spent"
                can_open = False
            if can_open and queue:
                slot, attempt, parent, findings = queue.pop(0)
                tasks.add(asyncio.create_task(self._slot(slot, attempt, parent, findings)))
                continue
            if can_open and next_slot < max_slots:
                tasks.add(asyncio.create_task(self._slot(next_slot, 1, None, [])))
                next_slot += 1
                self.progress.slots_opened += 1
                continue
            if not tasks:
                if not self._over_budget():
                    stop_reason = f"slot limit ({max_slots}) reached"
                break
            done, tasks = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()  # re-raise a crash of the run itself (catalog errors)
        if tasks:
            await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - started
        reached = self.progress.accepted >= self.options.count
        return RunSummary(
            run_id=self.run_id, capability=self.options.capability, generator=self.generator.name,
            model=self.generator.model, target=self.options.count, accepted=self.progress.accepted,
            rejected_attempts=self.progress.rejected, slots=self.progress.slots_opened,
            failed_slots=self._failed_slots, prompt_tokens=self.progress.prompt_tokens,
            completion_tokens=self.progress.completion_tokens, elapsed_s=round(elapsed, 3),
            accepted_per_s=round((self.progress.accepted - at_start) / elapsed, 2) if elapsed > 0 else 0.0,
            status="finished" if reached else "failed", stop_reason=stop_reason if not reached else "target reached",
            rejection_codes=dict(self.progress.codes.most_common()),
        )

    def _over_budget(self) -> bool:
        budget = self.options.budget_tokens
        return budget is not None and self.progress.tokens >= budget

    # ------------------------------------------------------------------ one slot

    async def _slot(self, slot: int, attempt: int, parent: TaskPackage | None, findings: list[Finding],
                    last_attempt: int | None = None) -> bool:
        """Try slot ``slot`` from ``attempt`` up to ``last_attempt`` (default: ``max_attempts``);
        True when a package was accepted."""
        last_attempt = self.options.max_attempts if last_attempt is None else last_attempt
        self.progress.in_flight += 1
        self.on_progress(self.progress)
        try:
            template = pick_template(self.options.capability, slot)
            while attempt <= last_attempt and not self._over_budget():
                request = Attempt(capability=self.options.capability, template=template, seed=self.options.seed,
                                  slot=slot, attempt=attempt, parent=parent, findings=findings)
                async with self._requests:
                    generated = await self.generator.generate(request)
                for call in generated.calls:
                    self.progress.prompt_tokens += call.prompt_tokens
                    self.progress.completion_tokens += call.completion_tokens
                verdict = None
                if generated.package is not None:
                    try:
                        verdict = await self.verifier.verify(generated.package)
                    except Exception as exc:  # a verifier bug must cost one attempt, not the run
                        detail = str(exc) if isinstance(exc, VerifierCrash) else f"{type(exc).__name__}: {exc}"
                        log.error("verification of slot %s attempt %s crashed: %s", slot, attempt, detail)
                        generated = generated.model_copy(update={"package": None, "error": f"verifier_error: {detail}"})
                accepted, verdict = await self._record(slot, attempt, template, generated, verdict, parent)
                if accepted:
                    return True
                # A rejected package is repaired from its findings; after a generation failure the
                # next attempt starts afresh (there is no package to show the model).
                parent = generated.package
                findings = verdict.findings if verdict else []
                attempt += 1
            self._failed_slots += 1
            return False
        finally:
            self.progress.in_flight -= 1
            self.on_progress(self.progress)

    async def regenerate(self, slots: list[int], attempts: int) -> list[bool]:
        """Give each failed slot up to ``attempts`` more tries, fed its last findings; per slot,
        whether it ended accepted. New rows carry the rejected package as their parent."""
        self._requests = asyncio.Semaphore(self.options.concurrency)
        semaphore = asyncio.Semaphore(OPEN_SLOTS_PER_REQUEST * self.options.concurrency)
        states = self.catalog.slot_states(self.run_id)
        last = self._last_attempts(slots)

        async def one(slot: int) -> bool:
            async with semaphore:
                first = states[slot].attempts + 1
                return await self._slot(slot, first, *last[slot], last_attempt=first + attempts - 1)

        async with self._writer.running():
            return list(await asyncio.gather(*(one(s) for s in slots)))

    async def _record(self, slot: int, attempt: int, template: str, generated: Generated,
                      verdict: Verdict | None, parent: TaskPackage | None) -> tuple[bool, Verdict | None]:
        """Hand one verified attempt to the group writer; wait until it is committed."""
        package = generated.package
        if package is not None and verdict is not None and verdict.id != package.id:
            package = package.model_copy(update={"id": verdict.id})
        row = AttemptRow(run_id=self.run_id, slot=slot, attempt=attempt, package=package, verdict=verdict,
                         llm_calls=generated.calls, parent=parent.id if parent else None,
                         error=None if package is not None else (generated.error or "generation_error"),
                         generator=self.generator.name, capability=self.options.capability, workflow=template,
                         injected_defect=generated.defect)
        row = await self._writer.commit(row)
        accepted = bool(row.verdict and row.verdict.accepted)
        if not accepted:
            self.progress.rejected += 1
            codes = row.verdict.codes if row.verdict else [failure_code(row.error or "")]
            self.progress.codes.update(codes)
        self.on_progress(self.progress)
        return accepted, row.verdict


class GroupWriter:
    """Commits attempts to the catalog from one task, in groups: one transaction holds every attempt
    that arrived within ``delay`` seconds of the group's first, at most ``MAX_GROUP``. A group is
    committed at once when every open slot is waiting on it (nothing else can arrive). A transaction
    costs several times what one more row in it does, so grouping keeps the writer cheap at high
    rates; a crash loses only attempts not yet committed (normally at most ``delay`` seconds of them;
up to about a second more while a reader in another process is let in, see ``WriteWindow``).

    Dedup happens here, in arrival order, against an in-memory index of every accepted package:
    loaded from the catalog when the run starts (exact, since this process holds the writer lock)
    and grown with each acceptance. So two slots that produce the same package cannot both be
    accepted.
    """

    MAX_GROUP = 64

    def __init__(self, batch: BatchRun, delay: float = 0.1) -> None:
        self.batch = batch
        self.delay = delay
        self.window = WriteWindow(batch.catalog)
        self._queue: asyncio.Queue[tuple[AttemptRow, asyncio.Future[AttemptRow]]] | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        for package_id, near in await asyncio.to_thread(self.batch.catalog.accepted_keys):
            self.batch.accepted_index.add_key(package_id, near)
        self._queue = asyncio.Queue()
        task = asyncio.create_task(self._loop())
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            self.window.release()

    async def commit(self, row: AttemptRow) -> AttemptRow:
        """Queue ``row``; return it as committed (its verdict may now carry ``duplicate_package``)."""
        assert self._queue is not None, "GroupWriter.commit outside running()"
        done: asyncio.Future[AttemptRow] = asyncio.get_running_loop().create_future()
        await self._queue.put((row, done))
        return await done

    async def _group(self) -> list[tuple[AttemptRow, asyncio.Future[AttemptRow]]]:
        """The next group: the first attempt to arrive, and those arriving within ``delay`` of it."""
        assert self._queue is not None
        group = [await self._queue.get()]
        closes = asyncio.get_running_loop().time() + self.delay
        while len(group) < min(self.MAX_GROUP, self.batch.progress.in_flight):
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
                await asyncio.to_thread(self.batch.catalog.record_many, rows)
                self.window.release_if_due()
            except BaseException as exc:
                for _, done in group:
                    if not done.done():
                        done.set_exception(exc)
                raise
            for row, (_, done) in zip(rows, group, strict=True):
                if row.verdict is not None and row.verdict.accepted and row.package is not None:
                    self.batch.progress.accepted += 1
                done.set_result(row)

    def _dedup(self, row: AttemptRow) -> AttemptRow:
        package, verdict = row.package, row.verdict
        if package is None or verdict is None or not verdict.accepted:
            return row
        near = near_key(package)  # once (it hashes the whole initial state): the catalog row reuses it
        dups = duplicate_findings(package, self.batch.accepted_index, near)
        if dups:
            return row.model_copy(update={"near_key": near,
                                          "verdict": Verdict.build(verdict.id, dups, verdict.score, verdict.notes)})
        self.batch.accepted_index.add_key(package.id, near)
        return row.model_copy(update={"near_key": near})


class WriteWindow:
    """Keeps one catalog connection open across records for up to ``seconds``, then closes it so
    readers in other processes (``synth catalog stats`` during a run) get in: while a reader says it
    is waiting, the window stays closed for up to ``reader_gap`` seconds. Every record still commits
    on its own; the window only saves reopening the file (tens of ms each time)."""

    def __init__(self, catalog: Catalog, seconds: float = 1.0, reader_gap: float = 1.0) -> None:
        self.catalog, self.seconds, self.reader_gap = catalog, seconds, reader_gap
        self._stack: ExitStack | None = None
        self._opened = 0.0

    async def hold(self) -> None:
        if self._stack is None:
            gap_ends = time.monotonic() + self.reader_gap
            while reader_waiting(self.catalog.path) and time.monotonic() < gap_ends:
                await asyncio.sleep(0.02)
            self._stack = ExitStack()
            self._stack.enter_context(self.catalog.batch())
            self._opened = time.monotonic()

    def release_if_due(self) -> None:
        if self._stack is not None and time.monotonic() - self._opened >= self.seconds:
            self.release()

    def release(self) -> None:
        if self._stack is not None:
            stack, self._stack = self._stack, None
            stack.close()


_CODES = frozenset(c.value for c in Code)


def _is_code(code: str) -> bool:
    """Whether a stored finding code is a verification reason code (not a generation failure)."""
    return code in _CODES


class RegenSummary(BaseModel):
    slots: int
    repaired: int
    repair_rate: float | None
    by_run: dict[int, dict[str, int]]
    prompt_tokens: int
    completion_tokens: int


def run_parameters(options: RunOptions, generator: Generator, base_url: str | None) -> dict[str, Any]:
    """What a run records about itself (never an API key)."""
    return {**options.model_dump(), "generator": generator.name, "model": generator.model, "base_url": base_url}


"""A run's slots filled on Ray actors (``synth run --ray``), the catalog written by this process.

The driver keeps everything that decides what a run is: ``BatchRun`` opens slots exactly as in a
local run (the same count, slot limit and budget rules) and hands each to ``RaySlots.fill`` instead
of filling it on its own event loop. ``RaySlots`` assigns the slot to the least-loaded actor
(``ray_cluster.Gang``); the actor (``SlotWorker``) runs the one slot loop, ``runs.slot.fill_slot``,
with its own generator, request limit and verifier. Its ``settle`` hook turns the attempt into
the catalog's values there (``catalog.rows.prepare``: the columns, the package's JSON text, its
``near_key``, its findings and LLM calls as tuples), sends them back in a batch and waits for the
driver's answer: the driver dedups in arrival order and commits through the run's one
``GroupWriter``, then answers with the ``duplicate_package`` findings when the writer refused the
attempt as a duplicate (the actor rebuilds its verdict with ``writer.kept_verdict``). So every
attempt is committed before its slot goes on, as in a local run, the catalog stays this
process's alone, and the driver never validates a package or dumps its JSON.

An actor that is lost (its process killed, its node gone) loses only the attempts it had not sent:
the driver continues each of its open slots on another actor from the attempt after the last one
committed, fed that attempt's package and findings read back from the catalog, as ``--resume``
does. The gang replaces the lost actor (``ray_cluster.Gang``), which takes new slots once it is up.

The token budget is shared: each ``submit`` carries the run's token count; an actor adds what it
spent since and stops opening attempts once that reaches the budget.

The generator is built on each actor from ``WorkerSpec`` (model, servers, key): the key travels to
the actors in the spec (Ray's own channels) and is never stored or logged.

Rows reach the catalog in fuller groups than in a local run (``RAY_GROUP_DELAY``): each attempt
already waits for an actor's batch, and a transaction costs several rows' worth of CPU, the
driver's main cost per package. A crash of the driver loses at most the attempts of that window.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from pipeline.catalog.rows import PreparedRow, prepare
from pipeline.core.errors import UserError
from pipeline.core.outcomes import Finding, Verdict
from pipeline.core.package import TaskPackage
from pipeline.generation.base import Attempt, Generated, Generator
from pipeline.generation.model_endpoint import Endpoint
from pipeline.runs.batch import BatchRun, attempt_row
from pipeline.runs.options import RunOptions
from pipeline.runs.pool import VerifierPool
from pipeline.runs.ray_cluster import Gang, GangWorker, WorkerError, connected
from pipeline.runs.reading import ReadingStage, make_reader
from pipeline.runs.slot import fill_slot
from pipeline.runs.writer import kept_verdict
from pipeline.verify.readers import reader_calls

T = TypeVar("T")

RAY_GROUP_DELAY = 0.5
"""``GroupWriter.delay`` of a run on Ray, in seconds (see the module)."""


@dataclass(frozen=True)
class WorkerSpec:
    """What an actor needs to fill slots of run ``run_id``."""

    run_id: int
    options: RunOptions
    generator: str
    """The generator's name (``offline`` or ``llm``), as the run records it."""
    model: str | None
    base_url: str | None
    api_key: str | None
    concurrency: int
    """Generations in flight on this actor (its share of ``options.concurrency``)."""

    def build_generator(self) -> Generator:
        if self.model is None:
            from pipeline.generation.offline import OfflineGenerator

            return OfflineGenerator(defect_rate=self.options.defect_rate)
        from pipeline.generation.llm import LLMGenerator

        return LLMGenerator(model=self.model, base_url=self.base_url, api_key=self.api_key)


@dataclass(frozen=True)
class SlotJob:
    """Fill a slot from ``first`` up to attempt ``last_attempt``."""

    first: Attempt
    last_attempt: int


@dataclass(frozen=True)
class Settled:
    """The driver committed attempt ``attempt`` of ``slot``; ``refused_by`` holds the
    ``duplicate_package`` findings when the writer refused it as a duplicate."""

    slot: int
    attempt: int
    refused_by: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class SlotEnd:
    """A slot's end on an actor: not accepted, or the error that ended it. (The driver ends a slot
    itself when it commits the slot's accepted attempt or its last one.)"""

    slot: int
    accepted: bool
    error: WorkerError | None = None


class SlotWorker(GangWorker):
    """A Ray actor filling slots with ``fill_slot``; it is the ``SlotHooks`` of its slots."""

    def __init__(self, spec: WorkerSpec) -> None:
        super().__init__()
        self.spec = spec
        self.generator = spec.build_generator()
        options = spec.options
        self.verifier = VerifierPool(options.verifier_options(), options.verify_processes or 0)
        self.reading = ReadingStage(make_reader(options.reader, options.reader_model, options.reader_base_url,
                                                self.generator.model, getattr(self.generator, "base_url", None)))
        self.requests = asyncio.Semaphore(spec.concurrency)
        self.waiting: dict[tuple[int, int], asyncio.Future[tuple[Finding, ...]]] = {}
        self.slots: set[asyncio.Task[None]] = set()
        self.tokens_known = self.tokens_own = 0
        self.outbox.stalled = lambda: len(self.waiting) >= len(self.slots)

    def receive(self, messages: list[SlotJob | Settled], tokens: int) -> None:
        self.tokens_known, self.tokens_own = tokens, 0
        for message in messages:
            if isinstance(message, Settled):
                future = self.waiting.pop((message.slot, message.attempt), None)
                if future is not None and not future.done():
                    future.set_result(message.refused_by)
            else:
                task = asyncio.create_task(self._fill(message))
                self.slots.add(task)
                task.add_done_callback(self.slots.discard)

    async def _fill(self, job: SlotJob) -> None:
        try:
            accepted = await fill_slot(self.generator, self.requests, job.first, job.last_attempt, self) is not None
        except Exception as exc:
            self.outbox.put(SlotEnd(job.first.slot, False, WorkerError.of(exc)))
        else:
            if not accepted:  # an accepted slot's end the driver knows from its commit
                self.outbox.put(SlotEnd(job.first.slot, accepted))

    # ------------------------------------------------------------------ SlotHooks

    def may_attempt(self) -> bool:
        budget = self.spec.options.budget_tokens
        return budget is None or self.tokens_known + self.tokens_own < budget

    def generated(self, generated: Generated) -> None:
        self.tokens_own += sum(c.prompt_tokens + c.completion_tokens for c in generated.calls)

    async def verify(self, package: TaskPackage) -> Verdict:
        """The verdict with the reader's answers (no cache here: the catalog is the driver's)."""
        verdict = await self.reading.aread(await self.verifier.verify(package), package)
        self.tokens_own += sum(c.prompt_tokens + c.completion_tokens for c in reader_calls(verdict))
        return verdict

    async def settle(self, request: Attempt, generated: Generated,
                     verdict: Verdict | None) -> tuple[TaskPackage | None, Verdict | None]:
        row = attempt_row(self.spec.run_id, self.spec.generator, request, generated, verdict)
        future: asyncio.Future[tuple[Finding, ...]] = asyncio.get_running_loop().create_future()
        self.waiting[(request.slot, request.attempt)] = future
        self.outbox.put(prepare(row))
        refused_by = await future
        return row.package, None if row.verdict is None else kept_verdict(row.verdict, refused_by)


@dataclass
class _Open:
    """A slot in flight on an actor, as the driver tracks it."""

    first: Attempt
    """The attempt it was handed out with."""
    last_attempt: int
    done: asyncio.Future[bool]
    actor: int = -1
    committed: int = 0
    """Its last attempt committed since it was handed out (0: none)."""
    accepted: bool = False


class RaySlots:
    """``BatchRun``'s ``SlotRunner`` on Ray (see the module)."""

    def __init__(self, batch: BatchRun) -> None:
        self.batch = batch
        self.open: dict[int, _Open] = {}
        self.gang: Gang | None = None
        self._commits: dict[int, set[asyncio.Task[None]]] = {}

    async def fill(self, first: Attempt, last_attempt: int) -> bool:
        slot = _Open(first, last_attempt, asyncio.get_running_loop().create_future())
        self.open[first.slot] = slot
        try:
            self._assign(slot)
            return await slot.done
        finally:
            self.open.pop(first.slot, None)

    def _assign(self, slot: _Open) -> None:
        assert self.gang is not None
        slot.actor = self.gang.least_loaded()
        self.gang.members[slot.actor].load += 1
        self.gang.send(slot.actor, SlotJob(slot.first, slot.last_attempt))

    def _end(self, slot: _Open, accepted: bool | BaseException) -> None:
        if self.gang is not None and slot.actor in self.gang.members:
            self.gang.members[slot.actor].load -= 1
        if not slot.done.done():
            if isinstance(accepted, BaseException):
                slot.done.set_exception(accepted)
            else:
                slot.done.set_result(accepted)

    # ------------------------------------------------------------------ from the gang

    def on_batch(self, actor: int, items: list[PreparedRow | SlotEnd]) -> None:
        rows = [item for item in items if isinstance(item, PreparedRow)]
        if rows:
            task = asyncio.create_task(self._commit(actor, rows))
            self._commits.setdefault(actor, set()).add(task)
            task.add_done_callback(self._commits[actor].discard)
        for item in items:
            if isinstance(item, SlotEnd) and (slot := self.open.get(item.slot)) is not None:
                self._end(slot, item.accepted if item.error is None else item.error.exception(f"slot {item.slot}"))

    async def _commit(self, actor: int, rows: list[PreparedRow]) -> None:
        for row in rows:
            self.batch.spent_tokens(*row.tokens)
        try:
            kept = await self.batch.commit_rows(rows)
        except Exception as exc:  # the catalog cannot be written: the run stops with this error
            for row in rows:
                if (slot := self.open.get(row.slot)) is not None:
                    self._end(slot, exc)
            return
        assert self.gang is not None
        for row in kept:
            self.gang.send(actor, Settled(row.slot, row.attempt, row.refused_by))
            if (slot := self.open.get(row.slot)) is not None:
                slot.accepted, slot.committed = row.accepted, row.attempt
                if row.accepted or row.attempt >= slot.last_attempt:  # its end on the actor is known
                    self._end(slot, row.accepted)

    async def on_lost(self, actor: int) -> None:
        """Continue the lost actor's open slots elsewhere, once its last rows are committed, each
        from the attempt after its last one committed, fed what the catalog holds of that one."""
        await asyncio.gather(*self._commits.pop(actor, set()), return_exceptions=True)
        lost = [s for s in self.open.values() if s.actor == actor and not s.done.done()]
        going_on = []
        for slot in lost:
            if slot.accepted:
                self._end(slot, True)
            elif max(slot.committed + 1, slot.first.attempt) > slot.last_attempt:
                self._end(slot, False)
            else:
                going_on.append(slot)
        moved = [s for s in going_on if s.committed]
        last = await asyncio.to_thread(self.batch.last_attempts, [s.first.slot for s in moved]) if moved else {}
        for slot in going_on:
            if slot.done.done():  # the run failed meanwhile
                continue
            if slot.committed:
                parent, findings = last[slot.first.slot]
                slot.first = slot.first.model_copy(update={
                    "attempt": slot.committed + 1, "parent": parent, "findings": findings, "invalid": None, "raw": None})
            try:
                self._assign(slot)
            except UserError as exc:
                self._end(slot, exc)

    def on_failure(self, exc: BaseException) -> None:
        for slot in list(self.open.values()):
            self._end(slot, exc)


async def on_ray(batch: BatchRun, address: str, endpoint: Endpoint, api_key: str | None,
                 work: Callable[[], Awaitable[T]]) -> T:
    """``work()`` (the run, or its regeneration) with ``batch``'s slots filled on the Ray cluster
    ``address`` names; the actors end with it."""
    runner = RaySlots(batch)
    with connected(address) as ray:
        model = None if endpoint.offline else endpoint.model
        gang = Gang(ray, SlotWorker, (), runner.on_batch, runner.on_lost, runner.on_failure,
                    tokens=lambda: batch.progress.tokens)
        share = -(-batch.options.concurrency // gang.count)
        spec = WorkerSpec(run_id=batch.run_id, options=batch.options, generator=batch.generator.name, model=model,
                          base_url=endpoint.base_url, api_key=api_key,
                          concurrency=share)
        gang.args = (spec,)
        runner.gang = gang
        batch.runner = runner
        batch.writer.delay = RAY_GROUP_DELAY
        try:
            await gang.start()
            return await work()
        finally:
            batch.runner = None
            await gang.close()

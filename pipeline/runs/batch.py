"""The batch job: fill slots with verified packages until ``count`` are accepted.

Each slot tries up to ``max_attempts`` times; a rejected attempt goes back to the generator with
its findings (a repair prompt for an LLM, a fresh seed of the same template offline). Every
attempt — package, verdict, findings, LLM calls — is committed to the catalog in a group gathered
over ``GroupWriter.delay`` (0.1 s) after it is verified, so a crash loses only the attempts in
flight and the group not yet committed, and ``resume`` continues the same run.

Generation is awaited on the event loop (``concurrency`` requests in flight, ``OPEN_SLOTS_PER_REQUEST``
times as many slots open); verification runs in a ``VerifierPool`` and catalog writes in a thread,
so neither stalls requests in flight. One writer task commits (``GroupWriter``) and checks dedup in
arrival order, so two slots that produce the same package cannot both be accepted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

from pipeline.catalog.queries import SlotState
from pipeline.catalog.rows import AttemptRow, PreparedRow, prepare
from pipeline.catalog.store import Catalog
from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding, LLMCall, Verdict
from pipeline.core.package import TaskPackage
from pipeline.generation.base import Attempt, Generated, Generator
from pipeline.generation.offline import pick_template
from pipeline.runs.options import Progress, RunOptions, RunSummary
from pipeline.runs.pool import VerifierPool
from pipeline.runs.reading import ReadingStage, make_reader
from pipeline.runs.slot import fill_slot
from pipeline.runs.writer import GroupWriter, kept_verdict
from pipeline.verify.dedup import MemoryDedup
from pipeline.verify.readers import reader_calls

OPEN_SLOTS_PER_REQUEST = 4
"""Slots open at once per request in flight: while some slots wait for verification (batched) and
for their commit (grouped, up to ``GroupWriter.delay``), others keep the model busy, so
``--concurrency`` requests stay in flight."""

SLOT_FACTOR = 4
"""A run opens at most ``SLOT_FACTOR × count + 8`` slots, so a generator that never succeeds
cannot keep a run going forever."""


class SlotRunner(Protocol):
    """Where a run's slots are filled when not on this event loop (``runs.ray_slots``: on Ray
    actors). The runner records each attempt through ``BatchRun.commit_row``."""

    async def fill(self, first: Attempt, last_attempt: int) -> bool:
        """Run ``fill_slot`` from ``first`` up to ``last_attempt``; True when the slot was accepted."""
        ...


def verifier_processes(options: RunOptions, generator: Generator) -> int:
    """The worker processes a run verifies in: as asked, else none offline (verifying in process
    is cheaper than handing packages to a worker) and one for an LLM (so verification never holds
    up the event loop that keeps requests in flight)."""
    if options.verify_processes is not None:
        return options.verify_processes
    return 0 if generator.model is None else 1


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
        self.verifier = VerifierPool(options.verifier_options(), verifier_processes(options, generator))
        self.reading = ReadingStage(make_reader(options.reader, options.reader_model, options.reader_base_url,
                                                generator.model, getattr(generator, "base_url", None)), catalog)
        self.writer = GroupWriter(catalog, MemoryDedup(), lambda: self.progress.in_flight)
        self._requests = asyncio.Semaphore(options.concurrency)  # made anew per entry point (loop-bound)
        self._failed_slots = 0
        self.accepted_at_start = 0
        """Accepted rows the run held when ``run`` began (a resumed run's earlier sessions)."""
        self.runner: SlotRunner | None = None
        """Set (``runs.ray_slots``) to fill slots elsewhere; None fills them on this event loop."""

    # ------------------------------------------------------------------ scheduling

    def _pending(self, states: dict[int, SlotState]) -> list[tuple[int, int, TaskPackage | None, list[Finding]]]:
        """Slots of a resumed run to continue: (slot, next attempt, last package, its findings)."""
        going_on = []
        for state in states.values():
            if state.accepted or state.attempts >= self.options.max_attempts:
                self._failed_slots += not state.accepted
            else:
                going_on.append(state)
        last = self.last_attempts([state.slot for state in going_on])
        return [(state.slot, state.attempts + 1, *last[state.slot]) for state in going_on]

    def last_attempts(self, slots: list[int]) -> dict[int, tuple[TaskPackage | None, list[Finding]]]:
        """Per slot, its last recorded package and findings (one catalog connection for them all)."""
        with self.catalog.batch():
            return {slot: self._last_attempt(slot) for slot in slots}

    def _last_attempt(self, slot: int) -> tuple[TaskPackage | None, list[Finding]]:
        """The slot's last package and its refusals (what a repair is fed: never its review notes
        or SFT losses, nor a generation failure's code)."""
        record = self.catalog.last_attempt(self.run_id, slot)
        if record is None:
            return None, []
        package = TaskPackage.model_validate(record.package) if record.package else None
        findings = [Finding(code=Code(f.code), message=f.message, step=f.step, check=f.check_id, detail=f.detail,
                            witness=f.witness)
                    for f in record.findings if f.kind == "refusal" and _is_code(f.code)]
        return package, findings

    async def run(self) -> RunSummary:
        self._requests = asyncio.Semaphore(self.options.concurrency)
        async with self.writer.running():
            return await self._run()

    async def _run(self) -> RunSummary:
        started = time.perf_counter()
        states = self.catalog.slot_states(self.run_id)
        self.progress.accepted = self.accepted_at_start = at_start = sum(s.accepted for s in states.values())
        self.progress.slots_opened = len(states)
        self.progress.prompt_tokens, self.progress.completion_tokens = self.catalog.tokens_spent(self.run_id)  # resume
        queue = self._pending(states)
        next_slot = max(states, default=-1) + 1
        max_slots = SLOT_FACTOR * self.options.count + 8
        tasks: set[asyncio.Task[bool]] = set()
        stop_reason = "target reached"
        try:
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
                # re-raise a crash of the run itself (catalog errors, every Ray worker lost): the first,
                # each one read so that none is left "never retrieved"
                crashes = [task.exception() for task in done if not task.cancelled() and task.exception()]
                if crashes:
                    raise crashes[0]  # type: ignore[misc]
            if tasks:
                await asyncio.gather(*tasks)
        finally:  # cancelled (a stop signal) or crashed: no slot goes on without the run
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        elapsed = time.perf_counter() - started
        reached = self.progress.accepted >= self.options.count
        return RunSummary(
            run_id=self.run_id, capability=self.options.capability, generator=self.generator.name,
            model=self.generator.model, target=self.options.count, accepted=self.progress.accepted,
            rejected_attempts=self.progress.rejected, slots=self.progress.slots_opened,
            failed_slots=self._failed_slots, prompt_tokens=self.progress.prompt_tokens,
            completion_tokens=self.progress.completion_tokens, elapsed_s=round(elapsed, 3), work_s=round(elapsed, 3),
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
            template = pick_template(self.options.capability, slot, self.options.service_profile)
            first = Attempt(capability=self.options.capability, template=template,
                            seed=self.options.seed, slot=slot, attempt=attempt, parent=parent, findings=findings)
            if self.runner is not None:
                accepted = await self.runner.fill(first, last_attempt)
            else:
                accepted = await fill_slot(self.generator, self._requests, first, last_attempt, self) is not None
            self._failed_slots += not accepted
            return accepted
        finally:
            self.progress.in_flight -= 1
            self.on_progress(self.progress)

    # ------------------------------------------------------------------ SlotHooks

    def may_attempt(self) -> bool:
        return not self._over_budget()

    def generated(self, generated: Generated) -> None:
        self.spent(generated.calls)

    def spent(self, calls: list[LLMCall]) -> None:
        """Count the tokens of ``calls`` (the budget and the progress read the total)."""
        for call in calls:
            self.spent_tokens(call.prompt_tokens, call.completion_tokens)

    def spent_tokens(self, prompt: int, completion: int) -> None:
        """Count tokens spent elsewhere (``spent``)."""
        self.progress.prompt_tokens += prompt
        self.progress.completion_tokens += completion

    async def verify(self, package: TaskPackage) -> Verdict:
        """The verdict, with the reader's answers to its claims (``runs.reading``); their tokens count."""
        verdict = await self.reading.aread(await self.verifier.verify(package), package)
        self.spent(reader_calls(verdict))
        return verdict

    async def settle(self, request: Attempt, generated: Generated,
                     verdict: Verdict | None) -> tuple[TaskPackage | None, Verdict | None]:
        row = attempt_row(self.run_id, self.generator.name, request, generated, verdict)
        kept = await self.commit_row(prepare(row))
        return row.package, None if row.verdict is None else kept_verdict(row.verdict, kept.refused_by)

    async def regenerate(self, slots: list[int], attempts: int) -> list[bool]:
        """Give each failed slot up to ``attempts`` more tries, fed its last findings; per slot,
        whether it ended accepted. New rows carry the rejected package as their parent."""
        self._requests = asyncio.Semaphore(self.options.concurrency)
        semaphore = asyncio.Semaphore(OPEN_SLOTS_PER_REQUEST * self.options.concurrency)
        states = self.catalog.slot_states(self.run_id)
        last = self.last_attempts(slots)

        async def one(slot: int) -> bool:
            async with semaphore:
                first = states[slot].attempts + 1
                return await self._slot(slot, first, *last[slot], last_attempt=first + attempts - 1)

        async with self.writer.running():
            return list(await asyncio.gather(*(one(s) for s in slots)))

    async def commit_row(self, row: PreparedRow) -> PreparedRow:
        """Hand one verified attempt to the group writer (dedup, then the commit); return it once
        committed (``refused`` when a duplicate), and count it."""
        return (await self.commit_rows([row]))[0]

    async def commit_rows(self, rows: list[PreparedRow]) -> list[PreparedRow]:
        """``commit_row`` for several attempts at once (in their order)."""
        kept = await self.writer.commit_many(rows)
        for row in kept:
            if row.accepted:
                self.progress.accepted += 1
            else:
                self.progress.rejected += 1
                self.progress.codes.update(row.codes)
            self.on_progress(self.progress)
        return kept


def attempt_row(run_id: int, generator: str, request: Attempt, generated: Generated,
                verdict: Verdict | None) -> AttemptRow:
    """The catalog row of one attempt: the package under its verdict's id, or the generation's failure."""
    package = generated.package
    if package is not None and verdict is not None and verdict.id != package.id:
        package = package.model_copy(update={"id": verdict.id})
    failure = None if package is not None else generated.failure
    parent = request.parent
    return AttemptRow(run_id=run_id, slot=request.slot, attempt=request.attempt, package=package, verdict=verdict,
                      llm_calls=generated.calls + reader_calls(verdict), parent=parent.id if parent else None, failure=failure,
                      generator=generator, capability=request.capability, workflow=request.template,
                      injected_defect=generated.defect)


_CODES = frozenset(c.value for c in Code)


def _is_code(code: str) -> bool:
    """Whether a stored finding code is a verification reason code (not a generation failure)."""
    return code in _CODES

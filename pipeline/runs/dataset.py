"""``generate``: verified packages in memory, no catalog (the Python counterpart of ``synth run``)."""

from __future__ import annotations

import asyncio

from pipeline.core.outcomes import Verdict
from pipeline.core.package import TaskPackage, near_key
from pipeline.core.services import DEFAULT_PROFILE
from pipeline.generation.base import Attempt, Generated, Generator
from pipeline.generation.offline import pick_template
from pipeline.runs.api import make_generator
from pipeline.runs.batch import SLOT_FACTOR
from pipeline.runs.slot import fill_slot
from pipeline.runs.steps import Steps, awaitable, blocking
from pipeline.taxonomy.capabilities import profile_templates, taxonomy
from pipeline.verify.verifier import verify_package


def _generate(capability: str, count: int, *, seed: int = 7, max_attempts: int = 3, model: str | None = None,
              base_url: str | None = None, generator: Generator | None = None,
              concurrency: int = 4, services: str = DEFAULT_PROFILE) -> Steps[list[TaskPackage]]:
    """``count`` verified packages of ``capability``, ids set, in slot order.

    Slot ``i`` uses template ``i`` of service profile ``services`` round robin and gets up to ``max_attempts`` tries (a rejected
    try is repaired from its findings, as in a run: ``pipeline.runs.slot.fill_slot``). With the
    offline generator (the default) the result is a function of ``(capability, count, seed,
    max_attempts)`` alone. A package equal or near-equal to one of an earlier slot is left out.
    Raises ``RuntimeError`` when ``SLOT_FACTOR × count + 8`` slots do not yield ``count`` packages.
    """
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    profile_templates(taxonomy(), capability, services)
    generator = generator or make_generator(model, base_url)
    packages: list[TaskPackage] = yield _fill(generator, capability, services, count, seed, max_attempts, concurrency)
    return packages


generate = blocking(_generate, "generate")
agenerate = awaitable(_generate, "agenerate")


class _InMemory:
    """``SlotHooks`` for packages kept in memory: every attempt may start, verification runs in a
    thread, an attempt is kept as the package with its verdict's id."""

    def may_attempt(self) -> bool:
        return True

    def generated(self, generated: Generated) -> None:
        pass

    async def verify(self, package: TaskPackage) -> Verdict:
        return await asyncio.to_thread(verify_package, package)

    async def settle(self, request: Attempt, generated: Generated,
                     verdict: Verdict | None) -> tuple[TaskPackage | None, Verdict | None]:
        if generated.package is None or verdict is None:
            return None, None
        return generated.package.model_copy(update={"id": verdict.id}), verdict


async def _fill(generator: Generator, capability: str, profile: str, count: int, seed: int, max_attempts: int,
                concurrency: int) -> list[TaskPackage]:
    out: list[TaskPackage] = []
    seen_ids: set[str] = set()
    seen_near: set[str] = set()
    next_slot, max_slots = 0, SLOT_FACTOR * count + 8
    requests = asyncio.Semaphore(concurrency)
    hooks = _InMemory()
    try:
        while len(out) < count and next_slot < max_slots:
            wave = range(next_slot, min(next_slot + count - len(out), max_slots))
            next_slot = wave.stop
            firsts = [Attempt(capability=capability, template=pick_template(capability, s, profile), seed=seed, slot=s)
                      for s in wave]
            results = await asyncio.gather(*(fill_slot(generator, requests, first, max_attempts, hooks)
                                             for first in firsts))
            for package in results:
                if package is None or len(out) >= count:
                    continue
                near = near_key(package)
                if package.id in seen_ids or near in seen_near:
                    continue
                seen_ids.add(package.id)
                seen_near.add(near)
                out.append(package)
    finally:
        close = getattr(generator, "aclose", None)
        if close is not None:
            await close()
    if len(out) < count:
        raise RuntimeError(f"{max_slots} slots yielded {len(out)} of {count} verified {capability} packages")
    return out

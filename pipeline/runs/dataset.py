"""``generate``: verified packages in memory, no catalog (the Python counterpart of ``synth run``)."""

from __future__ import annotations

import asyncio

from pipeline.core.outcomes import Finding
from pipeline.core.package import TaskPackage, near_key
from pipeline.generate.base import Attempt, Generated, Generator
from pipeline.generate.offline import pick_template
from pipeline.runs.api import make_generator
from pipeline.runs.batch import SLOT_FACTOR
from pipeline.taxonomy.capabilities import find_capability, taxonomy
from pipeline.verify.verifier import verify_package


def generate(capability: str, count: int, *, seed: int = 7, max_attempts: int = 3, model: str | None = None,
             base_url: str | None = None, generator: Generator | None = None,
             concurrency: int = 4) -> list[TaskPackage]:
    """``count`` verified packages of ``capability``, ids set, in slot order.

    Slot ``i`` uses template ``i`` round robin and gets up to ``max_attempts`` tries (a rejected
    try is repaired from its findings). With the offline generator (the default) the result is a
    function of ``(capability, count, seed, max_attempts)`` alone. A package equal or near-equal
    to one of an earlier slot is left out. Raises ``RuntimeError`` when ``SLOT_FACTOR × count + 8``
    slots do not yield ``count`` packages.
    """
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    find_capability(taxonomy(), capability)
    generator = generator or make_generator(model, base_url)
    return asyncio.run(_generate(generator, capability, count, seed, max_attempts, concurrency))


async def _slot(generator: Generator, requests: asyncio.Semaphore, capability: str, seed: int, slot: int,
                max_attempts: int) -> TaskPackage | None:
    parent: TaskPackage | None = None
    findings: list[Finding] = []
    invalid: Generated | None = None
    template = pick_template(capability, slot)
    for attempt in range(1, max_attempts + 1):
        async with requests:
            generated = await generator.generate(Attempt(
                capability=capability, template=template, seed=seed, slot=slot, attempt=attempt, parent=parent,
                findings=findings, invalid=invalid.failure if invalid else None, raw=invalid.raw if invalid else None))
        if generated.package is None:
            parent, findings, invalid = None, [], generated if generated.raw else None
            continue
        invalid = None
        verdict = await asyncio.to_thread(verify_package, generated.package)
        package = generated.package.model_copy(update={"id": verdict.id})
        if verdict.accepted:
            return package
        parent, findings = package, verdict.findings
    return None


async def _generate(generator: Generator, capability: str, count: int, seed: int, max_attempts: int,
                    concurrency: int) -> list[TaskPackage]:
    out: list[TaskPackage] = []
    seen_ids: set[str] = set()
    seen_near: set[str] = set()
    next_slot, max_slots = 0, SLOT_FACTOR * count + 8
    requests = asyncio.Semaphore(concurrency)
    try:
        while len(out) < count and next_slot < max_slots:
            wave = range(next_slot, min(next_slot + count - len(out), max_slots))
            next_slot = wave.stop
            results = await asyncio.gather(*(_slot(generator, requests, capability, seed, s, max_attempts)
                                             for s in wave))
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

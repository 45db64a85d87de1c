"""One slot's attempts: generate, verify, and repair from the findings until a package is accepted
or the attempts run out. The one loop behind both ``synth run`` (``BatchRun``, which records every
attempt in the catalog) and ``generate`` (packages in memory); ``SlotHooks`` is what differs."""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from pipeline.core.errors import UserError
from pipeline.core.outcomes import Failure, FailureCode, Verdict
from pipeline.core.package import TaskPackage
from pipeline.generation.base import Attempt, Generated, Generator
from pipeline.runs.pool import VerifierCrash

log = logging.getLogger(__name__)


class SlotHooks(Protocol):
    """What a caller of ``fill_slot`` decides."""

    def may_attempt(self) -> bool:
        """Whether another attempt may start (False once a token budget is spent)."""
        ...

    def generated(self, generated: Generated) -> None:
        """Told of each generator reply as it arrives (before it is verified)."""
        ...

    async def verify(self, package: TaskPackage) -> Verdict:
        """The verdict on a generated package."""
        ...

    async def settle(self, request: Attempt, generated: Generated,
                     verdict: Verdict | None) -> tuple[TaskPackage | None, Verdict | None]:
        """Keep one attempt (``verdict`` is None when no package came out) and return it as kept:
        the package with the verdict's id and the verdict, which may now refuse it (a duplicate)."""
        ...


async def fill_slot(generator: Generator, requests: asyncio.Semaphore, first: Attempt, last_attempt: int,
                    hooks: SlotHooks) -> TaskPackage | None:
    """The accepted package of ``first``'s slot, or None after attempt ``last_attempt`` (or once
    ``hooks.may_attempt()`` says no). Each generation holds ``requests``.

    A rejected package goes back to the generator with its findings (``parent``, ``findings``); an
    invalid reply (no package, raw text kept) with its validation error (``invalid``, ``raw``);
    after any other failure the next attempt starts afresh. A verifier that raises costs one
    attempt, recorded as a ``verifier_error`` failure, never the run.
    """
    request = first
    while request.attempt <= last_attempt and hooks.may_attempt():
        async with requests:
            generated = await generator.generate(request)
        hooks.generated(generated)
        verdict = None
        if generated.package is not None:
            try:
                verdict = await hooks.verify(generated.package)
            except UserError:  # the reader's model server cannot serve (ServerUnusable): the run stops, resumable
                raise
            except Exception as exc:  # a verifier bug must cost one attempt, not the run
                detail = str(exc) if isinstance(exc, VerifierCrash) else f"{type(exc).__name__}: {exc}"
                log.error("verification of slot %s attempt %s crashed: %s", request.slot, request.attempt, detail)
                failure = Failure(code=FailureCode.VERIFIER_ERROR, message=detail)
                generated = generated.model_copy(update={"package": None, "failure": failure})
        package, verdict = await hooks.settle(request, generated, verdict)
        if verdict is not None and verdict.accepted:
            return package
        invalid = generated if generated.package is None and generated.raw else None
        request = request.model_copy(update={
            "attempt": request.attempt + 1, "parent": package, "findings": verdict.findings if verdict else [],
            "invalid": invalid.failure if invalid else None, "raw": invalid.raw if invalid else None})
    return None

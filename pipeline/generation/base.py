"""The contract between the run loop and a generator (offline or LLM)."""

from __future__ import annotations

import hashlib
from typing import Protocol

from pydantic import Field

from pipeline.core.outcomes import Failure, Finding, LLMCall
from pipeline.core.package import TaskPackage
from pipeline.core.strict_model import StrictModel


class Attempt(StrictModel):
    """One request for a package: slot ``slot`` of a run, try number ``attempt`` (1-based).

    For a repair (attempt > 1) ``parent`` is the rejected package and ``findings`` why it was
    rejected; after a reply that was no valid package, ``invalid`` is why and ``raw`` the reply.
    """

    capability: str
    template: str
    seed: int
    slot: int
    attempt: int = 1
    parent: TaskPackage | None = None
    findings: list[Finding] = Field(default_factory=list)
    invalid: Failure | None = None
    raw: str | None = None

    @property
    def item_seed(self) -> int:
        """A seed of this slot and attempt alone (the run seed, slot and attempt mixed), so no two
        items of a run send the model the same request."""
        digest = hashlib.sha256(f"{self.seed}:{self.capability}:{self.template}:{self.slot}:{self.attempt}".encode())
        return int.from_bytes(digest.digest()[:4], "big")


class Generated(StrictModel):
    """What a generator returned: a package, or the ``failure`` saying why there is none.

    The package's ``id`` may be left empty: verification computes it from the content.
    ``defect`` is the label of a defect the offline generator injected on purpose (demos and
    benchmarks); it is kept outside the package so the verifier cannot see it.
    """

    package: TaskPackage | None = None
    failure: Failure | None = None
    raw: str | None = None
    calls: list[LLMCall] = Field(default_factory=list)
    defect: str | None = None


class Generator(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str | None:
        """The model behind it; None for the offline generator."""

    async def generate(self, attempt: Attempt) -> Generated: ...

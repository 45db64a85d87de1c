"""``runs/slot.py: fill_slot``: a verifier that raises costs one attempt, but a model server that
cannot serve (the reader's, ``ServerUnusable``) stops the slot, and with it the run, resumable."""

from __future__ import annotations

import asyncio

import pytest

from pipeline.core.outcomes import Verdict
from pipeline.core.package import TaskPackage
from pipeline.generation.base import Attempt, Generated
from pipeline.generation.model_client import ServerUnusable
from pipeline.generation.offline import OfflineGenerator, pick_template
from pipeline.runs.slot import fill_slot


class Hooks:
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.settled: list[Verdict | None] = []

    def may_attempt(self) -> bool:
        return True

    def generated(self, generated: Generated) -> None:
        pass

    async def verify(self, package: TaskPackage) -> Verdict:
        raise self.error

    async def settle(self, request: Attempt, generated: Generated,
                     verdict: Verdict | None) -> tuple[TaskPackage | None, Verdict | None]:
        self.settled.append(verdict)
        return generated.package, verdict


def _fill(hooks: Hooks) -> TaskPackage | None:
    first = Attempt(capability="general", template=pick_template("general", 0), seed=7, slot=0, attempt=1)
    return asyncio.run(fill_slot(OfflineGenerator(), asyncio.Semaphore(1), first, 2, hooks))


def test_a_verifier_crash_costs_each_attempt_and_the_slot_goes_on() -> None:
    hooks = Hooks(RuntimeError("a verifier bug"))
    assert _fill(hooks) is None
    assert hooks.settled == [None, None]  # both attempts recorded, as failures


def test_a_server_that_cannot_serve_stops_the_slot() -> None:
    hooks = Hooks(ServerUnusable("cannot reach the model server at http://127.0.0.1:9/v1"))
    with pytest.raises(ServerUnusable):
        _fill(hooks)
    assert hooks.settled == []  # nothing recorded as a failed attempt

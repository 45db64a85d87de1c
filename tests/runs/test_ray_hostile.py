"""Ray workers that die before they start, or all of them: one line saying what happened and how
to go on, no traceback (a stand-in ``ray`` module plays the cluster, so these run without one; the
same cases on a real local Ray instance, through the command line: ``test_ray_lost.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from pipeline.core.errors import UserError
from pipeline.runs import ray_cluster
from pipeline.runs.ray_cluster import Gang, GangWorker, connected
from tests.support.event_loop import turn_when


class ActorDiedError(Exception):
    """What Ray raises for an actor that died (a ``RayActorError``)."""


class _Exceptions:
    RayActorError = ActorDiedError


class FakeRay:
    """Actors whose fates are given in order: True starts, False dies before it is up."""

    exceptions = _Exceptions

    def __init__(self, fates: list[bool]) -> None:
        self.fates: Iterator[bool] = iter(fates)
        self.killed = 0

    def is_initialized(self) -> bool:
        return True

    def remote(self, **_options: Any) -> Any:
        return lambda _worker: _Remote(self)

    def kill(self, _handle: Any) -> None:
        self.killed += 1


class _Remote:
    def __init__(self, ray: FakeRay) -> None:
        self.ray = ray

    def remote(self, *_args: Any) -> Any:
        return _Handle(next(self.ray.fates))


class _Method:
    def __init__(self, call: Any) -> None:
        self.remote = call


class _Handle:
    def __init__(self, alive: bool) -> None:
        async def ready() -> int:
            if not alive:
                raise ActorDiedError("The actor never ran - it was cancelled before it started running.\n"
                                     "Traceback (most recent call last): ...")
            return 4242

        async def collect() -> bytes:
            await asyncio.Event().wait()  # nothing finished, ever
            return b""

        self.ready, self.collect = _Method(ready), _Method(collect)


def gang_of(ray: FakeRay, count: int, joined: asyncio.Event | None = None) -> Gang:
    async def on_lost(_index: int) -> None:
        return None

    return Gang(ray, GangWorker, (), lambda _i, _items: None, on_lost, lambda _exc: None, count=count,
                on_joined=lambda _index: joined.set() if joined else None)


def test_a_worker_that_dies_before_it_starts_is_replaced(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> int:
        joined = asyncio.Event()
        gang = gang_of(FakeRay([True, False, True]), 2, joined)
        await gang.start()
        assert len(gang.members) == 1
        await asyncio.wait_for(joined.wait(), 10)
        members = len(gang.members)
        await gang.close()
        return members

    assert asyncio.run(scenario()) == 2
    assert "died before it was up: The actor never ran" in caplog.text and "Traceback" not in caplog.text


def test_when_no_worker_starts_one_line_says_so() -> None:
    async def scenario() -> None:
        gang = gang_of(FakeRay([False, False]), 2)
        try:
            await gang.start()
        finally:
            await gang.close()

    with pytest.raises(UserError) as stopped:
        asyncio.run(scenario())
    text = str(stopped.value)
    assert "no Ray worker of this job could start (The actor never ran" in text
    assert "then resume" in text and "\n" not in text


def test_a_lost_actor_reaching_the_driver_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray_cluster, "import_ray", lambda: FakeRay([]))
    with pytest.raises(UserError) as stopped, connected("local"):
        raise ActorDiedError("The actor died unexpectedly before finishing this task.\n  class_name: SlotWorker")
    assert str(stopped.value).startswith("a Ray worker of this job died (The actor died unexpectedly")
    assert "\n" not in str(stopped.value) and "ray status" in str(stopped.value)


def test_a_worker_whose_constructor_raised_is_named_by_what_it_raised() -> None:
    died = ActorDiedError("The actor died because of an error raised in its creation task, \x1b[36mray::SlotWorker"
                          ".__init__()\x1b[39m (pid=7, ip=10.0.0.5)\n  File \"x.py\", line 1, in <module>\n"
                          "ModuleNotFoundError: No module named 'pipeline'\n")
    died.actor_init_failed = True  # type: ignore[attr-defined]
    assert ray_cluster.died_line(died) == "its start raised ModuleNotFoundError: No module named 'pipeline'"
    died.actor_init_failed = False  # type: ignore[attr-defined]
    assert ray_cluster.died_line(died) == ("The actor died because of an error raised in its creation task, "
                                           "ray::SlotWorker.__init__() (pid=7, ip=10.0.0.5)")


class _Worker:
    """``ray._private.worker``: what Ray's driver thread prints the cluster's error reports with."""

    def __init__(self) -> None:
        self.printed: list[dict[str, Any]] = []

    def print_to_stdstream(self, data: dict[str, Any], ignore_prefix: bool) -> None:
        self.printed.append(data)


class _Private:
    def __init__(self) -> None:
        self.worker = _Worker()


def test_the_clusters_reports_of_dead_workers_are_one_warning_not_stdout(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    ray = FakeRay([])
    ray._private = _Private()  # type: ignore[attr-defined]
    worker = ray._private.worker  # type: ignore[attr-defined]
    printing = worker.print_to_stdstream
    monkeypatch.setattr(ray_cluster, "import_ray", lambda: ray)
    report = {"lines": ["\x1b[33mA worker died or was killed while executing a task by an unexpected system error. "
                        "To troubleshoot the problem, check the logs. Worker PID: 5713"], "pid": "raylet",
              "is_err": False}
    with connected("local"):
        worker.print_to_stdstream(report, ignore_prefix=False)  # as Ray's thread calls it, by name
        worker.print_to_stdstream({"lines": ["autoscaler news"], "pid": "autoscaler", "is_err": False}, False)
    assert worker.print_to_stdstream == printing  # left as it was
    assert [d["pid"] for d in worker.printed] == ["autoscaler"]
    assert caplog.messages == ["the Ray cluster says: A worker died or was killed while executing a task by an "
                               "unexpected system error."]


_OUTBOX_STAGES = {
    "filled": lambda outbox, taking: True,  # cancelled in the turn the item that fills it arrives
    "woken": lambda outbox, taking: not outbox._full._waiters,  # its wait for more is over, the take not yet on
    "returned": lambda outbox, taking: taking.done(),
}


@pytest.mark.parametrize("stage", sorted(_OUTBOX_STAGES))
def test_a_take_cancelled_as_the_outbox_fills_is_cancelled_and_keeps_the_items(stage: str) -> None:
    """``Outbox.take`` waits up to ``gather_s`` for more items; cancelled as the item that fills it
    arrives (``stage``: in that turn, once its wait is over, once it returned), it raises
    ``CancelledError`` unless it had already returned, and the items stay for the next ``take`` (a
    take that returned them to a caller that was cancelled would lose them)."""
    outbox = ray_cluster.Outbox(gather_s=60.0, max_items=2)

    async def cancel_as_it_fills() -> tuple[bool, bool, list[Any]]:
        outbox.put("first")
        taking = asyncio.create_task(outbox.take())
        await turn_when(lambda: bool(outbox._full._waiters), "the take to wait for more")  # type: ignore[attr-defined]
        outbox.put("second")
        await turn_when(lambda: _OUTBOX_STAGES[stage](outbox, taking), f"the take to be {stage}")
        requested = taking.cancel()
        await asyncio.wait([taking])
        return requested, taking.cancelled(), (await outbox.take() if taking.cancelled() else taking.result())

    requested, cancelled, items = asyncio.run(cancel_as_it_fills())
    assert cancelled == requested, "the take went on after it was cancelled"
    assert items == ["first", "second"]

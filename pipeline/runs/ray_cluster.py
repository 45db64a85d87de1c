"""Ray for ``--ray``: joining a cluster, and a gang of long-lived actors fed in batches.

``connected(address)`` joins the cluster ``address`` names (``LOCAL``: start a Ray instance on this
machine for the job, or use the one this process already joined; ``auto`` or ``host:port``: an
existing cluster) and leaves it afterwards. Ray is the optional extra ``ray``: without it,
``--ray`` is a ``UserError`` saying how to install it.

``Gang`` runs one actor per CPU of the cluster (``num_cpus=1`` each, so Ray spreads them over the
nodes). Each actor runs its own event loop; the driver talks to it through two methods, both
batched so the driver pays for a few Ray calls per batch instead of per item: ``submit(messages,
tokens)`` hands it work and answers, ``collect()`` (one call always outstanding per actor) returns
what it finished since the last call, gathered for up to ``GATHER_S`` after the first item. An
actor whose process or node is lost raises ``RayActorError`` from its outstanding ``collect``: the
gang drops it and tells its owner (``on_lost``), which hands that actor's work in flight to the
others, and starts a new actor in its place (up to ``REPLACEMENTS_PER_ACTOR`` times the gang's size
over the job, so a long job does not shrink as workers die, and actors that die at once on start
do not loop forever); the owner hears of it through ``on_joined`` once it is up. The job goes on
while one actor lives.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import re
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pipeline.core.distribution import install_extra
from pipeline.core.errors import UserError
from pipeline.runs import LOCAL

INSTALL = install_extra("ray")
GATHER_S = 0.25
"""How long an actor gathers finished items after the first before ``collect`` returns them
(unless nothing else can come: see ``Outbox``). Each ``collect`` costs the driver a Ray call, so
fewer, fuller answers keep its CPU per item low."""
MAX_ITEMS = 256
"""At most this many items in one ``collect`` answer."""
FLUSH_S = 0.01
"""How long messages for the actors are gathered before they go: answers to one commit group and
the work that follows them (new slots) then share one Ray call per actor."""
REPLACEMENTS_PER_ACTOR = 2
"""A gang of N actors starts at most this many times N new actors in place of lost ones."""

log = logging.getLogger(__name__)


def import_ray() -> ModuleType:
    """The ``ray`` module; a ``UserError`` saying how to install it when it is missing."""
    try:
        import ray
    except ImportError:
        raise UserError(f"--ray needs Ray, which is not installed here; install it with `{INSTALL}`") from None
    return ray


def needs_ray(address: str | None) -> None:
    """With ``address`` set (``--ray``), Ray must be installed: a ``UserError`` saying how to
    install it, raised before a job records anything."""
    if address is not None:
        import_ray()


@contextmanager
def connected(address: str) -> Iterator[ModuleType]:
    """Inside: this process is a driver of the Ray cluster ``address`` names (see the module). A
    Ray this process already joined is used as it is and left running; one started or joined here
    is left at the end. An address that cannot be reached is a ``UserError``, and so is a lost
    actor's ``RayActorError`` that reaches the end of the block (one line saying how to go on, no
    traceback)."""
    ray = import_ray()
    if ray.is_initialized():
        with _cluster_errors_logged(ray), _lost_said(ray):
            yield ray
        return
    with _cluster_errors_logged(ray):
        try:
            ray.init(address=None if address == LOCAL else address, include_dashboard=False,
                     logging_level=logging.WARNING, configure_logging=False, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            where = "a local Ray instance" if address == LOCAL else f"the Ray cluster at {address!r}"
            raise UserError(f"cannot start or join {where} ({str(exc).splitlines()[0][:200]}); start a cluster "
                            "with `ray start --head` and pass --ray auto (or its host:port), or drop --ray") from None
        try:
            with _lost_said(ray):
                yield ray
        finally:
            ray.shutdown()


@contextmanager
def _cluster_errors_logged(ray: ModuleType) -> Iterator[None]:
    """Inside: the cluster's error reports that Ray's driver prints on this process's stdout (a
    paragraph from the raylet for every worker process that died, ``log_to_driver`` or not) are a
    one-sentence warning in this module's log instead, so stdout stays the command's own (``--json``
    output). Ray prints them from a thread of its own through ``ray._private.worker.print_to_stdstream``,
    looked up at each call: that name is replaced while inside (and left alone when a Ray version has
    no such function)."""
    worker: Any = getattr(getattr(ray, "_private", None), "worker", None)
    printing = getattr(worker, "print_to_stdstream", None)
    if printing is None:
        yield
        return

    def logged(data: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        if data.get("pid") != "raylet":
            printing(data, *args, **kwargs)
            return
        for line in data.get("lines") or ():
            log.warning("the Ray cluster says: %s", first_sentence(str(line)))

    worker.print_to_stdstream = logged
    try:
        yield
    finally:
        worker.print_to_stdstream = printing


@contextmanager
def _lost_said(ray: ModuleType) -> Iterator[None]:
    """Inside: a ``RayActorError`` (an actor that died, before it started or later) is a ``UserError``."""
    try:
        yield
    except ray.exceptions.RayActorError as exc:
        raise UserError(f"a Ray worker of this job died ({died_line(exc)}); what the job finished is saved: check "
                        "the cluster (`ray status`), then resume") from None


def cluster_cpus(ray: ModuleType) -> int:
    """The CPUs of the cluster (at least 1): one actor each."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


@dataclass(frozen=True)
class WorkerError:
    """An exception raised on an actor, as the driver gets it back: its text, and whether it was a
    ``UserError`` (a setup problem the user fixes, e.g. a model server that cannot serve) with its
    exit code."""

    message: str
    user_error: bool
    exit_code: int = 2

    @classmethod
    def of(cls, exc: Exception) -> WorkerError:
        if isinstance(exc, UserError):
            return cls(str(exc), True, exc.exit_code)
        return cls(f"{type(exc).__name__}: {exc}", False)

    def exception(self, what: str) -> Exception:
        """The ``UserError`` again, or a ``RuntimeError`` saying ``what`` failed on a Ray worker."""
        if self.user_error:
            return UserError(self.message, self.exit_code)
        return RuntimeError(f"{what} failed on a Ray worker: {self.message}")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def died_line(exc: BaseException) -> str:
    """What Ray says of a lost actor in one line, without its traceback or terminal colours: its
    first line; for an actor whose constructor raised (``actor_init_failed``: a node that cannot
    import synth, say), what it raised (the message's last line) instead of where it ran."""
    text = [line for line in _ANSI.sub("", str(exc)).strip().splitlines() if line.strip()]
    if not text:
        return type(exc).__name__
    if getattr(exc, "actor_init_failed", False) and len(text) > 1:
        return f"its start raised {text[-1].strip()}"[:200]
    return text[0][:200]


def first_sentence(text: str) -> str:
    """The first sentence of ``text``'s first line, without terminal colours (at most 200 characters)."""
    lines = _ANSI.sub("", text).strip().splitlines()
    line = lines[0] if lines else ""
    end = line.find(". ")
    return (line if end < 0 else line[:end + 1])[:200]


class Outbox:
    """An actor's finished items, waiting for the driver's ``collect``. ``stalled()`` says that
    nothing more can arrive until the driver answers (every piece of work on the actor waits on
    it): the items then go at once instead of after ``gather_s``."""

    def __init__(self, gather_s: float = GATHER_S, max_items: int = MAX_ITEMS,
                 stalled: Callable[[], bool] = lambda: False) -> None:
        self.gather_s, self.max_items, self.stalled = gather_s, max_items, stalled
        self.items: list[Any] = []
        self._ready = asyncio.Event()
        self._full = asyncio.Event()
        """Set when the items should go now: ``max_items`` of them, or the actor stalled."""

    def put(self, item: Any) -> None:
        self.items.append(item)
        self._ready.set()
        if len(self.items) >= self.max_items or self.stalled():
            self._full.set()

    async def take(self) -> list[Any]:
        """Items once there are any, gathered for up to ``gather_s`` after the first (at most
        ``max_items``; the rest wait for the next call)."""
        await self._ready.wait()
        if len(self.items) < self.max_items and not self.stalled():
            self._full.clear()
            with suppress(TimeoutError):  # not ``asyncio.wait_for``, which can miss a cancellation (3.11)
                async with asyncio.timeout(self.gather_s):
                    await self._full.wait()
        taken, self.items = self.items[:self.max_items], self.items[self.max_items:]
        if not self.items:
            self._ready.clear()
        return taken


class GangWorker:
    """What every gang actor has: ``ready`` (its process id, once it is up), ``submit`` (the
    driver's messages, pickled as one object for the reason ``collect`` gives, handed to
    ``receive``) and ``collect``."""

    def __init__(self) -> None:
        self.outbox = Outbox()

    async def ready(self) -> int:
        return os.getpid()

    async def submit(self, messages: bytes, tokens: int) -> None:
        self.receive(pickle.loads(messages), tokens)

    def receive(self, messages: list[Any], tokens: int) -> None:
        """Take the driver's ``messages`` (work and answers); ``tokens`` is the job's token count."""
        raise NotImplementedError

    async def collect(self) -> bytes:
        """The next items, pickled here as one object: Ray then moves plain bytes instead of
        serializing each item (and each pydantic model in it) on its own."""
        return pickle.dumps(await self.outbox.take(), protocol=pickle.HIGHEST_PROTOCOL)


@dataclass
class _Member:
    handle: Any
    messages: list[Any] = field(default_factory=list)
    load: int = 0
    """Items in flight on it (its owner counts them)."""


class Gang:
    """One actor of ``worker`` (a ``GangWorker`` subclass, built with ``args``) per cluster CPU, or
    ``count``; see the module. ``on_batch(index, items)`` is called with every ``collect`` answer
    (on the event loop, in order per actor), ``on_lost(index)`` once per actor lost; ``tokens()`` is
    sent with every ``submit``; ``on_failure(exc)`` when an actor raised (a bug): every item of the
    owner should then fail with it. A lost actor is replaced (see the module): ``on_joined(index)``
    is called when the new one, under a new index, is up."""

    def __init__(self, ray: ModuleType, worker: type[GangWorker], args: tuple[Any, ...],
                 on_batch: Callable[[int, list[Any]], None], on_lost: Callable[[int], Awaitable[None]],
                 on_failure: Callable[[BaseException], None], tokens: Callable[[], int] = lambda: 0,
                 count: int | None = None, on_joined: Callable[[int], None] = lambda _index: None) -> None:
        self.ray, self.worker, self.args = ray, worker, args
        self.on_batch, self.on_lost, self.on_failure, self.tokens = on_batch, on_lost, on_failure, tokens
        self.on_joined = on_joined
        self.count = count or cluster_cpus(ray)
        self.replacements_left = REPLACEMENTS_PER_ACTOR * self.count
        self.members: dict[int, _Member] = {}
        self.pids: dict[int, int] = {}
        self._next_index = 0
        self._remote: Any = None
        self._starting: set[Any] = set()
        """Handles of replacements not up yet (ended by ``close`` too)."""
        self._collectors: list[asyncio.Task[None]] = []
        self._sends: set[asyncio.Task[None]] = set()
        self._flush_due = False

    async def start(self) -> None:
        """Start the actors and wait until each is up (each imports synth once). An actor that dies
        before it is up is replaced as a lost one is (``_replace``); when none is up, a
        ``UserError`` says what happened and how to go on."""
        self._remote = self.ray.remote(num_cpus=1, max_restarts=0)(self.worker)
        handles = [self._remote.remote(*self.args) for _ in range(self.count)]
        pids = await asyncio.gather(*(h.ready.remote() for h in handles), return_exceptions=True)
        died: list[BaseException] = []
        for handle, pid in zip(handles, pids, strict=True):
            if isinstance(pid, BaseException):
                died.append(pid)
                with suppress(Exception):
                    self.ray.kill(handle)
            else:
                self._join(handle, pid)
        if died and not isinstance(died[0], self.ray.exceptions.RayActorError):
            raise died[0]  # not a lost actor: the worker itself is broken
        if died and not self.members:
            raise UserError(f"no Ray worker of this job could start ({died_line(died[0])}); nothing was lost: "
                            "check the cluster (`ray status`), then resume")
        for _ in died:
            log.warning("a Ray worker died before it was up: %s", died_line(died[0]))
            self._collectors.append(asyncio.create_task(self._replace(-1)))

    def _join(self, handle: Any, pid: int) -> int:
        index, self._next_index = self._next_index, self._next_index + 1
        self.members[index] = _Member(handle)
        self.pids[index] = pid
        self._collectors.append(asyncio.create_task(self._collect(index)))
        return index

    async def _replace(self, lost: int) -> None:
        """Start a new actor in place of actor ``lost`` while replacements are left; one that is
        lost before it is up counts as a replacement too."""
        while self.replacements_left > 0:
            self.replacements_left -= 1
            handle = self._remote.remote(*self.args)
            self._starting.add(handle)
            try:
                pid = await handle.ready.remote()
            except self.ray.exceptions.RayActorError as exc:
                log.warning("Ray worker replacing %s lost before it was up: %s", lost, died_line(exc))
                continue
            except Exception as exc:
                self.on_failure(exc)
                return
            finally:
                self._starting.discard(handle)
            index = self._join(handle, pid)
            log.warning("Ray worker %s (pid %s) replaces lost worker %s (%s replacements left)", index, pid, lost,
                        self.replacements_left)
            self.on_joined(index)
            return
        log.warning("Ray worker %s not replaced: this job replaced %s lost workers already", lost,
                    REPLACEMENTS_PER_ACTOR * self.count)

    def least_loaded(self) -> int:
        """The live actor with the fewest items in flight; ``UserError`` when none is left."""
        if not self.members:
            raise UserError("every Ray worker of this job was lost (their processes or nodes died); what they "
                            "finished is saved: check the cluster (`ray status`), then resume")
        return min(self.members, key=lambda i: self.members[i].load)

    def send(self, index: int, message: Any) -> None:
        """Queue ``message`` for actor ``index``; the queued messages go in one ``submit``
        ``FLUSH_S`` later (dropped when the actor was lost meanwhile)."""
        member = self.members.get(index)
        if member is None:
            return
        member.messages.append(message)
        if not self._flush_due:
            self._flush_due = True
            asyncio.get_running_loop().call_later(FLUSH_S, self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        tokens = self.tokens()
        for member in self.members.values():
            if member.messages:
                messages, member.messages = member.messages, []
                blob = pickle.dumps(messages, protocol=pickle.HIGHEST_PROTOCOL)
                task = asyncio.create_task(self._submit(member.handle.submit.remote(blob, tokens)))
                self._sends.add(task)
                task.add_done_callback(self._sends.discard)

    async def _submit(self, ref: Any) -> None:
        """Await one ``submit`` so that its failure is seen: a lost actor is noticed by its
        ``collect``; anything else is the actor's bug."""
        try:
            await ref
        except self.ray.exceptions.RayActorError:
            pass
        except Exception as exc:
            self.on_failure(exc)

    async def _collect(self, index: int) -> None:
        handle = self.members[index].handle
        while True:
            try:
                items = pickle.loads(await handle.collect.remote())
            except self.ray.exceptions.RayActorError as exc:
                log.warning("Ray worker %s (pid %s) lost: %s", index, self.pids.get(index), died_line(exc))
                self.members.pop(index, None)
                replacing = asyncio.create_task(self._replace(index))
                self._collectors.append(replacing)
                await self.on_lost(index)
                return
            except Exception as exc:
                self.on_failure(exc)
                return
            self.on_batch(index, items)

    async def close(self) -> None:
        """Stop collecting and end every actor (work in flight on them is dropped)."""
        for task in self._collectors:
            task.cancel()
        await asyncio.gather(*self._collectors, return_exceptions=True)
        for task in list(self._sends):
            task.cancel()
        for handle in [*(member.handle for member in self.members.values()), *self._starting]:
            with suppress(Exception):
                self.ray.kill(handle)
        self.members, self._starting = {}, set()

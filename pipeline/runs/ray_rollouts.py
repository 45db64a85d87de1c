"""A rollout job's episodes played on Ray actors (``synth rollout --ray``), recorded by this process.

Each actor (``EpisodeWorker``, one per cluster CPU, ``ray_cluster.Gang``) plays episodes with
``rollout_episode.run_episode`` and its own ``ModelClient`` (its share of ``--concurrency`` at once) and
sends the finished ``Rollout`` records back in batches; the driver hands them to the job's
``RolloutWriter`` and counts them (``JobRecord.record``), as a local job does. The driver keeps at most
``WINDOW`` times an actor's share assigned to it, so a job of any size holds little on the actors
and an actor that is lost loses only its episodes in flight: they go to the other actors, and to the
actor that replaces it once it is up.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from pipeline.core.errors import UserError
from pipeline.core.package import TaskPackage
from pipeline.core.rollouts import Rollout
from pipeline.runs.ray_cluster import Gang, GangWorker, WorkerError, connected
from pipeline.runs.rollout_episode import run_episode, user_factory
from pipeline.runs.rollout_options import RolloutOptions
from pipeline.runs.rollout_record import JobRecord, RolloutWriter

WINDOW = 2
"""Episodes assigned to an actor at once, in multiples of the episodes it plays at once."""


@dataclass(frozen=True)
class EpisodeSpec:
    options: RolloutOptions
    api_key: str
    concurrency: int
    """Episodes in progress at once on the actor."""


@dataclass(frozen=True)
class EpisodeJob:
    package: TaskPackage
    sample: int


@dataclass(frozen=True)
class EpisodeFailed:
    """An episode that raised."""

    package_id: str
    sample: int
    error: WorkerError


class EpisodeWorker(GangWorker):
    """A Ray actor playing episodes (see the module)."""

    def __init__(self, spec: EpisodeSpec) -> None:
        from pipeline.generation.model_client import ModelClient
        from pipeline.generation.model_endpoint import Endpoint

        super().__init__()
        endpoint = Endpoint.from_env(spec.options.model, spec.options.base_url)
        self.spec = spec
        self.client = ModelClient(endpoint.model, endpoint.base_url, spec.api_key, timeout=spec.options.timeout_s,
                                  deadline=spec.options.timeout_s)
        self.user = user_factory(spec.options)
        self.limit = asyncio.Semaphore(spec.concurrency)
        self.running: set[asyncio.Task[None]] = set()
        self.playing = 0
        """Episodes received and not finished: none left, nothing more can come (``Outbox.stalled``)."""
        self.outbox.stalled = lambda: self.playing == 0

    def receive(self, jobs: list[EpisodeJob], tokens: int) -> None:
        for job in jobs:
            self.playing += 1
            task = asyncio.create_task(self._play(job))
            self.running.add(task)
            task.add_done_callback(self.running.discard)

    async def _play(self, job: EpisodeJob) -> None:
        async with self.limit:
            result: Rollout | EpisodeFailed
            try:
                result = await run_episode(self.client, job.package, job.sample, self.spec.options, self.user)
            except Exception as exc:
                result = EpisodeFailed(job.package.id, job.sample, WorkerError.of(exc))
            self.playing -= 1
            self.outbox.put(result)


class _Episodes:
    """The driver's side: what is left to assign, what each actor holds, the end of the job."""

    def __init__(self, job: JobRecord, writer: RolloutWriter) -> None:
        self.job, self.writer = job, writer
        self.todo: deque[EpisodeJob] = deque(EpisodeJob(p, s) for p, s in job.todo)
        self.held: dict[tuple[str, int], tuple[EpisodeJob, int]] = {}
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.gang: Gang | None = None
        self.share = 1

    def fill(self) -> None:
        """Assign work until every live actor holds ``WINDOW`` times its share; end the job when
        nothing is left anywhere."""
        gang = self.gang
        assert gang is not None
        if not self.todo and not self.held:
            if not self.finished.done():
                self.finished.set_result(None)
            return
        while self.todo:
            try:
                actor = gang.least_loaded()
            except UserError as exc:
                self.fail(exc)
                return
            if gang.members[actor].load >= WINDOW * self.share:
                return
            job = self.todo.popleft()
            self.held[(job.package.id, job.sample)] = (job, actor)
            gang.members[actor].load += 1
            self.job.progress.in_flight += 1
            gang.send(actor, job)

    def _release(self, actor: int, key: tuple[str, int]) -> None:
        assert self.gang is not None
        if self.held.pop(key, None) is not None:
            self.job.progress.in_flight -= 1
            if actor in self.gang.members:
                self.gang.members[actor].load -= 1

    def on_batch(self, actor: int, items: list[Rollout | EpisodeFailed]) -> None:
        for item in items:
            if isinstance(item, EpisodeFailed):
                self._release(actor, (item.package_id, item.sample))
                self.fail(item.error.exception("an episode"))
                return
            self._release(actor, (item.package_id, item.sample))
            try:
                self.job.record(item, self.writer)
            except Exception as exc:  # the writer gave up: the catalog cannot be written
                self.fail(exc)
                return
        self.fill()

    async def on_lost(self, actor: int) -> None:
        lost = [(key, job) for key, (job, held_by) in self.held.items() if held_by == actor]
        for key, job in lost:
            self._release(actor, key)
            self.todo.appendleft(job)
        self.fill()

    def fail(self, exc: BaseException) -> None:
        if not self.finished.done():
            self.finished.set_exception(exc)


async def episodes_on_ray(job: JobRecord, writer: RolloutWriter, address: str, api_key: str) -> None:
    """Play ``job``'s episodes on the Ray cluster ``address`` names, each recorded through
    ``writer`` as it arrives; returns when every one is recorded (or raises what stopped them)."""
    episodes = _Episodes(job, writer)
    with connected(address) as ray:
        gang = Gang(ray, EpisodeWorker, (), episodes.on_batch, episodes.on_lost, episodes.fail,
                    on_joined=lambda _index: episodes.fill())
        episodes.share = -(-job.options.concurrency // gang.count)
        gang.args = (EpisodeSpec(job.options, api_key, episodes.share),)
        episodes.gang = gang
        try:
            await gang.start()
            episodes.fill()
            await episodes.finished
        finally:
            await gang.close()

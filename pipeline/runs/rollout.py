"""Rollouts: an agent model run on catalog packages through the episode engine, scored, cataloged.

``start_rollouts(options, catalog)`` selects the accepted packages ``options.where`` names, runs
``options.samples`` episodes of each through ``TaskEnv`` with the model behind an OpenAI-compatible
server (``ModelClient``: its retries, its masking of the key), at most ``options.concurrency`` at a
time, and commits each ``core.rollouts.Rollout`` to the catalog in groups (``RolloutWriter``).
``resume_rollouts(job, catalog)`` continues a job with its stored parameters and package list,
skipping the (package, sample) pairs already recorded. Both return a ``RolloutSummary``; each has
an async form (``astart_rollouts``, ``aresume_rollouts``) made from the same body. A stop signal
(Ctrl-C, SIGTERM) or a setup problem (a ``UserError``: the server cannot be reached) marks the job
``interrupted`` and raises ``RolloutInterrupted``, whose text says how to resume; a crash marks it
``failed``.

The pieces: the options and reports (``runs.rollout_options``), one episode
(``runs.rollout_episode``: the conversation), what the job records and the writer
(``runs.rollout_record``), the episodes on Ray (``runs.ray_rollouts``). This module runs the job and
is the only one that imports the Ray side; the Ray side imports none of this module.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.catalog.store import Catalog
from pipeline.core.errors import UserError
from pipeline.core.paths import DEFAULT_CATALOG
from pipeline.core.rollouts import Rollout
from pipeline.env.catalog_packages import load_packages
from pipeline.generation.model_endpoint import Endpoint
from pipeline.runs.api import writable_catalog
from pipeline.runs.interrupt import signal_of, signals_ignored
from pipeline.runs.ray_cluster import needs_ray
from pipeline.runs.rollout_episode import run_episode, user_factory
from pipeline.runs.rollout_options import (
    ProgressFn,
    RolloutOptions,
    RolloutStart,
    RolloutSummary,
    StartFn,
)
from pipeline.runs.rollout_record import JobRecord, RolloutWriter
from pipeline.runs.steps import Steps, awaitable, blocking

if TYPE_CHECKING:
    from pipeline.core.package import TaskPackage
    from pipeline.generation.model_client import ModelClient

RESOURCE_OPTIONS = ("concurrency", "base_url", "timeout_s")
"""What a resumed job may change: how many episodes run at once, where the model server is now and
how long it may take, not what the episodes are."""


class RolloutInterrupted(Exception):
    """A rollout job stopped before its end, marked ``interrupted``; ``resume_rollouts`` continues
    it. ``signum`` is the signal that stopped it, or ``cause`` the ``UserError`` that did;
    ``recorded`` how many rollouts it holds of ``total``."""

    def __init__(self, job_id: int, catalog: Path, recorded: int, total: int, signum: int | None = None,
                 cause: UserError | None = None) -> None:
        self.job_id, self.catalog, self.recorded, self.total = job_id, catalog, recorded, total
        self.signum, self.cause = signum, cause
        why = f": {cause}" if cause else f" by {signal.Signals(signum).name}" if signum else ""
        super().__init__(f"rollout job {job_id} interrupted{why}; {self.progress()}; continue it with "
                         f"`{self.resume_command()}`")

    def progress(self) -> str:
        return f"{self.recorded} of {self.total} rollouts recorded"

    def resume_command(self) -> str:
        return f"synth rollout --resume {self.job_id} --catalog {self.catalog}"


# --------------------------------------------------------------------------- the job


def _agent_endpoint(options: RolloutOptions) -> tuple[Endpoint, str]:
    """The agent's server and key; ``UserError`` for the offline generator's name or a missing key."""
    endpoint = Endpoint.from_env(options.model, options.base_url)
    if endpoint.offline:
        raise UserError("--model names the agent model on an OpenAI-compatible server (e.g. --model gpt-4o-mini "
                        "--base-url http://localhost:8000/v1); 'offline' is the package generator, not an agent")
    return endpoint, endpoint.api_key(f"the agent model {endpoint.model!r} needs OPENAI_API_KEY set "
                                      "(or --base-url for a server that needs no key)")


def _agent_client(options: RolloutOptions) -> ModelClient:
    from pipeline.generation.model_client import ModelClient

    endpoint, api_key = _agent_endpoint(options)
    return ModelClient(endpoint.model, endpoint.base_url, api_key, timeout=options.timeout_s,
                       deadline=options.timeout_s)


class _Job(JobRecord):
    """One invocation of a job: its record, and the client that plays its episodes here or the Ray
    cluster that plays them (``runs.ray_rollouts``)."""

    def __init__(self, catalog: Catalog, job_id: int, options: RolloutOptions, packages: list[TaskPackage],
                 recorded: set[tuple[str, int]], on_progress: ProgressFn | None, ray: str | None = None) -> None:
        super().__init__(catalog, job_id, options, packages, recorded, on_progress)
        self.ray = ray
        """The Ray cluster the episodes run on (``runs.ray_rollouts``); None: on this event loop."""
        self.client = _agent_client(options)
        self.user = user_factory(options)

    async def run(self) -> list[Rollout]:
        writer = RolloutWriter(self.catalog, self.job_id)
        try:
            await self.client.check()
            async with writer.running():
                if self.ray is not None:
                    from pipeline.runs.ray_rollouts import episodes_on_ray

                    await episodes_on_ray(self, writer, self.ray, _agent_endpoint(self.options)[1])
                    return self.results
                work = iter(self.todo)
                workers = [asyncio.create_task(self._worker(work, writer)) for _ in range(self.options.concurrency)]
                try:
                    await asyncio.gather(*workers)
                finally:  # one worker's error (or a stop) ends the others before the client closes
                    for worker in workers:
                        worker.cancel()
                    await asyncio.gather(*workers, return_exceptions=True)
        finally:
            await self.client.aclose()
        return self.results

    async def _worker(self, work: Iterator[tuple[TaskPackage, int]], writer: RolloutWriter) -> None:
        for package, sample in work:
            self.progress.in_flight += 1
            try:
                rollout = await run_episode(self.client, package, sample, self.options, self.user)
            finally:
                self.progress.in_flight -= 1
            self.record(rollout, writer)

    def announce(self, on_start: StartFn | None) -> None:
        if on_start is not None:
            endpoint = Endpoint.from_env(self.options.model, self.options.base_url)
            on_start(RolloutStart(job_id=self.job_id, model=self.options.model, server=endpoint.server,
                                  packages=len(self.packages), samples=self.options.samples, todo=len(self.todo),
                                  recorded=self.recorded))

@contextmanager
def _recording_stops(job: _Job) -> Iterator[None]:
    """Inside: a stop signal or a ``UserError`` marks the job ``interrupted`` and raises
    ``RolloutInterrupted``; a cancelled task marks it ``interrupted`` and lets ``CancelledError`` go
    on with a note saying how to continue; anything else marks it ``failed``."""
    cat, job_id = job.catalog, job.job_id

    def stopped(status: str = "interrupted", **why: Any) -> RolloutInterrupted:
        with signals_ignored():
            cat.finish_rollout_job(job_id, "interrupted" if status == "interrupted" else "failed")
            recorded = len(cat.rollout_samples_done(job_id))
        return RolloutInterrupted(job_id, cat.path, recorded, len(job.packages) * job.options.samples, **why)

    try:
        yield
    except KeyboardInterrupt as exc:
        raise stopped(signum=signal_of(exc)) from None
    except asyncio.CancelledError as exc:
        exc.add_note(str(stopped()))
        raise
    except UserError as exc:
        raise stopped(cause=exc) from None
    except BaseException:
        stopped("failed")
        raise


def _play(job: _Job, on_start: StartFn | None) -> Steps[RolloutSummary]:
    started = time.perf_counter()
    with _recording_stops(job):
        job.announce(on_start)
        yield job.run()
    with signals_ignored():
        job.catalog.finish_rollout_job(job.job_id, "finished")
    return job.summary("finished", time.perf_counter() - started)


def _start_rollouts(options: RolloutOptions, catalog: Catalog | Path | str = DEFAULT_CATALOG, *,
                    on_start: StartFn | None = None, on_progress: ProgressFn | None = None,
                    ray: str | None = None) -> Steps[RolloutSummary]:
    """Run ``options.samples`` episodes of every accepted package ``options.where`` selects and
    record them as a new rollout job. ``UserError`` before any job is recorded when no package
    matches, the model is not an agent model, or no key is set for a remote server (or Ray is
    missing for ``ray``: the Ray cluster the episodes run on, as ``start_run`` says)."""
    _agent_endpoint(options)  # a missing key or a bad --model: before anything is recorded
    needs_ray(ray)
    with writable_catalog(catalog, create=False) as cat:  # rollouts need packages: never a new file
        packages = load_packages(cat, options.where)
        if not packages:
            where = f" matching --where {options.where!r}" if options.where else ""
            raise UserError(f"no accepted package{where} in {cat.path}; `synth catalog stats` shows what it holds")
        job_id = cat.start_rollout_job(options.model, options.model_dump() | {"packages": [p.id for p in packages]})
        job = _Job(cat, job_id, options, packages, set(), on_progress, ray)
        return (yield from _play(job, on_start))


def _resume_rollouts(job_id: int, catalog: Catalog | Path | str = DEFAULT_CATALOG, *,
                     resources: dict[str, Any] | None = None, on_start: StartFn | None = None,
                     on_progress: ProgressFn | None = None, ray: str | None = None) -> Steps[RolloutSummary]:
    """Continue rollout job ``job_id`` with the options and packages it started with, running only
    the (package, sample) pairs it has not recorded; ``resources`` may replace ``RESOURCE_OPTIONS``.
    ``ray`` as for ``start_rollouts`` (a job may resume with or without it)."""
    needs_ray(ray)
    resources = resources or {}
    unknown = sorted(set(resources) - set(RESOURCE_OPTIONS))
    if unknown:
        raise UserError(f"a resumed rollout job keeps its options; only {', '.join(RESOURCE_OPTIONS)} may change, "
                        f"not {', '.join(unknown)}")
    with writable_catalog(catalog, create=False) as cat:  # rollouts need packages: never a new file
        stored = cat.rollout_job(job_id).parameters
        options = RolloutOptions.model_validate({k: v for k, v in stored.items() if k in RolloutOptions.model_fields})
        options = RolloutOptions.model_validate(options.model_dump() | resources)
        wanted = list(stored.get("packages") or [])
        by_id = {p.id: p for p in load_packages(cat, options.where)}
        packages = [by_id[i] for i in wanted if i in by_id]
        job = _Job(cat, job_id, options, packages, cat.rollout_samples_done(job_id), on_progress, ray)
        cat.resume_rollout_job(job_id)
        return (yield from _play(job, on_start))


start_rollouts = blocking(_start_rollouts, "start_rollouts")
astart_rollouts = awaitable(_start_rollouts, "astart_rollouts")
resume_rollouts = blocking(_resume_rollouts, "resume_rollouts")
aresume_rollouts = awaitable(_resume_rollouts, "aresume_rollouts")

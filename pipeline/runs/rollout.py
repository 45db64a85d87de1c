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

**The conversation** (``docs/environment.md``, "Rollouts") has the shape of the SFT export: the
system prompt, the request as the first user message; each assistant message with ``tool_calls``
is answered by one ``tool`` message per call (``{"status", "result"}`` as compact JSON, uncut);
an assistant message without tool calls is a question when ``is_question`` says so (the user's
reply comes back as a user message), else the final answer, which ends the episode. An episode
also ends after ``max_turns`` assistant messages (``turn_limit``), when its tokens reach
``budget_tokens`` or its messages ``MAX_CONVERSATION_CHARS`` (``budget``), or when the model server
fails for good (``server_timeout``, ``server_error``, ``malformed_reply``; ``error`` for another
failure): those count in no pass rate, and ``SERVER_FAILURE_LIMIT`` of them in a row stop the job
(``ServerFailing``, resumable; the resumed job plays them again).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from pipeline.catalog.store import Catalog
from pipeline.core.errors import UserError
from pipeline.core.paths import DEFAULT_CATALOG
from pipeline.core.rollouts import SERVER_FAILURES, FinishReason, Rollout
from pipeline.core.training_format import SYSTEM_PROMPT, observation_text
from pipeline.core.user import UserModel, UserModelError
from pipeline.env.catalog_packages import load_packages
from pipeline.env.task_env import Answer, Ask, TaskEnv, ToolCall
from pipeline.generation.model_endpoint import Endpoint
from pipeline.runs.api import writable_catalog
from pipeline.runs.interrupt import signal_of, signals_ignored
from pipeline.runs.ray_cluster import needs_ray
from pipeline.runs.steps import Steps, awaitable, blocking
from pipeline.runs.writer import WriteWindow

if TYPE_CHECKING:
    from pipeline.core.package import TaskPackage
    from pipeline.generation.model_client import ModelClient

CALLS_PER_TURN = 16
"""The episode's step budget is ``max_turns * CALLS_PER_TURN`` steps (tool calls and questions):
a model that sends more calls in its turns than that ends with ``turn_limit``."""
QUESTION_TAIL = "\"'`)]}*_ \t\n\u201d\u2019\u00bb"
"""What ``is_question`` strips from the end of a message before looking for the question mark."""
RESOURCE_OPTIONS = ("concurrency", "base_url", "timeout_s")
"""What a resumed job may change: how many episodes run at once, where the model server is now and
how long it may take, not what the episodes are."""
MAX_CONVERSATION_CHARS = 16 * 1024 * 1024
"""The most characters an episode's messages may carry (contents, tool calls, tool results): past
it the episode ends with ``budget``, so a model writing megabytes a turn cannot grow one episode
without bound (each turn sends the whole conversation again)."""
SERVER_FAILURE_LIMIT = 5
"""Episodes in a row the model server may fail (``core.rollouts.SERVER_FAILURES``) before the job
stops (``ServerFailing``)."""
_FINISH_OF_STATUS: dict[str, FinishReason] = {
    "timeout": "server_timeout", "malformed_reply": "malformed_reply", "server_error": "server_error",
    "rate_limited": "server_error", "connection_error": "server_error"}
"""The finish reason of an episode whose request failed for good with a ``ModelError`` status
(an ``http_5xx`` is ``server_error``; any other status ``error``)."""

log = logging.getLogger(__name__)


class RolloutOptions(BaseModel):
    """A rollout job's settings, stored with the job (``rollout_jobs.parameters``) for ``--resume``."""

    model: str
    """The agent model's name on the server."""
    base_url: str | None = None
    """The OpenAI-compatible server (None: ``OPENAI_BASE_URL``, else the OpenAI API)."""
    where: str | None = None
    """One SQL boolean over the ``packages`` columns selecting accepted packages (None: all)."""
    samples: int = Field(default=1, ge=1)
    """Episodes per package."""
    concurrency: int = Field(default=8, ge=1)
    """Episodes in progress at once."""
    max_turns: int = Field(default=30, ge=1)
    """Assistant messages per episode before it ends with ``turn_limit``."""
    user_model: str | None = None
    """A model that plays the simulated user (``env.llm_user``); None: the deterministic user."""
    user_base_url: str | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Sent with every agent request; None: the server's default."""
    stream: bool = False
    """Ask for streamed replies (assembled by ``ModelClient``)."""
    budget_tokens: int | None = Field(default=None, ge=1)
    """Prompt and completion tokens per episode before it ends with ``budget``."""
    timeout_s: float = Field(default=120.0, gt=0)
    """The deadline of one agent request, retries included: connect, first byte and the whole reply
    or stream (``ModelClient``'s ``timeout`` and ``deadline``); past it the episode ends with
    ``server_timeout``."""


class RolloutProgress(BaseModel):
    """Counters after every finished episode."""

    done: int = 0
    """Episodes finished in this invocation."""
    total: int = 0
    """Episodes this invocation runs (those a resumed job had recorded are left out)."""
    passed: int = 0
    errors: int = 0
    in_flight: int = 0
    tokens: int = 0


class RolloutStart(BaseModel):
    """What a job says when its work begins."""

    job_id: int
    model: str
    server: str
    packages: int
    samples: int
    todo: int
    """Episodes to run now."""
    recorded: int
    """Episodes the job had recorded before (a resumed job)."""


class RolloutSummary(BaseModel):
    """What one invocation of a job did (``rollouts`` counts this invocation's episodes)."""

    job_id: int
    model: str
    status: str
    packages: int
    samples: int
    recorded_before: int
    rollouts: int
    passed: int
    pass_rate: float | None
    """Passed over the episodes that count (``Rollout.counted``: not ended by the server or an
    error); None when none counts. ``mean_score`` is over the same episodes."""
    mean_score: float | None
    finish_reasons: dict[str, int]
    prompt_tokens: int
    completion_tokens: int
    elapsed_s: float
    rollouts_per_s: float


StartFn = Callable[[RolloutStart], None]
ProgressFn = Callable[[RolloutProgress], None]


class ServerFailing(UserError):
    """The model server failed ``SERVER_FAILURE_LIMIT`` episodes in a row: the job stops (resumable)."""


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


# --------------------------------------------------------------------------- one episode


def is_question(text: str, has_user: bool) -> bool:
    """Whether an assistant message without tool calls is a question to the user (else it is the
    final answer): the package has a user, and the message, once trailing quotes, brackets,
    markdown emphasis and spaces (``QUESTION_TAIL``) are stripped, ends with a question mark
    (``?`` or the full-width ``？``). So "Which day works for you?" asks, "Booked it for Tuesday."
    answers, and in a package without a user every text is the answer."""
    return has_user and text.rstrip(QUESTION_TAIL).endswith(("?", "\uff1f"))


async def run_episode(client: ModelClient, package: TaskPackage, sample: int, options: RolloutOptions,
                      user: Callable[[TaskPackage], UserModel] | None = None) -> Rollout:
    """One episode of ``package`` played by ``client``'s model (the module says how), graded by
    ``TaskEnv.score`` (the verifier's grader)."""
    from pipeline.generation.model_client import ModelError

    env = TaskEnv(package, max_steps=options.max_turns * CALLS_PER_TURN, user=user)
    opening = env.reset()
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                      {"role": "user", "content": opening.text}]
    turns = prompt_tokens = completion_tokens = 0
    carried = len(opening.text)  # characters the messages carry (MAX_CONVERSATION_CHARS)
    seen_ids: set[str] = set()
    finish: FinishReason | None = None
    error: str | None = None
    started = time.perf_counter()
    while finish is None:
        if turns >= options.max_turns:
            finish = "turn_limit"
            break
        if options.budget_tokens is not None and prompt_tokens + completion_tokens >= options.budget_tokens:
            finish = "budget"
            break
        if carried > MAX_CONVERSATION_CHARS:
            finish, error = "budget", (f"the conversation carries {carried:,} characters, more than the "
                                       f"{MAX_CONVERSATION_CHARS:,} an episode may")
            break
        try:
            reply = await client.complete(messages, tools=opening.tools, temperature=options.temperature,
                                          stream=options.stream)
        except ModelError as exc:
            finish = _FINISH_OF_STATUS.get(exc.status, "server_error" if exc.status.startswith("http_5") else "error")
            error = str(exc)
            break
        turns += 1
        carried += len(reply.text) + sum(len(c.id) + len(c.name) + len(c.arguments) for c in reply.tool_calls)
        prompt_tokens += reply.prompt_tokens
        completion_tokens += reply.completion_tokens
        if reply.tool_calls:
            # The server's ids, unless missing or used before in this episode (some servers number
            # every turn's calls from call_0): a conversation's tool messages must answer one call each.
            ids = [call.id if call.id and call.id not in seen_ids else f"call_{turns}_{i}"
                   for i, call in enumerate(reply.tool_calls)]
            seen_ids.update(ids)
            messages.append({"role": "assistant", "content": reply.text or None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call_id, call in zip(ids, reply.tool_calls, strict=True)]})
            for call_id, call in zip(ids, reply.tool_calls, strict=True):
                if env.done:
                    break
                record = env.step(ToolCall(name=call.name, arguments=call.arguments)).record
                observed = observation_text(record.status, record.result)
                carried += len(observed)
                messages.append({"role": "tool", "tool_call_id": call_id, "content": observed})
        elif is_question(reply.text, package.user is not None):
            messages.append({"role": "assistant", "content": reply.text})
            try:
                answered = await asyncio.to_thread(env.step, Ask(text=reply.text)) if user else env.step(Ask(text=reply.text))
            except UserModelError as exc:
                finish, error = "error", str(exc)
                break
            carried += len(answered.observation.text)
            messages.append({"role": "user", "content": answered.observation.text})
        else:
            messages.append({"role": "assistant", "content": reply.text})
            env.step(Answer(text=reply.text))
            finish = "answer"
        if finish is None and env.done:
            finish = "turn_limit"
    report = env.score()
    return Rollout(package_id=package.id, model=options.model, sample=sample, score=report.score,
                   checks=report.checks, safety=report.safety, turns=turns, prompt_tokens=prompt_tokens,
                   completion_tokens=completion_tokens, latency_s=round(time.perf_counter() - started, 4),
                   finish_reason=finish, error=error, messages=messages)


# --------------------------------------------------------------------------- the catalog writer


class RolloutWriter:
    """Commits a job's rollouts from one task, in groups: a transaction holds every rollout that
    arrived within ``delay`` seconds of the group's first, at most ``MAX_GROUP``. A crash loses at
    most the rollouts of the last ``delay`` seconds (a resumed job runs them again); leaving
    ``running()`` commits everything queued, also when the job is stopped. A group whose commit
    fails (the catalog file busy) is kept and tried again with the next (the last one, as the job
    ends, on its own); after
    ``MAX_FAILED_COMMITS`` failures in a row ``add`` raises the last error, which stops the job
    before it runs episodes it cannot keep."""

    MAX_GROUP = 256
    MAX_FAILED_COMMITS = 3

    def __init__(self, catalog: Catalog, job_id: int, delay: float = 0.5) -> None:
        self.catalog, self.job_id, self.delay = catalog, job_id, delay
        self.window = WriteWindow(catalog)
        self.committed = 0
        self._queue: asyncio.Queue[Rollout] = asyncio.Queue()
        self._pending: list[Rollout] = []
        self.failure: Exception | None = None

    def add(self, rollout: Rollout) -> None:
        """Queue ``rollout``; raises the writer's ``failure`` once it has given up (it is kept and
        committed on leaving ``running()`` if the catalog can be written by then)."""
        self._queue.put_nowait(rollout)
        if self.failure is not None:
            raise self.failure

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        task = asyncio.create_task(self._loop())
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            rest = self._pending + [self._queue.get_nowait() for _ in range(self._queue.qsize())]
            self._pending = []
            with signals_ignored():
                try:
                    self._commit_retrying(rest)
                finally:
                    self.window.release()

    def _commit_retrying(self, group: list[Rollout]) -> None:
        """``_commit``, tried up to ``MAX_FAILED_COMMITS`` times ``delay`` seconds apart (the last
        group, as the job ends: nothing comes after it to carry it)."""
        for attempt in range(1, self.MAX_FAILED_COMMITS + 1):
            try:
                self._commit(group)
                return
            except Exception as exc:
                if attempt == self.MAX_FAILED_COMMITS:
                    raise
                log.warning("rollout job %s: committing %d rollouts failed (%s)", self.job_id, len(group), exc)
                time.sleep(self.delay)

    def _commit(self, group: list[Rollout]) -> None:
        if group:
            self.catalog.record_rollouts(self.job_id, group)
            self.committed += len(group)

    async def _loop(self) -> None:
        failed = 0
        while True:
            if not self._pending:
                self._pending.append(await self._queue.get())
            await asyncio.sleep(self.delay)
            while not self._queue.empty() and len(self._pending) < self.MAX_GROUP:
                self._pending.append(self._queue.get_nowait())
            group, self._pending = self._pending, []
            try:
                await self.window.hold()
                # Shielded: a stop during the commit lets it finish (running() then commits the rest).
                await asyncio.shield(asyncio.to_thread(self._commit, group))
            except Exception as exc:  # kept for the next try; given up on after MAX_FAILED_COMMITS
                self._pending = group + self._pending
                failed += 1
                log.warning("rollout job %s: committing %d rollouts failed (%s)", self.job_id, len(group), exc)
                if failed >= self.MAX_FAILED_COMMITS:
                    self.failure = exc
                    return
                continue
            failed = 0
            self.window.release_if_asked()


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


def user_factory(options: RolloutOptions) -> Callable[[TaskPackage], UserModel] | None:
    if options.user_model is None:
        return None
    from pipeline.env.llm_user import llm_users

    return llm_users(options.user_model, options.user_base_url)


class _Job:
    """One invocation of a job: the episodes still to run, the client, the writer, the counters."""

    def __init__(self, catalog: Catalog, job_id: int, options: RolloutOptions, packages: list[TaskPackage],
                 recorded: set[tuple[str, int]], on_progress: ProgressFn | None, ray: str | None = None) -> None:
        self.catalog, self.job_id, self.options, self.packages = catalog, job_id, options, packages
        self.ray = ray
        """The Ray cluster the episodes run on (``runs.ray_rollouts``); None: on this event loop."""
        self.recorded = len(recorded)
        self.todo = [(p, s) for s in range(options.samples) for p in packages if (p.id, s) not in recorded]
        self.on_progress = on_progress
        self.progress = RolloutProgress(total=len(self.todo))
        self.results: list[Rollout] = []
        self.failing = 0
        """Episodes in a row, the last ones recorded, that the model server failed."""
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

    def record(self, rollout: Rollout, writer: RolloutWriter) -> None:
        """Hand a finished episode to ``writer`` and count it; ``ServerFailing`` once the model server
        has failed ``SERVER_FAILURE_LIMIT`` episodes in a row."""
        writer.add(rollout)
        self.results.append(rollout)
        p = self.progress
        p.done += 1
        p.passed += rollout.passed and rollout.counted
        p.errors += not rollout.counted
        p.tokens += rollout.prompt_tokens + rollout.completion_tokens
        if self.on_progress is not None:
            self.on_progress(p)
        self.failing = self.failing + 1 if rollout.finish_reason in SERVER_FAILURES else 0
        if self.failing >= SERVER_FAILURE_LIMIT:
            server = Endpoint.from_env(self.options.model, self.options.base_url).server
            raise ServerFailing(f"the model server ({server}) failed {self.failing} episodes in a row, the last "
                                f"with {rollout.finish_reason}: {(rollout.error or '')[:300]}; check the server (or "
                                "give it more time with --timeout)")

    def announce(self, on_start: StartFn | None) -> None:
        if on_start is not None:
            endpoint = Endpoint.from_env(self.options.model, self.options.base_url)
            on_start(RolloutStart(job_id=self.job_id, model=self.options.model, server=endpoint.server,
                                  packages=len(self.packages), samples=self.options.samples, todo=len(self.todo),
                                  recorded=self.recorded))

    def summary(self, status: str, elapsed: float) -> RolloutSummary:
        done = self.results
        reasons: dict[str, int] = {}
        for r in done:
            reasons[r.finish_reason] = reasons.get(r.finish_reason, 0) + 1
        counted = [r for r in done if r.counted]  # episodes the server ended count in no rate
        passed = sum(r.passed for r in counted)
        return RolloutSummary(
            job_id=self.job_id, model=self.options.model, status=status, packages=len(self.packages),
            samples=self.options.samples, recorded_before=self.recorded, rollouts=len(done), passed=passed,
            pass_rate=round(passed / len(counted), 4) if counted else None,
            mean_score=round(sum(r.score for r in counted) / len(counted), 4) if counted else None,
            finish_reasons=reasons, prompt_tokens=sum(r.prompt_tokens for r in done),
            completion_tokens=sum(r.completion_tokens for r in done), elapsed_s=round(elapsed, 3),
            rollouts_per_s=round(len(done) / elapsed, 3) if elapsed > 0 else 0.0)


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

"""Runs as a Python API: start, resume, regenerate and import, each returning a summary.

The ``synth`` commands are thin faces over these functions. Each opens the catalog for writing
(taking its writer lock) unless given an open ``Catalog``, and releases everything it started. A
run stopped by SIGINT (Ctrl-C) or SIGTERM, or by a setup problem found on the way (a ``UserError``:
an unreachable model server, a missing key), is marked ``interrupted`` and raises
``RunInterrupted`` saying how far it got: ``resume_run`` continues it. A crash marks it ``failed``.

Each has an async form (``astart_run``, ``aresume_run``, ``aregenerate``, ``aimport_tasks``) made
from the same body (``pipeline.runs.steps``): awaited on the caller's event loop, where cancelling
the awaiting task marks the run ``interrupted`` and raises ``CancelledError`` with a note saying
how far it got and how to continue.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from pipeline.catalog.queries import IMPORT_GENERATOR_PREFIX, RunCounts, RunInfo, is_generation_run
from pipeline.catalog.store import Catalog, RunStatus
from pipeline.core.errors import UserError
from pipeline.core.outcomes import Failure, FailureCode
from pipeline.core.paths import DEFAULT_CATALOG
from pipeline.core.strict_model import StrictModel
from pipeline.core.wording import counted
from pipeline.generation.base import Generator
from pipeline.generation.model_endpoint import Endpoint
from pipeline.generation.offline import OfflineGenerator
from pipeline.runs.batch import BatchRun
from pipeline.runs.interrupt import signal_of, signals_ignored
from pipeline.runs.options import Progress, RegenSummary, RunOptions, RunSummary, run_parameters
from pipeline.runs.ray_cluster import needs_ray
from pipeline.runs.steps import Steps, awaitable, blocking, in_thread
from pipeline.taxonomy.capabilities import profile_templates, taxonomy

T = TypeVar("T")
ProgressFn = Callable[[Progress], None]


class RunStart(StrictModel):
    """What a run says when its work begins (``on_start``)."""

    run_id: int
    capability: str
    generator: str
    """The generator in words: ``offline generator ...`` or ``LLM generator: model M at URL``."""
    total: int
    """What ``Progress.accepted`` counts up to: the target, or the slots ``regenerate`` retries."""
    goal: str
    """``target N accepted`` or ``N slots to repair`` (``1 slot``)."""


StartFn = Callable[[RunStart], None]

RESOURCE_OPTIONS = ("concurrency", "verify_processes", "budget_tokens", "base_url")
"""Options a resumed run may change: they say what machine resources it uses (and where its model
server is now), not what it makes."""


class RunInterrupted(Exception):
    """A run stopped before its end; it is marked ``interrupted`` and ``resume_run`` continues it.
    Either a signal stopped it (``signum``: SIGINT for Ctrl-C, or SIGTERM) or a setup problem did
    (``cause``: the ``UserError`` saying what to fix, e.g. a model server that cannot be reached).
    ``counts`` is how far it got, as the catalog holds it (accepted, rejected and failed attempts,
    slots, target); the message says it, with the command that continues the run."""

    def __init__(self, run_id: int, catalog: Path, counts: RunCounts | None = None, signum: int | None = None,
                 cause: UserError | None = None) -> None:
        self.run_id, self.catalog, self.counts, self.signum, self.cause = run_id, catalog, counts, signum, cause
        why = f": {cause}" if cause else f" by {signal.Signals(signum).name}" if signum else ""
        super().__init__(f"run {run_id} interrupted{why}; {self.progress()}; continue it with "
                         f"`{self.resume_command()}`")

    def progress(self) -> str:
        """How far the run got: ``12 of 50 accepted, 3 rejected, 0 failed, over 15 slots``."""
        c = self.counts
        if c is None:
            return "nothing recorded"
        target = f" of {c.target}" if c.target is not None else ""
        return f"{c.accepted}{target} accepted, {c.rejected} rejected, {c.failed} failed, over {counted(c.slots, 'slot')}"

    def resume_command(self) -> str:
        """The command that continues the run: ``synth run --resume ID --catalog PATH``."""
        return f"synth run --resume {self.run_id} --catalog {self.catalog}"


def make_generator(model: str | None = None, base_url: str | None = None, defect_rate: float = 0.0) -> Generator:
    """The generator ``model`` names: ``None``/``offline`` (or ``SYNTH_MODEL`` unset) is the built-in
    offline generator; anything else a model behind an OpenAI-compatible server."""
    endpoint = Endpoint.from_env(model, base_url)
    if endpoint.offline:
        return OfflineGenerator(defect_rate=defect_rate)
    if defect_rate:
        raise UserError("--defect-rate applies to the offline generator only; drop it or use --model offline")
    from pipeline.generation.llm import from_env  # imports openai: only when a model is used

    generator = from_env(endpoint.model, endpoint.base_url)
    assert generator is not None
    return generator


def describe_generator(generator: Generator, base_url: str | None) -> str:
    if generator.model is None:
        return "offline generator (built in, no LLM)"
    return f"LLM generator: model {generator.model} at {Endpoint.from_env(generator.model, base_url).server}"


@contextmanager
def writable_catalog(catalog: Catalog | Path | str, create: bool = True) -> Iterator[Catalog]:
    """``catalog`` as it is when already open, else opened for writing for the block and closed
    after (a missing file is created, or with ``create`` false a ``CatalogError``)."""
    if isinstance(catalog, Catalog):
        yield catalog
        return
    with Catalog.open(catalog, create=create) as opened:
        yield opened


@contextmanager
def _recording_stops(catalog: Catalog, run_id: int) -> Iterator[None]:
    """Inside: a stop signal (``KeyboardInterrupt``, under ``run_steps``) or a ``UserError`` marks
    run ``run_id`` ``interrupted`` and raises ``RunInterrupted``; a cancelled task (under
    ``await_steps``) marks it ``interrupted`` too and lets ``CancelledError`` go on, with a note
    saying how far the run got and how to continue it; any other exception marks it ``failed``."""
    try:
        yield
    except KeyboardInterrupt as exc:
        raise RunInterrupted(run_id, catalog.path, _stop(catalog, run_id, "interrupted"),
                             signum=signal_of(exc)) from None
    except asyncio.CancelledError as exc:
        exc.add_note(str(RunInterrupted(run_id, catalog.path, _stop(catalog, run_id, "interrupted"))))
        raise
    except UserError as exc:
        raise RunInterrupted(run_id, catalog.path, _stop(catalog, run_id, "interrupted"), cause=exc) from None
    except BaseException:
        _stop(catalog, run_id, "failed")
        raise


def _stop(catalog: Catalog, run_id: int, status: RunStatus) -> RunCounts | None:
    """Mark run ``run_id`` ``status`` (no signal cuts that write short) and return its counts."""
    with signals_ignored():
        catalog.finish_run(run_id, status)
        return next((c for c in catalog.run_counts() if c.id == run_id), None)


async def _then_close(batch: BatchRun, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``work()`` after the generator's ``check()`` (when it has one: an LLM generator asks its
    server once, so a dead server stops the run before any attempt), then release both."""
    try:
        check = getattr(batch.generator, "check", None)
        if check is not None:
            await check()
        return await work()
    finally:
        batch.verifier.close()
        batch.reading.close()
        close = getattr(batch.generator, "aclose", None)
        if close is not None:
            await close()


def _on_ray(batch: BatchRun, ray: str | None, base_url: str | None,
            work: Callable[[], Coroutine[Any, Any, T]]) -> Callable[[], Coroutine[Any, Any, T]]:
    """``work`` as it is (``ray`` None), or with ``batch``'s slots filled on the Ray cluster
    ``ray`` names (``runs.ray_slots``: ``ray_cluster.LOCAL`` for this machine, ``auto`` or an
    address), each actor generating from ``base_url``'s servers."""
    if ray is None:
        return work
    from pipeline.runs.ray_slots import on_ray

    endpoint = Endpoint.from_env(batch.generator.model, base_url)
    key = None if endpoint.offline else endpoint.api_key(f"model {endpoint.model!r} needs OPENAI_API_KEY set")
    return partial(on_ray, batch, ray, endpoint, key, work)


def _start_run(options: RunOptions, catalog: Catalog | Path | str = DEFAULT_CATALOG, *, model: str | None = None,
               base_url: str | None = None, generator: Generator | None = None,
               on_start: StartFn | None = None, on_progress: ProgressFn | None = None,
               ray: str | None = None) -> Steps[RunSummary]:
    """Generate, verify and catalog packages until ``options.count`` are accepted.

    ``generator`` overrides ``model``/``base_url`` (default: the offline generator). ``on_start``
    is told the new run's id, generator and options before work begins; ``on_progress`` sees the
    counters after every attempt. ``ray``: fill the slots on that Ray cluster (``local``: a Ray
    instance on this machine; ``auto`` or ``host:port``: a running cluster); ``base_url`` may list
    several servers, balanced per request (``model_endpoint.server_urls``).
    """
    started = time.perf_counter()
    profile_templates(taxonomy(), options.capability, options.service_profile)
    needs_ray(ray)
    generator = generator or make_generator(model, base_url, options.defect_rate)
    with writable_catalog(catalog) as cat:
        run_id = cat.start_run(options.name or f"{options.capability}-{options.count}", generator.name,
                               generator.model, options.capability,
                               run_parameters(options, generator.name, generator.model, base_url))
        with _recording_stops(cat, run_id):
            _announce(on_start, run_id, generator, options, base_url)
            batch = BatchRun(cat, generator, options, run_id, on_progress)
            summary = yield _then_close(batch, _on_ray(batch, ray, base_url, batch.run))
        return _finish(batch, summary, started)


def _announce(on_start: StartFn | None, run_id: int, generator: Generator, options: RunOptions,
              base_url: str | None, repair: int | None = None) -> None:
    if on_start is not None:
        total = options.count if repair is None else repair
        goal = f"target {total} accepted" if repair is None else f"{counted(repair, 'slot')} to repair"
        on_start(RunStart(run_id=run_id, capability=options.capability, total=total, goal=goal,
                          generator=describe_generator(generator, base_url)))


def _finish(batch: BatchRun, summary: RunSummary, started: float) -> RunSummary:
    """Mark the run finished or failed; ``summary`` timed over the whole session since ``started``
    (``time.perf_counter``): Ray's start-up and shutdown and the model server's check included."""
    with signals_ignored():
        batch.catalog.finish_run(batch.run_id, "finished" if summary.status == "finished" else "failed")
    elapsed = time.perf_counter() - started
    accepted = summary.accepted - batch.accepted_at_start
    return summary.model_copy(update={"elapsed_s": round(elapsed, 3),
                                      "accepted_per_s": round(accepted / elapsed, 2) if elapsed > 0 else 0.0})


def _resume_run(run_id: int, catalog: Catalog | Path | str = DEFAULT_CATALOG, *,
                resources: dict[str, Any] | None = None,
                on_start: StartFn | None = None, on_progress: ProgressFn | None = None,
                ray: str | None = None) -> Steps[RunSummary]:
    """Continue run ``run_id`` to its target with the options it started with; ``resources`` may
    replace ``RESOURCE_OPTIONS`` (anything else raises ``UserError``). ``ray`` as for
    ``start_run``: a run started on Ray may resume without it, and the other way round."""
    started = time.perf_counter()
    needs_ray(ray)
    resources = dict(resources or {})
    unknown = sorted(set(resources) - set(RESOURCE_OPTIONS))
    if unknown:
        raise UserError(f"a resumed run keeps its options; only {', '.join(RESOURCE_OPTIONS)} may change, "
                        f"not {', '.join(unknown)}")
    with writable_catalog(catalog) as cat:
        _generation_run(cat, run_id, "resume")
        params = cat.resume_run(run_id).parameters
        with _recording_stops(cat, run_id):
            options = RunOptions.model_validate({k: v for k, v in params.items() if k in RunOptions.model_fields})
            base_url = resources.pop("base_url", None) or params.get("base_url")
            options = RunOptions.model_validate(options.model_dump() | resources)
            generator = make_generator(params.get("model") or "offline", base_url, options.defect_rate)
            _announce(on_start, run_id, generator, options, base_url)
            batch = BatchRun(cat, generator, options, run_id, on_progress)
            summary = yield _then_close(batch, _on_ray(batch, ray, base_url, batch.run))
        return _finish(batch, summary, started)


def _generation_run(cat: Catalog, run_id: int, what: str) -> RunInfo:
    """Run ``run_id``, which must exist and be a generation run; otherwise a ``UserError`` saying
    there is nothing to ``what`` (an import has no generator to run again)."""
    found = cat.runs(run_id)
    if not found:
        raise UserError(f"no run {run_id} in {cat.path}; `synth catalog runs` lists them")
    if not is_generation_run(found[0].parameters):
        raise UserError(f"run {run_id} is an import ({found[0].generator}), not a generation run: imported tasks have "
                        f"no generator, so there is nothing to {what}; `synth catalog runs` lists the runs")
    return found[0]


def _regenerate(catalog: Catalog | Path | str = DEFAULT_CATALOG, *, run_id: int | None = None,
                reason: str | None = None, limit: int | None = None, attempts: int = 1,
                model: str | None = None, base_url: str | None = None,
                on_start: StartFn | None = None, on_progress: ProgressFn | None = None,
                ray: str | None = None) -> Steps[RegenSummary]:
    """Give rejected slots (of ``run_id``, or of every generation run) ``attempts`` more tries, fed
    their last findings; with ``reason``, only slots last rejected with that code. ``on_start`` is
    told each run's id, generator and options before its slots are retried. ``ray`` as for
    ``start_run``: each run's slots are retried on that Ray cluster (its actors started for that
    run and ended after it), with the same rows as here."""
    needs_ray(ray)
    by_run: dict[int, dict[str, int]] = {}
    tokens = [0, 0]
    with writable_catalog(catalog) as cat:
        if run_id is not None:
            _generation_run(cat, run_id, "regenerate")
        generation_runs = {r.id for r in cat.runs() if is_generation_run(r.parameters)}
        groups = {rid: slots for rid, slots in cat.failed_slots(run_id, reason, limit).items()
                  if rid in generation_runs}
        if not groups and reason is not None:
            present = [r.code for r in cat.rejections()]
            if reason not in present:
                raise UserError(f"--reason {reason!r} is not a rejection code in {cat.path}; "
                                f"codes present: {', '.join(present) or 'none'}")
        for rid, slots in groups.items():
            params = cat.resume_run(rid).parameters
            options = RunOptions.model_validate({k: v for k, v in params.items() if k in RunOptions.model_fields})
            options = options.model_copy(update={"defect_rate": 0.0})
            effective_url = base_url or params.get("base_url")
            generator = make_generator(model or params.get("model") or "offline", effective_url, 0.0)
            _announce(on_start, rid, generator, options, effective_url, repair=len(slots))
            batch = BatchRun(cat, generator, options, rid, on_progress)
            with _recording_stops(cat, rid):
                outcomes = yield _then_close(batch, _on_ray(batch, ray, effective_url,
                                                            partial(batch.regenerate, slots, attempts)))
            with signals_ignored():
                cat.finish_run(rid, "finished" if cat.accepted_count(rid) >= options.count else "failed")
            by_run[rid] = {"slots": len(slots), "repaired": sum(outcomes)}
            tokens[0] += batch.progress.prompt_tokens
            tokens[1] += batch.progress.completion_tokens
    total = sum(r["slots"] for r in by_run.values())
    repaired = sum(r["repaired"] for r in by_run.values())
    return RegenSummary(slots=total, repaired=repaired, repair_rate=round(repaired / total, 4) if total else None,
                        by_run=by_run, prompt_tokens=tokens[0], completion_tokens=tokens[1])


start_run = blocking(_start_run, "start_run")
astart_run = awaitable(_start_run, "astart_run")
resume_run = blocking(_resume_run, "resume_run")
aresume_run = awaitable(_resume_run, "aresume_run")
regenerate = blocking(_regenerate, "regenerate")
aregenerate = awaitable(_regenerate, "aregenerate")


# --------------------------------------------------------------------------- import


class ImportSummary(StrictModel):
    """What ``import_tasks`` did: the run that records it (None when not recorded) and each file's result."""

    run_id: int | None
    results: list[Any]
    """One ``pipeline.interop.clawenvkit_import.ImportResult`` per task file."""


IMPORT_FORMATS = ("clawenvkit",)


def import_tasks(paths: Path | str | Sequence[Path | str], fmt: str = "clawenvkit", catalog: Catalog | Path | str = DEFAULT_CATALOG,
                 record: bool = True, on_progress: Callable[[int, int], None] | None = None) -> ImportSummary:
    """Import other projects' tasks as packages without a reference, verify them statically with
    the null-agent test, and (``record``) keep them in the catalog as one run. A path that does not
    exist, or no task file at all, is a ``UserError`` before anything is read or recorded.
    ``on_progress`` is told ``(files done, files in all)``. ``paths``: files or folders, or one."""
    from pipeline.interop.clawenvkit_import import import_clawenvkit

    files = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]

    if fmt not in IMPORT_FORMATS:
        raise UserError(f"unknown format {fmt!r}; supported formats: {', '.join(IMPORT_FORMATS)}")
    results = import_clawenvkit(files, on_progress)
    if not record:
        return ImportSummary(run_id=None, results=results)
    generator = f"{IMPORT_GENERATOR_PREFIX}{fmt}"
    with writable_catalog(catalog) as cat:
        run_id = cat.start_run(f"import-{fmt}", generator, parameters={"paths": [str(p) for p in files]})
        with cat.batch():
            for slot, result in enumerate(results):
                if result.package is not None:
                    package = result.package.model_copy(update={"id": result.verdict.id})
                    cat.record(run_id, slot, 1, package, result.verdict, generator=generator)
                else:
                    message = "; ".join(f.message for f in result.findings) or "unreadable task file"
                    cat.record(run_id, slot, 1, None, None, generator=generator, workflow=result.task_id,
                               failure=Failure(code=FailureCode.SCHEMA_INVALID, message=f"{result.source}: {message}"))
        cat.finish_run(run_id)
    return ImportSummary(run_id=run_id, results=results)


aimport_tasks = in_thread(import_tasks, "aimport_tasks")

"""``synth run`` and ``synth regen``: the batch job, with progress, a summary, and resume."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from pipeline.capabilities import find_capability, taxonomy
from pipeline.catalog.store import Catalog
from pipeline.cli_output import CatalogOpt, console, emit_json, err_console
from pipeline.errors import UserError
from pipeline.generate.base import Generator
from pipeline.generate.llm import from_env
from pipeline.generate.offline import OfflineGenerator
from pipeline.run import (
    BatchRun,
    RegenSummary,
    RunOptions,
    RunSummary,
    run_parameters,
)
from pipeline.run import Progress as RunProgress

T = TypeVar("T")


def make_generator(model: str | None, base_url: str | None, defect_rate: float) -> Generator:
    llm = from_env(model, base_url)
    if llm is None:
        return OfflineGenerator(defect_rate=defect_rate)
    if defect_rate:
        raise UserError("--defect-rate applies to the offline generator only; drop it or use --model offline")
    return llm


def describe(generator: Generator, base_url: str | None) -> str:
    if generator.model is None:
        return "offline generator (built in, no LLM)"
    where = base_url or os.environ.get("OPENAI_BASE_URL") or "the OpenAI API"
    return f"LLM generator: model {generator.model} at {where}"


def _progress_bar(total: int, quiet: bool, err: Console) -> tuple[Progress, Callable[[RunProgress], None]]:
    bar = Progress(
        TextColumn("[bold]accepted"), BarColumn(), MofNCompleteColumn(),
        TextColumn("rejected {task.fields[rejected]} · in flight {task.fields[in_flight]} · "
                   "{task.fields[rate]} accepted/s · tokens {task.fields[tokens]:,}"),
        TimeElapsedColumn(), console=err, disable=quiet,
    )
    task = bar.add_task("accepted", total=total, rejected=0, in_flight=0, rate="0.0", tokens=0)
    started = time.perf_counter()

    def show(p: RunProgress) -> None:
        elapsed = max(time.perf_counter() - started, 1e-9)
        bar.update(task, completed=p.accepted, rejected=p.rejected, in_flight=p.in_flight,
                   rate=f"{p.accepted / elapsed:.1f}", tokens=p.tokens)

    return bar, show


def _drive(batch: BatchRun, work: Callable[[], Coroutine[Any, Any, T]], total: int, quiet: bool, err: Console) -> T:
    """Run ``work`` with a progress bar; mark the run interrupted on Ctrl-C, failed on a crash."""
    bar, batch.on_progress = _progress_bar(total, quiet, err)
    try:
        with bar:
            return asyncio.run(_then_close(batch, work))
    except KeyboardInterrupt:
        batch.catalog.finish_run(batch.run_id, "interrupted")
        raise UserError(f"interrupted; every verified package is saved. Continue with "
                        f"`synth run --resume {batch.run_id} --catalog {batch.catalog.path}`", exit_code=130) from None
    except BaseException:
        batch.catalog.finish_run(batch.run_id, "failed")
        raise


async def _then_close(batch: BatchRun, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    try:
        return await work()
    finally:
        batch.verifier.close()
        close = getattr(batch.generator, "aclose", None)
        if close is not None:
            await close()


def print_summary(summary: RunSummary, console: Console) -> None:
    table = Table(title=f"run {summary.run_id}: {summary.capability} ({summary.generator}"
                        f"{' ' + summary.model if summary.model else ''})")
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = [
        ("accepted / target", f"{summary.accepted} / {summary.target}"),
        ("rejected attempts", str(summary.rejected_attempts)),
        ("slots opened", str(summary.slots)),
        ("slots that failed every attempt", str(summary.failed_slots)),
        ("tokens (prompt + completion)", f"{summary.prompt_tokens:,} + {summary.completion_tokens:,}"),
        ("elapsed", f"{summary.elapsed_s:.1f} s"),
        ("accepted per second", f"{summary.accepted_per_s:.2f}"),
        ("status", f"{summary.status} ({summary.stop_reason})"),
    ]
    rows += [(f"rejections: {code}", str(n)) for code, n in summary.rejection_codes.items()]
    for row in rows:
        table.add_row(*row)
    console.print(table)


_RUN_IDENTITY = ("capability", "count", "max_attempts", "seed", "model", "base_url", "defect_rate", "name")
"""``synth run`` options that define a run: ``--resume`` continues with the stored ones and refuses new ones."""


def _given(ctx: typer.Context, names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` were given on the command line (not left at their defaults)."""
    return [name for name in names if getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"]


def run(
    ctx: typer.Context,
    capability: str = typer.Option(None, "--capability", "-c", help="Capability to generate (see `synth capabilities`)."),
    count: int = typer.Option(10, "--count", "-n", min=1, help="Accepted packages wanted."),
    max_attempts: int = typer.Option(3, "--max-attempts", min=1, help="Attempts per slot (first try + repairs)."),
    concurrency: int = typer.Option(4, "--concurrency", min=1,
                                    help="Generations in progress at once (an LLM request with its retries); "
                                         "up to 4x as many slots are open."),
    seed: int = typer.Option(7, "--seed", help="Base seed (offline generation is deterministic per seed and slot)."),
    budget_tokens: int = typer.Option(None, "--budget-tokens", min=1, help="Stop opening attempts after this many tokens."),
    model: str = typer.Option(None, "--model", help="Model name, or 'offline' (default; env SYNTH_MODEL)."),
    base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible server URL (env OPENAI_BASE_URL)."),
    defect_rate: float = typer.Option(0.0, "--defect-rate", min=0.0, max=1.0,
                                      help="Offline only: inject known defects into this share of first attempts."),
    verify_processes: int = typer.Option(1, "--verify-processes", min=0,
                                         help="Worker processes for verification (0: threads of this process)."),
    resume: int = typer.Option(None, "--resume", help="Continue run RUN_ID to its target."),
    name: str = typer.Option(None, "--name", help="A name for the run."),
    catalog_path: Path = CatalogOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON (no progress bar)."),
) -> None:
    """Generate, verify and catalog packages until COUNT are accepted."""
    err = err_console
    if resume is not None:
        given = _given(ctx, _RUN_IDENTITY)
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise UserError(f"--resume continues run {resume} with the options it started with; drop {flags}")
    else:
        if not capability:
            raise UserError("--capability is required (or --resume RUN_ID); `synth capabilities` lists them")
        find_capability(taxonomy(), capability)
        options = RunOptions(capability=capability, count=count, max_attempts=max_attempts,
                             concurrency=concurrency, seed=seed, budget_tokens=budget_tokens,
                             defect_rate=defect_rate, name=name, verify_processes=verify_processes)
        generator = make_generator(model, base_url, defect_rate)  # a bad --model fails before any file is made
    with Catalog.open(catalog_path) as catalog:
        if resume is not None:
            params = catalog.resume_run(resume).parameters
            options = RunOptions.model_validate({k: v for k, v in params.items() if k in RunOptions.model_fields})
            resources = {"concurrency": concurrency, "verify_processes": verify_processes, "budget_tokens": budget_tokens}
            options = options.model_copy(update={k: resources[k] for k in _given(ctx, tuple(resources))})  # replace
            base_url = params.get("base_url")
            generator = make_generator(params.get("model") or "offline", base_url, options.defect_rate)
            run_id = resume
        else:
            run_id = catalog.start_run(name or f"{capability}-{count}", generator.name, generator.model, capability,
                                       run_parameters(options, generator, base_url))
        err.print(f"run {run_id}: {options.capability}, target {options.count} accepted, "
                  f"{describe(generator, base_url)}, catalog {catalog.path}", highlight=False)
        batch = BatchRun(catalog, generator, options, run_id)
        summary = _drive(batch, batch.run, options.count, quiet=as_json, err=err)
        catalog.finish_run(run_id, summary.status)
    if as_json:
        emit_json(summary.model_dump())
    else:
        print_summary(summary, console)
    if summary.status != "finished":
        raise typer.Exit(1)


def regen(
    run_id: int = typer.Option(None, "--run", help="Only slots of this run (default: every run)."),
    reason: str = typer.Option(None, "--reason", help="Only slots last rejected with this reason code."),
    limit: int = typer.Option(None, "--limit", min=1, help="At most this many slots."),
    attempts: int = typer.Option(1, "--attempts", min=1, help="New attempts per slot."),
    model: str = typer.Option(None, "--model", help="Override the run's model ('offline' for the built-in generator)."),
    base_url: str = typer.Option(None, "--base-url", help="Override the run's server URL."),
    catalog_path: Path = CatalogOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Regenerate rejected slots with their findings as feedback; new rows link to their parent."""
    err = err_console
    by_run: dict[int, dict[str, int]] = {}
    tokens = [0, 0]
    with Catalog.open(catalog_path) as catalog:
        groups = catalog.failed_slots(run_id, reason, limit)
        if not groups and reason is not None:
            present = [r.code for r in catalog.rejections()]
            if reason not in present:
                raise UserError(f"--reason {reason!r} is not a rejection code in {catalog.path}; "
                                f"codes present: {', '.join(present) or 'none'}")
        if not groups:
            err.print("nothing to regenerate: no rejected slot matches")
        for rid, slots in groups.items():
            info = catalog.resume_run(rid)
            params = info.parameters
            options = RunOptions.model_validate({k: v for k, v in params.items() if k in RunOptions.model_fields})
            options = options.model_copy(update={"defect_rate": 0.0})
            effective_url = base_url or params.get("base_url")
            generator = make_generator(model or params.get("model") or "offline", effective_url, 0.0)
            err.print(f"run {rid}: regenerating {len(slots)} slot(s) with the {describe(generator, effective_url)}",
                      highlight=False)
            batch = BatchRun(catalog, generator, options, rid)
            outcomes = _drive(batch, lambda b=batch, s=slots: b.regenerate(s, attempts), len(slots), as_json, err)
            catalog.finish_run(rid, "finished" if catalog.accepted_count(rid) >= options.count else "failed")
            by_run[rid] = {"slots": len(slots), "repaired": sum(outcomes)}
            tokens[0] += batch.progress.prompt_tokens
            tokens[1] += batch.progress.completion_tokens
    total = sum(r["slots"] for r in by_run.values())
    repaired = sum(r["repaired"] for r in by_run.values())
    summary = RegenSummary(slots=total, repaired=repaired, repair_rate=round(repaired / total, 4) if total else None,
                           by_run=by_run, prompt_tokens=tokens[0], completion_tokens=tokens[1])
    if as_json:
        emit_json(summary.model_dump())
        return
    table = Table(title="regeneration")
    for col in ("run", "slots", "repaired"):
        table.add_column(col, justify="right")
    for rid, r in by_run.items():
        table.add_row(str(rid), str(r["slots"]), str(r["repaired"]))
    table.add_row("all", str(total), f"{repaired} ({summary.repair_rate or 0:.0%})")
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command()(run)
    app.command()(regen)

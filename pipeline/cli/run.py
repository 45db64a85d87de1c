"""``synth run`` and ``synth regen``: the batch job (``pipeline.runs.api``) with progress and a summary."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import typer

from pipeline.cli.options import (
    AllowUnexportableOpt,
    BaseUrlsOpt,
    CatalogOpt,
    JsonOpt,
    RayOpt,
    ReaderBaseUrlOpt,
    ReaderModelOpt,
    ReaderOpt,
    console,
    emit_json,
    err_console,
    new_table,
    reader_kind,
    resumed_resources,
)
from pipeline.core.errors import UserError

if TYPE_CHECKING:
    from pipeline.cli.progress import CountProgress
    from pipeline.runs.api import RunStart
    from pipeline.runs.options import Progress, RunSummary


class ProgressBar:
    """Progress of one run at a time on stderr (``CountProgress``: a bar on a terminal, plain lines
    elsewhere; silent when ``quiet``): ``start`` it when the run announces itself, feed it every
    ``Progress``, ``stop`` it at the end."""

    def __init__(self, quiet: bool, catalog: Path, every_s: float | None = None) -> None:
        self.quiet, self.catalog, self.every_s = quiet, catalog, every_s
        self._display: CountProgress | None = None
        self._total = 0
        self._started = 0.0

    def start(self, run: RunStart) -> None:
        from pipeline.cli.progress import PLAIN_EVERY_S, CountProgress

        self.stop()
        err_console.print(f"run {run.run_id}: {run.capability}, {run.goal}, {run.generator}, catalog {self.catalog}",
                          highlight=False, soft_wrap=True)
        every_s = PLAIN_EVERY_S if self.every_s is None else self.every_s
        self._display = CountProgress("accepted", "packages", self.quiet, every_s=every_s).__enter__()
        self._total = run.total
        self._started = time.perf_counter()

    def update(self, p: Progress) -> None:
        if self._display is not None:
            elapsed = max(time.perf_counter() - self._started, 1e-9)
            self._display.update(p.accepted, self._total,
                                 f"rejected {p.rejected} · in flight {p.in_flight} · "
                                 f"{p.accepted / elapsed:.1f} accepted/s · tokens {p.tokens:,}")

    def stop(self, completed: bool = True) -> None:
        """End the display; a run that did not complete gets no closing progress line."""
        if self._display is not None:
            display, self._display = self._display, None
            display.__exit__(None if completed else RuntimeError, None, None)


class Stopped(Protocol):
    """A job that stopped before its end (``RunInterrupted``, ``RolloutInterrupted``)."""

    cause: UserError | None
    signum: int | None

    def progress(self) -> str: ...

    def resume_command(self) -> str: ...


def stopped_error(exc: Stopped, job: str, saved: str) -> UserError:
    """The one line a stopped ``job`` (``run 3``) ends with. Stopped by a setup problem: what to fix,
    how far it got, how to resume (the problem's exit code). Stopped by a signal: how far it got,
    ``saved`` (what is kept), how to resume (exit 130 for Ctrl-C, 143 for SIGTERM)."""
    resume = f"`{exc.resume_command()}`"
    if exc.cause is not None:
        return UserError(f"{exc.cause}; {job} is saved ({exc.progress()}): once that is fixed, continue it with "
                         f"{resume}", exit_code=exc.cause.exit_code)
    return UserError(f"interrupted: {job} has {exc.progress()}; {saved}. Continue with {resume}",
                     exit_code=128 + (exc.signum or 2))


@contextmanager
def run_display(quiet: bool, catalog: Path) -> Iterator[ProgressBar]:
    """The progress bar for the runs inside the block. A run stopped by a signal becomes one line
    saying how far it got (accepted of the target, rejected and failed attempts, slots) and the
    command that resumes it (exit 130 for Ctrl-C, 143 for SIGTERM); one stopped by a setup problem
    (an unreachable model server) says what to fix, how far it got, then how to resume (exit 2)."""
    from pipeline.runs.api import RunInterrupted

    bar = ProgressBar(quiet, catalog)
    try:
        yield bar
    except RunInterrupted as exc:
        bar.stop(completed=False)
        raise stopped_error(exc, f"run {exc.run_id}", "every verified package is saved") from None
    except BaseException:
        bar.stop(completed=False)
        raise
    bar.stop()


def print_summary(summary: RunSummary) -> None:
    table = new_table(title=f"run {summary.run_id}: {summary.capability} ({summary.generator}"
                        f"{' ' + summary.model if summary.model else ''})")
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = [
        ("accepted / target", f"{summary.accepted} / {summary.target}"),
        ("rejected attempts", str(summary.rejected_attempts)),
        ("slots opened", str(summary.slots)),
        ("slots that failed every attempt", str(summary.failed_slots)),
        ("tokens (prompt + completion)", f"{summary.prompt_tokens:,} + {summary.completion_tokens:,}"),
        ("elapsed, start-up included", f"{summary.elapsed_s:.1f} s"),
        ("of which start-up and shutdown", f"{summary.elapsed_s - summary.work_s:.1f} s"),
        ("accepted per second", f"{summary.accepted_per_s:.2f}"),
        ("status", f"{summary.status} ({summary.stop_reason})"),
    ]
    rows += [(f"rejections: {code}", str(n)) for code, n in summary.rejection_codes.items()]
    for row in rows:
        table.add_row(*row)
    console.print(table)


_RUN_IDENTITY = ("capability", "services", "count", "max_attempts", "seed", "model", "defect_rate", "require_sft",
                 "allow_unexportable", "name", "reader", "reader_model", "reader_base_url")
"""``synth run`` options that define a run: ``--resume`` continues with the stored ones and refuses new ones
(``--base-url``, where the model server is now, and the machine resources may change)."""


def run(
    ctx: typer.Context,
    capability: str = typer.Option(None, "--capability", "-c", metavar="<name>", help="Capability to generate (see `synth capabilities`)."),
    services: str = typer.Option("default", "--services", metavar="<profile>",
                                 help="Service profile: its workflow templates and services (`synth services --profile`)."),
    count: int = typer.Option(10, "--count", "-n", min=1, help="Accepted packages wanted."),
    max_attempts: int = typer.Option(3, "--max-attempts", min=1, help="Attempts per slot (first try + repairs)."),
    concurrency: int = typer.Option(4, "--concurrency", min=1,
                                    help="Generations in progress at once (an LLM request with its retries); "
                                         "up to 4x as many slots are open."),
    seed: int = typer.Option(7, "--seed", help="Base seed (offline generation is deterministic per seed and slot)."),
    budget_tokens: int = typer.Option(None, "--budget-tokens", min=1, help="Stop opening attempts after this many tokens."),
    model: str = typer.Option(None, "--model", metavar="<model>", help="Model name, or 'offline' (default; env SYNTH_MODEL)."),
    base_url: list[str] = BaseUrlsOpt,
    defect_rate: float = typer.Option(0.0, "--defect-rate", min=0.0, max=1.0,
                                      help="Offline only: inject known defects into this share of first attempts."),
    verify_processes: int = typer.Option(None, "--verify-processes", min=0,
                                         help="Worker processes for verification (0: in this process; default: "
                                              "in process offline, 1 with --model)."),
    require_sft: bool = typer.Option(False, "--require-sft",
                                     help="Reject packages whose reference loses evidence under the SFT policy "
                                          "(otherwise accepted, stored with sft_ready false)."),
    allow_unexportable: bool = AllowUnexportableOpt,
    reader: str = ReaderOpt,
    reader_model: str = ReaderModelOpt,
    reader_base_url: str = ReaderBaseUrlOpt,
    resume: int = typer.Option(None, "--resume", metavar="<run-id>", help="Continue this run to its target, with the options it started with."),
    name: str = typer.Option(None, "--name", metavar="<text>", help="A name for the run."),
    ray: str = RayOpt,
    catalog_path: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Generate, verify and catalog packages until --count are accepted."""
    from pipeline.generation.model_endpoint import joined_urls
    from pipeline.runs.api import resume_run, start_run
    from pipeline.runs.options import RunOptions

    servers = joined_urls(base_url)
    if resume is not None:
        resources = resumed_resources(ctx, f"run {resume}", _RUN_IDENTITY, {
            "concurrency": concurrency, "verify_processes": verify_processes, "budget_tokens": budget_tokens,
            "base_url": servers})
        with run_display(as_json, catalog_path) as bar:
            summary = resume_run(resume, catalog_path, resources=resources, on_start=bar.start, on_progress=bar.update,
                                 ray=ray)
    else:
        if not capability:
            raise UserError("--capability is required (or --resume RUN_ID); `synth capabilities` lists them")
        options = RunOptions(capability=capability, service_profile=services, count=count, max_attempts=max_attempts,
                             concurrency=concurrency, seed=seed, budget_tokens=budget_tokens,
                             defect_rate=defect_rate, require_sft=require_sft,
                             allow_unexportable=allow_unexportable, name=name,
                             verify_processes=verify_processes, reader=reader_kind(reader), reader_model=reader_model,
                             reader_base_url=reader_base_url)
        with run_display(as_json, catalog_path) as bar:  # a bad --capability or --model fails before any file is made
            summary = start_run(options, catalog_path, model=model, base_url=servers, on_start=bar.start,
                                on_progress=bar.update, ray=ray)
    if as_json:
        emit_json(summary.model_dump())
    else:
        print_summary(summary)
    if summary.status != "finished":
        raise typer.Exit(1)


def regen(
    run_id: int = typer.Option(None, "--run", metavar="<run-id>", help="Only slots of this run (default: every run)."),
    reason: str = typer.Option(None, "--reason", metavar="<code>", help="Only slots last rejected with this reason code."),
    limit: int = typer.Option(None, "--limit", min=1, help="At most this many slots."),
    attempts: int = typer.Option(1, "--attempts", min=1, help="New attempts per slot."),
    model: str = typer.Option(None, "--model", metavar="<model>", help="Override the run's model ('offline' for the built-in generator)."),
    base_url: str = typer.Option(None, "--base-url", metavar="<url>", help="Override the run's server URL."),
    ray: str = RayOpt,
    catalog_path: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Regenerate rejected slots with their findings as feedback; new rows link to their parent."""
    from pipeline.runs.api import regenerate

    with run_display(as_json, catalog_path) as bar:
        summary = regenerate(catalog_path, run_id=run_id, reason=reason, limit=limit, attempts=attempts, model=model,
                             base_url=base_url, on_start=bar.start, on_progress=bar.update, ray=ray)
    if as_json:
        emit_json(summary.model_dump())
        return
    if not summary.by_run:
        err_console.print("nothing to regenerate: no rejected slot matches")
        return
    table = new_table(title="regeneration")
    for col in ("run", "slots", "repaired"):
        table.add_column(col, justify="right")
    for rid, r in summary.by_run.items():
        table.add_row(str(rid), str(r["slots"]), str(r["repaired"]))
    table.add_row("all", str(summary.slots), f"{summary.repaired} ({summary.repair_rate or 0:.0%})")
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command()(run)
    app.command()(regen)

"""``synth rollout``: an agent model on catalog packages (``pipeline.runs.rollout``), with progress
and a summary."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pipeline.cli.options import (
    BaseUrlsOpt,
    CatalogOpt,
    JsonOpt,
    RayOpt,
    console,
    emit_json,
    err_console,
    new_table,
    resumed_resources,
)
from pipeline.cli.run import stopped_error
from pipeline.core.errors import UserError
from pipeline.core.wording import counted

if TYPE_CHECKING:
    from pipeline.cli.progress import CountProgress
    from pipeline.runs.rollout_options import RolloutProgress, RolloutStart, RolloutSummary

_JOB_IDENTITY = ("model", "where", "samples", "max_turns", "user_model", "user_base_url", "temperature", "stream",
                 "budget_tokens")
"""Options that define a job: ``--resume`` continues with the stored ones and refuses new ones
(``--base-url``, where the model server is now, and ``--concurrency`` may change)."""


class _Display:
    """The job's progress on stderr (``CountProgress``; silent with ``--json``)."""

    def __init__(self, quiet: bool, catalog: Path) -> None:
        self.quiet, self.catalog = quiet, catalog
        self.bar: CountProgress | None = None
        self.started = 0.0

    def start(self, job: RolloutStart) -> None:
        from pipeline.cli.progress import CountProgress

        again = f", {job.recorded} recorded before" if job.recorded else ""
        err_console.print(f"rollout job {job.job_id}: model {job.model} at {job.server}, "
                          f"{counted(job.packages, 'package')} x {counted(job.samples, 'sample')}, {job.todo} to run{again}, catalog {self.catalog}",
                          highlight=False, soft_wrap=True)
        self.bar = CountProgress("rollouts", "episodes", self.quiet).__enter__()
        self.started = time.perf_counter()

    def update(self, p: RolloutProgress) -> None:
        if self.bar is not None:
            rate = p.done / max(time.perf_counter() - self.started, 1e-9)
            self.bar.update(p.done, p.total, f"passed {p.passed} · errors {p.errors} · in flight {p.in_flight} · "
                                             f"{rate:.2f}/s · tokens {p.tokens:,}")

    def stop(self, completed: bool) -> None:
        if self.bar is not None:
            bar, self.bar = self.bar, None
            bar.__exit__(None if completed else RuntimeError, None, None)


def _print_summary(s: RolloutSummary) -> None:
    table = new_table(title=f"rollout job {s.job_id}: {s.model}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = [
        ("packages x samples", f"{s.packages} x {s.samples}"),
        ("rollouts run now (recorded before)", f"{s.rollouts} ({s.recorded_before})"),
        ("passed", f"{s.passed}" + (f" ({s.pass_rate:.0%})" if s.pass_rate is not None else "")),
        ("mean score", "-" if s.mean_score is None else f"{s.mean_score:.3f}"),
        ("tokens (prompt + completion)", f"{s.prompt_tokens:,} + {s.completion_tokens:,}"),
        ("elapsed", f"{s.elapsed_s:.1f} s ({s.rollouts_per_s:.2f} rollouts/s)"),
        ("status", s.status),
    ]
    rows += [(f"finish: {reason}", str(n)) for reason, n in sorted(s.finish_reasons.items())]
    for row in rows:
        table.add_row(*row)
    console.print(table)


def rollout(
    ctx: typer.Context,
    model: str = typer.Option(None, "--model", metavar="<model>", help="The agent model on the server (required unless --resume)."),
    base_url: list[str] = BaseUrlsOpt,
    where: str = typer.Option(None, "--where", metavar="<sql>", help="SQL condition on the packages columns choosing accepted packages (default: all)."),
    samples: int = typer.Option(1, "--samples", "-k", min=1, help="Episodes per package."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Episodes in progress at once."),
    max_turns: int = typer.Option(30, "--max-turns", min=1, help="Assistant messages per episode before it ends (turn_limit)."),
    user_model: str = typer.Option(None, "--user-model", metavar="<model>", help="A model that plays the user (default: the deterministic simulated user)."),
    user_base_url: str = typer.Option(None, "--user-base-url", metavar="<url>", help="The user model's server (default: OPENAI_BASE_URL)."),
    temperature: float = typer.Option(None, "--temperature", min=0.0, max=2.0, help="Sampling temperature (default: the server's)."),
    stream: bool = typer.Option(False, "--stream", help="Ask for streamed replies."),
    budget_tokens: int = typer.Option(None, "--budget-tokens", min=1, help="Tokens per episode before it ends (budget)."),
    timeout_s: float = typer.Option(120.0, "--timeout", min=0.001, metavar="<seconds>", help="Deadline of one agent request, retries included (connect, first byte, the whole reply or stream); past it the episode ends with server_timeout."),
    resume: int = typer.Option(None, "--resume", metavar="<job-id>", help="Continue this rollout job with the options and packages it started with."),
    ray: str = RayOpt,
    catalog_path: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Run an agent model on the accepted catalog packages and record every episode's score.

    The conversation has the shape of the SFT export: the agent's tool calls run in the package's
    mock world, a message ending with a question mark goes to the simulated user, any other text is
    the final answer. See docs/environment.md, "Rollouts".
    """
    from pipeline.generation.model_endpoint import joined_urls
    from pipeline.runs.rollout import RolloutInterrupted, resume_rollouts, start_rollouts
    from pipeline.runs.rollout_options import RolloutOptions

    servers = joined_urls(base_url)
    display = _Display(as_json, catalog_path)
    try:
        if resume is not None:
            resources = resumed_resources(ctx, f"rollout job {resume}", _JOB_IDENTITY,
                                          {"concurrency": concurrency, "base_url": servers, "timeout_s": timeout_s})
            summary = resume_rollouts(resume, catalog_path, resources=resources,
                                      on_start=display.start, on_progress=display.update, ray=ray)
        else:
            if not model:
                raise UserError("--model is required (the agent model on the server), or --resume JOB_ID")
            options = RolloutOptions(model=model, base_url=servers, where=where, samples=samples,
                                     concurrency=concurrency, max_turns=max_turns, user_model=user_model,
                                     user_base_url=user_base_url, temperature=temperature, stream=stream,
                                     budget_tokens=budget_tokens, timeout_s=timeout_s)
            summary = start_rollouts(options, catalog_path, on_start=display.start, on_progress=display.update, ray=ray)
    except RolloutInterrupted as exc:
        display.stop(completed=False)
        raise stopped_error(exc, f"rollout job {exc.job_id}", "every finished rollout is saved") from None
    except BaseException:
        display.stop(completed=False)
        raise
    display.stop(completed=True)
    if as_json:
        emit_json(summary.model_dump())
    else:
        _print_summary(summary)


def register(app: typer.Typer) -> None:
    app.command()(rollout)

"""``synth verify``: verify package files and folders, one verdict per package."""

from __future__ import annotations

from pathlib import Path

import typer

from pipeline.cli_output import console, emit_json
from pipeline.io import read_documents
from pipeline.package import load_package
from pipeline.training_format import DEFAULT_OBS_LIMIT, DEFAULT_SAMPLE_BUDGET
from pipeline.verify.dedup import MemoryDedup
from pipeline.verify.verifier import Options, verify_package


def verify(
    paths: list[Path] = typer.Argument(..., help="Package .json/.jsonl files or folders of them."),
    as_json: bool = typer.Option(False, "--json", help="One JSON verdict per line."),
    obs_limit: int = typer.Option(DEFAULT_OBS_LIMIT, "--obs-limit", min=1,
                                  help="Characters of each tool observation kept in training data."),
    sample_budget: int = typer.Option(DEFAULT_SAMPLE_BUDGET, "--sample-budget", min=1,
                                      help="Samples longer than this many characters are dropped."),
    dedup: bool = typer.Option(False, "--dedup", help="Also reject duplicates within the given packages."),
) -> None:
    """Verify packages. Exit 0 if all are accepted, 1 if any is rejected, 2 for unreadable input."""
    options = Options(obs_limit=obs_limit, sample_budget=sample_budget)
    index = MemoryDedup() if dedup else None
    documents = list(read_documents(paths))
    rejected = 0
    for source, doc in documents:
        verdict = verify_package(doc, options, index)
        if index is not None and verdict.accepted:
            index.add(load_package(doc).model_copy(update={"id": verdict.id}))
        rejected += not verdict.accepted
        if as_json:
            emit_json({"source": source, **verdict.model_dump(mode="json")})
            continue
        score = "-" if verdict.score is None else f"{verdict.score:.3f}"
        mark = "[green]accepted[/]" if verdict.accepted else f"[red]rejected[/] {', '.join(verdict.codes)}"
        console.print(f"{verdict.id}  {mark}  score {score}  [dim]{source}[/]", highlight=False)
        for note in verdict.notes:
            console.print(f"    note: {note}", style="dim", highlight=False)
        for f in verdict.findings:
            console.print(f"    {f.code.value}: {f.message}", highlight=False, markup=False)
    if not as_json:
        console.print(f"{len(documents) - rejected} accepted, {rejected} rejected of {len(documents)}")
    if rejected:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(verify)

"""``synth services``, ``synth schema``, ``synth play`` and ``synth verify``: commands on packages
and the services they run against, no catalog involved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from pipeline.cli.options import JsonOpt, console, emit_json, err_console, load_package_file
from pipeline.core.errors import UserError
from pipeline.verify.limits import DEFAULT_TIME_LIMIT_S

if TYPE_CHECKING:
    from pipeline.core.outcomes import Verdict


def services(as_json: bool = JsonOpt) -> None:
    """List the mock services, their collections and operations."""
    from pipeline.core.services import catalogue, default_tool_name

    data = []
    for spec in catalogue().values():
        data.append({
            "name": spec.name,
            "description": spec.description,
            "collections": {
                name: {"record": c.record, "id_field": c.id_field, "id_format": c.id_format, "fields": c.fields}
                for name, c in spec.collections.items()
            },
            "operations": [
                {"name": op.name, "tool": default_tool_name(spec.name, op), "endpoint": op.endpoint,
                 "access": op.access, "collection": op.collection, "effect": op.effect,
                 "description": op.description, "parameters": op.parameters}
                for op in spec.operations
            ],
        })
    if as_json:
        emit_json(data)
        return
    table = Table(title=f"{len(data)} services, {sum(len(s['operations']) for s in data)} operations")
    for col in ("service", "endpoint", "access", "collection", "parameters"):
        table.add_column(col)
    for s in data:
        for op in s["operations"]:
            props = op["parameters"].get("properties", {})
            req = set(op["parameters"].get("required", []))
            params = ", ".join(f"{p}{'*' if p in req else ''}" for p in props)
            table.add_row(s["name"], op["endpoint"], op["access"], op["collection"], params)
    console.print(table)
    console.print("* required parameter")


def schema(as_json: bool = typer.Option(True, "--json", help="Accepted for symmetry: the schema is JSON.")) -> None:
    """Print the task package JSON Schema."""
    from pipeline.core.package import json_schema

    emit_json(json_schema())


def play(
    package_file: Path = typer.Argument(..., metavar="FILE", help="A task package JSON file."),
    as_json: bool = JsonOpt,
) -> None:
    """Run a package's reference solution and show the trajectory and the score per check.

    Exit 0 when the reference passes, 1 when it fails, 2 for unreadable input."""
    from pipeline.core.episode import execute
    from pipeline.core.grading import Grader
    from pipeline.core.trajectory import trajectory_data

    package = load_package_file(package_file)
    traj = execute(package)
    report = Grader(package).score(traj)
    if as_json:
        emit_json({
            "id": package.compute_id(),
            "score": report.score,
            "passed": report.passed,
            "checks": [r.model_dump() for r in report.checks],
            "safety": [r.model_dump() for r in report.safety],
            "trajectory": trajectory_data(traj),
        })
        _exit_if_failed(report.passed, report.score)
        return
    console.print(f"[bold]{package.compute_id()}[/] {package.capability}/{package.workflow}")
    console.print(f"[bold]request:[/] {package.request.text}", markup=True, highlight=False)
    steps = Table(title="trajectory")
    for col in ("#", "step", "detail", "status"):
        steps.add_column(col)
    for s in traj.steps:
        if s.kind == "call":
            result = json.dumps(s.result, ensure_ascii=False)
            detail = f"{s.tool}({json.dumps(s.args, ensure_ascii=False)}) → {result[:160]}{'…' if len(result) > 160 else ''}"
            status = str(s.status) if s.status is not None else "-"
        elif s.kind == "ask":
            detail, status = f"{s.ask} → {s.reply}", "revealed " + ",".join(s.revealed) if s.revealed else ""
        else:
            detail, status = s.answer or "", ""
        if s.error:
            status = f"[red]{status} {s.error}[/]"
        steps.add_row(str(s.index), s.kind, detail, status)
    console.print(steps)
    checks = Table(title="checks")
    for col in ("check", "kind", "weight", "result", "detail"):
        checks.add_column(col)
    for r in report.checks + report.safety:
        mark = {True: "[green]pass[/]", False: "[red]fail[/]", None: "[yellow]not evaluated[/]"}[r.passed]
        checks.add_row(r.id, r.kind, f"{r.weight:.2f}" if r in report.checks else "safety", mark, r.detail)
    console.print(checks)
    verdict = "[green]PASS[/]" if report.passed else "[red]FAIL[/]"
    console.print(f"score {report.score:.3f} {verdict}")
    _exit_if_failed(report.passed, report.score)


def _exit_if_failed(passed: bool, score: float) -> None:
    """Exit 1, saying so on stderr, when the reference does not pass."""
    if not passed:
        err_console.print(f"the reference fails (score {score:.3f}): a check or safety rule above does not pass",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def verify(
    paths: list[Path] = typer.Argument(..., metavar="PATH", help="Package .json/.jsonl files or folders of them."),
    as_json: bool = JsonOpt,
    obs_limit: int = typer.Option(1_000, "--obs-limit", min=1,
                                  help="Characters of each tool observation kept in training data."),
    sample_budget: int = typer.Option(40_000, "--sample-budget", min=1,
                                      help="Samples longer than this many characters are dropped."),
    dedup: bool = typer.Option(False, "--dedup", help="Also reject duplicates within the given packages."),
    time_limit: float = typer.Option(DEFAULT_TIME_LIMIT_S, "--time-limit", min=0,
                                     help="Seconds one package's verification may take before it is rejected "
                                          "as verification_timeout (0: no limit)."),
) -> None:
    """Verify packages. Exit 0 if all are accepted; 1 if any is rejected, or none was found; 2 for
    unreadable input (a missing path, a broken link, a file that is not a package document)."""
    from pipeline.cli.progress import CountProgress
    from pipeline.core.io import read_documents
    from pipeline.core.jsonvalues import ShapeError
    from pipeline.verify.dedup import MemoryDedup
    from pipeline.verify.verifier import Options, tune_collector, unparsable_verdict, verify_package

    options = Options(obs_limit=obs_limit, sample_budget=sample_budget, time_limit_s=time_limit)
    tune_collector()
    index = MemoryDedup() if dedup else None
    documents = list(read_documents(package_files(paths)))
    if not documents:
        raise UserError(f"no packages in {', '.join(map(str, paths))}; pass package .json/.jsonl files or "
                        "folders holding them", exit_code=1)
    rejected = 0
    with CountProgress("verified", "packages", as_json) as progress:
        for done, (source, doc) in enumerate(documents, 1):
            verdict = unparsable_verdict(doc) if isinstance(doc, ShapeError) else verify_package(doc, options, index)
            if index is not None and verdict.accepted:
                index.add_document(doc, verdict.id)
            rejected += not verdict.accepted
            report_verdict(source, verdict, as_json)
            progress.update(done, len(documents), f"{rejected} rejected")
    if not as_json:
        console.print(f"{len(documents) - rejected} accepted, {rejected} rejected of {len(documents)}")
    if rejected:
        raise typer.Exit(1)


PACKAGE_SUFFIXES = (".json", ".jsonl")


def package_files(paths: list[Path]) -> list[Path]:
    """The package files ``paths`` name (``pipeline.core.io.iter_package_files``); a ``UserError``
    for a symbolic link among them whose target is missing, which would otherwise be skipped."""
    from pipeline.core.io import iter_package_files

    for path in paths:
        links = path.rglob("*") if path.is_dir() else [path]
        for link in links:
            if link.suffix in PACKAGE_SUFFIXES and link.is_symlink() and not link.exists():
                raise UserError(f"{link}: a symbolic link to {link.readlink()}, which does not exist; "
                                "fix or remove the link")
    return list(iter_package_files(paths))


def report_verdict(source: str, verdict: Verdict, as_json: bool) -> None:
    """One verdict: a JSON line, or a line with its findings and notes beneath."""
    if as_json:
        emit_json({"source": source, **verdict.model_dump(mode="json")})
        return
    score = "-" if verdict.score is None else f"{verdict.score:.3f}"
    mark = "[green]accepted[/]" if verdict.accepted else f"[red]rejected[/] {', '.join(verdict.codes)}"
    console.print(f"{verdict.id}  {mark}  score {score}  [dim]{source}[/]", highlight=False)
    for note in verdict.notes:
        console.print(f"    note: {note}", style="dim", highlight=False)
    for f in verdict.findings:
        console.print(f"    {f.code.value}: {f.message}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    for command in (services, schema, play, verify):
        app.command()(command)

"""The ``synth`` command line: a thin mirror of the Python API. Every command has ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from pipeline import cli_capabilities, cli_catalog, cli_interop, cli_run, cli_verify
from pipeline.cli_output import JsonOpt, console, emit_json, err_console, load_package_file
from pipeline.errors import UserError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help="Synthesize verified task packages for tool-using agents.")

# --------------------------------------------------------------------------- services / schema


@app.command()
def services(as_json: bool = JsonOpt) -> None:
    """List the mock services, their collections and operations."""
    from pipeline.services import catalogue, default_tool_name

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


@app.command()
def schema(as_json: bool = typer.Option(True, "--json", help="Accepted for symmetry: the schema is JSON.")) -> None:
    """Print the task package JSON Schema."""
    from pipeline.package import json_schema

    emit_json(json_schema())


# --------------------------------------------------------------------------- play


@app.command()
def play(
    package_file: Path = typer.Argument(..., help="A task package JSON file."),
    as_json: bool = JsonOpt,
) -> None:
    """Run a package's reference solution and show the trajectory and the score per check."""
    from pipeline.checks import score
    from pipeline.runtime import execute

    package = load_package_file(package_file)
    traj = execute(package)
    report = score(package, traj)
    if as_json:
        emit_json({
            "id": package.compute_id(),
            "score": report.score,
            "passed": report.passed,
            "checks": [r.model_dump() for r in report.checks],
            "safety": [r.model_dump() for r in report.safety],
            "trajectory": traj.model_dump(mode="json"),
        })
        return
    console.print(f"[bold]{package.compute_id()}[/] {package.capability}/{package.workflow}")
    console.print(f"[bold]request:[/] {package.request.text}")
    steps = Table(title="trajectory")
    for col in ("#", "step", "detail", "status"):
        steps.add_column(col)
    for s in traj.steps:
        if s.kind == "call":
            detail = f"{s.tool}({json.dumps(s.args, ensure_ascii=False)}) → {json.dumps(s.result, ensure_ascii=False)[:160]}"
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


# --------------------------------------------------------------------------- command modules


# Each area's commands live in its own ``cli_<area>`` module with a ``register(app)``.
for _module in (cli_capabilities, cli_run, cli_verify, cli_catalog, cli_interop):
    _module.register(app)


def main() -> None:
    """Entry point: user mistakes print one line and exit non-zero, never a traceback."""
    try:
        app()
    except UserError as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(exc.exit_code) from None


if __name__ == "__main__":
    main()

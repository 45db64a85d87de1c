"""``synth capabilities``: the capability taxonomy and its workflow templates."""

from __future__ import annotations

from typing import Any

import typer

from pipeline.cli.options import JsonOpt, console, emit_json, new_table
from pipeline.core.errors import UserError

TEMPLATE_FIELDS = ("name", "description", "profile", "services", "difficulty", "steps", "checks", "tools")


def capabilities_data() -> list[dict[str, Any]]:
    """Every capability (name, description, skill, check kinds, knobs) with a ``templates`` list
    of its workflow templates (name, description, services, difficulty, steps, checks, tools)."""
    import yaml

    from pipeline.taxonomy.capabilities import taxonomy

    try:
        caps = taxonomy()
    except (ValueError, yaml.YAMLError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise UserError(f"the capabilities/ folder does not load: {first}; fix that YAML file") from exc
    return [
        {**cap.model_dump(include={"name", "description", "skill", "check_kinds", "knobs"}),
         "templates": [t.model_dump(include=set(TEMPLATE_FIELDS)) for t in cap.templates]}
        for cap in caps.values()
    ]


def _knob_text(value: Any) -> str:
    """``{easy: 1, medium: 2}`` → ``easy 1 / medium 2``; other values as they are."""
    if isinstance(value, dict):
        return " / ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def capabilities(as_json: bool = JsonOpt) -> None:
    """List the capabilities: skill, check kinds, difficulty knobs and workflow templates."""
    data = capabilities_data()
    if as_json:
        emit_json(data)
        return
    templates = [t for cap in data for t in cap["templates"]]
    services = sorted({s for t in templates for s in t["services"]})
    for cap in data:
        knobs = "; ".join(f"{k} {_knob_text(v)}" for k, v in cap["knobs"].items()) or "-"
        console.print(f"[bold]{cap['name']}[/]: {cap['description']}", highlight=False)
        console.print(f"  skill: {cap['skill']}", highlight=False)
        console.print(f"  checks: {', '.join(cap['check_kinds'])}   knobs: {knobs}", highlight=False)
    from rich import box  # with the table: loading rich.box is left to commands that print one

    # a row per template, without the vertical rules: every name fits whole from 120 columns
    table = new_table(title=f"{len(data)} capabilities, {len(templates)} workflow templates, {len(services)} services",
                      box=box.SIMPLE_HEAD, show_edge=False, collapse_padding=True)
    for col in ("capability", "template", "profile", "difficulty", "services", "steps", "checks"):
        table.add_column(col, overflow="fold", justify="right" if col in ("steps", "checks") else "left")
    for cap in data:
        for t in cap["templates"]:
            table.add_row(cap["name"], t["name"], t["profile"], t["difficulty"], ", ".join(t["services"]),
                          str(len(t["steps"])), str(len(t["checks"])))
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command()(capabilities)

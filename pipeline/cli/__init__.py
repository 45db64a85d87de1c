"""The ``synth`` command line: a thin face over the Python API. Every command has ``--json``.

Each area's commands live in their own module with a ``register(app)``; shared options are in
``options``. Commands import the modules they use when they run, so start-up stays light.
"""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperGroup

from pipeline.cli import audit, capabilities, catalog, interop, packages, report, rollout, run
from pipeline.cli.options import err_console, readable_help
from pipeline.core.errors import UserError
from pipeline.runs import LOCAL  # not ray_cluster: it imports asyncio, which `synth verify` never needs

OPTIONAL_VALUES = {"--ray": LOCAL}
"""Options whose value may be left out, and the value they then take (``--ray`` alone: a Ray
instance on this machine; ``--ray ADDRESS``: that cluster)."""

WORKFLOW: dict[str, str] = {
    "run": "Generate, verify and catalog packages until --count accepted.",
    "regen": "Give rejected slots more tries, fed their findings.",
    "verify": "Verify package files or folders; exit 1 if any is rejected.",
    "play": "Play a package's reference (or a witness); score each check.",
    "catalog": "What the catalog holds: stats, runs, query, show, unsolved.",
    "export": "Write catalog rows as jsonl, parquet, sft or ClawEnvKit tasks.",
    "import": "Read ClawEnvKit tasks in as packages without a reference.",
    "rollout": "Run an agent model on accepted packages; record its scores.",
    "report": "Write one HTML page of charts of a run or the whole catalog.",
    "serve": "Serve one package's world over HTTP, or as an MCP server.",
    "audit": "Judge packages by hand and measure the verifier against it.",
    "capabilities": "List the capabilities and their workflow templates.",
    "services": "List a profile's mock services and their operations.",
    "schema": "Print the task package JSON Schema.",
}
"""The top-level commands in the order ``synth --help`` lists them (as the work goes: make,
check, look, hand on, measure; then the reference lists), each with its one line there (at most
62 characters, so that the list fits 80 columns and the whole help 24 lines)."""


class WorkflowGroup(TyperGroup):
    """The ``synth`` command group: its commands listed in ``WORKFLOW`` order with ``WORKFLOW``'s lines."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, command in self.commands.items():
            command.short_help = WORKFLOW.get(name, command.short_help)

    def list_commands(self, ctx: Any) -> list[str]:  # typer.core: its own copy of click's Context
        order = list(WORKFLOW)
        return sorted(super().list_commands(ctx), key=lambda name: order.index(name) if name in order else len(order))


# Plain help (not rich panels): docstrings wrap as paragraphs instead of keeping their line breaks.
app = typer.Typer(cls=WorkflowGroup, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None, help="Synthesize verified task packages for tool-using agents.")
readable_help()


def _version(value: bool) -> None:
    if value:
        import pipeline

        typer.echo(f"synth {pipeline.__version__}")
        raise typer.Exit()


@app.callback()
def _root(show_version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                            help="Print the version and exit.")) -> None:
    """Synthesize verified task packages for tool-using agents."""

for _module in (packages, capabilities, run, rollout, catalog, audit, interop, report):
    _module.register(app)


def _first_sentence(doc: str) -> str:
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    return paragraph.split(". ")[0].rstrip(".") + "."


def _whole_first_sentences(typer_app: typer.Typer) -> None:
    """Give every command and command group without a ``short_help`` its docstring's first
    sentence, whole: the command list shows it instead of cutting a long first line off with ``...``
    (the top level's lines are ``WORKFLOW``'s)."""
    for info in typer_app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else None)
        if info.short_help is None and doc:
            info.short_help = _first_sentence(doc)
    for group in typer_app.registered_groups:
        sub = group.typer_instance
        doc = group.help or (sub.info.help if sub is not None else None)
        if group.short_help is None and isinstance(doc, str):
            group.short_help = _first_sentence(doc)
        if sub is not None:
            _whole_first_sentences(sub)


_whole_first_sentences(app)


def with_optional_values(argv: list[str]) -> list[str]:
    """``argv`` with the value of each ``OPTIONAL_VALUES`` option filled in where it was left
    out (the option is last, or the next word is another option)."""
    filled: list[str] = []
    for index, word in enumerate(argv):
        filled.append(word)
        if word in OPTIONAL_VALUES and (index + 1 == len(argv) or argv[index + 1].startswith("-")):
            filled.append(OPTIONAL_VALUES[word])
    return filled


def main() -> None:
    """Entry point: user mistakes print one line and exit non-zero, never a traceback."""
    try:
        app(args=with_optional_values(sys.argv[1:]))
    except UserError as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(exc.exit_code) from None


if __name__ == "__main__":
    main()

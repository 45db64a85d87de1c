"""What every command shares: the options defined once (``--json``, ``--catalog``), the consoles,
JSON output, and loading a package file for a user.

Only light modules are imported here: each command imports what it needs when it runs, so
``synth --help`` and the fast commands start quickly.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer
from rich.console import Console

from pipeline.core.errors import UserError
from pipeline.core.paths import DEFAULT_CATALOG

if TYPE_CHECKING:
    from rich.console import ConsoleOptions, RenderResult
    from rich.table import Table

    from pipeline import TaskPackage

# Piped output (not a terminal) gets room for a wide table instead of rich's 80-column default.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 160
console = Console(width=_WIDTH)
err_console = Console(stderr=True)

JsonOpt = typer.Option(False, "--json", help="Machine-readable output: JSON on stdout, no tables or progress.")
RayOpt = typer.Option(None, "--ray", metavar="[ADDRESS]",
                      help="Run the work on Ray (the ray extra): alone, a Ray instance on this machine; "
                           "'auto' or host:port, a running cluster. See docs/scaling.md.")
BaseUrlsOpt = typer.Option(None, "--base-url", metavar="<url>",
                           help="OpenAI-compatible server URL (env OPENAI_BASE_URL); repeat it, or give a comma "
                                "list, for several servers of the model: requests go to the least busy.")
ReaderOpt = typer.Option("auto", "--reader", metavar="auto|rules|model",
                         help="Who confirms a reading of the request before a finding resting on it refuses: "
                              "auto (the generator's model with --model, else the rules), rules, or model.")
ReaderModelOpt = typer.Option(None, "--reader-model", metavar="<model>",
                              help="The reader's model, when not the generator's (implies --reader model under auto).")
ReaderBaseUrlOpt = typer.Option(None, "--reader-base-url", metavar="<url>",
                                help="The reader's server, when not the generator's.")
AllowUnexportableOpt = typer.Option(
    False, "--allow-unexportable",
    help="Accept claw-profile packages ClawEnvKit's format cannot carry at full weight (otherwise refused as "
         "not_exportable, and regenerated).")
CatalogOpt = typer.Option(DEFAULT_CATALOG, "--catalog", metavar="<file>", help="The DuckDB catalog file.")

_VALUE_WORDS = {"<int>": "<n>", "<int range>": "<n>", "<float>": "<number>", "<float range>": "<number>",
                "<str>": "<text>"}
"""What an option's value is called in help when the option names none (typer's type label → word)."""


def readable_help() -> None:
    """Make typer's help read as prose instead of Python types: an argument shows its name in
    capitals (``PATH...``, not ``{paths}...`` with ``<list[Path]>`` beside it), a flag no value (not
    ``<bool>``), and an option without a ``metavar`` a word for its value (``<n>``, ``<number>``,
    ``<text>``, ``<path>``). Changes nothing on a typer version without these hooks."""
    from typer import core

    argument, option = getattr(core, "TyperArgument", None), getattr(core, "TyperOption", None)
    if argument is None or option is None or not hasattr(option, "display_type"):
        return
    typer_label = option.display_type

    def argument_type(self: Any, ctx: Any) -> None:
        return None

    def display_name(self: Any) -> str:
        return str(self.metavar) if self.metavar is not None else str(self.name).upper()

    def usage_name(self: Any) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")

    def option_value(self: Any, ctx: Any) -> str | None:
        if self.metavar is not None:
            return str(self.metavar)
        if getattr(self, "is_flag", False):
            return None
        label = str(typer_label(self, ctx))
        return _VALUE_WORDS.get(label, label)

    argument.display_type_rich = argument_type
    if isinstance(getattr(argument, "display_name_raw", None), property):
        argument.display_name_raw = property(display_name)
    if hasattr(argument, "_usage_display_name"):
        argument._usage_display_name = usage_name
    option.display_type_rich = option_value


def new_table(title: str | None = None, **options: Any) -> Table:
    """A rich ``Table`` with ``title`` and rich's ``options`` (``box``, ``show_header``...), whose
    names are never broken mid-word where the console has room for them whole (``_table_class``)."""
    return _table_class()(title=title, **options)


@cache
def _table_class() -> type[Table]:
    """``Table`` keeping names whole: when a table is wider than the console, rich narrows its
    widest column first, breaking a name such as ``schedule-meeting-after-clarification`` mid-word
    though a column of several words could wrap between them. So, when the console is wide enough
    for every word whole (the table's minimum width), each column whose cells are single words (ids,
    names, codes, numbers) is kept unwrapped and only the columns of several words wrap; on a
    narrower console every column folds as before. Imported on first use: most runs of the verify
    command print no table."""
    from rich.measure import Measurement
    from rich.table import Table

    class WholeNamesTable(Table):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            if self.__rich_measure__(console, options).minimum <= options.max_width:
                for column in self.columns:
                    column.no_wrap = column.no_wrap or all(
                        Measurement.get(console, options, cell).span == 0 for cell in column.cells)
            yield from super().__rich_console__(console, options)

    return WholeNamesTable


VerboseOpt = typer.Option(0, "--verbose", "-v", count=True,
                          help="Debug lines on stderr: -v what the verifier read in each request (counts, selections, "
                               "formulas, names, facts, claims, readers' answers); -vv every module's.")
READINGS_LOGGER = "pipeline.verify"
"""The loggers ``-v`` turns on: the verification stages, whose debug lines are their readings."""


@contextmanager
def debug_lines(verbosity: int) -> Iterator[None]:
    """Inside, debug lines go to stderr as ``debug: MODULE: LINE``: with ``verbosity`` 1 those of
    ``READINGS_LOGGER``, with 2 or more those of every module of the package; with 0 nothing changes.
    The handler and the level are taken back on leaving."""
    if verbosity <= 0:
        yield
        return
    logger = logging.getLogger(READINGS_LOGGER if verbosity == 1 else "pipeline")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("debug: %(name)s: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def serve_until_stopped(serve: Callable[[], None], close: Callable[[], None], as_json: bool) -> None:
    """Run ``serve`` (a server's blocking loop) until Ctrl-C (SIGINT) or SIGTERM, then ``close`` it
    and say "stopped" on stderr (not with ``--json``). SIGINT stops it even when the process was
    started with SIGINT ignored, as a shell without job control starts a command run with ``&``
    (Python then installs no handler of its own)."""
    import signal
    import threading

    from pipeline.runs.interrupt import terminate_as_interrupt

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler) if main else None
    try:
        with terminate_as_interrupt():
            serve()
    except KeyboardInterrupt:
        pass
    finally:
        close()
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if not as_json:
        err_console.print("stopped")


def emit_json(data: Any) -> None:
    """One JSON document on one line of stdout."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")


def load_package_file(path: Path) -> TaskPackage:
    """The one package in ``path``; a ``UserError`` naming the problem otherwise."""
    from pydantic import ValidationError

    from pipeline import load_package
    from pipeline.core.errors import first_validation_error
    from pipeline.core.io import read_documents

    docs = list(read_documents([path]))
    if len(docs) != 1:
        raise UserError(f"{path}: expected one package, found {len(docs)}; pass one package file")
    source, doc = docs[0]
    if isinstance(doc, Exception):
        raise UserError(f"{source}: not a valid task package (schema_invalid): JSON {doc}")
    try:
        return load_package(doc)
    except ValidationError as exc:
        raise UserError(f"{source}: not a valid task package: {first_validation_error(exc)}; "
                        "`synth schema` prints the schema") from exc


def reader_kind(value: str) -> Literal["auto", "rules", "model"]:
    """``--reader``'s value, or a ``UserError`` naming the choices."""
    if value not in ("auto", "rules", "model"):
        raise UserError(f"--reader {value!r}: not a reader; use auto, rules or model")
    return value  # type: ignore[return-value]


def resumed_resources(ctx: typer.Context, what: str, identity: tuple[str, ...],
                      resources: dict[str, Any]) -> dict[str, Any]:
    """For ``--resume``: a ``UserError`` naming the options of ``identity`` given on the command line
    (they define ``what``, a run or a job, which continues with its stored ones); else those of
    ``resources`` (name → value) given on the command line, which may change."""
    given = [n for n in identity if _on_command_line(ctx, n)]
    if given:
        flags = ", ".join("--" + n.replace("_", "-") for n in given)
        raise UserError(f"--resume continues {what} with the options it started with; drop {flags}")
    return {k: v for k, v in resources.items() if _on_command_line(ctx, k)}


def _on_command_line(ctx: typer.Context, name: str) -> bool:
    """Whether option ``name`` was given on the command line (not left at its default)."""
    return getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"

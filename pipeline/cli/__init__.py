"""The ``synth`` command line: a thin face over the Python API. Every command has ``--json``.

Each area's commands live in their own module with a ``register(app)``; shared options are in
``options``. Commands import the modules they use when they run, so start-up stays light.
"""

from __future__ import annotations

import typer

from pipeline.cli import capabilities, catalog, interop, packages, run
from pipeline.cli.options import err_console
from pipeline.core.errors import UserError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Synthesize verified task packages for tool-using agents.")

for _module in (packages, capabilities, run, catalog, interop):
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

"""``synth report``: one self-contained HTML page of a run or of the whole catalog
(``pipeline.interop.report``)."""

from __future__ import annotations

from pathlib import Path

import typer

from pipeline.cli.options import CatalogOpt, JsonOpt, console, emit_json
from pipeline.core.errors import UserError
from pipeline.core.wording import counted


def report(
    out: Path = typer.Option(..., "--out", metavar="FILE.html", help="The HTML file to write (replaced whole)."),
    run: int = typer.Option(None, "--run", metavar="ID", min=1, show_default=False,
                            help="Report run ID only (`synth catalog runs` lists the runs); default: the whole catalog."),
    catalog: Path = CatalogOpt,
    price_prompt: float = typer.Option(None, "--price-per-1k-prompt", metavar="<price>", min=0, show_default=False,
                                       help="What 1,000 prompt tokens of the generator's model cost."),
    price_completion: float = typer.Option(None, "--price-per-1k-completion", metavar="<price>", min=0,
                                           show_default=False,
                                           help="What 1,000 completion tokens of the generator's model cost."),
    as_json: bool = JsonOpt,
) -> None:
    """Write one HTML page, with charts, of a run or of the whole catalog.

    Slots and attempts (the slots by the attempts each used), rejections by reason code, the capability and template
    mix, the generator's tokens and cost (with both prices given), and, where rollouts exist,
    pass-rate histograms per capability and model. The file carries its scripts inline: it opens
    offline in any browser."""
    from pipeline import Catalog
    from pipeline.interop.report import Prices, write_report

    if (price_prompt is None) != (price_completion is None):
        raise UserError("give both --price-per-1k-prompt and --price-per-1k-completion (0 is a price), or neither")
    prices = None if price_prompt is None or price_completion is None else Prices(
        prompt_per_1k=price_prompt, completion_per_1k=price_completion)
    summary = write_report(Catalog.open(catalog, read_only=True), out, run, prices)
    if as_json:
        emit_json(summary.model_dump(mode="json"))
        return
    funnel = summary.funnel
    scope = f"run {run}" if run is not None else "the whole catalog"
    per_slot = f" ({funnel.attempts_per_slot:.2f} per slot)" if funnel.attempts_per_slot is not None else ""
    console.print(f"wrote {summary.path} ({summary.bytes / 1e6:.1f} MB), {scope}: {counted(funnel.slots, 'slot')}, "
                  f"{counted(funnel.attempts, 'attempt')}{per_slot}, {funnel.accepted:,} accepted; "
                  f"{counted(summary.rollouts, 'rollout')}; charts: {', '.join(summary.charts) or 'none'}",
                  markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command()(report)

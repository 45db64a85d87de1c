"""``synth audit``: people judge packages, and the project learns how right its verifier is.

``synth audit [OPTIONS]`` serves the review page (``interop.audit_server``); ``synth audit
queue|label|stats|export`` are a thin mirror of ``Catalog.audit_queue``, ``add_label``,
``audit_stats`` and ``interop.audit_export.export_audit``, each with ``--json``.

``label`` (and each label the page saves) opens the catalog for writing (the writer lock: it waits
for no run, it fails with exit 3 while one writes); the others read it read-only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pipeline.cli.options import (
    CatalogOpt,
    JsonOpt,
    console,
    emit_json,
    new_table,
    serve_until_stopped,
)
from pipeline.core.distribution import install_extra
from pipeline.core.errors import UserError
from pipeline.core.wording import counted

if TYPE_CHECKING:
    from pipeline.catalog.audit import AuditQueue, AuditStats
    from pipeline.catalog.estimates import Estimate

audit_app = typer.Typer()
DEFAULT_PORT = 8731

WhereOpt = typer.Option(None, "--where", help="One SQL boolean over `packages` columns and audit_label, e.g. "
                                              "\"capability = 'general'\": only those rows.")


def _line(text: str) -> None:
    console.print(text, markup=False, highlight=False)


def _text(value: object) -> str:
    from rich.markup import escape

    return "-" if value is None else escape(str(value))


@audit_app.callback(invoke_without_command=True)
def page(
    ctx: typer.Context,
    catalog: Path = CatalogOpt,
    run: int = typer.Option(None, "--run", metavar="ID", show_default=False, help="Only the rows of run ID."),
    port: int = typer.Option(DEFAULT_PORT, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port)."),
    annotator: str = typer.Option(None, "--annotator", metavar="NAME", show_default=False,
                                  help="Your name, which every label you give carries (the page asks if not given)."),
    sample: int = typer.Option(100, "--sample", min=0, help="Accepted rows to sample, stratified by capability, "
                                                            "workflow and service profile."),
    refusals: int = typer.Option(5, "--refusals", min=0, help="Refused rows to sample per first reason code."),
    seed: int = typer.Option(0, "--seed", help="The sample's seed: one seed, one sample."),
    where: str = WhereOpt,
    open_browser: bool = typer.Option(False, "--open", help="Open the page in the default browser."),
    as_json: bool = JsonOpt,
) -> None:
    """Judge packages by hand and measure the verifier.

    Without a command: serve the review page with the options below. It shows the sampling plan,
    the queue and one package per screen, labelled with the keys (a accept, d defective, u unsure,
    c comment, j/k next/previous); each label is saved in the catalog at once. It listens on
    127.0.0.1 only, behind the token in the URL it prints; Ctrl-C stops it.

    The commands do the same from the terminal: queue, label, stats (the figures), export."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        from pipeline.interop import audit_server
    except ImportError as exc:
        raise UserError(f"synth audit serves its page with Starlette and uvicorn ({exc.name or 'starlette'} is "
                        f"missing); install them with: {install_extra('audit')} (in a checkout: "
                        "pip install -e '.[audit]')") from exc

    options = audit_server.AuditOptions(catalog=catalog, run=run, where=where, sample=sample, refusals=refusals,
                                        seed=seed, annotator=annotator)
    try:
        sock = audit_server.listen(port)
    except OSError as exc:
        raise UserError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}); pass another --port "
                        "(0: any free port)") from exc
    try:
        site = audit_server.AuditSite(options, sock.getsockname()[1])
    except BaseException:
        sock.close()
        raise
    queue_ = site.queue
    if as_json:
        emit_json({"url": site.url, "catalog": str(catalog), "items": len(queue_.items),
                   "population": queue_.population})
    else:
        _line(f"audit page for {catalog}: {len(queue_.items):,} item(s) to label of {queue_.population:,} row(s)")
        _line(f"open {site.url}")
        _line("(127.0.0.1 only; the token in the URL is your key: share it with no one; Ctrl-C stops)")
    sys.stdout.flush()
    if open_browser:
        import webbrowser

        webbrowser.open(site.url)
    serve_until_stopped(lambda: audit_server.serve(site, sock), sock.close, as_json)


@audit_app.command()
def queue(
    sample: int = typer.Option(100, "--sample", min=0, help="Accepted rows to sample, stratified by capability, "
                                                            "workflow and service profile."),
    refusals: int = typer.Option(5, "--refusals", min=0, help="Refused rows to sample per first reason code."),
    seed: int = typer.Option(0, "--seed", help="The sample's seed: one seed, one sample."),
    where: str = WhereOpt,
    annotator: str = typer.Option(None, "--annotator", metavar="NAME", show_default=False,
                                  help="Leave out the rows NAME has labelled."),
    catalog: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The rows people should label: every review note and reader disagreement, a stratified
    sample of accepted rows and a sample of refusals per reason code, each with its sampling
    weight (rows of its stratum it stands for)."""
    from pipeline import Catalog

    result = Catalog.open(catalog, read_only=True).audit_queue(sample, refusals, seed, where, annotator)
    if as_json:
        emit_json(result.model_dump(mode="json"))
        return
    print_queue(result)


def print_queue(result: AuditQueue) -> None:
    drawn = sum(s.sampled for s in result.strata)
    _line(f"{counted(drawn, 'row')} to label of {result.population:,} with a package (seed {result.seed}); "
          f"{len(result.items):,} listed" + (f", {result.hidden:,} already labelled by the annotator" if result.hidden
                                             else ""))
    table = new_table(title="queue")
    for col in ("row", "why", "stratum", "weight", "verdict", "codes", "labelled by", "request"):
        table.add_column(col, justify="right" if col in ("row", "weight") else "left", overflow="fold")
    for i in result.items:
        codes = ", ".join(i.codes + [f"review: {c}" for c in i.review_codes]) or None
        request = None if i.request is None else (i.request[:60] + ("…" if len(i.request) > 60 else ""))
        table.add_row(str(i.row), i.reason, _text(i.stratum), f"{i.weight:g}", i.status, _text(codes),
                      _text(", ".join(i.annotators) or None), _text(request))
    console.print(table)
    _line("label one: synth audit label ROW --label accept|defective|unsure [--code CODE] --annotator NAME")


@audit_app.command()
def label(
    row: int = typer.Argument(..., metavar="ROW", help="The package row (`synth audit queue` lists them)."),
    verdict: str = typer.Option(..., "--label", metavar="accept|defective|unsure", help="Your judgement of the package."),
    annotator: str = typer.Option(..., "--annotator", metavar="NAME", help="Who judges."),
    code: str = typer.Option(None, "--code", metavar="CODE", show_default=False,
                             help="With defective (or unsure): the reason code naming the defect."),
    comment: str = typer.Option(None, "--comment", metavar="TEXT", show_default=False, help="Why, in a line."),
    catalog: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Record a label of one package row: accept, defective (with the reason code when you can
    name it) or unsure. Labels are kept; your latest label of a row is the one that counts."""
    from pipeline import Catalog

    with Catalog.open(catalog, create=False) as writer:
        stored = writer.add_label(row, verdict, annotator, code, comment)
    if as_json:
        emit_json(stored.model_dump(mode="json"))
        return
    _line(f"row {stored.package_row} ({stored.package_id}): {stored.label}"
          + (f" ({stored.code})" if stored.code else "") + f" by {stored.annotator}, label {stored.id}")


@audit_app.command()
def stats(
    where: str = WhereOpt,
    catalog: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Agreement between annotators (Cohen's kappa for two, Fleiss' for more), the verifier's
    precision and recall for acceptance and per reason code, estimated from the labelled rows
    with their sampling weights and 95% Wilson intervals, and the rows where people and the
    verifier disagree."""
    from pipeline import Catalog

    result = Catalog.open(catalog, read_only=True).audit_stats(where)
    if as_json:
        emit_json(result.model_dump(mode="json"))
        return
    print_stats(result)


def _estimate(e: Estimate) -> str:
    if e.value is None:
        return "-"
    return f"{e.value:.1%} [{e.low or 0:.1%}, {e.high or 0:.1%}] n={e.n}"


def print_stats(result: AuditStats) -> None:
    covered = "-" if result.covered is None else f"{result.covered:.0%}"
    _line(f"{counted(result.labels, 'label')} by {counted(len(result.annotators), 'annotator')} on {counted(result.labelled_rows, 'row')}: "
          f"{result.decided_rows:,} decided, {result.undecided_rows:,} unsure or disputed; strata with a decided row "
          f"hold {covered} of {counted(result.population, 'row')}")
    a = result.agreement
    if a.method is None:
        _line("agreement: no row has labels by two annotators")
    else:
        kappa = "-" if a.kappa is None else f"{a.kappa:.3f}"
        observed = "-" if a.observed is None else f"{a.observed:.1%}"
        _line(f"agreement: {a.method} kappa {kappa} over {counted(a.items, 'row')} labelled by two or more "
              f"({a.annotators} annotators; raw agreement {observed})")
    table = new_table(title="the verifier against people (95% Wilson intervals, weighted)")
    for col in ("decision", "precision", "recall"):
        table.add_column(col, overflow="fold")
    table.add_row("acceptance", _estimate(result.acceptance.precision), _estimate(result.acceptance.recall))
    table.add_row("refusal", _estimate(result.refusal.precision), _estimate(result.refusal.recall))
    console.print(table)
    if result.codes:
        table = new_table(title="per reason code: precision of its refusals; recall of the defects people name with it")
        for col in ("code", "precision", "recall (refused)", "recall (this code)"):
            table.add_column(col, overflow="fold")
        for c in result.codes:
            table.add_row(c.code, _estimate(c.precision), _estimate(c.recall), _estimate(c.recall_code))
        console.print(table)
    if result.disagreements:
        table = new_table(title=f"{counted(len(result.disagreements), 'row')} where people and the verifier disagree")
        for col in ("row", "package", "verifier", "codes", "people", "code", "annotators"):
            table.add_column(col, justify="right" if col in ("row", "annotators") else "left", overflow="fold")
        for d in result.disagreements:
            table.add_row(str(d.row), _text(d.package_id), d.status, _text(", ".join(d.codes) or None), d.label,
                          _text(d.code), str(d.annotators))
        console.print(table)


@audit_app.command("export")
def export_(
    out: Path = typer.Option(..., "--out", metavar="DIR", help="A new or empty folder."),
    catalog: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Write the packages people decided (accept or defective) as a labelled set: one JSON file
    per package and expected.tsv, the layout bench/precision.py reads."""
    from pipeline.interop.audit_export import export_audit

    summary = export_audit(catalog, out)
    if as_json:
        emit_json(summary.model_dump(mode="json"))
        return
    skipped = "".join(f", {n:,} {why}" for why, n in summary.skipped.items())
    _line(f"wrote {counted(summary.packages, 'package')} to {summary.path} ({summary.accept:,} accept, "
          f"{summary.reject:,} reject); left out{skipped or ': none'}")


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit", short_help="Judge packages by hand and measure the verifier.")

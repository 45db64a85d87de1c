"""``synth catalog stats|runs|query|show|rejections|unsolved`` and ``synth export``: a thin mirror of ``Catalog``.

Every command opens the catalog read-only (no writer lock), so it works while a run is writing;
each prints a rich table, or JSON with ``--json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer
from rich.markup import escape

from pipeline.catalog.limits import DEFAULT_QUERY_MEMORY, DEFAULT_QUERY_TIMEOUT_S, QUERY_THREADS
from pipeline.cli.options import CatalogOpt, JsonOpt, console, emit_json, new_table
from pipeline.core.errors import UserError
from pipeline.core.wording import counted

if TYPE_CHECKING:
    from pipeline import Catalog
    from pipeline.catalog.calibration import CalibrationGroup, UnsolvedPackage, UnsolvedReport
    from pipeline.catalog.queries import (
        CatalogStats,
        FindingRecord,
        PackageRecord,
        QueryResult,
        RejectionCount,
        ReviewCount,
        RunCounts,
    )
    from pipeline.catalog.selection import StatusFilter
    from pipeline.interop.export import ExportSummary, Source

EXPORT_FORMATS = ("jsonl", "parquet", "sft", "clawenvkit", "openenv")

catalog_app = typer.Typer(no_args_is_help=True,
                          help="Curate the catalog: statistics, runs, SQL, one package, rejections.")



def _reader(path: Path) -> Catalog:
    from pipeline import Catalog

    return Catalog.open(path, read_only=True)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _cell(value: Any, none: str = "-") -> str:
    """``value`` as table text, rich markup escaped (package text may hold ``[...]``); ``none``
    for a missing value (query results say ``NULL``, as SQL does)."""
    if value is None:
        return none
    if isinstance(value, dict | list):
        return escape(json.dumps(value, ensure_ascii=False, default=str))
    return escape(str(value))


# --------------------------------------------------------------------------- stats


@catalog_app.command()
def stats(
    run: int = typer.Option(None, "--run", metavar="ID", min=1, show_default=False,
                            help="Count run ID only (`synth catalog runs` lists the runs)."),
    catalog: Path = CatalogOpt,
    k: int = typer.Option(None, "--k", min=1, show_default=False,
                          help="The k of pass@k (default: per model, the fewest samples any package has)."),
    as_json: bool = JsonOpt,
) -> None:
    """Acceptance, repairs, rejection codes and review notes of generated rows, imported tasks apart;
    and, where rollouts exist, how agent models fare.

    Totals and rates per capability and workflow, top rejection codes, review notes per code, and
    how many accepted packages are sft_ready, over the rows of generation runs. Tasks imported with
    `synth import` are counted on their own, never as rejected generations. With rollouts: per
    capability and model, packages rolled out, mean pass rate, pass@1, pass@k and the packages no
    rollout passes (`synth catalog unsolved` lists them)."""
    result = _reader(catalog).stats(run, k)
    if as_json:
        emit_json(result.model_dump(mode="json"))
        return
    print_stats(result)


def print_stats(result: CatalogStats) -> None:
    """The generated rows' figures and tables, then the imported rows' on their own."""
    imported = result.imported
    scope = f"run {result.run}" if result.run is not None else counted(result.runs, "run")
    if result.run is None and imported.runs:
        scope += f" ({imported.runs:,} import)"
    if result.packages or not imported.rows:
        _line(f"{scope}: {counted(result.packages, 'generated row')}, {result.accepted:,} accepted, "
              f"{result.rejected:,} rejected ({_rate(result.acceptance_rate)} accepted)")
    if result.packages:
        print_generated(result)
    if imported.rows:
        where = "" if result.packages else f"{scope}: "
        _line(f"{where}imported: {counted(imported.rows, 'task row')} of {counted(imported.runs, 'import run')}, "
              f"{imported.accepted:,} accepted, {imported.rejected:,} rejected (not generation attempts: "
              "counted in none of the generated figures)")
        if imported.rejections:
            print_rejections(imported.rejections, title="rejection codes of imported rows")
    if result.rollouts:
        print_calibration(result.rollouts)


def print_calibration(rows: list[CalibrationGroup]) -> None:
    """Per capability and model: packages rolled out, samples, mean pass rate, pass@1, pass@k and
    the packages no rollout passes."""
    table = new_table(title="rollouts by capability and model (pass@1 = mean pass rate)")
    for col in ("capability", "model", "packages", "samples", "pass@1", "pass@k", "mean score", "unsolved"):
        table.add_column(col, justify="left" if col in ("capability", "model") else "right", overflow="fold")
    for r in rows:
        at_k = "-" if r.pass_at_k is None else f"{r.pass_at_k:.1%}"
        partial = f" of {r.packages_at_k:,}" if r.pass_at_k is not None and r.packages_at_k < r.packages else ""
        table.add_row(_cell(r.capability), _cell(r.model), f"{r.packages:,}", f"{r.samples:,}",
                      _rate(r.mean_pass_rate), f"{at_k} (k={r.k}){partial}", f"{r.mean_score:.3f}",
                      f"{r.unsolved:,}")
    console.print(table)
    if any(r.unsolved for r in rows):
        _line("packages no rollout passes, with the checks that failed most: `synth catalog unsolved`")


# --------------------------------------------------------------------------- unsolved


@catalog_app.command()
def unsolved(
    model: str = typer.Option(None, "--model", metavar="M", show_default=False,
                              help="Packages no rollout of model M passes (default: of any model)."),
    limit: int = typer.Option(50, "--limit", min=0, help="Packages to list at most (0: all)."),
    top: int = typer.Option(3, "--top", min=1, help="Checks to show per package, most failures first."),
    catalog: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Packages rolled out that no rollout passes, with the checks that failed most: too hard, or a
    grader that fails correct agents (the best lead to an over-constrained check). --json lists
    every failed check of each package."""
    reader = _reader(catalog)
    if model is not None and model not in (known := reader.rollout_models()):
        raise UserError(f"--model {model}: no rollouts of that model in {catalog}; "
                        + (f"models with rollouts: {', '.join(known)}" if known else "run `synth rollout` first"))
    result = reader.unsolved(model, limit or None)
    if as_json:
        emit_json(result.model_dump(mode="json"))
        return
    print_unsolved(result, top)


def print_unsolved(result: UnsolvedReport, top: int) -> None:
    """The count line, the check kinds that failed most over every unsolved package, then a table
    per capability with a row per package listed: its workflow, samples, best score and its ``top``
    failed checks (id and failures)."""
    of = f" of model {result.model}" if result.model else ""
    _line(f"unsolved: {result.unsolved:,} of {counted(result.rolled_out, 'package')} rolled out, where no rollout{of} passes"
          + (f" ({len(result.packages):,} listed; raise --limit)" if len(result.packages) < result.unsolved else ""))
    if not result.unsolved:
        return
    table = new_table(title="check kinds that failed most (samples of unsolved packages)")
    for col in ("rule", "kind", "failures", "packages"):
        table.add_column(col, justify="right" if col in ("failures", "packages") else "left")
    for c in result.by_kind:
        table.add_row(_cell(c.rule), _cell(c.kind), f"{c.failures:,}", f"{c.packages:,}")
    console.print(table)
    by_capability: dict[str, list[UnsolvedPackage]] = {}
    for p in result.packages:
        by_capability.setdefault(_cell(p.capability), []).append(p)
    for capability, packages in by_capability.items():  # a table each: the rows stay one line from 120 columns
        table = new_table(title=f"unsolved {capability} packages")
        for col in ("package", "workflow", "samples", "best", "checks failed most: failures"):
            table.add_column(col, justify="right" if col in ("samples", "best") else "left", overflow="fold")
        for p in packages:
            failed = ", ".join(f"{c.id}{' (safety)' if c.rule == 'safety' else ''} {c.failures}"
                               for c in p.failed_checks[:top])
            table.add_row(_cell(p.package_id), _cell(p.workflow), f"{p.samples:,}", f"{p.best_score:.3f}",
                          _cell(failed or None))
        console.print(table)


def print_generated(result: CatalogStats) -> None:
    """Repairs, LLM use, sft_ready and the per-workflow, repair, rejection and review tables."""
    repairs = (f"{result.repaired:,} of {result.first_rejected:,} slots whose first attempt was rejected "
               f"({_rate(result.repair_rate)})" if result.first_rejected else "none needed")
    llm = (f"{counted(result.llm_calls, 'call')}, {result.prompt_tokens + result.completion_tokens:,} tokens, "
           f"{result.llm_latency_s:,.1f} s" if result.llm_calls else "no calls")
    _line(f"repairs: {repairs}; LLM: {llm}")
    unknown = (f"; {result.accepted_sft_unknown:,} recorded before sft_ready was (checked at export)"
               if result.accepted_sft_unknown else "")
    _line(f"sft_ready: {counted(result.accepted_sft_ready, 'accepted package')}; not sft_ready: "
          f"{result.accepted_not_sft_ready:,} (left out of `synth export --format sft`){unknown}")
    table = new_table(title="generated rows by capability and workflow")
    for col in ("capability", "workflow", "accepted", "rejected", "acceptance"):
        table.add_column(col, justify="left" if col in ("capability", "workflow") else "right", overflow="fold")
    for row in result.by_workflow:
        table.add_row(_cell(row.capability), _cell(row.workflow), f"{row.accepted:,}", f"{row.rejected:,}",
                      _rate(row.acceptance_rate))
    console.print(table)
    repaired = [r for r in result.repairs if r.first_rejected]
    if repaired:
        table = new_table(title="repairs: slots whose first attempt was rejected")
        for col in ("capability", "workflow", "first rejected", "repaired", "repair rate"):
            table.add_column(col, justify="left" if col in ("capability", "workflow") else "right", overflow="fold")
        for r in repaired:
            table.add_row(_cell(r.capability), _cell(r.workflow), f"{r.first_rejected:,}", f"{r.repaired:,}",
                          _rate(r.repair_rate))
        console.print(table)
    if result.rejections:
        print_rejections(result.rejections, title="rejection codes of generated rows")
    if result.review:
        print_reviews(result.review)
    if result.readers:
        table = new_table(title="readers: answers to the verifier's readings of requests")
        for col in ("reader", "answer", "claims", "cached", "prompt tokens", "completion tokens"):
            table.add_column(col, justify="left" if col in ("reader", "answer") else "right")
        for a in result.readers:
            table.add_row(_cell(a.reader), a.answer, f"{a.claims:,}", f"{a.cached:,}", f"{a.prompt_tokens:,}",
                          f"{a.completion_tokens:,}")
        console.print(table)


def _line(text: str) -> None:
    """Plain text (no markup, no highlighting), wrapped at the console's width."""
    console.print(text, markup=False, highlight=False)


def print_reviews(rows: list[ReviewCount]) -> None:
    table = new_table(title="review notes (never refusals): readings no witness proves")
    for col in ("code", "packages", "accepted", "notes", "what it flags"):
        table.add_column(col, justify="right" if col in ("packages", "accepted", "notes") else "left")
    for r in rows:
        table.add_row(_cell(r.code), f"{r.packages:,}", f"{r.accepted:,}", f"{r.notes:,}", _cell(r.description))
    console.print(table)


# --------------------------------------------------------------------------- rejections


@catalog_app.command()
def rejections(
    catalog: Path = CatalogOpt,
    claims: bool = typer.Option(False, "--claims", help="List the findings that rest on a reading of the request: "
                                                        "the claim and the reader's answer (refusals and the notes "
                                                        "a reader did not confirm), newest first."),
    run: int = typer.Option(None, "--run", metavar="ID", min=1, show_default=False, help="With --claims: run ID only."),
    limit: int = typer.Option(50, "--limit", min=1, help="With --claims: at most this many."),
    as_json: bool = JsonOpt,
) -> None:
    """Reason codes of rejected rows, most frequent first ("on a reading": refusals resting on a
    reading of the request, each with its claim; --claims lists them)."""
    if claims:
        found = _reader(catalog).claims(run, limit)
        if as_json:
            emit_json([c.model_dump(mode="json") for c in found])
            return
        from pipeline.core.claim_text import claim_lines

        for c in found:
            _line(f"row {c.row_id} {c.package_id or '-'} {c.kind} {c.code}: {c.message}")
            for line in claim_lines(c.claim, c.reading):
                _line(f"    {line}")
        _line(f"{counted(len(found), 'finding')} resting on a reading of the request")
        return
    result = _reader(catalog).rejections()
    if as_json:
        emit_json([r.model_dump() for r in result])
        return
    print_rejections(result, title=counted(len(result), "rejection code"))


def print_rejections(rows: list[RejectionCount], title: str) -> None:
    table = new_table(title=title)
    for col in ("code", "packages", "findings", "on a reading", "what it catches"):
        table.add_column(col, justify="right" if col in ("packages", "findings", "on a reading") else "left")
    for r in rows:
        table.add_row(_cell(r.code), f"{r.packages:,}", f"{r.findings:,}", f"{r.on_reading:,}", _cell(r.description))
    console.print(table)


# --------------------------------------------------------------------------- query


@catalog_app.command()
def query(
    sql: str = typer.Argument(..., help="One read-only SELECT over the catalog's tables and views."),
    max_rows: int = typer.Option(1000, "--max-rows", min=0, help="Rows to fetch at most (0: all)."),
    timeout: float = typer.Option(DEFAULT_QUERY_TIMEOUT_S, "--timeout", min=0,
                                  help="Seconds the query may run, fetching included, before it is stopped (0: no limit)."),
    memory_limit: str = typer.Option(DEFAULT_QUERY_MEMORY, "--memory-limit",
                                     help=f"DuckDB memory the query may use, e.g. 512MB or 4GB (no spilling to disk; "
                                          f"{QUERY_THREADS} threads)."),
    catalog: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Run one read-only SELECT, sandboxed: no files, no settings, at most --timeout seconds and
    --memory-limit of memory. Writes, DDL, COPY, ATTACH, INSTALL/LOAD, SET... are refused."""
    result = _reader(catalog).query(sql, max_rows=max_rows or None, timeout=timeout or None, memory_limit=memory_limit)
    if as_json:
        emit_json(result.model_dump(mode="json"))
        return
    print_query(result)


def print_query(result: QueryResult) -> None:
    table = new_table(title=counted(len(result.rows), "row") + (" (more not shown; raise --max-rows)" if result.truncated else ""))
    for col in result.columns:
        table.add_column(col, overflow="fold")
    for row in result.rows:
        table.add_row(*(_cell(v, "NULL") for v in row))
    console.print(table)


# --------------------------------------------------------------------------- runs


@catalog_app.command()
def runs(catalog: Path = CatalogOpt, as_json: bool = JsonOpt) -> None:
    """Every run: id, name, capability and generator, status, attempts accepted (of the target, with
    what `synth regen` added beneath) / rejected / failed, start time; and which runs `synth run
    --resume ID` can continue. --json adds the model, slots and finish time."""
    result = _reader(catalog).run_counts()
    if as_json:
        emit_json([r.model_dump(mode="json") for r in result])
        return
    print_runs(result)


def print_runs(rows: list[RunCounts]) -> None:
    """Two lines per run (more when its name is long), readable from 80 columns: the capability and
    generator go beneath the name, the start time drops the year and the seconds."""
    from rich import box  # with the table: loading rich.box is left to commands that print one

    table = new_table(title=counted(len(rows), "run"), box=box.SIMPLE_HEAD, show_edge=False, collapse_padding=True)
    table.add_column("id", justify="right", no_wrap=True)
    table.add_column("name", overflow="fold", min_width=12)
    table.add_column("status", no_wrap=True)
    for col in ("accepted", "rejected", "failed"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("started UTC", no_wrap=True)
    for r in rows:
        accepted = f"{r.accepted:,}" if r.target is None else f"{r.accepted - r.regenerated:,} of {r.target:,}"
        if r.regenerated:  # what regeneration added, apart: the run's own count stays "of" its target
            accepted += f"\n[dim]+{r.regenerated:,} regen[/]"
        made = ", ".join(_cell(v) for v in (r.capability, r.generator) if v)
        table.add_row(str(r.id), f"{_cell(r.name)}\n[dim]{made}[/]",
                      _cell(r.status), accepted, f"{r.rejected:,}", f"{r.failed:,}", r.started.strftime("%m-%d %H:%M"))
    console.print(table)
    resumable = [str(r.id) for r in rows if r.resumable]
    if resumable:
        _line(f"below target: {', '.join(resumable)}; continue one with `synth run --resume ID`")


# --------------------------------------------------------------------------- show


@catalog_app.command()
def show(
    key: str = typer.Argument(..., help="A package id (pkg-...) or a catalog row number."),
    package_out: Path = typer.Option(None, "--package-out", metavar="FILE", show_default=False,
                                     help="Also write the package to FILE, a package file for `synth play` "
                                          "(replay a witness with `synth play FILE --witness ...`)."),
    catalog: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Every row of one package (or one row): verdict, refusals, review notes, SFT losses with their
    witnesses, LLM calls; the package with --json. Each row with a witnessed refusal says how to replay it."""
    records = _reader(catalog).show(key)
    if not records:
        raise UserError(f"no package id or row {key!r} in {catalog}; "
                           "`synth catalog query \"SELECT row_id, id FROM packages\"` lists them")
    if package_out is not None:
        write_package(records, package_out)
    if as_json:
        emit_json([r.model_dump(mode="json") | {"notes": record_notes(r)} for r in records])
        return
    for record in records:
        print_record(record, catalog)
    if package_out is not None:
        console.print(f"package written to {package_out}", markup=False, highlight=False)


def write_package(records: list[PackageRecord], out: Path) -> None:
    """Write the package the rows hold (one package: rows of one id hold the same content) to ``out``."""
    package = next((r.package for r in records if r.package is not None), None)
    if package is None:
        raise UserError(f"row {records[0].row_id} holds no package (a generation failure); nothing to write "
                           f"to {out}")
    try:
        out.write_text(json.dumps(package, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}; pass --package-out with a path you can "
                           "write") from exc


_KIND_TITLES = {
    "refusal": "refusals",
    "review": "review notes (not refusals: no witness proves them)",
    "sft": "SFT losses (not a refusal: the package is not sft_ready)",
}


def record_notes(record: PackageRecord) -> list[str]:
    """What the row's package says of its verification beyond its findings: that the rules' English
    readings did not apply to a request in another language (``readers.language_note``)."""
    from pipeline.verify.readers import language_note

    request = (record.package or {}).get("request")
    note = language_note(str(request.get("language", "en"))) if isinstance(request, dict) else None
    return [note] if note else []


def print_record(record: PackageRecord, catalog: Path | None = None) -> None:
    from pipeline.core.paths import DEFAULT_CATALOG

    fields = new_table(title=f"row {record.row_id}: {record.id or '(no package)'} ({record.status})", show_header=False)
    fields.add_column("field", style="bold")
    fields.add_column("value", overflow="fold")
    for name in ("run", "slot", "attempt", "parent", "capability", "workflow", "difficulty", "services", "score",
                 "step_count", "tool_count", "turn_count", "generator", "verifier_version", "sft_ready",
                 "review_codes", "created", "request"):
        fields.add_row(name, _cell(getattr(record, name)))
    console.print(fields)
    for note in record_notes(record):
        console.print(f"note: {note}", markup=False, highlight=False)
    replayable = 0
    for kind, title in _KIND_TITLES.items():
        found = [f for f in record.findings if f.kind == kind]
        if not found:
            continue
        table = new_table(title=title)
        for col in ("code", "message", "step", "check", "witness"):
            table.add_column(col, overflow="fold")
        for f in found:
            replay = None
            if kind == "refusal" and f.witness is not None:
                replay, replayable = replayable, replayable + 1
            table.add_row(_cell(f.code), _cell(f.message), _cell(f.step), _cell(f.check_id), _witness_cell(f, replay))
        console.print(table)
    if replayable and record.id is not None:
        where = "" if catalog is None or catalog == DEFAULT_CATALOG else f" --catalog {catalog}"
        pick = "0" if replayable == 1 else f"N (0 to {replayable - 1}, as above)"
        console.print(f"replay a witness: synth catalog show {record.row_id}{where} --package-out {record.id}.json "
                      f"--json > row-{record.row_id}.json, then synth play {record.id}.json --witness "
                      f"row-{record.row_id}.json --finding {pick}", markup=False, highlight=False, soft_wrap=True)
    if record.llm_calls:
        calls = new_table(title="LLM calls")
        for col in ("model", "prompt tokens", "completion tokens", "latency s", "status", "error"):
            calls.add_column(col, overflow="fold")
        for c in record.llm_calls:
            calls.add_row(_cell(c.model), str(c.prompt_tokens), str(c.completion_tokens), f"{c.latency_s:.2f}",
                          _cell(c.status), _cell(c.error))
        console.print(calls)
    if record.package is not None:
        console.print("the full package: add --json", style="dim")


def _witness_cell(finding: FindingRecord, replay: int | None) -> str:
    """A finding's witness in a few words: which agent, its claim, its score against its threshold,
    whether that holds, how many actions; and the ``--finding`` number that replays it."""
    w = finding.witness
    if w is None:
        return "-"
    relation = "at or above" if w.score >= w.threshold else "below"
    number = "" if replay is None else f"--finding {replay}: "
    return escape(f"{number}{w.agent} agent {w.name}: {w.claim}; scores {w.score:.3f}, {relation} {w.threshold:.3f} "
                  f"({'holds' if w.holds else 'does not hold'}); {counted(len(w.actions), 'action')}")


# --------------------------------------------------------------------------- export


def export(
    fmt: str = typer.Option(..., "--format", metavar="[" + "|".join(EXPORT_FORMATS) + "]", help="Output format."),
    out: Path = typer.Option(None, "--out", show_default=False,
                             help="The file to write, replaced atomically (clawenvkit, openenv: a new or empty "
                                  "folder). Default: output/packages.jsonl, output/packages.parquet, "
                                  "output/sft.jsonl, output/clawenvkit/ or output/openenv/."),
    where: str = typer.Option(None, "--where", help="One SQL boolean over `packages` columns and audit_label, e.g. "
                                                    "\"turn_count > 0\" or \"audit_label = 'defective'\"."),
    status: str = typer.Option("accepted", "--status", metavar="[accepted|rejected|all]", help="Rows to export."),
    obs_limit: int = typer.Option(1_000, "--obs-limit", min=1,
                                  help="sft: characters of each tool observation kept."),
    sample_budget: int = typer.Option(40_000, "--sample-budget", min=1,
                                      help="sft: samples longer than this many characters are left out."),
    pass_band: str = typer.Option(None, "--pass-band", metavar="LOW:HIGH", show_default=False,
                                  help="Only packages whose pass rate for --model lies in [LOW, HIGH], e.g. 0.2:0.8."),
    model: str = typer.Option(None, "--model", metavar="M", show_default=False,
                              help="The model of --pass-band; with --from rollouts, its rollouts only."),
    source: str = typer.Option("reference", "--from", metavar="[reference|rollouts]",
                               help="sft: the packages' reference trajectories, or their passing rollouts."),
    min_score: float = typer.Option(None, "--min-score", show_default=False,
                                    help="--from rollouts: rollouts scoring at least this (default and only "
                                         "choice: full marks, 1.0, the pass line)."),
    min_weight_share: float = typer.Option(None, "--min-weight-share", metavar="S", show_default=False,
                                           help="clawenvkit: write a task only if it carries at least this share "
                                                "of its package's grading weight (default 1.0: all of it)."),
    below_pass_line: bool = typer.Option(False, "--below-their-pass-line",
                                         help="clawenvkit: write a task only if every one of synth's wrong agents "
                                              "gets a final score below ClawEnvKit's 0.5 pass line there (their "
                                              "grader gives partial credit, so mostly answer-only tasks remain)."),
    audited: bool = typer.Option(False, "--audited",
                                 help="Only packages people labelled accept (`synth audit label`: the majority "
                                      "of the annotators' latest labels)."),
    catalog: Path = CatalogOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Export catalog rows (accepted by default): jsonl/parquet datasets ready for Hugging Face
    `datasets`, sft chat samples, a folder of ClawEnvKit task YAML, or an OpenEnv environment folder
    (openenv.yaml, the packages, the server app and the client module). --pass-band keeps the packages
    a model passes sometimes (the RL-useful ones); --format sft --from rollouts writes the passing
    rollouts' own conversations (rejection sampling)."""
    from pipeline import export_catalog
    from pipeline.cli.progress import CountProgress
    from pipeline.core.training_format import Policy

    policy = Policy(obs_limit=obs_limit, sample_budget=sample_budget)
    with CountProgress("exported", "rows", as_json) as progress:
        summary = export_catalog(_reader(catalog), fmt, out, where=where,
                                 status=cast("StatusFilter", status),  # an unknown one: a CatalogError
                                 policy=policy, on_progress=progress.update, pass_band=pass_band, model=model,
                                 source=cast("Source", source),  # an unknown one: a CatalogError
                                 min_score=min_score, min_weight_share=min_weight_share, audited=audited,
                                 below_pass_line=below_pass_line)
    if as_json:
        emit_json(summary.model_dump(mode="json"))
        return
    print_export(summary)


def print_export(summary: ExportSummary) -> None:
    """The summary line; for sft, the packages left out by reason; for clawenvkit, the checks left
    out grouped by kind and reason."""
    if summary.format == "clawenvkit":
        from pipeline.cli.interop import print_clawenvkit_export

        print_clawenvkit_export(summary)
        return
    left_out = summary.details.get("left_out") or []
    skipped, reasons = summary.details.get("skipped") or {}, summary.details.get("reasons") or {}
    details = "".join(f", {k}: {_cell(v)}" for k, v in summary.details.items()
                      if k not in ("left_out", "skipped", "reasons") and v not in ({}, [], None))
    what = counted(summary.rows, f"{summary.status} row") if summary.source == "reference" else \
        counted(summary.rows, "passing rollout")
    band = (f" (packages whose pass rate for {summary.model} lies in {summary.pass_band[0]:g}..{summary.pass_band[1]:g})"
            if summary.pass_band else "") + (" (people accepted them)" if summary.audited else "")
    console.print(f"wrote {what} as {summary.format} to {summary.path}{band}{details}",
                  markup=False, highlight=False)
    if skipped:
        left = "package" if summary.source == "reference" else "rollout"
        table = new_table(title=f"{counted(sum(skipped.values()), left)} left out")
        for col in ("reason", "count", "why"):
            table.add_column(col, justify="right" if col == "count" else "left", overflow="fold")
        for reason, n in skipped.items():
            table.add_row(_cell(reason), f"{n:,}", _cell(reasons.get(reason)))
        console.print(table)
    if left_out:
        table = new_table(title="checks left out (no ClawEnvKit equivalent; each file lists its own)")
        for col in ("kind", "checks", "tasks", "weight", "why"):
            table.add_column(col, justify="right" if col in ("checks", "tasks", "weight") else "left", overflow="fold")
        for g in left_out:
            table.add_row(_cell(g["kind"]), f"{g['checks']:,}", f"{g['tasks']:,}", f"{g['weight']:g}",
                          _cell(g["reason"]))
        console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(catalog_app, name="catalog", short_help="Curate the catalog: stats, runs, query, show, rejections, unsolved.")
    app.command()(export)

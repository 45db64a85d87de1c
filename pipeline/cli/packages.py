"""``synth services``, ``synth schema``, ``synth play`` and ``synth verify``: commands on packages
and the services they run against, no catalog involved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from pipeline.cli.options import (
    JsonOpt,
    ReaderBaseUrlOpt,
    ReaderModelOpt,
    ReaderOpt,
    VerboseOpt,
    console,
    emit_json,
    err_console,
    load_package_file,
    new_table,
)
from pipeline.core.errors import UserError, first_validation_error
from pipeline.core.wording import counted
from pipeline.verify.limits import DEFAULT_TIME_LIMIT_S

if TYPE_CHECKING:
    from rich.console import Console

    from pipeline.core.grading import ScoreReport
    from pipeline.core.io import UnreadableDocument
    from pipeline.core.jsonvalues import ShapeError
    from pipeline.core.outcomes import Finding, Verdict
    from pipeline.core.package import TaskPackage
    from pipeline.core.trajectory import Trajectory


def services(
    profile: str = typer.Option("default", "--profile", metavar="<name>",
                                help="Service profile: default, or claw (ClawEnvKit's services)."),
    as_json: bool = JsonOpt,
) -> None:
    """List the mock services of a profile, their collections and operations."""
    from pipeline.core.services import catalogue, default_tool_name, profile_names

    if profile not in profile_names():
        raise UserError(f"--profile {profile}: not a service profile; use one of: {', '.join(profile_names())}")
    data: list[dict[str, Any]] = []  # JSON: one object per service
    for spec in catalogue(profile).values():
        data.append({
            "name": spec.name,
            "description": spec.description,
            "collections": {
                name: {"record": c.record, "id_field": c.id_field, "id_format": c.id_format, "fields": c.fields}
                for name, c in spec.collections.items()
            },
            "operations": [
                {"name": op.name, "tool": default_tool_name(spec.name, op, profile), "endpoint": op.endpoint,
                 "access": op.access, "collection": op.collection, "effect": op.effect,
                 "description": op.description, "parameters": op.parameters}
                for op in spec.operations
            ],
        })
    if as_json:
        emit_json(data)
        return
    table = new_table(title=f"{len(data)} services, {sum(len(s['operations']) for s in data)} operations")
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
    witness_file: Path = typer.Option(None, "--witness", metavar="W", show_default=False,
                                      help="Replay this witness instead of the reference: a JSON file holding a "
                                           "witness, a finding, a verdict, or the output of `synth verify --json` "
                                           "or `synth catalog show --json`."),
    finding: int = typer.Option(None, "--finding", metavar="N", min=0, show_default=False,
                                help="With --witness and verdicts: replay the N-th refusal that has a witness "
                                     "(default 0)."),
    as_json: bool = JsonOpt,
) -> None:
    """Run a package's reference solution (or, with --witness, a witness's actions) and show the
    trajectory and the score per check.

    Exit 0 when the reference passes (the witness holds), 1 when it fails (does not hold), 2 for
    unreadable input."""
    from pipeline.env import play_reference

    if finding is not None and witness_file is None:
        raise UserError("--finding picks a refusal of the verdict given with --witness; pass --witness too")
    package = load_package_file(package_file)
    if witness_file is not None:
        play_witness(package, witness_file, finding or 0, as_json)
        return
    from pipeline.verify.readers import language_note

    env = play_reference(package)
    traj, report = env.trajectory(), env.score()
    notes = [n for n in [language_note(package.request.language)] if n]
    if as_json:
        emit_json({"id": package.compute_id(), "score": report.score, "passed": report.passed,
                   **_episode_data(report, traj), "notes": notes})
        _exit_if_failed(report.passed, report.score)
        return
    _print_episode(package, traj, report)
    for note in notes:
        console.print(f"note: {note}", markup=False, highlight=False)
    verdict = "[green]PASS[/]" if report.passed else "[red]FAIL[/]"
    console.print(f"score {report.score:.3f} {verdict}")
    _exit_if_failed(report.passed, report.score)


def play_witness(package: TaskPackage, witness_file: Path, index: int, as_json: bool) -> None:
    """Replay the witness ``witness_file`` holds for ``package`` in a fresh episode and grade it;
    exit 1 when the replayed score does not prove the finding."""
    from pydantic import ValidationError

    from pipeline import Grader, play_actions
    from pipeline.cli.witnesses import read_witness
    from pipeline.core.claim_text import claim_lines

    package_id = package.compute_id()
    chosen = read_witness(witness_file, package_id, index)
    witness = chosen.witness
    try:
        traj = play_actions(package, witness.actions)
    except ValidationError as exc:
        raise UserError(f"{witness_file}: the witness holds an action that is not one: "
                        f"{first_validation_error(exc)}") from None
    report = Grader(package).score(traj)
    replayed = witness.model_copy(update={"score": report.score})
    relation = "at or above" if report.score >= witness.threshold else "below"
    conclusion = (f"{witness.agent} agent {witness.name} scores {report.score:.3f}, {relation} "
                  f"{witness.threshold:.3f}: the finding {'holds' if replayed.holds else 'does not hold'}")
    if as_json:
        emit_json({
            "id": package_id, "verdict_id": chosen.verdict_id,
            "finding": None if chosen.finding is None else {**chosen.finding, "index": chosen.index, "of": chosen.of},
            "witness": witness.model_dump(mode="json"),
            "score": report.score, "holds": replayed.holds, "conclusion": conclusion,
            **_episode_data(report, traj),
        })
    else:
        _print_episode(package, traj, report)
        if chosen.verdict_id is not None and chosen.verdict_id != package_id:
            console.print(f"note: the verdict is of {chosen.verdict_id}; this package is {package_id} (changed since?)",
                          style="dim", markup=False, highlight=False)
        described = chosen.describe()
        if described:
            console.print(f"finding: {described}", markup=False, highlight=False, soft_wrap=True)
        console.print(f"witness: {witness.agent} agent {witness.name}: {witness.claim}; "
                      f"{counted(len(witness.actions), 'action')} played; recorded score {witness.score:.3f}", markup=False, highlight=False,
                      soft_wrap=True)
        if chosen.finding is not None:
            for line in claim_lines(chosen.finding.get("claim"), chosen.finding.get("reading")):
                console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
        console.print(f"score {report.score:.3f}", highlight=False)
        console.print(conclusion, markup=False, highlight=False, soft_wrap=True)
    if not replayed.holds:
        raise typer.Exit(1)


def _episode_data(report: ScoreReport, traj: Trajectory) -> dict[str, Any]:
    from pipeline.core.trajectory import trajectory_data

    return {"checks": [r.model_dump() for r in report.checks], "safety": [r.model_dump() for r in report.safety],
            "trajectory": trajectory_data(traj)}


def _print_episode(package: TaskPackage, traj: Trajectory, report: ScoreReport) -> None:
    """The package's title and request, the trajectory table and the per-check table."""
    console.print(f"[bold]{package.compute_id()}[/] {package.capability}/{package.workflow}")
    console.print(f"[bold]request:[/] {package.request.text}", markup=True, highlight=False)
    steps = new_table(title="trajectory")
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
    checks = new_table(title="checks")
    for col in ("check", "kind", "weight", "result", "detail"):
        checks.add_column(col)
    for r in report.checks + report.safety:
        mark = {True: "[green]pass[/]", False: "[red]fail[/]", None: "[yellow]not evaluated[/]"}[r.passed]
        checks.add_row(r.id, r.kind, f"{r.weight:.2f}" if r in report.checks else "safety", mark, r.detail)
    console.print(checks)


def _exit_if_failed(passed: bool, score: float) -> None:
    """Exit 1, saying so on stderr, when the reference does not pass."""
    if not passed:
        err_console.print(f"the reference fails (score {score:.3f}): a check or safety rule above does not pass",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def verify(
    ctx: typer.Context,
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
    require_sft: bool = typer.Option(False, "--require-sft",
                                     help="Also reject packages whose reference loses evidence under the SFT "
                                          "policy (otherwise they are accepted, marked not sft_ready)."),
    require_exportable: bool = typer.Option(
        False, "--require-exportable",
        help="Also refuse claw-profile packages ClawEnvKit's format cannot carry at full weight "
             "(not_exportable), as `synth run` does."),
    reader: str = ReaderOpt,
    reader_model: str = ReaderModelOpt,
    reader_base_url: str = ReaderBaseUrlOpt,
    verbose: int = VerboseOpt,
) -> None:
    """Verify packages. Exit 0 if all are accepted; 1 if any is rejected (a file that is not a
    package document, such as broken JSON, is rejected as schema_invalid), if verifying one raised
    (an ``error`` line for it; the others are still verified), or none was found; 2 for a path that
    cannot be read at all (missing, a broken link, not a regular file).

    Review notes (readings no witness proves, or that the reader did not confirm) and SFT losses are
    shown apart from refusals and never reject a package (SFT losses do with --require-sft). A
    refusal resting on a reading of the request shows the claim; with --reader model (or
    --reader-model) a model confirms each claim before it refuses. Replay a refusal's witness with
    `synth verify FILE --json > v.json` then `synth play FILE --witness v.json`. With -v, each
    reading of a request (counts, selections, formulas, names, facts, claims, readers' answers) is a
    debug line on stderr."""
    from pipeline.cli.options import debug_lines, reader_kind
    from pipeline.cli.progress import CountProgress
    from pipeline.core.io import read_documents
    from pipeline.runs.reading import ReadingStage, make_reader
    from pipeline.verify.dedup import MemoryDedup
    from pipeline.verify.verifier import Options, tune_collector, verify_package

    stage = ReadingStage(make_reader(reader_kind(reader), reader_model, reader_base_url))
    options = Options(obs_limit=obs_limit, sample_budget=sample_budget, time_limit_s=time_limit,
                      require_sft=require_sft, require_exportable=require_exportable)
    tune_collector()
    index = MemoryDedup() if dedup else None
    lines = Lines(console)
    documents = list(read_documents(package_files(paths), keep_going=True))
    if not documents:
        raise UserError(f"no packages in {', '.join(map(str, paths))}; pass package .json/.jsonl files or "
                        "folders holding them", exit_code=1)
    rejected = reviewed = not_ready = witnessed = crashed = 0
    ctx.with_resource(debug_lines(verbose))  # until the command ends
    try:
        with CountProgress("verified", "packages", as_json) as progress:
            for done, (source, doc) in enumerate(documents, 1):
                if isinstance(doc, dict):
                    try:
                        verdict = verify_package(doc, options, index, *stage.arguments())
                    except UserError:  # the reader's model server cannot serve: nothing more can be read
                        raise
                    except Exception as exc:  # a verifier bug costs this package's verdict, not the others'
                        crashed += 1
                        report_crash(source, exc, as_json, lines)
                        progress.update(done, len(documents), f"{rejected} rejected")
                        continue
                    if index is not None and verdict.accepted:
                        index.add_document(doc, verdict.id)
                else:
                    verdict = unreadable_verdict(doc)
                rejected += not verdict.accepted
                reviewed += bool(verdict.review)
                not_ready += not verdict.sft_ready
                witnessed += any(f.witness is not None for f in verdict.findings)
                report_verdict(source, verdict, as_json, lines)
                progress.update(done, len(documents), f"{rejected} rejected")
    finally:
        stage.close()
    if not as_json:
        unverified = f", {crashed} not verified (the verifier raised)" if crashed else ""
        console.print(f"{len(documents) - rejected - crashed} accepted, {rejected} rejected{unverified} of "
                      f"{len(documents)}; {reviewed} with review notes, {not_ready} not sft_ready", highlight=False)
        if witnessed:
            console.print("replay a refusal's witness: synth verify FILE --json > v.json, then "
                          "synth play FILE --witness v.json --finding N", markup=False, highlight=False, soft_wrap=True)
    if rejected or crashed:
        raise typer.Exit(1)


def report_crash(source: str, exc: Exception, as_json: bool, lines: Lines) -> None:
    """The line of a package whose verification raised (a bug of the verifier, not a verdict on the
    package): an ``error`` line and the exception beneath, or with ``--json`` a line ``{"source", "accepted": false,
    "error"}``. The traceback is a debug line (``-vv``)."""
    import logging

    error = f"{type(exc).__name__}: {exc}"
    logging.getLogger(__name__).debug("verification of %s raised", source, exc_info=exc)
    if as_json:
        emit_json({"source": source, "accepted": False, "error": error})
        return
    lines.say(("error", "red"), "  verification raised  ", (source, "dim"))
    lines.say(f"    {error}: a bug of the verifier, not a verdict on the package; report it with this file")


def unreadable_verdict(problem: ShapeError | UnreadableDocument) -> Verdict:
    """The verdict on a document ``read_documents`` could not read: rejected as schema_invalid,
    with the reason (``not valid JSON (...)``, ``JSON nested deeper than 64 levels``)."""
    from pipeline.core.io import UnreadableDocument
    from pipeline.verify.verifier import unparsable_verdict

    return unparsable_verdict(problem.reason if isinstance(problem, UnreadableDocument) else f"JSON {problem}")


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


Part = str | tuple[str, str]
"""Text of a line, plain or with a rich style (``("accepted", "green")``)."""


class Lines:
    """Lines of text on a rich console's stdout. Where the console shows no styles (not a
    terminal) and a line fits its width as it is (printable ASCII, no wider than the console), the
    text is written directly: the bytes rich would write, without rich's rendering, which costs
    some 40 times more. Any other line goes through rich. Whether the console shows styles, and
    its width, are read once (reading them costs more than writing a line)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.plain_width = console.width if console.color_system is None and not console.is_terminal else -1

    def say(self, *parts: Part) -> None:
        """Print one line of ``parts`` (no markup read in them, nothing highlighted)."""
        plain = "".join(p if isinstance(p, str) else p[0] for p in parts)
        if len(plain) <= self.plain_width and plain.isascii() and plain.isprintable():
            self.console.file.write(plain + "\n")
            return
        from rich.text import Text

        self.console.print(Text.assemble(*parts), highlight=False)


def report_verdict(source: str, verdict: Verdict, as_json: bool, lines: Lines | None = None) -> None:
    from pipeline.core.claim_text import claim_lines

    """One verdict: a JSON line (the verdict, its ``source`` and ``review_codes``), or a line with
    its notes, refusals (with their witnesses), review notes and SFT losses beneath, one line each,
    on ``lines`` (default: stdout's)."""
    if as_json:
        emit_json({"source": source, **verdict.model_dump(mode="json"), "review_codes": verdict.review_codes})
        return
    lines = lines or Lines(console)
    score = "-" if verdict.score is None else f"{verdict.score:.3f}"
    head: list[Part] = [verdict.id, "  "]
    head += [("accepted", "green")] if verdict.accepted else [("rejected", "red"), " " + ", ".join(verdict.codes)]
    if verdict.review:
        head += ["  ", ("review notes", "yellow"), " " + ", ".join(verdict.review_codes)]
    if not verdict.sft_ready:
        head += ["  ", ("not sft_ready", "yellow")]
    lines.say(*head, f"  score {score}  ", (source, "dim"))
    for note in verdict.notes:
        lines.say((f"    note: {note}", "dim"))
    witnessed = 0
    for f in verdict.findings:
        shown = ""
        if f.witness is not None:
            shown, witnessed = f" [{_witness_line(f, witnessed)}]", witnessed + 1
        lines.say(f"    {f.code.value}: {f.message}{shown}")
        for line in claim_lines(f.claim, f.reading, brief=True):
            lines.say((f"        {line}", "dim"))
    refused = [id(f) for f in verdict.findings]
    for f in verdict.review:
        lines.say(f"    review (not a refusal) {f.code.value}: {f.message}")
        for line in claim_lines(f.claim, f.reading, brief=True):
            lines.say((f"        {line}", "dim"))
    for f in verdict.sft:
        if id(f) not in refused:
            lines.say(f"    sft loss (not sft_ready) {f.code.value}: {f.message}")


def _witness_line(finding: Finding, index: int) -> str:
    """``--finding N``: the witness's agent, name and score against its threshold."""
    w = finding.witness
    assert w is not None
    relation = "at or above" if w.score >= w.threshold else "below"
    return f"--finding {index}: {w.agent} agent {w.name} scores {w.score:.3f}, {relation} {w.threshold:.3f}"


def register(app: typer.Typer) -> None:
    for command in (services, schema, play, verify):
        app.command()(command)

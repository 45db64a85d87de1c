"""``synth serve`` (one package's mock world over HTTP) and ``synth import`` (ClawEnvKit task YAML).
``synth export --format clawenvkit`` lives with the other export formats (``pipeline.interop.export``); its
summary is printed here (``print_clawenvkit_export``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from pipeline.cli.options import (
    CatalogOpt,
    JsonOpt,
    console,
    emit_json,
    err_console,
    load_package_file,
    new_table,
    serve_until_stopped,
)
from pipeline.core.distribution import install_extra
from pipeline.core.errors import UserError
from pipeline.core.paths import DEFAULT_CATALOG
from pipeline.core.wording import counted

if TYPE_CHECKING:
    from pipeline import TaskPackage
    from pipeline.interop.clawenvkit_import import ImportResult

DEFAULT_PORT = 8765


def resolve_package(arg: str, catalog: Path = DEFAULT_CATALOG) -> TaskPackage:
    """The package a command-line argument names: a package JSON file, or a package id in the catalog."""
    from pipeline import Catalog, TaskPackage

    path = Path(arg)
    if path.is_file():
        return load_package_file(path)
    if not arg.startswith("pkg-"):
        raise UserError(f"{arg}: no such package file or package id; pass a .json file or a pkg-… id")
    with Catalog.open(catalog, read_only=True) as reader:
        records = [r for r in reader.show(arg) if r.package is not None]
    if not records:
        raise UserError(f"{arg}: no such package in {catalog}; `synth catalog query \"SELECT id FROM "
                        f"accepted_packages LIMIT 5\"` lists some")
    accepted = [r for r in records if r.status == "accepted"]
    return TaskPackage.model_validate((accepted or records)[0].package)


# --------------------------------------------------------------------------- serve


def serve(
    package: str = typer.Argument(..., metavar="PACKAGE", help="A task package JSON file, or a package id (pkg-...) in the catalog."),
    catalog: Path = CatalogOpt,
    port: int | None = typer.Option(None, "--port", min=0, max=65535, metavar="<port>",
                                    help=f"Port to listen on (0: any free port; default {DEFAULT_PORT}, "
                                         "or stdio with --mcp)."),
    host: str = typer.Option("127.0.0.1", "--host", metavar="<address>", help="Address to listen on (loopback unless --allow-remote is given)."),
    allow_remote: bool = typer.Option(False, "--allow-remote", help="Allow a non-loopback --host."),
    user_model: str | None = typer.Option(None, "--user-model", metavar="<model>",
                                          help="A chat model plays the user at /user/ask (rollouts only; "
                                               "verification always uses the deterministic user)."),
    user_base_url: str | None = typer.Option(None, "--user-base-url", metavar="<url>",
                                             help="OpenAI-compatible server of --user-model (default: OpenAI; "
                                                  "OPENAI_API_KEY is read from the environment)."),
    mcp: bool = typer.Option(False, "--mcp", help="Serve the package as an MCP server: stdio, or streamable "
                                                   "HTTP on loopback at /mcp with --port (needs the mcp extra)."),
    openenv: bool = typer.Option(False, "--openenv", help="Serve many packages (PACKAGE: a catalog file, a package "
                                                         "file, a .jsonl of packages or a package id) as one OpenEnv "
                                                         "environment (needs the openenv extra)."),
    where: str | None = typer.Option(None, "--where", metavar="<sql>",
                                     help="With --openenv and a catalog: serve only the accepted packages this SQL "
                                          "condition on the packages columns holds for."),
    seed: int = typer.Option(0, "--seed", help="With --openenv: the seed of the shuffle resets take packages from."),
    max_sessions: int = typer.Option(64, "--max-sessions", min=1, max=4096,
                                     help="With --openenv: episodes (WebSocket sessions) served at once."),
    max_steps: int = typer.Option(50, "--max-steps", min=1,
                                  help="With --openenv: steps an episode may take (or its reference's length, if "
                                       "longer) before it ends truncated."),
    budget_tokens: int | None = typer.Option(None, "--budget-tokens", min=1,
                                             help="With --openenv: approximate tokens (UTF-8 bytes / 4) an episode "
                                                  "may exchange before it ends truncated (default 8,388,608)."),
    as_json: bool = JsonOpt,
) -> None:
    """Serve one package's mock services, simulated user and score over HTTP, or as an MCP server.

    Routes: POST /<service>/... (the operations), /<service>/audit, /<service>/reset; POST /user/ask
    (the simulated user); GET /score (the score so far, per check; POST a JSON object with an
    "answer" to grade that final answer too). With --json, the base URL and routes are printed as
    one JSON line.

    With --mcp: the package's tools, submit_answer and (with a simulated user) ask_user as MCP tools,
    the request as the prompt "task", the score as the resource synth://score (docs/environment.md,
    "MCP"). Over stdio unless --port is given; with --port, the URL is printed first (with --json,
    as one JSON line with the package id and the URL).

    With --openenv: the packages as one OpenEnv environment (reset picks a package: by package_id,
    by a where selection, or the next of the --seed shuffle; docs/environment.md, "OpenEnv"). The
    base URL is printed first (with --json, as one JSON line with the package count)."""
    from pipeline.env.http import ASK, SCORE, PackageServer

    if openenv:
        if mcp or user_model is not None or user_base_url is not None:
            raise UserError("--openenv serves with the deterministic simulated user and no MCP; leave out --mcp, "
                            "--user-model and --user-base-url")
        _serve_openenv(package, catalog, where, seed, host, DEFAULT_PORT if port is None else port, allow_remote,
                       max_sessions, max_steps, budget_tokens, as_json)
        return
    if where is not None:
        raise UserError("--where selects packages for --openenv; leave it out or add --openenv")
    pkg = resolve_package(package, catalog)
    users = None
    if user_model is not None or user_base_url is not None:
        from pipeline.env.llm_user import llm_users

        users = llm_users(user_model or "", user_base_url)
    if mcp:
        if allow_remote:
            raise UserError("--mcp serves on loopback only; leave out --allow-remote")
        _serve_mcp(pkg, host, port, users, as_json)
        return
    port = DEFAULT_PORT if port is None else port
    try:
        server = PackageServer(pkg, host, port, allow_remote=allow_remote, log_requests=not as_json, user=users)
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); pass another --port") from exc
    if as_json:
        emit_json({"package": pkg.id or pkg.compute_id(), "base_url": server.base_url, "routes": server.routes})
        sys.stdout.flush()
    else:
        table = new_table(title=f"{pkg.id or pkg.compute_id()} on {server.base_url} (POST, JSON body)")
        table.add_column("route")
        table.add_column("runs as")
        roles = {ASK: "simulated user", SCORE: "the score so far (GET too; POST an \"answer\" to grade it)"}
        for route in server.routes:
            tool = server.operations.get(route)
            table.add_row(route, escape(tool or ("(no tool)" if route in server.operations
                                                 else roles.get(route, "control"))))
        console.print(table)
        console.print(f"serving at {server.base_url}; Ctrl-C stops", highlight=False)
    serve_until_stopped(server.serve_forever, server.server_close, as_json)


def _serve_mcp(pkg: TaskPackage, host: str, port: int | None, users: Any, as_json: bool) -> None:
    """``synth serve --mcp``: stdio (nothing but the protocol on stdout), or HTTP with ``port``."""
    try:
        from pipeline.env import mcp_server
    except ImportError as exc:
        raise UserError(f"synth serve --mcp needs the MCP SDK ({exc.name or 'mcp'} is missing); "
                        f"install it with: {install_extra('mcp')} (in a checkout: pip install -e '.[mcp]')") from exc
    server = mcp_server.build_server(mcp_server.McpEpisode(pkg, user=users))
    if port is None:
        mcp_server.serve_stdio(server)
        return
    sock = mcp_server.http_socket(host, port)
    url = mcp_server.http_url(sock)
    if as_json:
        emit_json({"package": pkg.id or pkg.compute_id(), "url": url})
    else:
        console.print(f"MCP server for {pkg.id or pkg.compute_id()} at {url} (streamable HTTP); Ctrl-C stops",
                      highlight=False, soft_wrap=True)
    sys.stdout.flush()
    mcp_server.serve_http(server, sock)


def _serve_openenv(source: str, catalog: Path, where: str | None, seed: int, host: str, port: int,
                   allow_remote: bool, max_sessions: int, max_steps: int, budget_tokens: int | None,
                   as_json: bool) -> None:
    """``synth serve --openenv``: the packages ``source`` names (a catalog file and ``where``, a
    package file, or a package id in ``catalog``) as one OpenEnv server, until interrupted."""
    try:
        from pipeline.interop import openenv_server
    except ImportError as exc:
        raise UserError(f"synth serve --openenv needs OpenEnv ({exc.name or 'openenv'} is missing); install it "
                        f"with: {install_extra('openenv')} (in a checkout: pip install -e '.[openenv]')") from exc
    from pipeline.core.serving import base_url
    from pipeline.env.catalog_packages import load_packages

    path = Path(source)
    source_catalog: Path | None = None
    if path.is_file() and path.suffix.lower() not in (".json", ".jsonl"):
        source_catalog = path
        packages = load_packages(path, where)
    elif where is not None:
        raise UserError("--where selects from a catalog; pass the catalog file as PACKAGE")
    elif path.suffix.lower() == ".jsonl" and path.is_file():
        packages = _package_lines(path)
    else:
        packages = [resolve_package(source, catalog)]
    pool = openenv_server.PackagePool(packages, seed=seed, catalog=source_catalog)
    app = openenv_server.build_app(pool, max_sessions, max_steps,
                                   budget_tokens or openenv_server.DEFAULT_MAX_TOKENS)
    sock = openenv_server.listen(host, port, allow_remote)
    url = base_url(sock)
    if as_json:
        emit_json({"packages": len(pool), "base_url": url, "websocket": url.replace("http", "ws", 1) + "/ws"})
    else:
        console.print(f"OpenEnv server of {len(pool):,} package(s) at {url} (WebSocket {url.replace('http', 'ws', 1)}"
                      "/ws); Ctrl-C stops", highlight=False, soft_wrap=True)
    sys.stdout.flush()
    serve_until_stopped(lambda: openenv_server.serve(app, sock, host, allow_remote), sock.close, as_json)


def _package_lines(path: Path) -> list[TaskPackage]:
    """The packages of a JSONL file (``synth export --format jsonl`` or ``openenv``'s
    ``packages.jsonl``); a ``UserError`` naming the first line that is not one."""
    from pydantic import ValidationError

    from pipeline import load_package
    from pipeline.core.errors import first_validation_error
    from pipeline.core.io import read_documents

    packages = []
    for where, doc in read_documents([path]):
        if isinstance(doc, Exception):
            raise UserError(f"{where}: not a valid task package: {doc}")
        try:
            packages.append(load_package(doc))
        except ValidationError as exc:
            raise UserError(f"{where}: not a valid task package: {first_validation_error(exc)}") from None
    return packages


# --------------------------------------------------------------------------- import


def import_result_json(result: ImportResult) -> dict[str, Any]:
    """One import result as JSON data (the package itself under ``package``)."""
    return {
        "source": result.source,
        "task_id": result.task_id,
        "task_name": result.task_name,
        "imported": result.imported,
        "package": result.package.model_dump(mode="json") if result.package else None,
        "verdict": result.verdict.model_dump(mode="json"),
        "unmapped": [u.model_dump() for u in result.unmapped],
        "null_agent_score": result.null_agent_score,
        "clawenvkit_null_agent": (None if result.clawenvkit_null_agent is None
                                  else {**result.clawenvkit_null_agent.model_dump(),
                                        "passed": result.clawenvkit_null_agent.passed}),
    }


def import_tasks(
    paths: list[Path] = typer.Argument(..., help="Task YAML files or folders of them."),
    fmt: str = typer.Option("clawenvkit", "--format", metavar="[clawenvkit]", help="Task format."),
    catalog: Path = CatalogOpt,
    record: bool = typer.Option(True, "--record/--no-record", help="Record the imported tasks in the catalog."),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="Also a table row per task file, and each finding and check left out on a "
                                      "line of its own."),
    as_json: bool = JsonOpt,
) -> None:
    """Import other projects' tasks as packages without a reference; verify them statically, run the
    null-agent test and record them in the catalog (one run). Prints a summary: tasks by outcome,
    reason codes, checks left out (per task with --verbose or --json). Exit 0 if every file was
    imported, 1 if any could not be."""
    from pipeline import import_tasks as run_import
    from pipeline.cli.progress import CountProgress

    with CountProgress("imported", "files", as_json) as progress:
        summary = run_import(paths, fmt, catalog, record, on_progress=progress.update)
    if as_json:
        for result in summary.results:
            emit_json(import_result_json(result))
    else:
        if verbose:
            print_import_table(summary.results)
        print_import_summary(summary.results)
    if summary.run_id is not None:
        run, where = summary.run_id, "" if catalog == DEFAULT_CATALOG else f" --catalog {catalog}"
        uses = (f"; use them: `synth serve PKG_ID{where}` serves one to an agent, `synth export --format jsonl "
                f"--status rejected --where 'run = {run}'{where}` writes them out, "
                f"`load_packages(CATALOG, status='rejected', where='run = {run}')` gives them as environments"
                if any(r.imported for r in summary.results) else "")
        err_console.print(f"recorded as run {run} in {catalog}: `synth catalog stats --run {run}{where}`{uses}"
                          + ("" if as_json or verbose else "; a line per task: --verbose or --json"),
                          highlight=False, markup=False, soft_wrap=True)
    failed = sum(not r.imported for r in summary.results)
    if failed:
        err_console.print(f"{failed} of {counted(len(summary.results), 'task file')} could not be imported; "
                          "their schema_invalid findings say why", highlight=False)
        raise typer.Exit(1)


def print_import_table(results: list[ImportResult]) -> None:
    """One row per task file (task, name, profile, checks mapped, left out, the null agent's score
    by synth and by ClawEnvKit, finding codes), then each finding and each check left out on a
    line of its own."""
    table = new_table(title=counted(len(results), "task file"))
    for col in ("task", "name", "profile", "checks", "left out", "null agent (synth)", "null agent (ClawEnvKit)",
                "findings"):
        table.add_column(col, overflow="fold")
    for r in results:
        checks = str(len(r.package.checks) + len(r.package.safety)) if r.package else "-"
        null = "-" if r.null_agent_score is None else f"{r.null_agent_score:.3f}"
        theirs = r.clawenvkit_null_agent
        their_null = "-" if theirs is None else f"{theirs.final:.3f}" + (" [red]passes[/]" if theirs.passed else "")
        codes = ", ".join(r.verdict.codes) or "[green]none[/]"
        table.add_row(escape(r.task_id or r.source), escape(r.task_name or "-"),
                      r.package.service_profile if r.package else "-", checks, str(len(r.unmapped)), null,
                      their_null, codes)
    console.print(table)
    for r in results:
        for f in r.findings:
            console.print(f"{r.task_id or r.source}: {f.code.value}: {f.message}", markup=False, highlight=False)
        for u in r.unmapped:
            console.print(f"{r.task_id}: left out {u.id} ({u.kind}): {u.reason}", markup=False, highlight=False)


UNREADABLE_SHOWN = 10
"""Task files that could not be read, listed with their reason in the summary (the rest counted)."""


def print_import_summary(results: list[ImportResult]) -> None:
    """The task files by outcome, each file that could not be read with its reason (the first
    ``UNREADABLE_SHOWN``), then the reason codes (tasks carrying each) and the checks left
    out (grouped by kind and reason), a table each."""
    from collections import Counter

    from pipeline.catalog.queries import describe_code
    from pipeline.core.codes import Code

    imported = [r for r in results if r.imported]
    flagged = sum(any(c != Code.REFERENCE_ERROR.value for c in r.verdict.codes) for r in imported)
    console.print(f"{counted(len(results), 'task file')}: {len(imported):,} imported as packages without a "
                  f"reference, {len(results) - len(imported):,} could not be read as tasks",
                  markup=False, highlight=False, soft_wrap=True)
    unreadable = [r for r in results if not r.imported]
    for r in unreadable[:UNREADABLE_SHOWN]:  # why each could not be read, without --verbose too
        reason = r.verdict.findings[0].message if r.verdict.findings else "not a task"
        said = reason if reason.startswith(r.source) else f"{r.source}: {reason}"
        console.print(f"  {said}", markup=False, highlight=False, soft_wrap=True)
    if len(unreadable) > UNREADABLE_SHOWN:
        console.print(f"  … and {len(unreadable) - UNREADABLE_SHOWN:,} more (--verbose or --json lists every one)",
                      markup=False, highlight=False, soft_wrap=True)
    if imported:
        console.print("without a reference none is verified: each is stored rejected with reference_error, as "
                      f"expected; other findings: on {counted(flagged, 'task')}" + (" (below)" if flagged else ""),
                      markup=False, highlight=False, soft_wrap=True)
    floor = null_agent_line(imported)
    if floor is not None:
        console.print(floor, markup=False, highlight=False, soft_wrap=True)
    codes = Counter(code for r in results for code in dict.fromkeys(r.verdict.codes))
    if codes:
        table = new_table(title="reason codes")
        for col in ("code", "tasks", "what it catches"):
            table.add_column(col, justify="right" if col == "tasks" else "left", overflow="fold")
        for code, n in codes.most_common():
            table.add_row(code, f"{n:,}", escape(describe_code(code)))
        console.print(table)
    left_out = Counter((u.kind, u.reason) for r in results for u in r.unmapped)
    if left_out:
        tasks = Counter((u.kind, u.reason) for r in results for u in {(u.kind, u.reason): u for u in r.unmapped}.values())
        table = new_table(title=f"{counted(sum(left_out.values()), 'check')} left out")
        for col in ("kind", "checks", "tasks", "why"):
            table.add_column(col, justify="right" if col in ("checks", "tasks") else "left", overflow="fold")
        for (kind, reason), n in left_out.most_common():
            table.add_row(escape(kind), f"{n:,}", f"{tasks[kind, reason]:,}", escape(reason))
        console.print(table)


def null_agent_line(results: list[ImportResult]) -> str | None:
    """One line on what an agent that does nothing scores over the imported tasks, by synth and by
    ClawEnvKit (``clawenvkit_import.NullAgentFloors``); None when nothing was imported."""
    from pipeline.interop.clawenvkit_import import NullAgentFloors

    floors = NullAgentFloors.of(results)
    if floors is None:
        return None
    line = (f"an agent that does nothing, over the {counted(floors.tasks, 'imported task')}: synth's grader scores it "
            f"{floors.synth_mean:.3f} on average (judge not evaluated) and passes {floors.synth_passes} "
            f"(at {floors.synth_threshold:g})")
    if floors.clawenvkit_mean is not None:
        line += (f"; ClawEnvKit's grader scores it {floors.clawenvkit_mean:.3f} on average (their judge gives an "
                 f"empty answer 0.5) and passes {floors.clawenvkit_passes} (at {floors.clawenvkit_threshold:g})")
    return line


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command(name="import")(import_tasks)


# --------------------------------------------------------------------------- export --format clawenvkit


def print_clawenvkit_export(summary: Any) -> None:
    """What ``synth export --format clawenvkit`` prints (``summary``: an ``ExportSummary`` whose
    details are a ``ClawEnvKitExport``): files written and packages refused, the mean share of
    grading weight carried, one row per file with its share and what their grader gives a
    do-nothing agent and synth's best wrong agent, and the refusals by reason."""
    from pipeline.interop.clawenvkit_export import REASONS

    d = summary.details
    console.print(f"wrote {counted(summary.rows, 'ClawEnvKit task file')} to {summary.path} from "
                  f"{counted(d['packages'], 'package')}; refused {d['refused']:,}", markup=False, highlight=False)
    console.print(f"share of grading weight carried: {d['mean_share_exported']:.3f} mean over the files written, "
                  f"{d['mean_share_all']:.3f} over every package (refused ones at their would-be share); "
                  f"--min-weight-share {d['min_weight_share']:g}", markup=False, highlight=False)
    if d.get("below_pass_line"):
        console.print(f"--below-their-pass-line: refused {counted(d['refused_at_pass_line'], 'package')} where one of "
                      "synth's wrong agents reaches ClawEnvKit's 0.5 pass line (wrong_agent_passes_there)",
                      markup=False, highlight=False)
    if d["files"]:
        table = new_table(title="task files (final scores in ClawEnvKit's grader; they pass at 0.5)")
        for col in ("file", "share", "safety check added", "do-nothing", "best wrong agent", "wrong agents ≥ 0.5"):
            table.add_column(col, justify="left" if col in ("file", "safety check added", "best wrong agent") else "right",
                             overflow="fold")
        for f in d["files"]:
            best = f"{f['best_wrong_agent']} {f['best_wrong_final']:.2f}" if f["best_wrong_agent"] else ""
            table.add_row(escape(f["file"]), f"{f['share']:.3f}", escape(f["added_safety"] or ""),
                          f"{f['null_final']:.2f}", escape(best), f"{f['wrong_agents_passing']} of {f['wrong_agents']}")
        console.print(table)
    if d["refused_by_reason"]:
        table = new_table(title=f"{counted(d['refused'], 'package')} refused (each refusal's details: --json)")
        for col in ("reason", "packages", "why"):
            table.add_column(col, justify="right" if col == "packages" else "left", overflow="fold")
        for reason, n in d["refused_by_reason"].items():
            table.add_row(escape(reason), f"{n:,}", escape(REASONS.get(reason, "")))
        console.print(table)

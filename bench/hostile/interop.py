"""Hostile inputs for ``synth export`` and ``synth import``: package ids that are paths, a
``--where`` that reads files, awkward ``--out`` destinations, missing and oversized task files,
YAML bombs, ClawEnvKit layouts synth must accept, and ``synth regen`` after an import."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import yaml

from bench.hostile.catalog import catalog_in
from bench.hostile_inputs import Case, Outcome

Check = Callable[[Outcome], str | None]
TASK = {
    "task_id": "todo-001", "task_name": "Add a todo",
    "prompt": "Add a todo titled 'Book the venue'.",
    "fixtures": {"tasks": [{"id": "todo-001", "title": "Renew parking permit", "status": "open"}]},
    "tools": [{"name": "create_task", "service": "todo", "endpoint": "/todo/tasks/create"}],
    "scoring_components": [{"name": "created", "weight": 1.0, "check": {
        "type": "audit_field_equals", "service": "todo", "action": "create_task", "field": "title",
        "value": "Book the venue"}}],
    "safety_checks": [{"type": "tool_not_called", "tool_name": "delete_task"}],
}
ALIAS_BOMB = "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 9 if p else ['lol'] * 9)}]\n"
                     for p, n in zip(["", *"abcdefgh"], "abcdefghi", strict=True))


def _says(*parts: str, stream: str = "stderr") -> Check:
    def check(outcome: Outcome) -> str | None:
        text = " ".join(getattr(outcome, stream).split())  # tables wrap long lines
        missing = [p for p in parts if p not in text]
        return f"{stream} lacks {missing}: {text.strip()[:160]}" if missing else None
    return check


def _all(*checks: Check) -> Check:
    def check(outcome: Outcome) -> str | None:
        return next((problem for c in checks if (problem := c(outcome)) is not None), None)
    return check


def _only(*names: str) -> Check:
    """Nothing but ``names`` (and the catalog's files) in the work folder afterwards."""
    def check(outcome: Outcome) -> str | None:
        found = sorted(p.name for p in outcome.workdir.iterdir() if not p.name.startswith("c.duckdb"))
        return None if found == sorted(names) else f"work folder holds {found}, expected {sorted(names)}"
    return check


def _tampered(package_id: str) -> Callable[[Path], list[str]]:
    """A catalog whose accepted package carries ``package_id`` (as if edited outside synth)."""
    def setup(workdir: Path) -> list[str]:
        import duckdb

        path = catalog_in(workdir)
        with duckdb.connect(str(path)) as con:
            con.execute("UPDATE packages SET package = json_merge_patch(package, ?::JSON) WHERE status = 'accepted'",
                        [json.dumps({"id": package_id})])
        (workdir / "a" / "b").mkdir(parents=True)
        return ["export", "--format", "clawenvkit", "--out", str(workdir / "a" / "b" / "out"), "--catalog", str(path)]
    return setup


def _nothing_escaped(outcome: Outcome) -> str | None:
    escaped = [p for p in (outcome.workdir / "escaped.yaml", outcome.workdir / "a" / "escaped.yaml",
                           Path("/tmp/hostile-escaped.yaml")) if p.exists()]
    return f"wrote {escaped}" if escaped else None


def _secret_where(workdir: Path) -> list[str]:
    (workdir / "secret.csv").write_text("top-secret-value-42\n")
    where = f"CAST((SELECT column0 FROM read_csv('{workdir / 'secret.csv'}', header = false)) AS INTEGER) > 0"
    return ["export", "--format", "jsonl", "--out", str(workdir / "x.jsonl"), "--where", where,
            "--catalog", str(catalog_in(workdir))]


def _passwd_where(workdir: Path) -> list[str]:
    return ["export", "--format", "jsonl", "--out", str(workdir / "x.jsonl"), "--where",
            "EXISTS (SELECT * FROM read_csv('/etc/passwd'))", "--catalog", str(catalog_in(workdir))]


def _no_secret(outcome: Outcome) -> str | None:
    if "top-secret-value-42" in outcome.stdout + outcome.stderr or "root:" in outcome.stdout + outcome.stderr:
        return "a file's content leaked into the output"
    return "an export was written" if (outcome.workdir / "x.jsonl").exists() else None


def _export_to(out: str, fmt: str = "jsonl", prepare: Callable[[Path], None] | None = None
               ) -> Callable[[Path], list[str]]:
    def setup(workdir: Path) -> list[str]:
        if prepare is not None:
            prepare(workdir)
        args = ["export", "--format", fmt, "--catalog", str(catalog_in(workdir))]
        return args + (["--out", out] if out else [])
    return setup


def _read_only_out(workdir: Path) -> list[str]:
    (workdir / "ro").mkdir()
    (workdir / "ro").chmod(0o555)
    return ["export", "--format", "sft", "--out", str(workdir / "ro" / "sft.jsonl"), "--catalog",
            str(catalog_in(workdir))]


def _unless_root(check: Check) -> Check:
    """Root ignores permissions: the case proves something only for another user (the 'under a
    file' case covers the same code path for root)."""
    return (lambda _outcome: None) if os.geteuid() == 0 else check


def _task_file(name: str, text: str, *extra: str) -> Callable[[Path], list[str]]:
    def setup(workdir: Path) -> list[str]:
        (workdir / name).write_text(text)
        return ["import", "--format", "clawenvkit", str(workdir / name), "--catalog", str(workdir / "c.duckdb"),
                *extra]
    return setup


def _task(**changes: object) -> str:
    return yaml.safe_dump({**TASK, **changes}, sort_keys=False)


def _linked_out(workdir: Path) -> list[str]:
    (workdir / "secret").mkdir()
    (workdir / "secret" / "private.yaml").write_text(_task(prompt="SECRET-TEXT: add a todo."))
    (workdir / "tasks").mkdir()
    (workdir / "tasks" / "good.yaml").write_text(_task())
    (workdir / "tasks" / "linked.yaml").symlink_to(workdir / "secret" / "private.yaml")
    return ["import", "--format", "clawenvkit", str(workdir / "tasks"), "--catalog", str(workdir / "c.duckdb"),
            "--verbose"]


def _not_in_catalog(text: str) -> Check:
    def check(outcome: Outcome) -> str | None:
        data = b"".join(p.read_bytes() for p in outcome.workdir.glob("c.duckdb*"))
        return f"{text!r} reached the catalog" if text.encode() in data else None
    return check


def _folder_with_one_hostile(workdir: Path) -> list[str]:
    folder = workdir / "tasks"
    folder.mkdir()
    for n in range(40):
        (folder / f"t{n:02}.yaml").write_text(_task(task_id=f"todo-{n:03}"))
    (folder / "zz-hostile.yaml").write_text(_task() + "n: " + "9" * 10_000 + "\n")
    return ["import", "--format", "clawenvkit", str(folder), "--catalog", str(workdir / "c.duckdb")]


def _fifo(workdir: Path) -> list[str]:
    os.mkfifo(workdir / "pipe.yaml")
    return ["import", str(workdir / "pipe.yaml"), "--no-record"]


def _import_then(*command: str) -> Callable[[Path], list[str]]:
    """Import one unreadable file (recorded as run 1), then run ``command`` on that catalog."""
    def setup(workdir: Path) -> list[str]:
        import subprocess
        import sys

        (workdir / "bad.yaml").write_text("prompt: [\n")
        subprocess.run([sys.executable, "-m", "pipeline.cli", "import", str(workdir / "bad.yaml"), "--catalog",
                        str(workdir / "c.duckdb")], cwd=workdir, capture_output=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
        return [*command, "--catalog", str(workdir / "c.duckdb")]
    return setup


CASES = [
    # export: ids from data never become paths outside --out
    Case("export clawenvkit, package id ../../escaped", _tampered("../../escaped"), expect_code=2,
         check=_all(_says("is not of the form pkg-"), _nothing_escaped)),
    Case("export clawenvkit, package id an absolute path", _tampered("/tmp/hostile-escaped"), expect_code=2,
         check=_all(_says("is not of the form pkg-"), _nothing_escaped)),
    # export --where is sandboxed
    Case("export --where reads /etc/passwd", _passwd_where, expect_code=2,
         check=_all(_says("may read only the packages columns"), _no_secret)),
    Case("export --where leaks a file through a cast error", _secret_where, expect_code=2, check=_no_secret),
    # export --out
    Case("export --out naming an existing folder", _export_to("d", prepare=lambda w: (w / "d").mkdir()),
         expect_code=2, check=_says("is a folder; jsonl writes one file")),
    Case("export clawenvkit into a folder holding files",
         _export_to("d", "clawenvkit", prepare=lambda w: ((w / "d").mkdir(), (w / "d" / "keep.txt").write_text("x"))),
         expect_code=2, check=_all(_says("already holds files"), lambda o: None if (o.workdir / "d" / "keep.txt")
                                   .exists() else "removed the folder's file")),
    Case("export --out under a regular file",
         _export_to("plain/sft.jsonl", "sft", prepare=lambda w: (w / "plain").write_text("x")),
         expect_code=2, check=_says("cannot write", "--out")),
    Case("export --out in a read-only folder (checked when not root)", _read_only_out, expect_code=None,
         check=_unless_root(_says("cannot write"))),
    Case("export without --out lands in output/", _export_to("", "sft"), expect_code=0,
         check=_all(_only("output"), lambda o: None if (o.workdir / "output" / "sft.jsonl").is_file()
                    else "no output/sft.jsonl")),
    Case("export piped: no progress bar frames", _export_to("x.jsonl"), expect_code=0,
         check=lambda o: "stderr holds a bar frame" if "━" in o.stderr else None),
    # import: paths and files
    Case("import a missing path", lambda w: ["import", str(w / "missing.yaml"), "--catalog", str(w / "c.duckdb")],
         expect_code=2, check=_all(_says("no such file or folder"), _only())),
    Case("import a YAML alias bomb (2 KB)", _task_file("bomb.yaml", ALIAS_BOMB), expect_code=1,
         check=_says("anchors and aliases are not allowed", stream="stdout")),
    Case("import a 5 MB task file", _task_file("big.yaml", _task() + "# " + "x" * 5_000_000 + "\n"),
         expect_code=1, check=_says("larger than the 1 MiB", stream="stdout")),
    Case("import YAML nested 5,000 deep", _task_file("deep.yaml", "a: " + "[" * 5000 + "]" * 5000 + "\n"),
         expect_code=1),
    Case("import a FIFO", _fifo, expect_code=1, check=_says("not a regular file", stream="stdout")),
    Case("import a folder whose task links out of it", _linked_out, expect_code=1, max_error_lines=4,
         check=_all(_says("outside the folder", stream="stdout"), _not_in_catalog("SECRET-TEXT"))),
    Case("import a YAML integer of 10,000 digits", _task_file("digits.yaml", _task() + "n: " + "9" * 10_000 + "\n", "--verbose"),
         expect_code=1, max_error_lines=4, check=_says("cannot read the value", stream="stdout")),
    Case("import files: source holding a NUL",
         _task_file("nul.yaml", _task(files=[{"source": "a\x00.pdf", "target": "/workspace/a.pdf"}]), "--verbose"),
         expect_code=1, max_error_lines=4, check=_says("NUL character", stream="stdout")),
    Case("import a folder of 40 good tasks and one hostile", _folder_with_one_hostile, expect_code=1, max_error_lines=4,
         check=_says("40 imported", stream="stdout")),
    # import: ClawEnvKit layouts
    Case("import fixtures: [] with flat tool parameters",
         _task_file("t.yaml", _task(fixtures=[], tools=[{**TASK["tools"][0], "parameters": {  # type: ignore[index]
             "title": {"type": "string"}}, "required": ["title"]}]), "--no-record"), expect_code=0),
    Case("import tool parameters as a flat list",
         _task_file("t.yaml", _task(tools=[{**TASK["tools"][0], "parameters": [  # type: ignore[index]
             {"name": "title", "type": "string", "required": True}]}]), "--no-record"), expect_code=0),
    Case("import a task over a service synth lacks",
         _task_file("t.yaml", _task(tools=[{"name": "forecast", "service": "weather", "endpoint": "/weather/forecast"}]),
                    "--no-record"),
         expect_code=1, check=_says("service 'weather' is not a ClawEnvKit service the claw profile mirrors", stream="stdout")),
    # after an import
    Case("regen --run of an import run", _import_then("regen", "--run", "1"), expect_code=2,
         check=_says("is an import", "nothing to regenerate")),
    Case("regen of a catalog holding an import", _import_then("regen"), expect_code=0,
         check=_says("nothing to regenerate")),
    Case("run --resume of an import run", _import_then("run", "--resume", "1"), expect_code=2,
         check=_says("nothing to resume")),
]

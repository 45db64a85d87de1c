"""Shared fixtures: the hand-written example packages and a minimal todo package, as plain data;
fresh catalog files copied from one migrated per session; the ``synth`` command run in this process.

Fixtures hand out fresh copies, so a test may edit what it gets.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# pytest-xdist's workers start with COLUMNS=80 in their environment, where a serial run has none:
# the CLI's tables would be 80 wide instead of the 160 a non-terminal gets (pipeline/cli/options.py,
# read when pipeline.cli is first imported, below), which the CLI tests expect.
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ.pop("COLUMNS", None)

from pipeline.catalog.store import Catalog  # noqa: E402
from pipeline.cli import main  # noqa: E402
from pipeline.core.codes import BASIS, Basis, Code  # noqa: E402
from pipeline.core.outcomes import Finding, Witness  # noqa: E402
from pipeline.core.package import TaskPackage, load_package  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the default run's): one worker more than the machine has cores. A share of the
    suite waits on sockets, child processes and deadlines; the extra worker fills those waits (on
    2 cores: 193 s with 2 workers, 173 s with 3, 175 s with 4; docs/benchmarks.md)."""
    return (os.cpu_count() or 1) + 1

EXAMPLES_DIR = REPO_ROOT / "examples"
EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES_DIR.glob("*.json"))

_TODO_PACKAGE: dict[str, Any] = {
    "capability": "general",
    "workflow": "create-one-todo",
    "services": ["todo"],
    "request": {"text": "Add a todo to book the venue."},
    "initial_state": {"todo": {"tasks": [
        {"id": "todo-001", "title": "Renew parking permit", "priority": "low", "due_date": "2026-12-20",
         "status": "open", "notes": "", "created_at": "2026-11-20T08:00:00Z"},
    ]}},
    "tools": [
        {"name": "todo_create_task", "service": "todo", "endpoint": "/todo/tasks/create",
         "parameters": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}},
        {"name": "todo_list_tasks", "service": "todo", "endpoint": "/todo/tasks"},
    ],
    "checks": [{"kind": "state_count", "weight": 1.0, "collection": "todo.tasks", "scope": "created",
                "where": {"title": "Book the venue"}, "value": 1}],
    "reference": [
        {"call": "todo_create_task", "args": {"title": "Book the venue"}},
        {"answer": "Added: Book the venue."},
    ],
}


@pytest.fixture(params=EXAMPLE_NAMES)
def example_name(request: pytest.FixtureRequest) -> str:
    """Each example package name (``examples/<name>.json``) in turn: the test runs once per example."""
    return request.param


@pytest.fixture
def example_file(example_name: str) -> Path:
    """The path of each example package in turn."""
    return EXAMPLES_DIR / f"{example_name}.json"


@pytest.fixture
def example_doc() -> Callable[[str], dict[str, Any]]:
    """``example_doc("todo-three-items")``: a fresh dict of ``examples/<name>.json``."""

    def load(name: str) -> dict[str, Any]:
        return json.loads((EXAMPLES_DIR / f"{name}.json").read_text(encoding="utf-8"))

    return load


@pytest.fixture
def todo_doc() -> dict[str, Any]:
    """A minimal valid one-service package (todo) whose reference creates one task."""
    return copy.deepcopy(_TODO_PACKAGE)


# --------------------------------------------------------------------------- catalogs


def holding_witness(agent: str = "wrong", score: float = 1.0, threshold: float = 0.75) -> Witness:
    """A witness (made up, not replayed: two actions) that holds with the defaults: a wrong agent
    at or above its threshold."""
    return Witness(agent=agent, name="drop_write", claim="skips the write the request asks for", score=score,
                   threshold=threshold, actions=[{"type": "tool_call", "name": "todo_list_tasks", "arguments": {}},
                                                 {"type": "answer", "text": "Done."}])


def refusal(code: Code, message: str | None = None, **fields: Any) -> Finding:
    """A finding of ``code`` that refuses the package in ``Verdict.build``: a witnessed code gets a
    witness that holds (``holding_witness``). ``fields``: the finding's other fields."""
    if BASIS[code] is Basis.WITNESSED:
        fields.setdefault("witness", holding_witness())
    return Finding(code=code, message=message or f"{code.value} found", **fields)


def load_examples() -> list[TaskPackage]:
    """Every example package with its id, in name order."""
    return [load_package(json.loads((EXAMPLES_DIR / f"{n}.json").read_text())).with_id() for n in EXAMPLE_NAMES]


def copy_catalog(source: Path, target: Path) -> Path:
    """Copy the closed catalog at ``source`` (its DuckDB file, and its ``.wal`` if there is one) to
    ``target``, creating ``target``'s folder; return ``target``. Close every ``Catalog`` on
    ``source`` first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    wal = source.with_name(source.name + ".wal")
    if wal.exists():
        shutil.copyfile(wal, target.with_name(target.name + ".wal"))
    return target


def accepted_now(catalog: Path) -> int:
    """Accepted packages in the catalog at ``catalog`` as a reader sees it while a run writes it
    (the reader asks the writer for the file); 0 while it does not exist or is being migrated."""
    try:
        with Catalog.open(catalog, read_only=True, busy_timeout=1.0) as reader:
            return reader.accepted_count()
    except Exception:  # not created yet, or the writer is migrating it
        return 0


@pytest.fixture(scope="session")
def empty_catalog_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One empty catalog at the latest schema, created and migrated once per session: copy it, never open it."""
    path = tmp_path_factory.mktemp("empty-catalog") / "catalog.duckdb"
    Catalog.open(path).close()
    return path


@pytest.fixture
def empty_catalog(empty_catalog_template: Path, tmp_path: Path) -> Path:
    """The path of a fresh empty catalog at the latest schema, ``tmp_path / "catalog.duckdb"`` (not open)."""
    return copy_catalog(empty_catalog_template, tmp_path / "catalog.duckdb")


# --------------------------------------------------------------------------- the command line


@dataclass(frozen=True)
class CliResult:
    """What one ``synth`` command did: its exit code and everything it wrote."""

    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def synth(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """``synth("play", path)``: run the ``synth`` command line in this process through its entry point
    (``pipeline.cli.main``); return its exit code (0 when it ends without one) and its output.

    An exception other than ``SystemExit`` (a traceback, in the installed command) propagates.
    """

    def run(*args: str | Path) -> CliResult:
        monkeypatch.setattr(sys, "argv", ["synth", *map(str, args)])
        capsys.readouterr()  # what the test printed before is not the command's output
        try:
            main()
            code: object = 0
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        if code is None:
            code = 0
        elif not isinstance(code, int):  # as the interpreter does with ``sys.exit("message")``
            err, code = err + f"{code}\n", 1
        return CliResult(exit_code=code, stdout=out, stderr=err)

    return run

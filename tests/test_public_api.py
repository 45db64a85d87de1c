"""The public API (``import pipeline as synth``) used as a user uses it: every name in ``__all__``
called with small real arguments after every module of the package has been imported (so that no
subpackage can stand in for a public name), the sync forms called from inside a running event
loop, the async forms awaited, and one version everywhere."""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

import pipeline as synth
from pipeline.catalog.errors import CatalogError
from tests.conftest import EXAMPLES_DIR, REPO_ROOT
from tests.support import OpenAIServer
from tests.support.agent_server import ScriptedAgents


def _import_every_module() -> list[str]:
    """Import every module and subpackage of ``pipeline`` (``__main__`` scripts aside); their names."""
    names = [m.name for m in pkgutil.walk_packages(synth.__path__, "pipeline.") if not m.name.endswith(".__main__")]
    for name in names:
        importlib.import_module(name)
    return names


def test_every_public_name_works_after_every_module_is_imported(tmp_path: Path) -> None:
    assert "pipeline.generation.offline" in _import_every_module()  # the subpackage named like the function
    catalog = tmp_path / "catalog.duckdb"
    example = synth.load_package((EXAMPLES_DIR / "todo-three-items.json").read_text()).with_id()
    used: set[str] = set()

    def call(name: str, /, *args: Any, **kwargs: Any) -> Any:
        """``synth.<name>(...)``; ``Name.method`` calls a classmethod of a public class."""
        public, _, method = name.partition(".")
        used.add(public)
        target = getattr(synth, public)
        return (getattr(target, method) if method else target)(*args, **kwargs)

    # the contract, verification, grading
    assert call("TaskPackage", **example.model_dump()).compute_id() == example.id
    assert call("load_package", example.model_dump(mode="json")).id == example.id
    verdict = call("verify_package", example)
    assert verdict.accepted and verdict.score == 1.0
    assert call("Verdict", **verdict.model_dump()).accepted
    assert call("Code", "schema_invalid") is synth.Code.SCHEMA_INVALID
    finding = call("Finding", code=synth.Code.SCHEMA_INVALID, message="not a package")
    assert not synth.Verdict.build("pkg-0", [finding], 0.0, []).accepted
    witness = call("Witness", agent="wrong", name="null", claim="does nothing", score=0.0, threshold=0.75,
                   actions=[{"type": "answer", "text": "Done."}])
    assert not witness.holds
    trajectory = call("play_actions", example, witness.actions)
    assert call("Grader", example).score(trajectory).score < 1.0
    assert call("ScoreReport", checks=[], safety=[], score=0.5, checks_score=0.5).score == 0.5
    episode = call("Episode", example)
    episode.apply(call("Ask", text="Which items?"))
    episode.apply(call("ToolCall", name="todo_list_tasks", arguments={}))
    episode.apply(call("Answer", text="Done."))
    assert episode.answered and [s.kind for s in episode.steps] == ["ask", "call", "answer"]
    env = call("TaskEnv", example)
    assert env.reset().kind == "request"

    # generation and runs, into a catalog in tmp_path
    packages = call("generate", "general", 2)
    assert len(packages) == 2 and all(synth.verify_package(p).accepted for p in packages)
    assert [p.id for p in asyncio.run(call("agenerate", "general", 2))] == [p.id for p in packages]
    options = call("RunOptions", capability="general", count=3, max_attempts=1, defect_rate=0.5)
    summary = call("start_run", options, catalog)
    assert summary.accepted == 3 and summary.run_id == 1
    assert call("RunSummary", **summary.model_dump()) == summary
    assert asyncio.run(call("astart_run", options.model_copy(update={"count": 1}), catalog)).run_id == 2
    assert call("resume_run", 1, catalog).status == "finished"
    assert asyncio.run(call("aresume_run", 2, catalog)).status == "finished"
    regen = call("regenerate", catalog, run_id=1, limit=1)
    assert summary.failed_slots > 0 and regen.slots == 1 and set(regen.by_run) == {1}
    again = asyncio.run(call("aregenerate", catalog, run_id=1))
    assert again.slots == summary.failed_slots - regen.repaired
    assert "synth run --resume 7 --catalog" in str(call("RunInterrupted", 7, catalog))

    # the catalog, its exports, imports, and packages back out of it
    with call("Catalog.open", catalog, read_only=True) as opened:
        accepted, in_run_1 = opened.accepted_count(), opened.accepted_count(1)
    loaded = call("load_packages", catalog)
    assert len(loaded) == accepted >= 4
    with synth.Catalog.open(catalog, read_only=True) as opened, pytest.raises(CatalogError) as refused:
        call("export_catalog", opened, "clawenvkit", tmp_path / "none", where="run = 1")
    # run 1's three and the slots regeneration repaired: default-profile packages, each refused, so nothing is written
    assert f"each of the {in_run_1} packages selected was refused (default_profile {in_run_1})" in str(refused.value)
    assert in_run_1 > 3 and not (tmp_path / "none").exists()
    assert call("export_catalog", str(catalog), "jsonl", tmp_path / "all.jsonl").rows == accepted  # a path will do
    from pipeline.interop.clawenvkit_export import export_clawenvkit_tasks

    claw = call("generate", "general", 2, services="claw")
    assert export_clawenvkit_tasks(claw, tmp_path / "claw", min_weight_share=0.0).rows == 2
    imported = call("import_tasks", str(tmp_path / "claw"), catalog=catalog)  # one folder, as text
    assert imported.run_id is not None and len(imported.results) == 2
    assert len(asyncio.run(call("aimport_tasks", [tmp_path / "claw"], record=False)).results) == 2

    # rollouts: an agent model (the local test server replaying each reference) on the catalog's packages
    agents = ScriptedAgents(p.model_dump(mode="json") for p in loaded)
    with OpenAIServer(agents) as server:
        options = call("RolloutOptions", model="reference", base_url=server.base_url, where="run = 1")
        rolled = call("start_rollouts", options, catalog)
        assert rolled.rollouts == in_run_1 and rolled.passed == in_run_1
        assert call("RolloutSummary", **rolled.model_dump()) == rolled
        assert asyncio.run(call("astart_rollouts", options, catalog)).job_id == rolled.job_id + 1
        assert call("resume_rollouts", rolled.job_id, catalog).rollouts == 0  # nothing left to run
        assert asyncio.run(call("aresume_rollouts", rolled.job_id, catalog)).rollouts == 0
    assert "synth rollout --resume 3 --catalog" in str(call("RolloutInterrupted", 3, catalog, 0, 4))
    with synth.Catalog.open(catalog, read_only=True) as opened:
        stored = opened.query("SELECT package_id, score FROM rollouts WHERE job = 1").rows
    record = call("Rollout", package_id=stored[0][0], model="reference", sample=0, score=stored[0][1], checks=[],
                  finish_reason="answer")
    assert record.passed

    assert used == set(synth.__all__), "a public name is not exercised here"


def test_no_module_of_the_package_shares_a_name_with_a_public_name() -> None:
    """Importing a submodule sets it as an attribute of its parent package; one named like a public
    name (a ``pipeline.generate`` subpackage beside the ``generate`` function) would replace it."""
    code = ("import pkgutil, pipeline as synth\n"
            "names = {m.name for m in pkgutil.iter_modules(synth.__path__)}\n"
            "print(sorted(names & set(synth.__all__)))\n"
            "import pipeline.generation.offline, pipeline.runs.api\n"
            "print(callable(synth.generate), synth.generate.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "True pipeline.runs.dataset"]


def test_the_sync_api_works_inside_a_running_event_loop(empty_catalog: Path) -> None:
    """As in a notebook, where an event loop is already running."""

    async def cell() -> tuple[list[str], int]:
        packages = synth.generate("multi-turn", 2)
        summary = synth.start_run(synth.RunOptions(capability="general", count=2), empty_catalog)
        return [p.id for p in packages], summary.accepted

    ids, accepted = asyncio.run(cell())
    assert ids == [p.id for p in synth.generate("multi-turn", 2)] and accepted == 2


def test_the_async_forms_run_on_the_callers_loop_beside_other_tasks(empty_catalog: Path) -> None:
    ticks: list[int] = []

    async def ticker() -> None:
        while True:
            ticks.append(1)
            await asyncio.sleep(0.001)

    async def main() -> tuple[int, int]:
        other = asyncio.create_task(ticker())
        summary = await synth.astart_run(synth.RunOptions(capability="general", count=6), empty_catalog)
        packages = await synth.agenerate("general", 3)
        other.cancel()
        return summary.accepted, len(packages)

    assert asyncio.run(main()) == (6, 3)
    assert ticks  # the loop kept running other tasks while the run was awaited


def test_cancelling_an_awaited_run_marks_it_interrupted_and_says_how_to_continue(empty_catalog: Path) -> None:
    async def main() -> None:
        task: asyncio.Task[Any] | None = None

        def cancel_at_three(progress: Any) -> None:
            if progress.accepted >= 3 and task is not None:
                task.cancel()

        task = asyncio.create_task(synth.astart_run(synth.RunOptions(capability="general", count=500),
                                                    empty_catalog, on_progress=cancel_at_three))
        await task

    with pytest.raises(asyncio.CancelledError) as cancelled:
        asyncio.run(main())
    [note] = cancelled.value.__notes__
    assert "run 1 interrupted" in note and f"synth run --resume 1 --catalog {empty_catalog}" in note
    with synth.Catalog.open(empty_catalog, read_only=True) as catalog:
        [run] = catalog.runs(1)
        accepted = catalog.accepted_count(1)
    assert run.status == "interrupted" and f"{accepted} of 500 accepted" in note


def test_one_version_in_pyproject_the_package_and_the_command() -> None:
    stated = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    command = subprocess.run([sys.executable, "-m", "pipeline.cli", "--version"], capture_output=True, text=True,
                             cwd=REPO_ROOT)
    assert synth.__version__ == stated
    assert command.stdout.strip() == f"synth {stated}"
    literals = [p for p in (REPO_ROOT / "pipeline").rglob("*.py") if f'"{stated}"' in p.read_text()]
    assert literals == []  # pyproject.toml is the one place the version is written


def test_an_uninstalled_checkout_reads_the_version_from_pyproject(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    stated = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert synth._version() == stated


def test_the_distribution_is_named_apart_from_the_projects_that_own_synth_and_pipeline() -> None:
    """``synth`` and ``pipeline`` on the public package index are other projects: the distribution
    has a name of its own, written in ``pyproject.toml`` and ``core/distribution.py`` alike, and every
    install command the package, the README and the docs print uses it."""
    from pipeline.core.distribution import DISTRIBUTION, install_extra

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION and DISTRIBUTION not in ("synth", "pipeline")
    assert {f"{DISTRIBUTION}[{x}]" for x in ("mcp", "ray", "pdf")} <= set(project["optional-dependencies"]["dev"])
    assert project["scripts"] == {"synth": "pipeline.cli:main"}
    assert install_extra("ray") == f"pip install '{DISTRIBUTION}[ray]'"
    texts = [p.read_text(encoding="utf-8") for p in [REPO_ROOT / "README.md", *(REPO_ROOT / "docs").glob("*.md"),
                                                     *(REPO_ROOT / "pipeline").rglob("*.py")]]
    installs = {m for t in texts for m in re.findall(r"pip install '?([\w.-]+)\[", t)}
    assert installs == {DISTRIBUTION}
    assert f"`{DISTRIBUTION}`" in (REPO_ROOT / "README.md").read_text(encoding="utf-8")

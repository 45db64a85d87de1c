"""The shape of the package: the layer contracts name every layer, the public API resolves, and
the quick commands never import the model client."""

from __future__ import annotations

import ast
import re
import tomllib
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

import pipeline
from tests.conftest import EXAMPLES_DIR, REPO_ROOT
from tests.support.processes import synth_imports_openai

PACKAGE = REPO_ROOT / "pipeline"


def _contracts() -> list[dict]:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_the_layer_contract_names_every_subpackage() -> None:
    layers = next(c for c in _contracts() if c["id"] == "layers")["layers"]
    named = {name.strip() for line in layers for name in line.split("|")}
    subpackages = {f"pipeline.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert named == subpackages


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules ``path`` imports, at its top or inside a function (a deferred import is
    an import), leaving out those under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for n in ast.walk(node)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            out |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out & modules


def _import_graph() -> dict[str, set[str]]:
    """Each module of the package → the package's modules it imports (``_imports``)."""
    paths = {".".join(p.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__"): p
             for p in PACKAGE.rglob("*.py")}
    return {name: _imports(path, set(paths)) - {name} for name, path in paths.items()}


def test_no_module_imports_one_that_imports_it_back() -> None:
    """No import cycle, deferred imports included (``runs/rollout.py`` and ``runs/ray_rollouts.py``
    had one, hidden in functions; the rollout job now imports its Ray side, never the other way)."""
    graph = _import_graph()
    assert "pipeline.runs.ray_rollouts" in graph["pipeline.runs.rollout"]  # imported inside a method: counted
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")
    one_way = next(c for c in _contracts() if c["id"] == "rollouts-one-way")["layers"]
    assert one_way[:2] == ["pipeline.runs.rollout", "pipeline.runs.ray_rollouts"]  # lint-imports keeps it so


def test_every_module_of_the_package_is_used_by_the_package() -> None:
    """What only tests and benchmarks use lives in ``tests/support/`` or ``bench/``, not in a layer
    that ships (the claw conformance cases were in ``core/services``). A module counts as used when
    another module imports it or it holds a public name; the entry points and subpackages aside."""
    graph = _import_graph()
    used = set().union(*graph.values()) | set(pipeline._EXPORTS.values())
    entry_points = {"pipeline.cli.__main__"}
    subpackages = {name for name in graph if (PACKAGE.parent / name.replace(".", "/") / "__init__.py").is_file()}
    assert sorted(set(graph) - used - entry_points - subpackages) == []


def test_every_public_name_is_listed() -> None:
    """Each is called in ``tests/test_public_api.py``."""
    assert sorted(pipeline.__all__) == sorted(pipeline._EXPORTS)
    with pytest.raises(AttributeError):
        pipeline.no_such_name  # noqa: B018


@pytest.mark.parametrize("args", [["--help"], ["verify", str(EXAMPLES_DIR / "todo-three-items.json")],
                                  ["capabilities", "--json"], ["services", "--json"]])
def test_quick_commands_do_not_import_the_model_client(args: list[str], tmp_path: Path) -> None:
    imported, stderr = synth_imports_openai(args, tmp_path)
    assert "openai imported: False" in stderr and not imported, stderr


def test_a_run_with_a_model_does_import_it(tmp_path: Path) -> None:
    """The check above can fail: a command that needs the client imports it (here it then stops at
    the missing key, before any request)."""
    args = ["run", "-c", "general", "--model", "some-model", "--catalog", str(tmp_path / "c.duckdb")]
    imported, stderr = synth_imports_openai(args, tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert "needs OPENAI_API_KEY" in stderr
    assert imported, stderr


def test_test_files_are_named_by_what_they_test_not_when() -> None:
    """``test_truth_round3c.py`` said when it was written; its name now says what it tests."""
    dated = [p.relative_to(REPO_ROOT).as_posix() for p in (REPO_ROOT / "tests").rglob("test_*.py")
             if re.search(r"round_?\d|_r\d+[a-z]?\.py$", p.name)]
    assert dated == []

"""The shape of the package: the layer contracts name every layer, the public API resolves, and
the quick commands never import the model client."""

from __future__ import annotations

import tomllib
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

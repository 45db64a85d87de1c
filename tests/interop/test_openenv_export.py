"""``synth export --format openenv``: the folder of an OpenEnv environment (manifest, packages,
server app, client module), and that its app serves the exported packages; the ``synth serve
--openenv`` options that are refused."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from pipeline import Catalog, export_catalog
from pipeline.interop.openenv import SynthAction, SynthEnv
from pipeline.interop.openenv_server import running
from tests.conftest import CliResult, copy_catalog


def test_export_writes_an_environment_folder_whose_app_serves_the_packages(runs_catalog: Path, tmp_path: Path) -> None:
    catalog = copy_catalog(runs_catalog, tmp_path / "catalog.duckdb")
    out = tmp_path / "env"
    summary = export_catalog(catalog, "openenv", out, where="capability = 'general'")
    with Catalog.open(catalog, read_only=True) as opened:
        ids = [r[0] for r in opened.query("SELECT id FROM packages WHERE status = 'accepted' AND capability = "
                                          "'general' ORDER BY row_id", None).rows]
    assert summary.rows == len(ids) > 0
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "README.md", "client.py", "openenv.yaml", "packages.jsonl", "server/__init__.py", "server/app.py",
        "server/requirements.txt"]
    manifest = yaml.safe_load((out / "openenv.yaml").read_text())
    assert manifest == {"spec_version": 1, "name": "synth-packages", "type": "space", "runtime": "fastapi",
                        "app": "server.app:app", "port": 8000}
    assert (out / "packages.jsonl").read_text().count("\n") == len(ids)

    spec = importlib.util.spec_from_file_location("exported_app", out / "server" / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.path.insert(0, str(out))
    try:
        import client  # the exported client module

        assert client.SynthEnv is SynthEnv
    finally:
        sys.path.remove(str(out))
        sys.modules.pop("client", None)

    async def play(url: str) -> list[str]:
        async with SynthEnv(base_url=url) as env:
            seen = []
            for package_id in ids:
                result = await env.reset(package_id=package_id)
                seen.append(result.observation.info["package_id"])
                assert (await env.step(SynthAction.final(""))).done
            return seen

    with running(module.app) as url:
        assert asyncio.run(play(url)) == ids


def test_serve_refuses_options_that_do_not_fit(synth: Callable[..., CliResult], tmp_path: Path) -> None:
    package = str(Path(__file__).parents[2] / "examples" / "todo-three-items.json")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    for args, message in [
        (["serve", package, "--where", "capability = 'general'"], "--where selects packages for --openenv"),
        (["serve", "--openenv", "--mcp", package], "leave out --mcp"),
        (["serve", "--openenv", package, "--where", "capability = 'general'"], "--where selects from a catalog"),
        (["serve", "--openenv", str(bad)], "bad.jsonl:1: not a valid task package"),
    ]:
        result = synth(*args)
        assert result.exit_code != 0 and message in result.stderr, (args, result)
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1

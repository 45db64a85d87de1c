"""Acceptance of the OpenEnv face (slow): ``synth serve --openenv`` run as a command over a
catalog of 56 offline packages of all 7 capabilities, driven by OpenEnv's client. Replaying each
reference earns exactly the score the verifier stored; doing nothing earns the verifier's null
floor; 32 sessions at once score what one at a time does; 10,000 rapid steps on one session get
clear errors and leave the others alone; ``where`` picks from the catalog at reset."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from pipeline import Catalog, RunOptions, TaskPackage, start_run
from pipeline.interop.openenv import SynthAction, SynthEnv, replay_reference
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.mutations import null_agent_score
from tests.support.processes import wait_for

pytestmark = pytest.mark.slow

PER_CAPABILITY = 8
RAPID_STEPS = 10_000


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[TaskPackage], dict[str, float], dict[str, str]]:
    """The catalog, its accepted packages, the verifier's stored score and the capability of each."""
    path = tmp_path_factory.mktemp("openenv") / "catalog.duckdb"
    for capability in sorted(taxonomy()):
        start_run(RunOptions(capability=capability, count=PER_CAPABILITY, seed=7), path)
    with Catalog.open(path, read_only=True) as opened:
        rows = opened.query("SELECT id, capability, score, package FROM packages WHERE status = 'accepted' "
                            "ORDER BY row_id", None).rows
    packages = [TaskPackage.model_validate(json.loads(row[3]) if isinstance(row[3], str) else row[3]) for row in rows]
    return path, packages, {r[0]: r[2] for r in rows}, {r[0]: r[1] for r in rows}


@pytest.fixture(scope="module")
def server(catalog: tuple[Path, list[TaskPackage], dict[str, float], dict[str, str]],
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``synth serve --openenv CATALOG --port 0 --json``; yields its base URL; SIGTERM ends it."""
    out = tmp_path_factory.mktemp("serve") / "out.jsonl"
    with out.open("w") as sink:
        process = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "serve", "--openenv", str(catalog[0]),
                                    "--port", "0", "--max-sessions", "40", "--json"],
                                   stdout=sink, stderr=subprocess.PIPE, text=True,
                                   env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    try:
        wait_for(lambda: out.read_text().strip() != "" or process.poll() is not None, timeout=180,
                 what="the server's first line")
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        line = json.loads(out.read_text().splitlines()[0])
        assert line["packages"] == len(catalog[1])
        yield line["base_url"]
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            assert process.wait(timeout=60) == 0
            assert "Traceback" not in (process.stderr.read() if process.stderr else "")
        finally:
            if process.poll() is None:
                process.kill()


def test_the_catalog_has_every_capability(catalog: tuple[Path, list[TaskPackage], dict[str, float], dict[str, str]]) -> None:
    assert len(catalog[1]) >= 50
    assert set(catalog[3].values()) == set(taxonomy())


async def _replay_all(url: str, packages: list[TaskPackage]) -> dict[str, float | None]:
    async with SynthEnv(base_url=url) as env:
        return {p.id: (await replay_reference(env, p)).reward for p in packages}


async def _do_nothing(url: str, packages: list[TaskPackage]) -> dict[str, float | None]:
    async with SynthEnv(base_url=url) as env:
        rewards = {}
        for package in packages:
            await env.reset(package_id=package.id)
            rewards[package.id] = (await env.step(SynthAction.final(""))).reward
        return rewards


def test_replaying_each_reference_earns_the_verifiers_score(
        server: str, catalog: tuple[Path, list[TaskPackage], dict[str, float], dict[str, str]]) -> None:
    _, packages, verified, _ = catalog
    assert asyncio.run(_replay_all(server, packages)) == {p.id: verified[p.id] for p in packages}


def test_doing_nothing_earns_the_null_floor(
        server: str, catalog: tuple[Path, list[TaskPackage], dict[str, float], dict[str, str]]) -> None:
    packages = catalog[1]
    assert asyncio.run(_do_nothing(server, packages)) == {p.id: null_agent_score(p) for p in packages}


async def _rapid(url: str, package_id: str) -> list[dict[str, Any]]:
    """10,000 steps sent back to back on one session, then every reply read."""
    async with connect(url.replace("http", "ws", 1) + "/ws", max_size=None) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {"package_id": package_id}}))
        await ws.recv()
        step = json.dumps({"type": "step", "data": {"type": "tool_call", "name": "no_such_tool"}})
        for _ in range(RAPID_STEPS):
            await ws.send(step)
        return [json.loads(await asyncio.wait_for(ws.recv(), 120)) for _ in range(RAPID_STEPS)]


def test_32_sessions_at_once_score_as_one_at_a_time_beside_a_flood(
        server: str, catalog: tuple[Path, list[TaskPackage], dict[str, float], dict[str, str]]) -> None:
    packages = catalog[1]
    alone = asyncio.run(_replay_all(server, packages))

    async def together() -> tuple[list[dict[str, float | None]], list[dict[str, Any]]]:
        shares = [packages[i::32] for i in range(32)]
        flood = asyncio.create_task(_rapid(server, packages[0].id))
        results = await asyncio.gather(*(_replay_all(server, share) for share in shares))
        return list(results), await flood

    results, replies = asyncio.run(together())
    merged = {k: v for r in results for k, v in r.items()}
    assert merged == alone
    budget = max(50, len(packages[0].reference))
    kinds = [r["type"] for r in replies]
    assert kinds == ["observation"] * budget + ["error"] * (RAPID_STEPS - budget)
    assert replies[budget - 1]["data"]["done"] is True
    assert replies[budget - 1]["data"]["observation"]["info"]["truncated"] is True
    assert "the episode is over (its budget is spent)" in replies[-1]["data"]["message"]


def test_where_picks_from_the_catalog_at_reset(
        server: str, catalog: tuple[Path, list[TaskPackage], dict[str, float], dict[str, str]]) -> None:
    capability_of = catalog[3]

    async def play() -> tuple[list[str], str]:
        async with SynthEnv(base_url=server) as env:
            picked = [(await env.reset(where="capability = 'safety'")).observation.info["package_id"]
                      for _ in range(PER_CAPABILITY + 2)]
            with pytest.raises(RuntimeError) as bad:
                await env.reset(where="no_such_column = 1")
            return picked, str(bad.value)

    picked, bad = asyncio.run(play())
    assert {capability_of[p] for p in picked} == {"safety"}
    assert len(set(picked)) == PER_CAPABILITY  # the selection's own shuffle, walked round
    assert "no_such_column" in bad

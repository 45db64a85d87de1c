"""``pipeline.env.mcp_server`` and ``synth serve --mcp``: a package as an MCP server, driven by the
official SDK's own client (``mcp.Client``): in process, over stdio (``synth serve --mcp FILE`` as a
subprocess) and over streamable HTTP (``--port 0``).

A play through MCP is the reference's trajectory (``play_reference``, resolved arguments), each
step sent as the MCP call it maps to; its ``synth://score`` must equal ``play_reference``'s score.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from pipeline.catalog.store import Catalog
from pipeline.core.grading import score_json
from pipeline.core.package import TaskPackage, load_package
from pipeline.env.mcp_server import ASK_USER, SCORE_URI, SUBMIT, McpEpisode, build_server
from pipeline.env.task_env import play_reference
from pipeline.verify.verifier import verify_package
from tests.conftest import REPO_ROOT, CliResult
from tests.support import processes

EXAMPLES = sorted((REPO_ROOT / "examples").glob("*.json"))
SYNTH = Path(sys.executable).parent / "synth"
_ENV = dict(os.environ)
"""The server's environment: this process's whole (the MCP client passes only a few variables by
default, so a ``PYTHONPATH`` naming the tree under test would be lost and another install served)."""
WITH_USER = REPO_ROOT / "examples" / "multi-turn-schedule-meeting.json"
WITHOUT_USER = REPO_ROOT / "examples" / "contacts-send-message.json"


def package_of(path: Path) -> TaskPackage:
    return load_package(path.read_text())


def text_of(result: Any) -> str:
    return str(result.content[0].text)


async def read_score(client: Client) -> dict[str, Any]:
    result = await client.read_resource(SCORE_URI)
    return dict(json.loads(result.contents[0].text))


async def play(client: Client, package: TaskPackage) -> None:
    """Send the reference's steps (its arguments as ``play_reference`` resolved them) as MCP calls."""
    for step in play_reference(package).trajectory().steps:
        if step.kind == "call":
            assert step.tool is not None
            result = await client.call_tool(step.tool, step.args)
            assert result.is_error == (step.status is not None and step.status >= 400)
            assert json.loads(text_of(result)) == {"status": step.status, "result": step.result}
        elif step.kind == "ask":
            result = await client.call_tool(ASK_USER, {"question": step.ask})
            assert text_of(result) == step.reply
        else:
            result = await client.call_tool(SUBMIT, {"text": step.answer})
            assert not result.is_error


async def check_package(client: Client, package: TaskPackage) -> None:
    """Every face of the server for one package, through ``client``, in one episode."""
    names = [t.name for t in (await client.list_tools()).tools]
    assert names == [t.name for t in package.tools] + [SUBMIT] + ([ASK_USER] if package.user else [])
    listed = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    assert all(listed[t.name] == t.parameters for t in package.tools)
    prompt = await client.get_prompt("task")
    assert prompt.messages[0].content.text == package.request.text  # type: ignore[union-attr]
    before = await read_score(client)
    assert before["passed"] is False
    await play(client, package)
    assert await read_score(client) == score_json(play_reference(package).score())
    over = await client.call_tool(package.tools[0].name, {})
    assert over.is_error and "episode is over" in text_of(over)


def run(test: Callable[[], Awaitable[None]]) -> None:
    anyio.run(test)


# --------------------------------------------------------------------------- in process


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_reference_through_mcp_scores_as_play_reference(path: Path) -> None:
    package = package_of(path)

    async def test() -> None:
        async with Client(build_server(McpEpisode(package))) as client:
            await check_package(client, package)
            assert (await read_score(client))["passed"] is True

    run(test)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_wrong_play_scores_lower(path: Path) -> None:
    package = package_of(path)

    async def test() -> None:
        async with Client(build_server(McpEpisode(package))) as client:
            done = await client.call_tool(SUBMIT, {"text": "I could not do it."})
            assert not done.is_error
            score = await read_score(client)
            assert score["score"] < play_reference(package).score().score
            assert score["passed"] is False

    run(test)


def test_error_status_is_a_tool_error_and_unknown_names_are_refused() -> None:
    package = package_of(WITHOUT_USER)

    async def test() -> None:
        async with Client(build_server(McpEpisode(package))) as client:
            bad = await client.call_tool("contacts_send_message", {"colour": "red"})
            assert bad.is_error and json.loads(text_of(bad))["status"] == 400
            unknown = await client.call_tool(ASK_USER, {"question": "which one?"})
            assert unknown.is_error and text_of(unknown) == f"Unknown tool: {ASK_USER}"
            no_text = await client.call_tool(SUBMIT, {})
            assert no_text.is_error
            found = await client.call_tool("contacts_search", {"query": "a"})  # not over yet
            assert found.is_error is False and json.loads(text_of(found))["status"] == 200

    run(test)


def test_a_package_without_a_user_has_no_ask_user() -> None:
    names = {t.name for t in McpEpisode(package_of(WITHOUT_USER)).tools()}
    assert SUBMIT in names and ASK_USER not in names
    assert ASK_USER in {t.name for t in McpEpisode(package_of(WITH_USER)).tools()}


def test_a_tool_named_like_a_server_tool_is_refused() -> None:
    package = package_of(WITHOUT_USER)
    clash = package.model_copy(update={"tools": [package.tools[0].model_copy(update={"name": SUBMIT})]})
    with pytest.raises(Exception, match="keeps for itself"):
        McpEpisode(clash)


# --------------------------------------------------------------------------- command line


@pytest.mark.parametrize("args, message", [
    (["serve", "--mcp", "missing.json"], "no such package file"),
    (["serve", "--mcp", "pkg-nope", "--catalog", "{tmp}/none.duckdb"], "no catalog"),
    (["serve", "--mcp", str(WITHOUT_USER), "--allow-remote"], "loopback only"),
    (["serve", "--mcp", str(WITHOUT_USER), "--port", "0", "--host", "10.1.2.3"], "loopback only"),
])
def test_bad_arguments_are_one_line_exit_2(args: list[str], message: str, tmp_path: Path,
                                            synth: Callable[..., CliResult]) -> None:
    result = synth(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_missing_sdk_says_how_to_install(monkeypatch: pytest.MonkeyPatch, synth: Callable[..., CliResult]) -> None:
    import pipeline.env

    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)  # the SDK's modules fail to import, as when absent
    monkeypatch.delitem(sys.modules, "pipeline.env.mcp_server")
    monkeypatch.delattr(pipeline.env, "mcp_server")
    result = synth("serve", "--mcp", str(WITHOUT_USER))
    assert result.exit_code == 2
    assert "pip install 'synth-task-packages[mcp]'" in result.stderr and len(result.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- subprocesses


@pytest.mark.slow
def test_stdio_subprocess_plays_every_example() -> None:
    async def test() -> None:
        for path in EXAMPLES:
            params = StdioServerParameters(command=str(SYNTH), args=["serve", "--mcp", str(path)], env=_ENV)
            async with Client(params) as client:
                await check_package(client, package_of(path))

    run(test)


@pytest.mark.slow
def test_streamable_http_plays_every_example() -> None:
    for path in EXAMPLES:
        process = subprocess.Popen([str(SYNTH), "serve", "--mcp", str(path), "--port", "0", "--json"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert process.stdout is not None
            url = json.loads(process.stdout.readline())["url"]
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

            async def test(url: str = url, path: Path = path) -> None:
                async with Client(url) as client:
                    await check_package(client, package_of(path))
                async with Client(url) as again:  # one episode per server: a new session sees it over
                    assert (await read_score(again))["passed"] is True

            run(test)
        finally:
            process.terminate()
            process.wait(timeout=processes.PATIENCE_S)


@pytest.mark.slow
def test_bad_package_subprocess_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": 3}')
    done = subprocess.run([str(SYNTH), "serve", "--mcp", str(bad)], capture_output=True, text=True,
                          timeout=processes.PATIENCE_S)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.slow
def test_stdio_serves_a_catalog_id(empty_catalog: Path) -> None:
    package = package_of(REPO_ROOT / "examples" / "todo-three-items.json").with_id()
    with Catalog.open(empty_catalog) as writer:
        writer.record(writer.start_run("t", "hand"), 0, 1, package, verify_package(package))
    assert package.id is not None
    params = StdioServerParameters(command=str(SYNTH),
                                   args=["serve", "--mcp", package.id, "--catalog", str(empty_catalog)], env=_ENV)

    async def test() -> None:
        async with Client(params) as client:
            await check_package(client, package)

    run(test)

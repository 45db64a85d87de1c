"""The OpenEnv face (``synth serve --openenv``): OpenEnv's own clients (``SynthEnv``, an
``EnvClient``, and the ``GenericEnvClient`` of dict actions) against a server on a free port, its
scores compared with ``TaskEnv`` in process (the verifier's episode engine and grader), and what
it does with hostile input. The 50-package, 32-session acceptance run is
``test_openenv_acceptance.py`` (slow)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from pipeline import TaskPackage, load_package
from pipeline.core.grading import score_json
from pipeline.env.task_env import Answer, TaskEnv, play_reference
from pipeline.generation.offline import generate_package
from pipeline.interop.openenv import SynthAction, SynthEnv, SynthObservation, replay_reference
from pipeline.interop.openenv_server import PackagePool, build_app, message_problem, running
from pipeline.taxonomy.capabilities import taxonomy

# isort: split
# after pipeline.interop.openenv, which loads OpenEnv without Gradio
from openenv.core.generic_client import GenericEnvClient

EXAMPLES = sorted(Path(__file__).parents[2].joinpath("examples").glob("*.json"))


def _packages() -> list[TaskPackage]:
    examples = [load_package(p.read_text()) for p in EXAMPLES]
    generated = [generate_package(c.name, c.templates[0].name, 7, 0) for c in taxonomy().values()]
    return examples + generated


PACKAGES = _packages()


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with running(build_app(PackagePool(PACKAGES, seed=3), max_sessions=8)) as base:
        yield base


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def null_floor(package: TaskPackage) -> float:
    env = TaskEnv(package)
    env.reset()
    return env.step(Answer(text="")).reward


# --------------------------------------------------------------------------- scores


def test_replaying_each_reference_scores_what_taskenv_scores(url: str) -> None:
    async def play() -> list[tuple[str, float | None, dict[str, Any]]]:
        async with SynthEnv(base_url=url) as env:
            out = []
            for package in PACKAGES:
                result = await replay_reference(env, package)
                assert result.done and result.observation.kind == "end"
                out.append((package.id, result.reward, result.observation.info))
            return out

    for package, (package_id, reward, info) in zip(PACKAGES, run(play()), strict=True):
        expected = play_reference(package).score()
        assert package_id == package.id
        assert reward == expected.score, package.id
        grade = score_json(expected)
        assert {k: info[k] for k in grade} == grade
        assert info["truncated"] is False


def test_doing_nothing_gets_the_null_floor(url: str) -> None:
    async def play() -> list[float | None]:
        async with SynthEnv(base_url=url) as env:
            rewards = []
            for package in PACKAGES:
                await env.reset(package_id=package.id)
                rewards.append((await env.step(SynthAction.final(""))).reward)
            return rewards

    assert run(play()) == [null_floor(p) for p in PACKAGES]


def test_the_reward_is_none_until_the_episode_ends(url: str) -> None:
    package = PACKAGES[0]

    async def play() -> list[Any]:
        async with SynthEnv(base_url=url) as env:
            first = await env.reset(package_id=package.id)
            call = await env.step(SynthAction.call(package.tools[0].name, {}))
            end = await env.step(SynthAction.final("done"))
            return [first, call, end]

    first, call, end = run(play())
    assert (first.reward, first.done, first.observation.kind) == (None, False, "request")
    assert first.observation.text == package.request.text
    assert [t["function"]["name"] for t in first.observation.tools] == [t.name for t in package.tools]
    assert first.observation.info["package_id"] == package.id
    assert (call.reward, call.done, call.observation.kind, call.observation.info["step"]) == (None, False,
                                                                                                "tool_result", 0)
    assert end.done and end.reward is not None and "checks" in end.observation.info


def test_generic_client_with_dict_actions(url: str) -> None:
    """OpenEnv's GenericEnvClient (no synth types) plays an episode with plain dicts."""
    package = PACKAGES[0]

    async def play() -> tuple[Any, Any, dict[str, Any]]:
        async with GenericEnvClient(base_url=url) as env:
            reset = await env.reset(package_id=package.id)
            step = await env.step({"type": "answer", "text": ""})
            return reset, step, await env.state()

    reset, step, state = run(play())
    assert reset.observation["kind"] == "request"
    assert step.done and step.reward == null_floor(package)
    assert state["package_id"] == package.id and state["step_count"] == 1 and state["done"] is True


# --------------------------------------------------------------------------- picking packages, state


def test_resets_walk_the_seeded_shuffle_and_seed_picks_a_position() -> None:
    pool = PackagePool(PACKAGES, seed=11)
    assert sorted(p.id for p in pool.order) == sorted(p.id for p in PACKAGES)
    assert [p.id for p in pool.order] == [p.id for p in PackagePool(PACKAGES, seed=11).order]
    assert [p.id for p in pool.order] != [p.id for p in PackagePool(PACKAGES, seed=12).order]
    with running(build_app(pool)) as base:
        async def play() -> tuple[list[str], list[str]]:
            async with SynthEnv(base_url=base) as a, SynthEnv(base_url=base) as b:
                walked = [(await (a if i % 2 else b).reset()).observation.info["package_id"] for i in range(12)]
                seeded = [(await a.reset(seed=s)).observation.info["package_id"] for s in (0, 4, 4 + len(pool))]
                return walked, seeded

        walked, seeded = run(play())
    order = [p.id for p in pool.order]
    assert walked == [order[i % len(order)] for i in range(12)]  # one counter for every session
    assert seeded == [order[0], order[4], order[4]]


def test_state_reports_the_episode(url: str) -> None:
    package = PACKAGES[1]

    async def play() -> list[Any]:
        async with SynthEnv(base_url=url) as env:
            before = await env.state()
            await env.reset(package_id=package.id, episode_id="ep-1")
            await env.step(SynthAction.call(package.tools[0].name, {}))
            during = await env.state()
            await env.step(SynthAction.final(""))
            return [before, during, await env.state()]

    before, during, after = run(play())
    assert before.package_id is None and before.packages == len(PACKAGES)
    assert (during.episode_id, during.step_count, during.package_id, during.done) == ("ep-1", 1, package.id, False)
    assert during.tokens > 0 and during.max_steps == max(50, len(package.reference))
    assert (after.step_count, after.done, after.truncated) == (2, True, False)


# --------------------------------------------------------------------------- budgets


def test_the_step_budget_ends_the_episode_truncated_with_the_score() -> None:
    package = PACKAGES[0]
    tool = package.tools[0].name
    with running(build_app(PackagePool([package]), max_steps=len(package.reference) + 1)) as base:
        async def play() -> tuple[list[Any], str]:
            async with SynthEnv(base_url=base) as env:
                await env.reset()
                results = [await env.step(SynthAction.call(tool, {})) for _ in range(len(package.reference) + 1)]
                with pytest.raises(RuntimeError) as refused:
                    await env.step(SynthAction.final("late"))
                return results, str(refused.value)

        results, refused = run(play())
    assert [r.done for r in results] == [False] * len(package.reference) + [True]
    last = results[-1]
    assert last.observation.info["truncated"] is True and last.observation.info["passed"] is False
    env = TaskEnv(package, max_steps=len(package.reference) + 1)
    env.reset()
    for _ in range(len(package.reference) + 1):
        expected = env.step({"type": "tool_call", "name": tool, "arguments": {}})
    assert last.reward == expected.reward and expected.info["truncated"]
    assert "the episode is over (its budget is spent); reset() starts another" in refused


def test_the_token_budget_ends_the_episode_truncated() -> None:
    package = PACKAGES[0]
    with running(build_app(PackagePool([package]), max_tokens=len(package.request.text) // 4 + 20)) as base:
        async def play() -> Any:
            async with SynthEnv(base_url=base) as env:
                await env.reset()
                return await env.step(SynthAction.question("x" * 200))

        result = run(play())
    assert result.done and result.observation.info["truncated"] is True and result.reward is not None


# --------------------------------------------------------------------------- errors


def test_errors_are_clear_and_the_session_goes_on(url: str) -> None:
    package = PACKAGES[0]

    async def play() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with SynthEnv(base_url=url) as env:
            with pytest.raises(RuntimeError) as before:
                await env.step(SynthAction.final(""))
            seen["before"] = str(before.value)
            with pytest.raises(RuntimeError) as unknown_package:
                await env.reset(package_id="pkg-0000000000000000")
            seen["unknown_package"] = str(unknown_package.value)
            with pytest.raises(RuntimeError) as unknown_kwarg:
                await env.reset(colour="red")
            seen["unknown_kwarg"] = str(unknown_kwarg.value)
            with pytest.raises(RuntimeError) as no_where:
                await env.reset(where="capability = 'general'")
            seen["no_where"] = str(no_where.value)
            await env.reset(package_id=package.id)
            seen["unknown_tool"] = (await env.step(SynthAction.call("no_such_tool", {}))).observation
            seen["bad_json"] = (await env.step(SynthAction.call(package.tools[0].name, "{not json"))).observation
            seen["array"] = (await env.step(SynthAction.call(package.tools[0].name, "[1, 2]"))).observation
            seen["last"] = await env.step(SynthAction.final(""))
        return seen

    seen = run(play())
    assert "call reset() before step()" in seen["before"]
    assert "no package 'pkg-0000000000000000' on this server" in seen["unknown_package"]
    assert "reset() takes package_id, where, seed and episode_id; not colour" in seen["unknown_kwarg"]
    assert "holds package files, not a catalog: reset() takes no where" in seen["no_where"]
    unknown: SynthObservation = seen["unknown_tool"]
    assert unknown.status == 404 and "unknown tool 'no_such_tool'" in unknown.text
    assert seen["bad_json"].status == 400 and "arguments are not valid JSON" in seen["bad_json"].text
    assert seen["array"].status == 400 and "must be a JSON object, got list" in seen["array"].text
    assert seen["last"].done and seen["last"].observation.info["step"] == 3


def test_an_invalid_action_is_refused_by_its_schema() -> None:
    with pytest.raises(ValueError, match="a tool_call needs the tool's name"):
        SynthAction(type="tool_call")
    with pytest.raises(ValueError, match="an ask needs its text"):
        SynthAction(type="ask")
    with pytest.raises(ValueError, match="carries text only"):
        SynthAction(type="answer", text="x", name="t")
    with pytest.raises(ValueError):
        SynthAction.model_validate({"type": "dance"})
    assert SynthAction.call("t", {"a": 1}).engine_action().model_dump() == {
        "type": "tool_call", "name": "t", "arguments": {"a": 1}}


def _ws(url: str) -> str:
    return url.replace("http", "ws", 1) + "/ws"


async def _exchange(ws: Any, message: str | bytes) -> dict[str, Any]:
    await ws.send(message)
    reply: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 30))
    return reply


def test_hostile_messages_get_error_frames_and_leave_the_session_and_others_alone(url: str) -> None:
    package = PACKAGES[0]
    deep = '{"type": "step", "data": ' + '{"a": ' * 5000 + "1" + "}" * 5001
    nested = {"type": "step", "data": {"type": "tool_call", "name": package.tools[0].name,
                                       "arguments": json.loads('{"a": ' * 70 + "1" + "}" * 70)}}

    async def play() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with SynthEnv(base_url=url) as other, connect(_ws(url), max_size=None) as ws:
            await other.reset(package_id=package.id)
            await _exchange(ws, json.dumps({"type": "reset", "data": {"package_id": package.id}}))
            seen["deep"] = await _exchange(ws, deep)
            seen["nested"] = await _exchange(ws, json.dumps(nested))
            seen["not_json"] = await _exchange(ws, "{nope")
            seen["not_object"] = await _exchange(ws, "[1, 2]")
            seen["bytes"] = await _exchange(ws, b'{"type": "state"}')
            seen["unknown_type"] = await _exchange(ws, '{"type": "dance"}')
            seen["bad_action"] = await _exchange(ws, '{"type": "step", "data": {"type": "tool_call"}}')
            seen["after"] = await _exchange(ws, json.dumps({"type": "step", "data": {"type": "answer", "text": ""}}))
            seen["other"] = await other.step(SynthAction.final(""))
            try:  # a message over 1 MiB closes its own session (WebSocket code 1009), no other
                await _exchange(ws, json.dumps({"type": "state", "pad": "x" * (2 * 1024 * 1024)}))
            except ConnectionClosed as closed:
                seen["huge"] = closed.rcvd.code if closed.rcvd else None
            seen["other_after"] = await other.state()
        return seen

    seen = run(play())
    assert seen["deep"]["type"] == "error" and "nests deeper than 64 levels" in seen["deep"]["data"]["message"]
    assert seen["nested"]["type"] == "error" and "nests deeper than 64" in seen["nested"]["data"]["message"]
    assert seen["not_json"]["data"]["code"] == "INVALID_JSON"
    assert "a message is a JSON object, got list" in seen["not_object"]["data"]["message"]
    assert seen["bytes"]["type"] == "state" and seen["bytes"]["data"]["package_id"] == package.id
    assert "Unknown message type: dance" in seen["unknown_type"]["data"]["message"]
    assert seen["bad_action"]["data"]["code"] == "VALIDATION_ERROR"
    assert seen["after"]["type"] == "observation" and seen["after"]["data"]["done"] is True
    assert seen["after"]["data"]["reward"] == null_floor(package)
    assert seen["other"].reward == null_floor(package)
    assert seen["huge"] == 1009
    assert seen["other_after"].done is True


def _raw(url: str, request: bytes) -> tuple[int, bytes]:
    """The status and body of one raw request (the connection closed after it)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def _http(url: str, request: bytes) -> tuple[int, dict[str, Any]]:
    status, body = _raw(url, request)
    return status, json.loads(body)


def test_foreign_host_or_origin_is_refused(url: str) -> None:
    port = url.rsplit(":", 1)[1]
    status, body = _http(url, b"GET /health HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
    assert status == 403 and "Host 'evil.example' is not this server" in body["error"]["message"]
    status, body = _http(url, f"GET /health HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: http://evil.example"
                              "\r\nConnection: close\r\n\r\n".encode())
    assert status == 403 and "cross-origin request" in body["error"]["message"]
    status, body = _http(url, f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://localhost:{port}"
                              "\r\nConnection: close\r\n\r\n".encode())
    assert status == 200 and body == {"status": "healthy"}

    async def handshake(headers: dict[str, str]) -> int | None:
        try:
            async with connect(_ws(url), additional_headers=headers):
                return None
        except InvalidStatus as refused:
            return refused.response.status_code

    assert run(handshake({"Origin": "http://evil.example"})) == 403
    assert run(handshake({})) is None
    upgrade = ("GET /ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    assert _raw(url, upgrade.format("evil.example").encode())[0] == 403


def test_http_bodies_are_bounded_and_errors_are_json(url: str) -> None:
    def post(path: str, body: bytes, extra: str = "") -> tuple[int, dict[str, Any]]:
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
        return _http(url, head.encode() + body)

    status, body = post("/step", b'{"action": {"type": "answer", "text": ""}}')
    assert status == 409 and "call reset() before step()" in body["error"]["message"]
    status, body = post("/reset", b'{"package_id": "pkg-0000000000000000"}')
    assert status == 400 and "no package" in body["error"]["message"]
    status, body = post("/step", b'{"action": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    assert status == 400 and "nests deeper than 64 levels" in body["error"]["message"]
    status, body = _http(url, b"POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999\r\n"
                              b"Connection: close\r\n\r\n")
    assert status == 413 and "at most 1,048,576 bytes" in body["error"]["message"]
    status, body = _http(url, b"POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
                              b"Connection: close\r\n\r\n0\r\n\r\n")
    assert status == 411
    status, body = post("/reset", b"{}")
    assert status == 200 and body["observation"]["kind"] == "request"


def test_message_problem() -> None:
    assert message_problem('{"type": "state"}') is None
    assert message_problem("[" * 65 + "]" * 65) is not None
    assert message_problem("{" * 2000) is not None
    assert message_problem("") is not None


def test_the_openenv_face_loads_without_gradio_and_leaves_it_importable() -> None:
    """Importing the client and the server loads OpenEnv without its Gradio web interface (half of
    its start-up), and leaves no trace that would stop anything else importing Gradio."""
    code = ("import importlib.util, sys\n"
            "import pipeline.interop.openenv_server, pipeline.interop.openenv\n"
            "import openenv.core.env_server as server\n"
            "assert 'gradio' not in sys.modules, 'gradio loaded'\n"
            "assert server.create_web_interface_app is None\n"
            "assert importlib.util.find_spec('gradio') is not None\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]

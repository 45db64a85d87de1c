"""The local OpenAI-compatible test server: wire format, concurrency, fault plans, counting."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest

from tests.support import Fault, FaultPlan, OpenAIServer, fixed_responder, processes

MESSAGES: list[Any] = [{"role": "user", "content": "hello"}]


def post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=processes.PATIENCE_S) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_sdk_reads_a_completion_with_content_finish_reason_and_usage() -> None:
    async def ask(base_url: str) -> Any:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0) as client:
            return await client.chat.completions.create(model="m", messages=MESSAGES)

    with OpenAIServer(fixed_responder('{"answer": 42}')) as server:
        completion = asyncio.run(ask(server.base_url))
    assert completion.model == "m"
    assert completion.choices[0].message.content == '{"answer": 42}'
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.completion_tokens > 0
    assert server.requests[0]["messages"] == MESSAGES


def test_sustains_32_concurrent_slow_requests() -> None:
    async def ask_all(base_url: str) -> list[Any]:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0, timeout=processes.PATIENCE_S) as client:
            return await asyncio.gather(*(client.chat.completions.create(model="m", messages=MESSAGES)
                                          for _ in range(32)))

    with OpenAIServer(fixed_responder("{}"), latency_s=0.5) as server:
        completions = asyncio.run(ask_all(server.base_url))
    assert len(completions) == 32
    assert server.max_in_flight == 32
    assert server.counts == {"ok": 32}


def test_fault_plan_is_deterministic_per_request_number() -> None:
    plan = FaultPlan(rate=0.3, seed=3, at={2: Fault.SLOW})
    faults = [plan.fault_for(n) for n in range(1, 301)]
    assert faults == [FaultPlan(rate=0.3, seed=3, at={2: Fault.SLOW}).fault_for(n) for n in range(1, 301)]
    assert faults != [FaultPlan(rate=0.3, seed=4, at={2: Fault.SLOW}).fault_for(n) for n in range(1, 301)]
    assert faults[1] is Fault.SLOW
    assert 0 < sum(f is not None for f in faults) < 300
    assert all(FaultPlan().fault_for(n) is None for n in range(1, 50))
    assert all(FaultPlan(rate=1.0, kinds=(Fault.TRUNCATED,)).fault_for(n) is Fault.TRUNCATED for n in range(1, 50))


@pytest.mark.parametrize(("fault", "status", "check"), [
    (Fault.RATE_LIMITED, 429, lambda body: body["error"]["type"] == "rate_limit_error"),
    (Fault.UNAVAILABLE, 503, lambda body: "error" in body),
    (Fault.TRUNCATED, 200, lambda body: body["choices"][0]["finish_reason"] == "length"
     and body["choices"][0]["message"]["content"] == '{"tools": ['),
    (Fault.SCHEMA_INVALID, 200, lambda body: json.loads(body["choices"][0]["message"]["content"]) == {"a": 2}),
    (Fault.MALFORMED, 200, lambda body: not body["choices"][0]["message"]["content"].startswith("{")),
])
def test_each_fault_changes_the_answer(fault: Fault, status: int, check: Any) -> None:
    with OpenAIServer(fixed_responder('{"tools": [1], "a": 2}'), faults=FaultPlan(at={1: fault})) as server:
        code, body = post(f"{server.base_url}/chat/completions", json.dumps({"model": "m", "messages": MESSAGES}).encode())
    assert code == status
    assert check(body)
    assert server.counts == {fault.value: 1}


def test_json_schema_requests_are_rejected_without_structured_output() -> None:
    body = {"model": "m", "messages": MESSAGES, "response_format": {"type": "json_schema", "json_schema": {}}}
    with OpenAIServer(fixed_responder("{}"), structured_output=False) as server:
        code, answer = post(f"{server.base_url}/chat/completions", json.dumps(body).encode())
        ok, _ = post(f"{server.base_url}/chat/completions",
                     json.dumps({**body, "response_format": {"type": "json_object"}}).encode())
    assert (code, answer["error"]["param"], ok) == (400, "response_format", 200)
    assert server.counts == {"structured_rejected": 1, "ok": 1}


def test_bad_requests_and_broken_responders_are_counted() -> None:
    def broken(_: dict[str, Any]) -> str:
        raise RuntimeError("no content today")

    with OpenAIServer(broken) as server:
        wrong_path, _ = post(server.base_url.replace("/v1", "/v2") + "/chat/completions", b"{}")
        not_json, _ = post(f"{server.base_url}/chat/completions", b"[1")
        failed, body = post(f"{server.base_url}/chat/completions", json.dumps({"messages": MESSAGES}).encode())
    assert (wrong_path, not_json, failed) == (404, 400, 500)
    assert "no content today" in body["error"]["message"]
    assert server.counts == {"bad_request": 2, "responder_error": 1}
    assert len(server.requests) == 1


def test_base_url_needs_a_running_server() -> None:
    with pytest.raises(RuntimeError, match="not running"):
        _ = OpenAIServer(fixed_responder("{}")).base_url


def test_a_request_cut_off_by_its_client_reaches_no_responder() -> None:
    """A client killed mid-request (a Ray worker, say) asked nothing: its half body is not a request."""
    import socket
    from urllib.parse import urlparse

    asked: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> str:
        asked.append(body)
        return "{}"

    with OpenAIServer(responder) as server:
        url = urlparse(server.base_url)
        with socket.create_connection((url.hostname, url.port), timeout=processes.PATIENCE_S) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n")  # the headers, then the client is gone
        processes.wait_for(lambda: sum(server.counts.values()) > 0, what="the server to deal with the request")
    assert asked == [] and server.counts == {"cut_off": 1}

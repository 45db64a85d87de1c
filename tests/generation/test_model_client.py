"""The one model client (pipeline/generation/model_client.py) and the one lookup of model, server
and key (pipeline/generation/model_endpoint.py), through the real ``openai`` client against the
local OpenAI-compatible test server."""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx2
import openai
import pytest

from pipeline.core.errors import UserError
from pipeline.core.outcomes import LLMCall
from pipeline.generation import model_client
from pipeline.generation.model_client import (
    REDACTED,
    Backoff,
    ModelClient,
    ModelError,
    ServerUnusable,
    ToolCall,
    completion_of,
    retry_after_seconds,
)
from pipeline.generation.model_endpoint import KEYLESS, Endpoint
from tests.support import Fault, FaultPlan, OpenAIServer, fixed_responder

API_KEY = "sk-test-9d8c7b6a5f4e3d2c"
TINY = Backoff(initial=0.001, maximum=0.01, retry_after_cap=5.0, max_total_wait=10.0)
ASK = [{"role": "user", "content": "Which day?"}]


def client(server: OpenAIServer, max_attempts: int = 4) -> ModelClient:
    return ModelClient("fake-model", server.base_url, API_KEY, timeout=5.0, max_attempts=max_attempts, backoff=TINY)


def complete(form: str, chat: ModelClient, calls: list[LLMCall], **options: Any) -> model_client.Completion:
    """One completion through the sync or the async form."""
    if form == "sync":
        return chat.complete_sync(ASK, calls=calls, **options)

    async def go() -> model_client.Completion:
        async with chat:
            return await chat.complete(ASK, calls=calls, **options)

    return asyncio.run(go())


@pytest.mark.parametrize("form", ["sync", "async"])
def test_a_completion_returns_text_and_usage_and_sends_tools_and_temperature(form: str) -> None:
    tool = {"type": "function", "function": {"name": "calendar_list", "description": "", "parameters": {}}}
    calls: list[LLMCall] = []
    with OpenAIServer(fixed_responder("It's on 2026-12-03.")) as server:
        done = complete(form, client(server), calls, tools=[tool], temperature=0, seed=3)
    assert done.text == "It's on 2026-12-03." and done.finish_reason == "stop" and done.tool_calls == ()
    assert done.prompt_tokens > 0 and done.completion_tokens > 0
    [request] = server.requests
    assert request["tools"] == [tool] and request["temperature"] == 0 and request["seed"] == 3
    assert request["model"] == "fake-model" and request["messages"] == ASK
    assert [c.status for c in calls] == ["ok"] and calls[0].completion_tokens == done.completion_tokens


@pytest.mark.parametrize("form", ["sync", "async"])
@pytest.mark.parametrize(("fault", "status"), [(Fault.RATE_LIMITED, "rate_limited"),
                                               (Fault.SERVER_ERROR, "server_error")])
def test_429_and_500_are_retried(form: str, fault: Fault, status: str) -> None:
    calls: list[LLMCall] = []
    plan = FaultPlan(at={1: fault, 2: fault}, retry_after="0.01")
    with OpenAIServer(fixed_responder("fine"), faults=plan) as server:
        done = complete(form, client(server), calls)
    assert done.text == "fine"
    assert [c.status for c in calls] == [status, status, "ok"] and len(server.requests) == 3


@pytest.mark.parametrize("form", ["sync", "async"])
def test_exhausted_retries_raise_a_model_error_after_max_attempts(form: str) -> None:
    calls: list[LLMCall] = []
    failing = FaultPlan(rate=1.0, kinds=(Fault.SERVER_ERROR,))
    with OpenAIServer(fixed_responder("x"), faults=failing) as server, \
            pytest.raises(ModelError, match="^InternalServerError: ") as raised:
        complete(form, client(server, max_attempts=3), calls)
    assert raised.value.status == "server_error" and len(server.requests) == 3 and len(calls) == 3


@pytest.mark.parametrize("form", ["sync", "async"])
def test_the_key_never_leaks_into_errors_records_or_logs(form: str, caplog: pytest.LogCaptureFixture) -> None:
    """The server echoes the request's Authorization header in its error body."""
    caplog.set_level(logging.DEBUG)
    calls: list[LLMCall] = []
    leaking = FaultPlan(rate=1.0, kinds=(Fault.LEAKY_ERROR,))
    with OpenAIServer(fixed_responder("x"), faults=leaking) as server, pytest.raises(ModelError) as raised:
        complete(form, client(server, max_attempts=2), calls)
    shown = "".join(traceback.format_exception(raised.value))
    assert REDACTED in str(raised.value) and API_KEY not in shown
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    assert all(API_KEY not in c.model_dump_json() for c in calls) and REDACTED in (calls[0].error or "")
    assert API_KEY not in caplog.text
    assert API_KEY not in repr(vars(ModelClient("m", "http://127.0.0.1:9/v1", API_KEY)))  # kept only by the SDK


def test_the_sync_form_works_inside_a_running_event_loop() -> None:
    """A rollout or a notebook calling the LLM user from inside an event loop."""
    with OpenAIServer(fixed_responder("ok")) as server:
        chat = client(server)

        async def inside() -> str:
            return chat.complete_sync(ASK).text

        assert asyncio.run(inside()) == "ok"
        chat.close()


def test_a_request_the_server_rejects_is_not_retried() -> None:
    schema = {"type": "json_schema", "json_schema": {"name": "x"}}
    with OpenAIServer(fixed_responder("x"), structured_output=False) as server, pytest.raises(ModelError) as raised:
        client(server).complete_sync(ASK, response_format=schema)
    assert raised.value.status == "http_400" and len(server.requests) == 1


def test_tool_calls_and_usage_are_read_from_the_body() -> None:
    body = {"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "calendar_list", "arguments": "{\"day\": 3}"}},
        {"id": "call_2", "type": "function", "function": {"name": "todo_add", "arguments": {"title": "x"}}},
        {"id": "call_3", "type": "function"}]}}], "usage": {"prompt_tokens": 11, "completion_tokens": 7}}
    done = completion_of(body)
    assert done.tool_calls == (ToolCall("call_1", "calendar_list", '{"day": 3}'),
                               ToolCall("call_2", "todo_add", '{"title": "x"}'))
    assert (done.text, done.finish_reason, done.prompt_tokens, done.completion_tokens) == ("", "tool_calls", 11, 7)
    assert completion_of(None) == model_client.Completion("", (), None, 0, 0, None)


def _connection_error() -> openai.APIConnectionError:
    return openai.APIConnectionError(request=httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions"))


def test_only_unanswered_requests_in_a_row_make_a_server_unusable() -> None:
    chat = ModelClient("m", "http://127.0.0.1:1/v1", API_KEY, max_attempts=3)
    timeout = openai.APITimeoutError(request=httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions"))
    for _ in range(5):  # an answer (a timeout counts as one: the server may be busy) resets the count
        chat._raise_if_unusable(_connection_error())
        chat._raise_if_unusable(_connection_error())
        chat._raise_if_unusable(timeout)
    chat._raise_if_unusable(_connection_error())
    chat._raise_if_unusable(_connection_error())
    with pytest.raises(ServerUnusable, match="--base-url"):
        chat._raise_if_unusable(_connection_error())


def test_retry_warnings_are_summarised(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(model_client.time, "monotonic", lambda: clock[0])
    caplog.set_level(logging.WARNING, logger="pipeline.generation.model_client")
    log = model_client._RetryLog("m", every=10.0)
    for n in range(500):
        clock[0] += 0.0625  # 500 retries over 31 seconds
        log.retry("connection_error" if n % 5 else "http_503", 0.5)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4  # the first at once, then one per 10 s
    assert lines[0] == "m: a request failed (http_503), retrying in 0.5s"
    assert lines[1] == "m: 160 failed requests retried in the last 10s (connection_error x128, http_503 x32)"


def rate_limit_error(headers: dict[str, str]) -> openai.RateLimitError:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return openai.RateLimitError("slow down", response=httpx2.Response(429, headers=headers, request=request), body=None)


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after": "2.5"}, 2.5),
    ({"retry-after-ms": "150", "retry-after": "9"}, 0.15),
    ({"retry-after": "soon"}, None),
    ({}, None),
])
def test_retry_after_seconds_reads_seconds_and_milliseconds(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(rate_limit_error(headers)) == seconds


def test_retry_after_seconds_reads_an_http_date() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds(rate_limit_error({"retry-after": when})) == pytest.approx(30, abs=1.5)


# --------------------------------------------------------------------------- model, server and key


def test_the_endpoint_reads_synth_model_and_openai_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SYNTH_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert Endpoint.from_env() == Endpoint("offline", None) and Endpoint.from_env().offline
    assert Endpoint.from_env().server == "the OpenAI API"
    monkeypatch.setenv("SYNTH_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert Endpoint.from_env() == Endpoint("env-model", "http://127.0.0.1:9/v1")
    assert Endpoint.from_env("given", "http://h/v1") == Endpoint("given", "http://h/v1")  # options win


def test_the_key_comes_from_the_environment_or_is_not_needed_for_a_server_given_by_url(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="^say what is missing$"):
        Endpoint("m").api_key("say what is missing")
    assert Endpoint("m", "http://127.0.0.1:9/v1").api_key("unused") == KEYLESS
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    assert Endpoint("m").api_key("unused") == API_KEY
    assert API_KEY not in repr(Endpoint("m"))


def test_a_streamed_reply_assembles_to_the_plain_one() -> None:
    message = {"content": "Calling two tools. " * 3, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "todo_list_tasks", "arguments": "{}"}},
        {"id": "call_b", "type": "function",
         "function": {"name": "todo_create_task", "arguments": json.dumps({"title": "Book the venue, early"})}}]}

    async def both(url: str) -> tuple[model_client.Completion, model_client.Completion]:
        async with ModelClient("m", url, "test") as client:
            plain = await client.complete([{"role": "user", "content": "hi"}])
            streamed = await client.complete([{"role": "user", "content": "hi"}], stream=True)
        return plain, streamed

    with OpenAIServer(lambda _body: message) as server:
        plain, streamed = asyncio.run(both(server.base_url))
        assert server.requests[1]["stream"] is True and "stream" not in server.requests[0]
    assert streamed.text == plain.text == message["content"]
    assert streamed.tool_calls == plain.tool_calls and len(plain.tool_calls) == 2
    assert streamed.finish_reason == plain.finish_reason == "tool_calls"
    assert (streamed.prompt_tokens, streamed.completion_tokens) == (plain.prompt_tokens, plain.completion_tokens) != (0, 0)


def _delta(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"tool_calls": list(calls)}, "finish_reason": None}]}


@pytest.mark.parametrize("index", [None, 0], ids=["no-index", "all-at-0"])
def test_parallel_streamed_calls_without_their_own_index_stay_apart(index: int | None) -> None:
    """Some servers send each parallel call's deltas with no ``index``, or all at 0: a new ``id``
    starts a new call; deltas without an id continue the call before them."""
    at = {} if index is None else {"index": index}
    body = model_client.assemble_stream([
        _delta({**at, "id": "a", "function": {"name": "search", "arguments": '{"q"'}}),
        _delta({**at, "function": {"arguments": ": 1}"}}),
        _delta({**at, "id": "b", "function": {"name": "send", "arguments": '{"to": 2}'}})])
    calls = body["choices"][0]["message"]["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("a", "search", '{"q": 1}'), ("b", "send", '{"to": 2}')]


def test_structured_output_cannot_be_streamed() -> None:
    async def ask() -> None:
        async with ModelClient("m", "http://127.0.0.1:9/v1", "test") as client:
            await client.complete([{"role": "user", "content": "hi"}], response_format=LLMCall, stream=True)

    with pytest.raises(ValueError, match="cannot be streamed"):
        asyncio.run(ask())


# --------------------------------------------------------------------------- several servers


def test_a_server_list_is_read_once_in_one_form() -> None:
    from pipeline.generation.model_endpoint import joined_urls, server_urls

    assert server_urls("http://a/v1, http://b/v1,,http://a/v1") == ("http://a/v1", "http://b/v1")
    assert server_urls(None) == ()
    assert joined_urls(["http://a/v1", "http://b/v1,http://c/v1"]) == "http://a/v1,http://b/v1,http://c/v1"
    assert joined_urls([]) is None
    endpoint = Endpoint.from_env("m", "http://a/v1,http://b/v1")
    assert endpoint.server == "http://a/v1, http://b/v1"


def test_the_least_busy_server_takes_the_next_request_and_equal_ones_take_turns() -> None:
    from pipeline.generation.model_endpoint import LeastBusy

    balance = LeastBusy(3)
    assert [balance.acquire() for _ in range(3)] == [0, 1, 2]  # all free: round-robin
    balance.release(1)
    assert balance.acquire() == 1  # the only one with nothing in flight
    balance.release(0)
    balance.release(2)
    assert sorted(balance.acquire() for _ in range(2)) == [0, 2]


def test_requests_are_spread_over_every_server_given() -> None:
    with OpenAIServer(fixed_responder("one"), latency_s=0.05) as first, \
            OpenAIServer(fixed_responder("two"), latency_s=0.05) as second:
        async def ask_all() -> list[str]:
            async with ModelClient("m", f"{first.base_url},{second.base_url}", API_KEY, backoff=TINY) as c:
                replies = await asyncio.gather(*(c.complete(ASK) for _ in range(8)))
            return [r.text for r in replies]

        texts = asyncio.run(ask_all())
        assert sorted(texts) == ["one"] * 4 + ["two"] * 4
        assert sum(first.counts.values()) == sum(second.counts.values()) == 4


def test_a_server_of_the_list_that_cannot_be_reached_is_named() -> None:
    with OpenAIServer(fixed_responder("up")) as up:
        down = "http://127.0.0.1:9/v1"

        async def check() -> None:
            async with ModelClient("m", f"{up.base_url},{down}", API_KEY, backoff=TINY) as c:
                await c.check()

        with pytest.raises(ServerUnusable) as raised:
            asyncio.run(check())
        assert f"the model server at {down}" in str(raised.value)


def test_a_blocking_call_waits_no_longer_than_its_time_when_the_server_goes_silent_mid_reply() -> None:
    """The blocking client reads the reply on a thread and waits for it only as long as the
    request may take: a server that sends a few bytes and then nothing would otherwise hold each
    read for the whole read timeout past the deadline."""
    import time

    from tests.support.hostile_server import MISBEHAVIOURS, HostileServer

    with HostileServer(MISBEHAVIOURS["stalls"]) as server:
        client = ModelClient("m", server.base_url, "k", timeout=3.0, deadline=3.0, max_attempts=1)
        started = time.monotonic()
        with pytest.raises(ModelError, match="no whole reply within"):
            client.complete_sync(ASK)
        waited = time.monotonic() - started
    assert waited < 3.0 + 1.5  # before: the last byte near 2.5 s, then a read waiting 3 s more

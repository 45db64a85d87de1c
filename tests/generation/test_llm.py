"""The LLM generator against a real local OpenAI-compatible server, through the real ``openai`` client."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pipeline.core.episode import execute
from pipeline.core.errors import UserError
from pipeline.core.grading import score
from pipeline.core.package import TaskPackage, load_package
from pipeline.generation.base import Attempt, Generated
from pipeline.generation.llm import LLMGenerator, from_env, interpret
from pipeline.generation.model_client import REDACTED, Backoff, ServerUnusable
from pipeline.generation.offline import pick_template
from pipeline.taxonomy.capabilities import Capability, WorkflowTemplate
from tests.support import Fault, FaultPlan, OpenAIServer, fixed_responder, processes

API_KEY = "sk-test-4f9c2e1b7a6d5c3e"
TINY = Backoff(initial=0.001, maximum=0.01, retry_after_cap=5.0, max_total_wait=10.0)
TEMPLATE = WorkflowTemplate(
    name="schedule-meeting-after-clarification", description="Book a meeting once the user names the day.",
    services=["contacts", "calendar"], steps=["find the colleague", "ask for the day", "create the event"],
    checks=["one event with the colleague on that day", "the day was asked for"],
)
CAPABILITIES = {"multi-turn": Capability(name="multi-turn", description="Ask before acting.", skill="clarify",
                                         check_kinds=["state_count", "asked_user"], templates=[TEMPLATE])}


def failure_text(result: Any) -> str | None:
    """``code: message`` of a generation's failure (None when it has none)."""
    return str(result.failure) if result.failure is not None else None


def attempt(seed: int = 7, **extra: Any) -> Attempt:
    return Attempt(capability="multi-turn", template=TEMPLATE.name, seed=seed, slot=0, **extra)


@pytest.fixture
def package_json(example_doc) -> str:
    return json.dumps(example_doc("multi-turn-schedule-meeting"))


def generator(server: OpenAIServer | None = None, *, base_url: str | None = None, timeout: float = 5.0,
              max_attempts: int = 4, backoff: Backoff = TINY) -> LLMGenerator:
    return LLMGenerator(model="fake-model", base_url=base_url or server.base_url, api_key=API_KEY,  # type: ignore[union-attr]
                        timeout=timeout, max_attempts=max_attempts, backoff=backoff, capabilities=CAPABILITIES)


def run(gen: LLMGenerator, *attempts: Attempt) -> list[Generated]:
    """Generate for each attempt in turn, then close the client."""

    async def go() -> list[Generated]:
        async with gen:
            return [await gen.generate(a) for a in attempts]

    return asyncio.run(go())


def statuses(result: Generated) -> list[str]:
    return [c.status for c in result.calls]


def test_good_package_comes_back_validated_with_provenance_and_plays_to_full_score(package_json: str) -> None:
    renamed = json.dumps({**json.loads(package_json), "capability": "invented", "workflow": "invented-too"})
    with OpenAIServer(fixed_responder(renamed)) as server:
        [result] = run(generator(server), attempt(seed=7))
    assert failure_text(result) is None
    package = result.package
    assert package is not None
    assert (package.capability, package.workflow) == ("multi-turn", TEMPLATE.name)
    assert package.id == ""  # verification computes the id from the content
    assert package.provenance.generator == "llm"
    assert package.provenance.model_dump() == {"generator": "llm", "template": TEMPLATE.name, "seed": 7,
                                               "slot": 0, "attempt": 1, "parent": None, "model": "fake-model"}
    assert score(package, execute(package)).score == 1.0
    [call] = result.calls
    assert call.status == "ok" and call.model == "fake-model"
    assert call.prompt_tokens > 0 and call.completion_tokens > 0 and call.latency_s > 0
    [request] = server.requests
    assert request["response_format"]["type"] == "json_schema"
    sent = request["response_format"]["json_schema"]["schema"]
    assert {"request", "initial_state", "tools", "checks", "reference"} <= set(sent["properties"])
    assert not {"id", "provenance", "has_reference"} & set(sent["properties"])  # the pipeline sets those
    assert sent["properties"]["checks"]["items"]["properties"]["kind"]["enum"]  # kinds are closed, fields open
    assert request["seed"] == attempt(seed=7).item_seed  # the slot's own seed, not the run's
    assert [m["role"] for m in request["messages"]] == ["system", "user"]


def test_repair_renders_findings_and_records_the_parent(package_json: str) -> None:
    parent = load_package(package_json).with_id()
    with OpenAIServer(fixed_responder(package_json)) as server:
        [result] = run(generator(server), attempt(attempt=2, parent=parent))
    assert result.package is not None
    assert result.package.provenance.parent == parent.id
    assert result.package.provenance.attempt == 2
    assert "Rejected package" in server.requests[0]["messages"][1]["content"]


def test_tools_named_by_the_model_get_their_catalogue_parameters(package_json: str) -> None:
    data = json.loads(package_json)
    for tool in data["tools"]:
        tool["parameters"], tool["description"] = {}, ""
    with OpenAIServer(fixed_responder(json.dumps(data))) as server:
        [result] = run(generator(server), attempt())
    assert result.package is not None
    bound = {t.name: t for t in result.package.tools}
    assert bound["calendar_create_event"].parameters["required"] == ["title", "start"]
    assert bound["contacts_search"].description  # the catalogue's, since the model gave none
    assert score(result.package, execute(result.package)).score == 1.0


def test_an_invalid_reply_is_shown_back_with_its_error_on_the_next_attempt(package_json: str) -> None:
    bad = json.dumps({**json.loads(package_json), "checks": [{"kind": "state_cnt", "weight": 1.0}]})
    with OpenAIServer(fixed_responder(bad)) as server:
        [first] = run(generator(server), attempt())
        assert first.failure is not None and first.failure.code.value == "schema_invalid" and first.raw == bad
        [_] = run(generator(server), attempt(attempt=2, invalid=first.failure, raw=first.raw))
    repair = server.requests[1]["messages"][1]["content"]
    assert "# Invalid reply" in repair and "state_cnt" in repair and "Variation seed" not in repair


def test_rate_limit_is_retried_after_the_retry_after_header(package_json: str) -> None:
    plan = FaultPlan(at={1: Fault.RATE_LIMITED}, retry_after="0.3")
    with OpenAIServer(fixed_responder(package_json), faults=plan) as server:
        started = time.perf_counter()
        [result] = run(generator(server), attempt())
        elapsed = time.perf_counter() - started
    assert result.package is not None
    assert statuses(result) == ["rate_limited", "ok"]
    assert elapsed >= 0.3  # the backoff alone would wait at most 0.01 s
    assert server.counts == {"rate_limited": 1, "ok": 1}


def test_retry_after_is_capped(package_json: str) -> None:
    plan = FaultPlan(at={1: Fault.RATE_LIMITED}, retry_after="30")
    capped = Backoff(initial=0.001, maximum=0.01, retry_after_cap=0.05, max_total_wait=60.0)
    with OpenAIServer(fixed_responder(package_json), faults=plan) as server:
        started = time.perf_counter()
        [result] = run(generator(server, backoff=capped), attempt())
    assert statuses(result) == ["rate_limited", "ok"]
    assert time.perf_counter() - started < 10


def test_total_wait_is_bounded(package_json: str) -> None:
    plan = FaultPlan(rate=1.0, kinds=(Fault.RATE_LIMITED,), retry_after="1")
    bounded = Backoff(initial=0.001, maximum=0.01, retry_after_cap=5.0, max_total_wait=0.5)
    with OpenAIServer(fixed_responder(package_json), faults=plan) as server:
        [result] = run(generator(server, backoff=bounded), attempt())
    assert failure_text(result) is not None and failure_text(result).startswith("llm_error: RateLimitError")
    assert statuses(result) == ["rate_limited"]  # the next wait (1 s) would pass the 0.5 s budget
    assert len(server.requests) == 1


@pytest.mark.parametrize(("fault", "status"), [(Fault.SERVER_ERROR, "server_error"), (Fault.UNAVAILABLE, "server_error")])
def test_server_errors_are_retried_then_succeed(package_json: str, fault: Fault, status: str) -> None:
    with OpenAIServer(fixed_responder(package_json), faults=FaultPlan(at={1: fault, 2: fault})) as server:
        [result] = run(generator(server), attempt())
    assert result.package is not None
    assert statuses(result) == [status, status, "ok"]


def test_timeout_is_retried(package_json: str) -> None:
    plan = FaultPlan(at={1: Fault.SLOW}, slow_s=processes.PATIENCE_S)  # the server's stop ends it
    with OpenAIServer(fixed_responder(package_json), faults=plan) as server:
        [result] = run(generator(server, timeout=2.0), attempt())  # the answer after it: well inside
    assert result.package is not None
    assert statuses(result) == ["timeout", "ok"]


@pytest.mark.parametrize(("fault", "prefix"), [
    (Fault.MALFORMED, "malformed_output: not JSON"),
    (Fault.SCHEMA_INVALID, "schema_invalid: tools: Field required"),
    (Fault.TRUNCATED, "truncated_output: the model hit its token limit"),
])
def test_bad_output_becomes_an_error_with_raw_and_is_not_retried(package_json: str, fault: Fault, prefix: str) -> None:
    with OpenAIServer(fixed_responder(package_json), faults=FaultPlan(at={1: fault})) as server:
        [result] = run(generator(server), attempt())
    assert result.package is None
    assert failure_text(result) is not None and failure_text(result).startswith(prefix), failure_text(result)
    assert result.raw
    [call] = result.calls
    assert call.status == fault.value.replace("malformed", "malformed_output").replace("truncated", "truncated_output")
    assert call.completion_tokens > 0
    assert len(server.requests) == 1


def test_structured_output_rejection_falls_back_to_json_mode_and_is_remembered(package_json: str) -> None:
    with OpenAIServer(fixed_responder(package_json), structured_output=False) as server:
        gen = generator(server)
        first, second = run(gen, attempt(seed=1), attempt(seed=2))
    assert first.package is not None and second.package is not None
    assert statuses(first) == ["http_400", "ok"]
    assert statuses(second) == ["ok"]
    assert gen.structured_output is False
    kinds = [r.get("response_format", {}).get("type") for r in server.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert server.counts == {"structured_rejected": 1, "ok": 2}


def test_exhausted_retries_give_llm_error(package_json: str) -> None:
    plan = FaultPlan(rate=1.0, kinds=(Fault.SERVER_ERROR,))
    with OpenAIServer(fixed_responder(package_json), faults=plan) as server:
        [result] = run(generator(server, max_attempts=3), attempt())
    assert result.package is None
    assert failure_text(result) is not None and failure_text(result).startswith("llm_error: InternalServerError: ")
    assert statuses(result) == ["server_error"] * 3
    assert len(server.requests) == 3


def _free_port() -> int:
    with socket.socket() as sock:  # a port nobody listens on once this closes
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_server_nobody_answers_is_unusable_after_max_attempts_connection_errors() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(ServerUnusable) as raised:
        run(generator(base_url=url, max_attempts=2), attempt())
    message = str(raised.value)
    assert url in message and "Connection refused" in message and "--base-url" in message
    assert "\n" not in message


def test_check_names_an_unreachable_host() -> None:
    gen = generator(base_url="http://no-such-host.invalid/v1")
    with pytest.raises(ServerUnusable, match="no-such-host.invalid/v1 .*check that it is running"):
        asyncio.run(gen.check())


class StatusServer:
    """A local HTTP server answering every request with one status and an OpenAI-style error body."""

    def __init__(self, status: int) -> None:
        outer = self
        self.requests: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                outer.requests.append(f"{self.command} {self.path}")
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                data = json.dumps({"error": {"message": f"status {status}", "type": "x", "code": None}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *_: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> StatusServer:
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize(("status", "says"), [(401, "OPENAI_API_KEY"), (403, "OPENAI_API_KEY"),
                                              (404, "check --model")])
def test_a_refused_key_or_a_missing_model_stops_at_the_first_request(status: int, says: str) -> None:
    with StatusServer(status) as server:
        with pytest.raises(ServerUnusable, match=f"HTTP {status}.*{says}"):
            run(generator(base_url=server.base_url), attempt())
        assert server.requests == ["POST /v1/chat/completions"]  # not retried


@pytest.mark.parametrize(("status", "unusable"), [(401, True), (403, True), (404, False), (500, False),
                                                  (501, False)])
def test_check_stops_only_at_an_unreachable_server_or_a_refused_key(status: int, unusable: bool) -> None:
    """A server without ``GET /models`` (404, 501) or failing for now (500) passes the check."""
    with StatusServer(status) as server:
        gen = generator(base_url=server.base_url)
        if unusable:
            with pytest.raises(ServerUnusable, match=server.base_url):
                asyncio.run(gen.check())
        else:
            asyncio.run(gen.check())
        assert server.requests == ["GET /v1/models"]


def test_unknown_template_is_a_prompt_error_without_a_request(package_json: str) -> None:
    with OpenAIServer(fixed_responder(package_json)) as server:
        [result] = run(generator(server), Attempt(capability="multi-turn", template="nope", seed=1, slot=0))
    assert failure_text(result) is not None and failure_text(result).startswith("prompt_error: ")
    assert result.calls == [] and server.requests == []


def test_api_key_never_appears_in_results_or_logs(package_json: str, caplog: pytest.LogCaptureFixture) -> None:
    plan = FaultPlan(at={1: Fault.LEAKY_ERROR, 2: Fault.LEAKY_ERROR, 3: Fault.MALFORMED})
    caplog.set_level(logging.DEBUG)
    with OpenAIServer(fixed_responder(package_json), faults=plan) as server:
        leaked, malformed, good = run(generator(server, max_attempts=2), attempt(), attempt(), attempt())
    assert failure_text(leaked) is not None and REDACTED in failure_text(leaked)  # the server did echo the key
    assert failure_text(malformed) and good.package is not None
    for result in (leaked, malformed, good):
        assert API_KEY not in result.model_dump_json()
    assert API_KEY not in caplog.text


@pytest.mark.slow
def test_fifty_requests_with_thirty_percent_faults_are_all_accounted_for(package_json: str) -> None:
    plan = FaultPlan(rate=0.3, seed=5, retry_after="0.01", slow_s=1.5)
    prefixes = ("malformed_output", "schema_invalid", "truncated_output", "llm_error")

    async def go(gen: LLMGenerator) -> list[Generated]:
        limit = asyncio.Semaphore(16)

        async def one(seed: int) -> Generated:
            async with limit:
                return await gen.generate(attempt(seed=seed))

        async with gen:
            return await asyncio.gather(*(one(seed) for seed in range(50)))

    with OpenAIServer(fixed_responder(package_json), faults=plan) as server:
        results = asyncio.run(go(generator(server, timeout=1.0, max_attempts=3)))
        requests = len(server.requests)
    assert len(results) == 50
    for result in results:
        assert (result.package is None) != (failure_text(result) is None)
        assert result.package is not None or failure_text(result).startswith(prefixes), failure_text(result)
    assert sum(len(r.calls) for r in results) == requests  # every HTTP request is one LLMCall
    assert sum(statuses(r).count("ok") for r in results) == sum(r.package is not None for r in results)
    failed = {s for r in results for s in statuses(r)} - {"ok"}
    assert {"rate_limited", "server_error", "timeout", "malformed_output", "schema_invalid", "truncated_output"} <= failed
    assert any(r.package is not None for r in results) and any(failure_text(r) for r in results)


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"choices": [{"message": {"content": "```json\n{\"a\": 1}\n```"}, "finish_reason": "stop"}]},
     "schema_invalid", "schema_invalid: "),
    ({"choices": [{"message": {"content": "[1, 2]"}, "finish_reason": "stop"}]},
     "malformed_output", "malformed_output: expected a JSON object, got list"),
    ({"choices": [{"message": {"content": None, "refusal": "I cannot."}, "finish_reason": "stop"}]},
     "malformed_output", "malformed_output: the model refused: I cannot."),
    ({"choices": [{"message": {"content": [{"type": "text"}]}, "finish_reason": "stop"}]},
     "malformed_output", "malformed_output: not JSON"),
    ({"choices": []}, "malformed_output", "malformed_output: the response is not a chat completion"),
    (None, "malformed_output", "malformed_output: the response is not a chat completion"),
])
def test_interpret_classifies_odd_bodies(body: Any, status: str, message: str) -> None:
    outcome = interpret(body)
    assert outcome.status == status and outcome.package is None
    assert failure_text(outcome) is not None and failure_text(outcome).startswith(message)


def test_interpret_accepts_a_fenced_package(package_json: str) -> None:
    outcome = interpret({"choices": [{"message": {"content": f"```json\n{package_json}\n```"}, "finish_reason": "stop"}]})
    assert isinstance(outcome.package, TaskPackage) and outcome.status == "ok"


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SYNTH_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert from_env() is None
    monkeypatch.setenv("SYNTH_MODEL", "offline")
    assert from_env() is None
    monkeypatch.setenv("SYNTH_MODEL", "some-model")
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        from_env()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    local = from_env()
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    keyed = from_env(model="other-model")
    assert local is not None and local.model == "some-model"
    assert keyed is not None and keyed.model == "other-model"
    for gen in (local, keyed):
        asyncio.run(gen.aclose())


def test_each_slot_and_attempt_sends_a_different_request() -> None:
    """The run seed alone would send every slot of a template the same prompt and API seed."""
    base = Attempt(capability="general", template=pick_template("general", 0), seed=7, slot=0)
    seeds = {base.model_copy(update={"slot": s, "attempt": a}).item_seed for s in range(50) for a in (1, 2)}
    assert len(seeds) == 100
    code = ("from pipeline.generation.base import Attempt; "
            f"print(Attempt.model_validate_json({base.model_dump_json()!r}).item_seed)")
    for hash_seed in ("1", "2"):  # the same in every process, whatever its hash seed
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        assert out.stdout.strip() == str(base.item_seed), out.stderr

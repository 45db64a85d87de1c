"""A local OpenAI-compatible chat-completions server for tests and benchmarks.

``OpenAIServer`` listens on 127.0.0.1 (a free port), serves ``POST /v1/chat/completions`` in the
OpenAI wire format (``id``, ``object``, ``created``, ``model``, ``choices[0].message.content``,
``finish_reason``, ``usage``) from a background thread, one thread per connection, and answers
with the content (or the message) a ``responder`` returns for each request; a request with
``"stream": true`` gets the reply as server-sent ``chat.completion.chunk`` events (content in
pieces, each tool call's arguments in pieces, then a chunk with the usage), as OpenAI sends it. A
``FaultPlan`` makes chosen requests
fail in the ways real servers and models do; ``counts`` says how many requests got each outcome.

    with OpenAIServer(fixed_responder(package_json), latency_s=0.2) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], "str | dict[str, Any]"]
"""Request body (decoded JSON) → the assistant message content to send back, or the whole
assistant message (a dict with ``content`` and/or ``tool_calls`` in the OpenAI format)."""


class Fault(StrEnum):
    """How one request goes wrong."""

    RATE_LIMITED = "rate_limited"      # 429 with a Retry-After header
    SERVER_ERROR = "server_error"      # 500
    UNAVAILABLE = "unavailable"        # 503
    MALFORMED = "malformed"            # 200, content that is not JSON
    SCHEMA_INVALID = "schema_invalid"  # 200, a JSON object missing the package's "tools"
    TRUNCATED = "truncated"            # 200, the first half of the content, finish_reason "length"
    SLOW = "slow"                      # a normal answer sent only after FaultPlan.slow_s
    LEAKY_ERROR = "leaky_error"        # 500 whose message echoes the request's Authorization header


@dataclass(frozen=True)
class FaultPlan:
    """Which requests fail, and how. Requests are numbered from 1 in arrival order.

    ``at`` fixes the fault of given request numbers; every other request fails with probability
    ``rate``, its fault drawn from ``kinds``, from a generator seeded by ``(seed, number)``: the
    same plan gives the same faults for the same request numbers. ``retry_after`` is the
    ``Retry-After`` header value sent with a 429; ``slow_s`` is how long a ``SLOW`` answer waits.
    """

    at: Mapping[int, Fault] = field(default_factory=dict)
    rate: float = 0.0
    kinds: tuple[Fault, ...] = tuple(Fault)
    seed: int = 0
    retry_after: str = "1"
    slow_s: float = 2.0

    def fault_for(self, number: int) -> Fault | None:
        if number in self.at:
            return self.at[number]
        if self.rate <= 0:
            return None
        rng = random.Random(f"{self.seed}:{number}")
        return rng.choice(self.kinds) if rng.random() < self.rate else None


def fixed_responder(content: str) -> Responder:
    """A responder that answers every request with ``content``."""
    return lambda _request: content


class OpenAIServer:
    """The server; start and stop it with ``with`` (or ``start()``/``stop()``).

    ``latency_s`` delays every answer. With ``structured_output=False`` a request whose
    ``response_format.type`` is ``json_schema`` gets 400, as from a server without structured
    output. ``counts`` maps outcomes (``ok``, a ``Fault`` value, ``structured_rejected``,
    ``bad_request`` for a body that is not a JSON object or an unknown path, ``responder_error``
    when the responder raised) to request counts; ``requests`` holds every chat request body
    received, in arrival order; ``max_in_flight`` is the most chat requests handled at once.
    """

    def __init__(self, responder: Responder, *, latency_s: float = 0.0, faults: FaultPlan | None = None,
                 structured_output: bool = True) -> None:
        self.responder = responder
        self.latency_s = latency_s
        self.faults = faults or FaultPlan()
        self.structured_output = structured_output
        self.requests: list[dict[str, Any]] = []
        self.max_in_flight = 0
        self._counts: Counter[str] = Counter()
        self._in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle

    def start(self) -> OpenAIServer:
        self._stopping.clear()
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.state = self
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), name="openai-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client as ``base_url`` (ends in ``/v1``)."""
        if self._httpd is None:
            raise RuntimeError("the server is not running; call start() or use it in a with block")
        host, port = str(self._httpd.server_address[0]), self._httpd.server_address[1]
        return f"http://{host}:{port}/v1"

    @property
    def counts(self) -> Counter[str]:
        with self._lock:
            return Counter(self._counts)

    # ---- request handling (called from handler threads)

    def admit(self, body: dict[str, Any]) -> int:
        """Register a chat request as in flight; its number (1-based, arrival order)."""
        with self._lock:
            self.requests.append(body)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return len(self.requests)

    def finish(self, outcome: str, admitted: bool = True) -> None:
        """Count a request's outcome (and take an admitted one out of flight)."""
        with self._lock:
            if admitted:
                self._in_flight -= 1
            self._counts[str(outcome)] += 1

    def _pause(self, seconds: float) -> None:
        """Sleep, but wake up when the server stops."""
        if seconds > 0:
            self._stopping.wait(seconds)

    def answer(self, number: int, body: dict[str, Any], authorization: str) -> tuple[int, dict[str, str], dict[str, Any], str]:
        """``(status, headers, response body, outcome)`` for chat request ``number``."""
        self._pause(self.latency_s)
        response_format = body.get("response_format")
        if not self.structured_output and isinstance(response_format, dict) and response_format.get("type") == "json_schema":
            return 400, {}, _error("response_format json_schema is not supported by this server",
                                   "invalid_request_error", param="response_format"), "structured_rejected"
        fault = self.faults.fault_for(number)
        if fault is Fault.RATE_LIMITED:
            return 429, {"Retry-After": self.faults.retry_after}, _error("Rate limit reached", "rate_limit_error"), fault
        if fault is Fault.SERVER_ERROR:
            return 500, {}, _error("The server had an error", "server_error"), fault
        if fault is Fault.UNAVAILABLE:
            return 503, {}, _error("The engine is currently overloaded", "server_error"), fault
        if fault is Fault.LEAKY_ERROR:
            return 500, {}, _error(f"upstream failed for request with Authorization: {authorization}", "server_error"), fault
        if fault is Fault.SLOW:
            self._pause(self.faults.slow_s)
        reply = self.responder(body)
        if isinstance(reply, dict):
            finish_reason = "tool_calls" if reply.get("tool_calls") else "stop"
            return 200, {}, _completion(number, body, reply, finish_reason), fault or "ok"
        content, finish_reason = reply, "stop"
        if fault is Fault.MALFORMED:
            content = "Sure! Here is the package you asked for:\n" + content
        elif fault is Fault.SCHEMA_INVALID:
            content = _without_tools(content)
        elif fault is Fault.TRUNCATED:
            content, finish_reason = content[: len(content) // 2], "length"
        return 200, {}, _completion(number, body, content, finish_reason), fault or "ok"


def _error(message: str, kind: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


def _without_tools(content: str) -> str:
    """The content's JSON object without its ``tools`` field (a JSON object in any case)."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return json.dumps({"schema_version": 1})
    if isinstance(data, dict):
        data.pop("tools", None)
    return json.dumps(data)


def _completion(number: int, request: dict[str, Any], reply: str | dict[str, Any],
                finish_reason: str) -> dict[str, Any]:
    message = reply if isinstance(reply, dict) else {"content": reply}
    message = {"role": "assistant", "content": message.get("content"), "refusal": None,
               **({"tool_calls": message["tool_calls"]} if message.get("tool_calls") else {})}
    prompt_chars = sum(len(str(m.get("content", ""))) for m in request.get("messages", []) if isinstance(m, dict))
    prompt_tokens, completion_tokens = prompt_chars // 4 + 1, len(json.dumps(message)) // 4 + 1
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.get("model", "")),
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _chunks(completion: dict[str, Any], piece: int = 7) -> list[dict[str, Any]]:
    """``completion`` as the ``chat.completion.chunk`` objects a streamed reply is made of: the
    role, the content in pieces of ``piece`` characters, each tool call (id and name first, then
    its arguments in pieces), the finish reason, and last a chunk with no choices and the usage."""
    choice = completion["choices"][0]
    message = choice["message"]
    head = {key: completion[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    content = message.get("content") or ""
    out += [chunk({"content": content[i:i + piece]}) for i in range(0, len(content), piece)]
    for index, call in enumerate(message.get("tool_calls") or []):
        out.append(chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                          "function": {"name": call["function"]["name"], "arguments": ""}}]}))
        arguments = call["function"]["arguments"]
        out += [chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[i:i + piece]}}]})
                for i in range(0, len(arguments), piece)]
    out.append(chunk({}, choice["finish_reason"]))
    out.append(head | {"choices": [], "usage": completion["usage"]})
    return out


class _Server(ThreadingHTTPServer):
    state: OpenAIServer
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (e.g. after its timeout) is normal here; anything else is printed."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client reuses connections
    disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart
    timeout = 30  # idle keep-alive connections close after this many seconds
    server: _Server

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if len(raw) < length:  # the client hung up mid-request (a killed worker): nothing was asked
            state.finish("cut_off", admitted=False)
            self.close_connection = True
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = None
        if self.path.rstrip("/") != "/v1/chat/completions" or not isinstance(body, dict):
            self._send(404 if isinstance(body, dict) else 400, {},
                       _error(f"POST /v1/chat/completions with a JSON object body, not {self.path}", "invalid_request_error"))
            state.finish("bad_request", admitted=False)
            return
        number = state.admit(body)
        try:
            status, headers, payload, outcome = state.answer(number, body, self.headers.get("Authorization", ""))
        except Exception as exc:  # a broken responder is reported to the client, not a dead thread
            status, headers, payload, outcome = 500, {}, _error(f"responder failed: {exc!r}", "server_error"), "responder_error"
        try:
            if status == 200 and body.get("stream"):
                self._send_events(_chunks(payload))
            else:
                self._send(status, headers, payload)
        finally:
            state.finish(outcome)

    def _send(self, status: int, headers: dict[str, str], payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except ConnectionError:
            self.close_connection = True  # the client gave up (e.g. its timeout passed)

    def _send_events(self, chunks: list[dict[str, Any]]) -> None:
        """Server-sent events, one per chunk, then ``data: [DONE]``, sent at once with its length (the connection stays open)."""
        data = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except ConnectionError:
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests and benchmarks do not want a line per request."""

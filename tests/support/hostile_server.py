"""A local chat-completions server that misbehaves on purpose, one way per server, for tests and
the hostile bench: the replies a server nobody here controls may send.

``HostileServer(MISBEHAVIOURS["not_json"])`` listens on 127.0.0.1 (a free port) and answers every
``POST /v1/chat/completions`` (and ``GET /v1/models``, 200) by handing the raw socket to its
misbehaviour, which writes whatever bytes it likes (``Writer``). ``requests`` counts the chat
requests. Stop it with ``with`` or ``stop()``: a misbehaviour that sends for ever stops then.
Each misbehaviour answers plain and streamed requests (``"stream": true``) its own way.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Writer:
    """What a misbehaviour gets: the request body, the socket's file and the server's stop flag."""

    request: dict[str, Any]
    out: Any
    stopping: threading.Event

    @property
    def streamed(self) -> bool:
        return bool(self.request.get("stream"))

    def head(self, status: int = 200, length: int | None = None, kind: str = "application/json") -> None:
        lines = [f"HTTP/1.1 {status} X", f"Content-Type: {kind}", "Connection: close"]
        if length is not None:
            lines.append(f"Content-Length: {length}")
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode())

    def send(self, data: bytes) -> None:
        self.out.write(data)
        self.out.flush()

    def body(self, data: bytes, status: int = 200) -> None:
        self.head(status, len(data))
        self.send(data)

    def events(self, chunks: list[Any], done: bool = True) -> None:
        """A whole event stream of ``chunks`` (objects are JSON-encoded, bytes sent as they are)."""
        self.head(kind="text/event-stream")
        for chunk in chunks:
            data = chunk if isinstance(chunk, bytes) else json.dumps(chunk).encode()
            self.send(b"data: " + data + b"\n\n")
        if done:
            self.send(b"data: [DONE]\n\n")

    def wait(self, seconds: float) -> bool:
        """Sleep; True when the server is stopping."""
        return self.stopping.wait(seconds)


Misbehaviour = Callable[[Writer], None]


def completion(content: str | None = "ok", tool_calls: list[dict[str, Any]] | None = None,
               usage: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": usage or {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}


def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        out["usage"] = usage
    return out


def _reply(message_given: dict[str, Any]) -> Misbehaviour:
    """A well-formed reply (plain or streamed) carrying ``message``'s content and tool calls as given."""
    def send(w: Writer) -> None:
        message = json.loads(json.dumps(message_given))  # a fresh copy each time
        body = completion(message.get("content"), message.get("tool_calls"), message.get("usage"))
        if w.streamed:
            delta = {k: v for k, v in message.items() if k in ("content", "tool_calls")}
            for i, call in enumerate(delta.get("tool_calls") or []):
                call["index"] = i
            w.events([chunk(delta), chunk({}, "stop", body["usage"])])
        else:
            w.body(json.dumps(body).encode())
    return send


def _not_json(w: Writer) -> None:
    if w.streamed:
        w.events([b"this is not json"])
    else:
        w.body(b"<html>Bad gateway, but 200</html>")


def _no_choices(w: Writer) -> None:
    if w.streamed:
        w.events([{"id": "x", "object": "chat.completion.chunk"}])
    else:
        w.body(b'{"id": "x", "object": "chat.completion"}')


def _cut_mid_json(w: Writer) -> None:
    """The reply stops halfway through its JSON and the connection closes."""
    if w.streamed:
        w.head(kind="text/event-stream")
        w.send(b"data: " + json.dumps(chunk({"content": "Sure"})).encode() + b"\n\n")
        w.send(b'data: {"id": "x", "choices": [{"delta": {"content": "the ans')
    else:
        data = json.dumps(completion("a reply that is cut")).encode()
        w.head(length=len(data))
        w.send(data[: len(data) // 2])


def _never_ends(w: Writer) -> None:
    """Headers, then a keep-alive comment a second for ever (a stream that never ends)."""
    w.head(kind="text/event-stream" if w.streamed else "application/json")
    while not w.wait(1.0):
        w.send(b": keep-alive\n\n" if w.streamed else b" ")


def _trickle(w: Writer) -> None:
    """A valid reply, one byte a second."""
    data = (b"data: " + json.dumps(chunk({"content": "ok"}, "stop")).encode() + b"\n\ndata: [DONE]\n\n"
            if w.streamed else json.dumps(completion()).encode())
    w.head(length=None if w.streamed else len(data), kind="text/event-stream" if w.streamed else "application/json")
    for i in range(len(data)):
        w.send(data[i:i + 1])
        if w.wait(1.0):
            return


def _stalls(w: Writer) -> None:
    """A valid reply's first bytes, one every quarter second for 2.5 s, then silence for ever (a
    server that hangs mid-reply: each read waits its whole timeout)."""
    data = json.dumps(completion()).encode()
    w.head(length=None if w.streamed else len(data), kind="text/event-stream" if w.streamed else "application/json")
    for i in range(10):
        w.send(data[i:i + 1])
        if w.wait(0.25):
            return
    w.wait(3600.0)


def _huge(w: Writer) -> None:
    """A 200 MB reply: a content string of 200 MB, sent in 1 MB pieces with no declared length."""
    piece = b"x" * (1 << 20)
    w.head(kind="text/event-stream" if w.streamed else "application/json")
    if w.streamed:
        for _ in range(200):
            w.send(b'data: {"choices": [{"index": 0, "delta": {"content": "' + piece + b'"}}]}\n\n')
    else:
        w.send(b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "')
        for _ in range(200):
            w.send(piece)
        w.send(b'"}}]}')


def _error_event(w: Writer) -> None:
    if w.streamed:
        w.events([chunk({"content": "par"}), {"error": {"message": "the model crashed", "type": "server_error"}}])
    else:
        w.body(b'{"error": {"message": "the model crashed"}}', status=500)


def _deep(w: Writer) -> None:
    nested = b"[" * 5000 + b"]" * 5000
    if w.streamed:
        w.events([b'{"choices": ' + nested + b"}"])
    else:
        w.body(b'{"choices": ' + nested + b"}")


_CALL = {"id": "call_1", "type": "function", "function": {"name": "noop", "arguments": "{}"}}

MISBEHAVIOURS: dict[str, Misbehaviour] = {
    "not_json": _not_json,
    "no_choices": _no_choices,
    "cut_mid_json": _cut_mid_json,
    "never_ends": _never_ends,
    "trickle": _trickle,
    "stalls": _stalls,
    "huge": _huge,
    "error_event": _error_event,
    "deep": _deep,
    "surrogate_content": _reply({"content": "ok \ud83d"}),
    "nul_tool_name": _reply({"content": None, "tool_calls": [
        {**_CALL, "function": {"name": "no\x00op", "arguments": "{}"}}]}),
    "surrogate_tool_arguments": _reply({"content": None, "tool_calls": [
        {**_CALL, "function": {"name": "noop", "arguments": '{"q": "\ud800"}'}}]}),
    "surrogate_tool_id": _reply({"content": None, "tool_calls": [{**_CALL, "id": "call_\udfff"}]}),
    "usage_huge": _reply({"content": "ok", "usage": {"prompt_tokens": 10**30, "completion_tokens": 1}}),
    "usage_negative": _reply({"content": "ok", "usage": {"prompt_tokens": -5, "completion_tokens": 1}}),
}
"""Every misbehaviour by name (the name a test or a bench case passes)."""


class HostileServer:
    """The server (see the module); ``base_url`` ends in ``/v1``."""

    def __init__(self, misbehaviour: Misbehaviour) -> None:
        self.misbehaviour = misbehaviour
        self.requests = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> HostileServer:
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.state = self
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), name="hostile-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> HostileServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        try:
            request = json.loads(handler.rfile.read(length) or b"{}")
        except ValueError:
            request = {}
        with self._lock:
            self.requests += 1
        with suppress(ConnectionError, ValueError):  # the client hung up (after its deadline), as expected
            self.misbehaviour(Writer(request if isinstance(request, dict) else {}, handler.wfile, self._stopping))
        handler.close_connection = True


class _Server(ThreadingHTTPServer):
    state: HostileServer
    daemon_threads = True
    block_on_close = False


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        self.server.state.serve(self)

    def do_GET(self) -> None:
        data = b'{"object": "list", "data": []}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent."""


def main() -> None:
    """``python -m tests.support.hostile_server NAME``: serve one misbehaviour, print the URL, run
    until killed (for the hostile bench)."""
    import sys

    with HostileServer(MISBEHAVIOURS[sys.argv[1]]) as server:
        print(server.base_url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()

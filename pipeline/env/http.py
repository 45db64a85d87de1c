"""One package's mock world over HTTP, in the Claw-Eval route convention.

Every route takes ``POST`` with a JSON object body (the arguments) and answers a JSON object
(``/score`` takes ``GET`` too):

- ``/<service>/<resource>[/<action>]``: every operation of the package's services. The response is
  the result body with the world's HTTP status. An endpoint that a package tool is bound to runs as
  that tool (``World.call``: the audit names the tool and the package's faults apply); any other
  runs unbound (``World.call_endpoint``).
- ``/<service>/audit``: ``{"calls": [...]}``, the audit entries of that service's endpoints.
- ``/<service>/reset``: the whole world back to its initial state (every service, the audit log
  and the fault counters, and the user), ``{"status": "reset"}``.
- ``/user/ask``: ``{"question": "..."}`` to the package's simulated user (the deterministic one,
  or a model with ``synth serve --user-model``): ``{"reply": "...", "revealed": [fact keys]}``.
- ``/score``: the grade of the episode so far, as ``TaskEnv.score()`` gives it (``ScoreReport``:
  ``score``, ``checks_score``, ``checks``, ``safety``, plus ``passed``), over the world's audit and
  state and the facts the user revealed since the last reset. ``POST {"answer": "..."}`` grades
  with that final answer (it is not kept: score as often as you like); ``GET`` or no ``answer``
  grades with none, so answer checks fail. Judge checks are not evaluated, as in verification.

An unknown route gets 404 listing the valid routes; a body that is not a JSON object, or holds a
NUL or a lone surrogate in a string (the untrusted-text policy, ``core.untrusted``), gets 400;
any other method gets 405. Every error, the server's own included, is a JSON body
``{"error": {"status", "message"}}``; nothing a client sends prints a traceback.

Limits, so that a client cannot exhaust the server: a body is at most ``max_body`` bytes (413
past it, a ``Content-Length`` that is not a whole number is 400), arguments nest at most
``MAX_DEPTH`` levels, and the calls and questions since the last reset may carry at most
``max_audit`` bytes of arguments and replies together (the audit log and the world grow only
through them; past it a call gets 413 until ``/<service>/reset``).

The server listens on a loopback address unless told otherwise, and answers only requests whose
``Host`` names it (a loopback name or the bound address; with ``allow_remote`` also the configured
host, or any host when bound to a wildcard address) and that carry no ``Origin`` other than its
own: a web page in the user's browser cannot reach it, directly or by DNS rebinding (403).
"""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from pipeline.core.episode import Episode
from pipeline.core.errors import UserError
from pipeline.core.grading import Grader, ScoreReport, score_json
from pipeline.core.package import TaskPackage
from pipeline.core.services import get_service
from pipeline.core.serving import MAX_AUDIT, MAX_BODY, hostname, is_loopback, is_wildcard, origin_of
from pipeline.core.trajectory import trajectory_data
from pipeline.core.untrusted import json_problem
from pipeline.core.user import SimulatedUser, UserModel, UserModelError
from pipeline.core.world import World

AUDIT, RESET = "audit", "reset"
ASK = "/user/ask"
SCORE = "/score"

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects allowed in a body."""
DRAIN_FACTOR = 64
"""An oversized body up to this many times ``max_body`` is read and dropped before the 413, so a
client still sending can read the answer; a larger one gets the 413 and the connection closes."""
READ_TIMEOUT = 60.0
"""Seconds a connection may stay silent (mid-request or idle between requests) before it is closed."""

_DIGITS = re.compile(r"[0-9]+")


def operation_routes(package: TaskPackage) -> dict[str, str | None]:
    """Every endpoint of the package's services → the name of the first tool bound to it, or None."""
    bound: dict[str, str] = {}
    for tool in package.tools:
        bound.setdefault(tool.endpoint, tool.name)
    routes: dict[str, str | None] = {}
    for name in package.services:
        spec = get_service(name, package.service_profile)
        for endpoint in spec.endpoints if spec else []:
            routes[endpoint] = bound.get(endpoint)
    return routes


class PackageServer(ThreadingHTTPServer):
    """A threading HTTP server holding one package's ``World``; calls into it are serialised."""

    daemon_threads = True

    def __init__(self, package: TaskPackage, host: str = "127.0.0.1", port: int = 0,
                 allow_remote: bool = False, log_requests: bool = False,
                 user: Callable[[TaskPackage], UserModel] | None = None,
                 max_body: int = MAX_BODY, max_audit: int = MAX_AUDIT) -> None:
        if not (allow_remote or is_loopback(host)):
            raise UserError(f"host {host!r} is not a loopback address; the mock world has no authentication, "
                            "so pass --allow-remote to serve it on the network anyway")
        self.package = package
        self.world = World.from_package(package)
        self.lock = threading.Lock()
        self.operations = operation_routes(package)
        services = [s for s in package.services if get_service(s, package.service_profile) is not None]
        # every valid route: the operations, then each service's audit and reset routes
        self.routes = [*self.operations, *(f"/{s}/{action}" for s in services for action in (AUDIT, RESET)), ASK,
                       SCORE]
        self.grader = Grader(package)
        self.make_user = user or (lambda p: SimulatedUser(p.user, p.now))
        self.user = self.make_user(package)
        self.log_requests = log_requests
        self.max_body, self.max_audit = max_body, max_audit
        self.audit_bytes = 0
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), _Handler)
        bound = str(self.server_address[0]).lower()
        self.any_host = allow_remote and is_wildcard(host)
        self.hosts = {"localhost", bound, host.lower()} if allow_remote else {"localhost", bound}

    @property
    def base_url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"

    def names_me(self, host: str | None) -> bool:
        """Whether ``host`` (a hostname or IP, no port) is a name this server answers to."""
        if host is None:
            return False
        return self.any_host or host in self.hosts or is_loopback(host)

    def respond(self, path: str, args: dict[str, Any], size: int = 0) -> tuple[int, bytes]:
        """Status and encoded JSON body for a POST of ``args`` (``size`` bytes of body) to ``path``
        (a known route). Calls and questions count their body and reply against ``max_audit``."""
        with self.lock:
            if path in self.operations or path == ASK:
                if self.audit_bytes + size > self.max_audit:
                    return 413, encode(_error(413, f"this world took in {self.audit_bytes:,} bytes of calls since "
                                                   f"its last reset, the limit is {self.max_audit:,}; POST "
                                                   "/<service>/reset to start over"))
                status, body = self._call(path, args)
                data = encode(body)
                self.audit_bytes += size + len(data)
                return status, data
            if path == SCORE:
                return self._score(args)
            service, action = path.strip("/").split("/")
            if action == AUDIT:
                calls = [trajectory_data(e) for e in self.world.audit
                         if e.endpoint.startswith(f"/{service}/")]
                return 200, encode({"calls": calls})
            self.world.reset()
            self.user = self.make_user(self.package)
            self.audit_bytes = 0
            return 200, encode({"status": RESET})

    def score(self, answer: str | None = None) -> ScoreReport:
        """The grade of what happened since the last reset, with ``answer`` as the final answer
        (None: no answer): ``Grader.score`` of the episode of this world and user, as
        ``TaskEnv.score()`` grades its own. Call it holding ``lock``."""
        episode = Episode(self.package, self.world, self.user)
        if answer is not None:
            episode.finish(answer)
        return self.grader.score(episode.trajectory())

    def _score(self, args: dict[str, Any]) -> tuple[int, bytes]:
        answer = args.get("answer")
        if answer is not None and not isinstance(answer, str):
            return 400, encode(_error(400, 'body must be {} or {"answer": "<final answer>"}'))
        return 200, encode(score_json(self.score(answer)))

    def _call(self, path: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path == ASK:
            question = args.get("question")
            if not isinstance(question, str) or not question.strip():
                return 400, _error(400, 'body must be {"question": "<text>"}')
            try:
                reply = self.user.reply(question)
            except UserModelError as exc:
                return 502, _error(502, str(exc))
            return 200, {"reply": reply.text, "revealed": reply.revealed}
        tool = self.operations[path]
        result = self.world.call(tool, args) if tool else self.world.call_endpoint(path, args)
        return result.status, result.body

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed outside a response (a reset, a bug): one log line, no traceback."""
        exc = sys.exc_info()[1]
        if self.log_requests and not isinstance(exc, ConnectionError | TimeoutError):
            sys.stderr.write(f"{client_address[0]}: connection dropped: {type(exc).__name__}: {exc}\n")


def encode(body: dict[str, Any]) -> bytes:
    """A response body as UTF-8 JSON."""
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _error(status: int, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"status": status, "message": message, **extra}}


class _Handler(BaseHTTPRequestHandler):
    server: PackageServer
    protocol_version = "HTTP/1.1"
    timeout = READ_TIMEOUT

    def do_POST(self) -> None:
        if not self._admitted():
            return
        raw = self._body()
        if raw is None:
            return
        path = _route(self.path)
        if path not in self.server.routes:
            self._fail(404, f"unknown route {path!r}", valid_endpoints=self.server.routes)
            return
        try:
            args = json.loads(raw.decode("utf-8")) if raw.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._fail(400, f"body is not valid JSON: {exc}")
            return
        except RecursionError:
            self._fail(400, f"body nests deeper than {MAX_DEPTH} levels")
            return
        if not isinstance(args, dict):
            self._fail(400, f"body must be a JSON object of arguments, got {type(args).__name__}")
            return
        problem = json_problem(args, MAX_DEPTH)  # nesting, and the untrusted-text policy: no NUL, no lone surrogate
        if problem:
            self._fail(400, f"body {problem}")
            return
        self._respond(path, args, len(raw))

    def do_GET(self) -> None:
        """``GET /score`` (no body read, no answer); any other route takes POST only."""
        if _route(self.path) != SCORE:
            self._method_not_allowed()
        elif self._admitted() and self._body() is not None:  # a body, if any, is read and ignored
            self._respond(SCORE, {}, 0)

    def _respond(self, path: str, args: dict[str, Any], size: int) -> None:
        try:
            status, data = self.server.respond(path, args, size)
        except Exception as exc:  # a bug or an exhausted resource: a 500 for this call, not a dropped connection
            self._fail(500, f"the call failed inside the server: {type(exc).__name__}: {str(exc)[:200]}")
            return
        self._send_bytes(status, data)

    def _admitted(self) -> bool:
        """Refuse (403) a request whose ``Host`` is not this server or whose ``Origin`` is another site."""
        host = self.headers.get("Host")
        if host is not None and not self.server.names_me(hostname(host)):
            self._fail(403, f"Host {host!r} is not this server; address it as {self.server.base_url}", close=True)
            return False
        origin = self.headers.get("Origin")
        if origin is not None and not self._own_origin(origin):
            self._fail(403, f"cross-origin request from {origin!r} refused; the mock world takes no requests "
                            "from web pages", close=True)
            return False
        return True

    def _own_origin(self, origin: str) -> bool:
        parsed = origin_of(origin)
        return parsed is not None and self.server.names_me(parsed[0]) and parsed[1] == self.server.server_port

    def _body(self) -> bytes | None:
        """The request body, or None after answering a bad or oversized one (connection then closed)."""
        if self.headers.get("Transfer-Encoding"):
            self._fail(411, "send the body with a Content-Length, not Transfer-Encoding", close=True)
            return None
        lengths = self.headers.get_all("Content-Length") or []
        if not lengths:
            return b""
        text = lengths[0].strip()
        if len(set(lengths)) > 1 or not _DIGITS.fullmatch(text):
            self._fail(400, f"Content-Length must be one whole number of bytes, got {', '.join(lengths)[:40]!r}",
                       close=True)
            return None
        length = int(text) if len(text) <= 18 else None  # int() of thousands of digits is refused or slow
        if length is None or length > self.server.max_body:
            size = f"{length:,} bytes" if length is not None else "over 10^18 bytes"
            # read and drop a body of moderate size so the client gets to read the answer
            drained = length is not None and length <= DRAIN_FACTOR * self.server.max_body and self._discard(length)
            self._fail(413, f"a body of {size} is over the limit of {self.server.max_body:,} bytes",
                       close=not drained)
            return None
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            self._fail(408, f"the body did not arrive within {self.timeout:.0f} s", close=True)
            return None
        if len(raw) < length:  # the client hung up mid-body: nobody to answer
            self.close_connection = True
            return None
        return raw

    def _discard(self, length: int) -> bool:
        """Read and drop ``length`` bytes of body; False when the client stopped sending first."""
        try:
            while length > 0:
                chunk = self.rfile.read(min(length, 65536))
                if not chunk:
                    return False
                length -= len(chunk)
        except (TimeoutError, ConnectionError):
            return False
        return True

    def _method_not_allowed(self) -> None:
        if self._admitted():
            self._fail(405, f"method {self.command} not allowed; every route takes POST with a JSON body "
                            f"(and {SCORE} GET)",
                       valid_endpoints=self.server.routes)

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _method_not_allowed

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's own errors (a malformed request line, oversized headers, an unknown
        method) as JSON, the connection closed; always with a status line and headers (never the
        bare body of an HTTP/0.9 reply, which a garbled request line would otherwise get)."""
        if self.request_version == "HTTP/0.9":
            self.request_version = "HTTP/1.0"
        self._fail(code, message or explain or self.responses.get(code, ("error",))[0], close=True)

    def _fail(self, status: int, message: str, close: bool = False, **extra: Any) -> None:
        if close:
            self.close_connection = True
        self._send_bytes(status, encode(_error(status, message, **extra)))

    def _send_bytes(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.log_requests:
            super().log_message(format, *args)


def _route(target: str) -> str:
    """The route a request target names: its path, without a trailing slash."""
    return urlsplit(target).path.rstrip("/") or "/"

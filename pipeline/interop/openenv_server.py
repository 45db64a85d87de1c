"""Many task packages as one OpenEnv environment server: ``synth serve --openenv``.

Built on OpenEnv's own server (``openenv.core.env_server.create_fastapi_app``: the ``/ws``
WebSocket sessions, ``/reset``, ``/step``, ``/state``, ``/schema``, ``/health``), served by uvicorn.
Each WebSocket session is its own ``SynthEnvironment``; all of them share one ``PackagePool``.

- ``reset(package_id=..., where=..., seed=...)`` picks a package: the one with that id; else,
  among the pool's packages (those for which ``where`` holds, when given: one SQL condition on the
  catalog's ``packages`` columns), the one at position ``seed`` of the pool's seeded shuffle, or
  without a seed the next one in it (one counter per selection, shared by every session, so a
  trainer's many workers see a spread). It returns the request and the tools.
- ``step(SynthAction)`` applies the action in the package's episode (``Episode.apply``, the engine
  ``TaskEnv`` and the verifier drive) and returns the observation; the reward is None until the
  episode ends, then ``Grader.score`` of the episode (the verifier's score), with the grade in
  ``info``. An episode ends at the answer, or truncated once it has taken ``max_steps`` steps or
  exchanged ``max_tokens`` approximate tokens (UTF-8 bytes / 4, rounded up, of the request, every
  action as JSON and every observation's text).
- ``state`` is a ``SynthState``: episode id, step count, package id, done, truncated, budgets.

An action the session cannot take (before the first reset, after the episode ended, an unknown
package or a bad selection) raises, and OpenEnv answers that message with an error frame; the
session stays open. ``guard`` wraps the app: requests must name this server in ``Host`` and carry
no foreign ``Origin`` (403, as ``synth serve``), HTTP bodies and WebSocket messages are at most
``MAX_BODY`` bytes, and a message nested deeper than ``MAX_DEPTH`` levels, or not JSON, gets an
error frame without reaching the environment.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import random
import socket
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any

import pipeline.interop.openenv_core  # noqa: F401  (first: OpenEnv without its Gradio web interface)

# isort: split
import uvicorn
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import ConcurrencyConfig, EnvironmentMetadata
from starlette.websockets import WebSocketDisconnect

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.selection import StatusFilter
from pipeline.catalog.store import Catalog
from pipeline.core.episode import Episode, observed
from pipeline.core.errors import UserError
from pipeline.core.grading import Grader, score_json
from pipeline.core.jsonvalues import MAX_DEPTH, ShapeError, clone, parse_json
from pipeline.core.package import TaskPackage
from pipeline.core.serving import (
    MAX_AUDIT,
    MAX_BODY,
    base_url,
    hostname,
    is_loopback,
    is_wildcard,
    listening_socket,
    origin_of,
)
from pipeline.core.training_format import tool_schemas
from pipeline.interop.openenv import SynthAction, SynthObservation, SynthState

DEFAULT_MAX_STEPS = 50
"""Steps an episode may take (or the reference's length, if longer), as ``TaskEnv`` allows."""
DEFAULT_MAX_TOKENS = MAX_AUDIT // 4
"""Approximate tokens an episode may exchange: the bytes ``synth serve`` lets a world take in."""
DEFAULT_MAX_SESSIONS = 64
"""WebSocket sessions (episodes in flight) one server holds at once."""
SESSION_IDLE_S = 600.0
"""A session silent this long is closed (OpenEnv's idle reaper)."""
SELECTIONS_KEPT = 64
"""``where`` selections a pool remembers; past it the oldest is evaluated again when asked for."""

Json = dict[str, Any]


def approx_tokens(text: str) -> int:
    """Approximate tokens of ``text``: its UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 4)


class Prepared:
    """What every episode of one package shares: the package, its grader and its tool schemas."""

    def __init__(self, package: TaskPackage) -> None:
        self.package = package
        self.id = package.id or package.compute_id()
        self.grader = Grader(package)
        self.tools = tool_schemas(package)
        self.request_tokens = approx_tokens(package.request.text)


class PackagePool:
    """The packages one server holds, in a shuffle seeded by ``seed``, and the selections of them.

    ``catalog``: the catalog they came from (rows with ``status``), which ``where`` selections at
    reset are evaluated against (None: the packages came from files, and a reset with ``where`` is
    refused). Only packages of the pool are ever picked.
    Thread-safe.
    """

    def __init__(self, packages: list[TaskPackage], seed: int = 0, catalog: Path | None = None,
                 status: StatusFilter = "accepted") -> None:
        if not packages:
            raise UserError("no packages to serve; check the catalog and --where")
        self.prepared = [Prepared(p) for p in packages]
        self.by_id = {p.id: p for p in reversed(self.prepared)}  # the first of a repeated id wins
        order = list(range(len(self.prepared)))
        random.Random(seed).shuffle(order)
        self.order = [self.prepared[i] for i in order]
        self.seed = seed
        self.catalog, self.status = catalog, status
        self._lock = threading.Lock()
        self._selections: dict[str | None, tuple[list[Prepared], itertools.count[int]]] = {
            None: (self.order, itertools.count())}

    def __len__(self) -> int:
        return len(self.prepared)

    def pick(self, package_id: str | None = None, where: str | None = None, seed: int | None = None) -> Prepared:
        """The package a reset asks for (see the module docstring). ``ValueError`` saying why
        when there is none."""
        if package_id is not None:
            found = self.by_id.get(package_id)
            if found is None:
                raise ValueError(f"no package {package_id!r} on this server; reset() without package_id "
                                 f"takes the next of its {len(self):,}")
            return found
        chosen, counter = self._selection(where)
        position = seed if seed is not None else next(counter)
        return chosen[position % len(chosen)]

    def _selection(self, where: str | None) -> tuple[list[Prepared], itertools.count[int]]:
        with self._lock:
            known = self._selections.get(where)
        if known is not None:
            return known
        if self.catalog is None:
            raise ValueError("this server holds package files, not a catalog: reset() takes no where")
        assert where is not None
        ids = selected_ids(self.catalog, where, self.status)
        chosen = [p for p in self.order if p.id in ids]
        if not chosen:
            raise ValueError(f"no package on this server is selected by where {where!r}")
        with self._lock:
            if len(self._selections) > SELECTIONS_KEPT:
                del self._selections[next(k for k in self._selections if k is not None)]
            return self._selections.setdefault(where, (chosen, itertools.count()))

    def has_selection(self, where: str | None) -> bool:
        """Whether ``where`` is evaluated already (a reset with it reads no catalog)."""
        return where in self._selections


def selected_ids(catalog: Path, where: str, status: StatusFilter = "accepted") -> set[str]:
    """The ids of the packages of ``catalog`` with ``status`` for which ``where`` holds. A bad
    ``where`` raises ``ValueError`` with the catalog's message (which names the columns)."""
    try:
        with Catalog.open(catalog, read_only=True) as opened, opened.selection(status, where) as selection:
            return {row[0] for row in selection.con.execute(f"SELECT id FROM ({selection.sql})").fetchall()}
    except CatalogError as exc:
        raise ValueError(str(exc)) from None


# --------------------------------------------------------------------------- the environment


class SynthEnvironment(Environment[SynthAction, SynthObservation, SynthState]):
    """One session's episodes over a ``PackagePool``. See the module docstring."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, pool: PackagePool, max_steps: int = DEFAULT_MAX_STEPS,
                 max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        super().__init__()
        if max_steps < 1 or max_tokens < 1:
            raise ValueError(f"max_steps and max_tokens must be at least 1, got {max_steps} and {max_tokens}")
        self.pool = pool
        self.max_steps, self.max_tokens = max_steps, max_tokens
        self.current: Prepared | None = None
        self.episode: Episode | None = None
        self._state = SynthState(packages=len(pool))

    # ------------------------------------------------------------------ OpenEnv's interface

    def reset(self, seed: int | None = None, episode_id: str | None = None, package_id: str | None = None,
              where: str | None = None, **kwargs: Any) -> SynthObservation:
        """Start an episode of the package ``pool.pick`` gives; unknown keyword arguments are refused."""
        if kwargs:
            raise ValueError(f"reset() takes package_id, where, seed and episode_id; not {', '.join(sorted(kwargs))}")
        prepared = self.pool.pick(package_id, where, seed)
        world = self.episode.world if self.episode is not None and self.current is prepared else None
        if world is not None:
            world.reset()
        self.current = prepared
        self.episode = Episode(prepared.package, world)
        max_steps = max(self.max_steps, len(prepared.package.reference))
        self._state = SynthState(episode_id=episode_id or str(uuid.uuid4()), package_id=prepared.id,
                                 max_steps=max_steps, max_tokens=self.max_tokens,
                                 tokens=prepared.request_tokens, packages=len(self.pool))
        return SynthObservation(kind="request", text=prepared.package.request.text, tools=clone(prepared.tools),
                                info={"package_id": prepared.id, "user": prepared.package.user is not None,
                                      "max_steps": max_steps, "max_tokens": self.max_tokens})

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> SynthObservation:
        """``reset`` in the event loop, except a ``where`` not evaluated yet (a catalog query),
        which runs in a thread."""
        if not self.pool.has_selection(kwargs.get("where")):
            return await asyncio.to_thread(self.reset, seed, episode_id, **kwargs)
        return self.reset(seed, episode_id, **kwargs)

    def step(self, action: SynthAction, timeout_s: float | None = None, **kwargs: Any) -> SynthObservation:
        """Apply one action (see the module docstring)."""
        episode, prepared, state = self.episode, self.current, self._state
        if episode is None or prepared is None:
            raise RuntimeError("call reset() before step()")
        if state.done:
            how = "it has its answer" if episode.answered else "its budget is spent"
            raise RuntimeError(f"the episode is over ({how}); reset() starts another")
        act = action.engine_action()
        record = episode.apply(act)
        info: Json = {"step": record.index}
        if record.kind == "ask":
            info["revealed"] = list(record.revealed)
        observation = SynthObservation(**observed(record))
        state.step_count += 1
        state.tokens += approx_tokens(act.model_dump_json()) + approx_tokens(observation.text)
        state.truncated = not episode.answered and (state.step_count >= state.max_steps
                                                    or state.tokens >= state.max_tokens)
        state.done = episode.answered or state.truncated
        info["truncated"] = state.truncated
        if state.done:
            report = prepared.grader.score(episode.trajectory())
            info.update(score_json(report))
            observation.reward = report.score
            observation.done = True
        observation.info = info
        return observation

    async def step_async(self, action: SynthAction, timeout_s: float | None = None, **kwargs: Any) -> SynthObservation:
        """``step`` in the event loop, without a thread hop: a step is a short computation (under a
        millisecond) that never waits on I/O."""
        return self.step(action, timeout_s, **kwargs)

    @property
    def state(self) -> SynthState:
        return self._state.model_copy()

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name="synth", version=None,
                                   description=f"{len(self.pool):,} verified synth task packages: a request, "
                                               "tools over a mock world, a simulated user and a graded score")


# --------------------------------------------------------------------------- the app and its guard

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def build_app(pool: PackagePool, max_sessions: int = DEFAULT_MAX_SESSIONS, max_steps: int = DEFAULT_MAX_STEPS,
              max_tokens: int = DEFAULT_MAX_TOKENS) -> App:
    """OpenEnv's FastAPI app over ``pool`` (one ``SynthEnvironment`` per session, at most
    ``max_sessions`` at once). Serve it behind ``Guard`` (``serve`` and ``running`` do)."""
    factory = partial(SynthEnvironment, pool, max_steps, max_tokens)
    config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=SESSION_IDLE_S)
    app = create_fastapi_app(factory, SynthAction, SynthObservation, concurrency_config=config)
    # OpenEnv's stateless HTTP /reset and /step make a new environment per request: a step there
    # (before any reset) or a bad reset is the client's error, answered as JSON, never a 500
    app.add_exception_handler(RuntimeError, partial(_refused, 409))
    app.add_exception_handler(ValueError, partial(_refused, 400))
    guarded: App = app
    return guarded


async def _refused(status: int, request: Any, exc: Exception) -> Any:
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": {"status": status, "message": str(exc)}}, status_code=status)


class Guard:
    """ASGI middleware: who may call (``Host`` and ``Origin``, as ``synth serve``), and the shape of
    what they send (HTTP bodies of at most ``max_body`` bytes with a ``Content-Length``; WebSocket
    messages that are JSON objects nested at most ``MAX_DEPTH`` levels). A refused WebSocket message
    gets an OpenEnv error frame (``{"type": "error", "data": {"message", "code"}}``) and the session
    goes on; a refused request gets a JSON error and its status (403, 411, 413)."""

    def __init__(self, app: App, sock: socket.socket, host: str | None = None, allow_remote: bool = False,
                 max_body: int = MAX_BODY) -> None:
        """``sock``: the socket served (its address and port name this server); with
        ``allow_remote``, ``host`` (the address asked for) names it too, and a wildcard any host."""
        bound, self.port = sock.getsockname()[:2]
        self.app, self.max_body = app, max_body
        self.any_host = allow_remote and host is not None and is_wildcard(host)
        self.hosts = {"localhost", str(bound).lower()} | ({host.lower()} if allow_remote and host else set())

    def names_me(self, host: str | None) -> bool:
        return host is not None and (self.any_host or host in self.hosts or is_loopback(host))

    def refusal(self, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host")
        if host is not None and not self.names_me(hostname(host)):
            return 403, f"Host {host!r} is not this server; address it as localhost:{self.port}"
        origin = headers.get("origin")
        if origin is not None:
            parsed = origin_of(origin)
            if parsed is None or not self.names_me(parsed[0]) or parsed[1] != self.port:
                return 403, f"cross-origin request from {origin!r} refused; the mock worlds take no requests from web pages"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self.refusal(headers)
        if scope["type"] == "websocket":
            if refusal is not None:
                await receive()  # websocket.connect
                await send({"type": "websocket.close", "code": 1008, "reason": refusal[1][:120]})
                return
            # OpenEnv (openenv-core 0.3) closes a session the client already closed: not an error
            with suppress(WebSocketDisconnect):
                await self.app(scope, self._guarded(receive, send), send)
            return
        if refusal is None and headers.get("transfer-encoding"):
            refusal = 411, "send the body with a Content-Length, not chunked"
        length = headers.get("content-length", "0")
        if refusal is None and (not length.isdigit() or len(length) > 18 or int(length) > self.max_body):
            refusal = 413, f"a body is at most {self.max_body:,} bytes, with one whole Content-Length"
        body = b""
        if refusal is None and int(length) > 0:
            body, more = await _read_body(receive)
            problem = message_problem(body.decode("utf-8", "replace")) if more else None
            if problem is not None:
                refusal = 400, f"body: {problem[1]}"
            receive = _replay(body, receive)
        if refusal is not None:
            data = json.dumps({"error": {"status": refusal[0], "message": refusal[1]}}).encode()
            await send({"type": "http.response.start", "status": refusal[0],
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                                    (b"connection", b"close")]})
            await send({"type": "http.response.body", "body": data})
            return
        await self.app(scope, receive, send)

    def _guarded(self, receive: Receive, send: Send) -> Receive:
        async def guarded() -> Message:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return message
                text = message.get("text")
                if text is None:
                    try:
                        text = (message.get("bytes") or b"").decode("utf-8")
                    except UnicodeDecodeError:
                        text = ""
                problem = message_problem(text)
                if problem is None:
                    return {"type": "websocket.receive", "text": text}
                error = {"type": "error", "data": {"message": problem[1], "code": problem[0]}}
                await send({"type": "websocket.send", "text": json.dumps(error)})

        return guarded


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The whole request body (bounded by its checked ``Content-Length``), and False when the
    client went away before sending it."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks), False
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks), True


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` once, then what ``receive`` gives (the disconnect)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed


def message_problem(text: str) -> tuple[str, str] | None:
    """Why a WebSocket message cannot reach the environment (an OpenEnv error code and a message),
    or None when it is a JSON object nested at most ``MAX_DEPTH`` levels."""
    try:
        value = parse_json(text, MAX_DEPTH)
    except ShapeError:
        return "VALIDATION_ERROR", f"the message nests deeper than {MAX_DEPTH} levels"
    except ValueError as exc:
        return "INVALID_JSON", f"the message is not JSON: {exc}"
    if not isinstance(value, dict):
        return "INVALID_JSON", f"a message is a JSON object, got {type(value).__name__}"
    return None


# --------------------------------------------------------------------------- serving


def listen(host: str, port: int, allow_remote: bool = False) -> socket.socket:
    """A listening socket on ``host`` (loopback unless ``allow_remote``; ``port`` 0: any free
    port). ``UserError`` for a refused host or a port that cannot be bound."""
    if not (allow_remote or is_loopback(host)):
        raise UserError(f"host {host!r} is not a loopback address; the mock worlds have no authentication, "
                        "so pass --allow-remote to serve them on the network anyway")
    return listening_socket(host, port, backlog=256)


def uvicorn_server(app: App, sock: socket.socket, host: str | None = None, allow_remote: bool = False,
                   max_body: int = MAX_BODY) -> uvicorn.Server:
    """A uvicorn server of ``app`` behind ``Guard`` on ``sock``; a WebSocket message over
    ``max_body`` bytes closes its session (code 1009: uvicorn enforces it)."""
    guarded = Guard(app, sock, host, allow_remote, max_body)
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on", ws_max_size=max_body,
                            ws_per_message_deflate=False)
    return uvicorn.Server(config)


def serve(app: App, sock: socket.socket, host: str | None = None, allow_remote: bool = False) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM)."""
    uvicorn_server(app, sock, host, allow_remote).run(sockets=[sock])


@contextmanager
def running(app: App, host: str = "127.0.0.1", port: int = 0, start_timeout: float = 30.0) -> Iterator[str]:
    """Serve ``app`` in a background thread for the block; yields the base URL (``http://…``).
    For tests, benchmarks and notebooks; ``serve`` is the blocking form."""
    sock = listen(host, port)
    server = uvicorn_server(app, sock)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="openenv-server")
    thread.start()
    deadline = time.monotonic() + start_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError(f"the OpenEnv server did not start within {start_timeout:.0f} s")
        time.sleep(0.01)
    try:
        yield base_url(sock)
    finally:
        server.should_exit = True
        thread.join(timeout=start_timeout)
        sock.close()

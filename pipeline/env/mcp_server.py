"""One task package as an MCP server (the official ``mcp`` SDK): ``synth serve --mcp PACKAGE``.

An MCP client runs one episode of the package (``TaskEnv``, the episode engine the verifier drives):

- tools: the package's tools under their own names, with their JSON schemas
  (``core.training_format.tool_schemas``); a call is ``TaskEnv.step(ToolCall(...))`` and returns
  the observation text ``{"status": <HTTP status>, "result": <body>}`` (``observation_text``, what a
  training sample shows), flagged as an MCP tool error when the status is 400 or more;
  ``submit_answer(text)``, the final answer, which ends the episode; and, for a package with a
  simulated user, ``ask_user(question)``, which returns the user's reply;
- the prompt ``task``: the request, as one user message;
- the resource ``synth://score``: the grade so far, ``TaskEnv.score()`` as ``score_json`` writes it
  (the body of ``synth serve``'s ``/score``: ``score``, ``checks_score``, ``checks``, ``safety``,
  ``passed``), readable at any time; before the answer, answer checks fail.

**Untrusted messages.** Over stdio every line is screened before the SDK reads it, with the bounds
of ``synth serve`` (``env.http``) and the untrusted-text policy (``core.untrusted``): a line of more
than ``MAX_BODY`` bytes (read no further), not UTF-8 or not JSON, nested deeper than ``MAX_DEPTH``
levels, or holding a NUL or a lone surrogate in any string gets a JSON-RPC error naming the
problem (a ``tools/call`` gets a tool error result instead), logged as one line on stderr; a
notification so refused is dropped with that line. An unknown resource or prompt is an
``invalid params`` error naming the one there is, with no traceback. On either transport a tool
call's arguments holding a NUL or a lone surrogate, or nested deeper than ``MAX_DEPTH``, get a tool
error and never reach the episode.

One episode per server: every MCP session of an HTTP server shares it. Once the answer is
submitted or the step budget is spent, every tool call is an MCP tool error saying the episode is
over. Names follow ClawEnvKit's MCP server: tools keep the package's names and descriptions, a
result is the body's JSON text, a failure is a tool result with ``isError``, not a protocol error.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import sys
import threading
from collections.abc import Callable
from typing import IO, Any, cast

import anyio
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from pipeline.core.errors import UserError
from pipeline.core.grading import score_json
from pipeline.core.package import TaskPackage
from pipeline.core.serving import MAX_BODY, base_url, is_loopback, listening_socket
from pipeline.core.training_format import observation_text
from pipeline.core.untrusted import UntrustedInput, decode_json, json_problem
from pipeline.core.user import UserModel, UserModelError
from pipeline.env.http import MAX_DEPTH
from pipeline.env.task_env import DEFAULT_MAX_STEPS, Answer, Ask, TaskEnv, ToolCall

SERVER_NAME = "synth"
SUBMIT, ASK_USER = "submit_answer", "ask_user"
PROMPT = "task"
SCORE_URI = "synth://score"
MCP_PATH = "/mcp"

_TEXT = {"type": "object", "additionalProperties": False}

log = logging.getLogger(__name__)


def _schema(field: str, description: str) -> dict[str, Any]:
    return {**_TEXT, "properties": {field: {"type": "string", "description": description}}, "required": [field]}


class McpEpisode:
    """The protocol-free part of the server: one ``TaskEnv`` episode, driven by MCP-named calls.

    Thread-safe: calls are serialised. ``max_steps`` defaults to the larger of
    ``DEFAULT_MAX_STEPS`` and the reference's length, as ``play_reference`` allows.
    """

    def __init__(self, package: TaskPackage, user: Callable[[TaskPackage], UserModel] | None = None,
                 max_steps: int | None = None) -> None:
        own = {t.name for t in package.tools}
        clash = own & {SUBMIT, ASK_USER}
        if clash:
            raise UserError(f"the package has a tool named {sorted(clash)[0]!r}, which the MCP server "
                            "keeps for itself; rename the tool")
        self.package = package
        self.env = TaskEnv(package, max_steps=max_steps or max(DEFAULT_MAX_STEPS, len(package.reference)),
                           user=user)
        self.env.reset()
        self.lock = threading.Lock()

    @property
    def has_user(self) -> bool:
        return self.package.user is not None

    def tools(self) -> list[types.Tool]:
        """The package's tools, then ``submit_answer`` and (with a user) ``ask_user``."""
        listed = [types.Tool(name=s["function"]["name"], description=s["function"]["description"],
                             input_schema=s["function"]["parameters"]) for s in self.env.tools]
        listed.append(types.Tool(name=SUBMIT, description="Submit the final answer to the user. This ends the "
                                 "episode: no tool can be called after it.",
                                 input_schema=_schema("text", "The final answer to the user.")))
        if self.has_user:
            listed.append(types.Tool(name=ASK_USER, description="Ask the user a question (a detail you need "
                                     "that the request does not give) and get their reply.",
                                     input_schema=_schema("question", "The question to the user.")))
        return listed

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run one MCP tool call: the text of its result and whether it is an error."""
        with self.lock:
            if self.env.done:
                how = ("the answer was submitted" if self.env.episode.answered
                       else f"its {self.env.max_steps} steps are spent")
                return f"the episode is over ({how}); read {SCORE_URI} for the score", True
            if name == SUBMIT or (name == ASK_USER and self.has_user):
                field = "text" if name == SUBMIT else "question"
                value = arguments.get(field)
                if not isinstance(value, str):
                    return f'{name} takes {{"{field}": "<text>"}}', True
                if name == SUBMIT:
                    self.env.step(Answer(text=value))
                    return f"answer submitted; the episode is over; read {SCORE_URI} for the score", False
                try:
                    return self.env.step(Ask(text=value)).observation.text, False
                except UserModelError as exc:
                    return f"the user could not reply: {exc}", True
            if name not in {t.name for t in self.package.tools}:
                return f"Unknown tool: {name}", True
            result = self.env.step(ToolCall(name=name, arguments=arguments))
            status = result.observation.status
            return observation_text(status, result.observation.result), status is None or status >= 400

    def score(self) -> dict[str, Any]:
        """The grade of the episode so far, as ``synth serve``'s ``/score`` gives it."""
        with self.lock:
            return score_json(self.env.score())


def build_server(episode: McpEpisode) -> Server[Any]:
    """An MCP server (low-level SDK ``Server``) over one episode."""
    package = episode.package
    request = package.request.text

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=episode.tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        problem = json_problem(params.arguments or {}, MAX_DEPTH)
        if problem:
            text, error = f"refused: the arguments: {problem}", True
        else:
            text, error = await anyio.to_thread.run_sync(episode.call, params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)

    async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(name=PROMPT, description="The user's request: the task.")])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != PROMPT:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}; the one prompt is {PROMPT!r}")
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=request))
        return types.GetPromptResult(description="The user's request: the task.", messages=[message])

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        score = types.Resource(name="score", uri=SCORE_URI, mime_type="application/json",
                               description="The episode's grade so far: score, passed and each check.")
        return types.ListResourcesResult(resources=[score])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if str(params.uri) != SCORE_URI:
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {params.uri}; the one resource is {SCORE_URI}")
        text = json.dumps(await anyio.to_thread.run_sync(episode.score), ensure_ascii=False)
        return types.ReadResourceResult(ttl_ms=0, contents=[
            types.TextResourceContents(uri=SCORE_URI, mime_type="application/json", text=text)])

    return Server(SERVER_NAME, version=package.id or package.compute_id(),
                  instructions=f"Complete the user's request (prompt {PROMPT!r}) with the tools, then call "
                               f"{SUBMIT}. The score is the resource {SCORE_URI}.",
                  on_list_tools=list_tools, on_call_tool=call_tool, on_list_prompts=list_prompts,
                  on_get_prompt=get_prompt, on_list_resources=list_resources, on_read_resource=read_resource)


def refusal(line: bytes) -> tuple[types.JSONRPCError | types.JSONRPCResponse | None, str] | None:
    """What answers one incoming stdio line instead of the SDK (the module's "Untrusted
    messages"): None when the line may go on; else the answer (an error; a tool error result for
    a ``tools/call``; None for a notification, which gets none) and the reason. A line too large
    to parse is answered by the ``id`` written before its ``params``, when there is one."""
    if len(line) > MAX_BODY:  # read no further than MAX_BODY + 1 bytes (_ScreenedStdin)
        reason = f"the message is larger than the {MAX_BODY:,} bytes allowed"
    else:
        try:
            decode_json(line, max_bytes=MAX_BODY, max_depth=MAX_DEPTH, what="the message")
            return None
        except UntrustedInput as exc:
            reason = str(exc)
    try:
        parsed = json.loads(line) if len(line) <= MAX_BODY else _head(line)
    except (ValueError, RecursionError):
        parsed = None
    message = parsed if isinstance(parsed, dict) else {}
    ident = message.get("id")
    if not isinstance(ident, int | str) or isinstance(ident, bool):
        if "method" in message:
            return None, reason  # a notification: nobody waits for an answer
        return types.JSONRPCError(jsonrpc="2.0", id=None,
                                  error=types.ErrorData(code=types.PARSE_ERROR, message=reason)), reason
    if message.get("method") == "tools/call":
        result = types.CallToolResult(content=[types.TextContent(type="text", text=f"refused: {reason}")],
                                      is_error=True)
        return types.JSONRPCResponse(jsonrpc="2.0", id=ident,
                                     result=result.model_dump(by_alias=True, exclude_none=True)), reason
    return types.JSONRPCError(jsonrpc="2.0", id=ident,
                              error=types.ErrorData(code=types.INVALID_PARAMS, message=reason)), reason


_HEAD = re.compile(rb'"(id|method)"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")')


def _head(line: bytes) -> dict[str, Any]:
    """The ``id`` and ``method`` written in ``line`` before its ``params`` (a line too large to parse)."""
    before = line[:line.find(b'"params"')] if b'"params"' in line[:4096] else line[:4096]
    return {m.group(1).decode(): json.loads(m.group(2)) for m in _HEAD.finditer(before)}


class _ScreenedStdin:
    """The lines of ``source`` for the SDK's stdio transport, each at most ``MAX_BODY`` bytes
    (a longer one is read no further than its end, never held), refused ones answered on
    ``replies`` (set by ``serve_stdio`` once the transport is up) instead of passed on."""

    def __init__(self, source: IO[bytes]) -> None:
        self.source = source
        self.replies: Any = None
        self.ready = anyio.Event()

    def __aiter__(self) -> _ScreenedStdin:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await anyio.to_thread.run_sync(self._read_line)
            if line is None:
                raise StopAsyncIteration
            if not line.strip():
                continue
            refused = refusal(line)
            if refused is None:
                return line.decode("utf-8")
            answer, reason = refused
            log.warning("refused an MCP message: %s", reason)
            if answer is not None:
                await self.ready.wait()
                await self.replies.send(SessionMessage(answer))

    def _read_line(self) -> bytes | None:
        """The next line (None at the end); a line past ``MAX_BODY`` comes back as its first
        ``MAX_BODY + 1`` bytes, the rest read and dropped."""
        line = self.source.readline(MAX_BODY + 1)
        if not line:
            return None
        if len(line) > MAX_BODY and not line.endswith(b"\n"):
            while (rest := self.source.readline(1 << 16)) and not rest.endswith(b"\n"):
                pass
        return line.rstrip(b"\r\n")


def serve_stdio(server: Server[Any]) -> None:
    """Serve on stdin/stdout until the client closes stdin, every line screened (``refusal``)."""

    async def run() -> None:
        stdin = _ScreenedStdin(sys.stdin.buffer)
        async with stdio_server(stdin=cast(Any, stdin)) as (read, write):
            stdin.replies = write
            stdin.ready.set()
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


def http_socket(host: str, port: int) -> socket.socket:
    """A listening socket on the loopback ``host`` (``port`` 0: any free port). ``UserError`` for a
    host that is not loopback or a port that cannot be bound."""
    if not is_loopback(host):
        raise UserError(f"--mcp serves on loopback only; {host!r} is not a loopback address")
    return listening_socket(host, port)


def http_url(sock: socket.socket) -> str:
    return base_url(sock) + MCP_PATH


def serve_http(server: Server[Any], sock: socket.socket) -> None:
    """Serve streamable HTTP at ``http_url(sock)`` until interrupted (requests must name a loopback host)."""
    host, port = sock.getsockname()[:2]
    # as synth serve: only requests that name this server, and from no web page but its own origin
    names = {"localhost", f"[{host}]" if ":" in host else host}
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                         allowed_hosts=[f"{name}:{port}" for name in names],
                                         allowed_origins=[f"http://{name}:{port}" for name in names])
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host, transport_security=security)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])

"""The one client of a chat model behind an OpenAI-compatible server: the only module that
imports ``openai`` (an import-linter contract in ``pyproject.toml`` holds every other module to
that). The generator, the model that plays the user in rollouts, and rollouts use it.

``ModelClient(model, base_url, api_key)`` sends one chat completion per call; a ``base_url`` that
lists several servers of the model (``model_endpoint.server_urls``) sends each HTTP request, retries
included, to the server with the fewest requests in flight (``model_endpoint.LeastBusy``):
``await client.complete(messages, tools=..., temperature=..., seed=..., response_format=...)``, or
``client.complete_sync(...)`` from code that is not async. ``complete(..., stream=True)`` asks for
a streamed reply and assembles its content and tool-call deltas (and the usage of its last chunk,
``stream_options.include_usage``) into the same ``Completion``. It returns a ``Completion``: the text,
the tool calls, the token usage, and the decoded response body. A ``response_format`` that is a pydantic model class
is sent as its strict JSON Schema (structured output); a dict is sent as given (JSON mode).
Every HTTP request, retries included, is appended to ``calls`` as one ``LLMCall``.

**What a reply may bring** (the untrusted-text policy, ``core.untrusted``): at most
``MAX_REPLY_BYTES`` (read no further), strict UTF-8 JSON nesting at most ``MAX_REPLY_DEPTH``, a
chat completion (``choices[0].message`` an object), usage counts in range, no lone surrogate or
NUL in any string. Anything else, a reply cut mid-way or a stream that ends mid-event included,
fails the request as a ``ReplyError`` (``malformed_reply``) saying what the server did. Every
request must bring its whole reply within ``timeout`` seconds (``ReplyError`` ``timeout``: a
stream that never ends or trickles included); ``deadline`` bounds a whole ``complete`` call.

**Retries** are ours (the SDK's are off), with ``tenacity``: 429, 5xx, timeouts and connection
errors and replies that cannot be used are retried with exponential backoff and full jitter, a ``Retry-After`` header (capped)
replacing the backoff; at most ``max_attempts`` requests and ``Backoff.max_total_wait`` seconds of
waiting. Retries are logged as a summary: the first at once, then one line per
``RETRY_LOG_EVERY_S`` seconds. A request that failed for good raises ``ModelError``.

**A server that cannot serve at all** raises ``ServerUnusable`` (a ``UserError`` naming the URL
and what to check): unreachable (connection refused, no such host) or answering 401, 403 or 404
(the key refused, no such model or path), during ``check()`` or any request, or when
``max_attempts`` requests in a row got no answer at all (connection errors, not timeouts).

**The API key** goes straight to the SDK client and is kept nowhere else; it is masked as
``[redacted]`` in every error text and log line this module produces (keys shorter than
``MIN_SECRET_LENGTH`` are placeholders for keyless servers, not credentials), and errors are raised
without the SDK's exception attached (whose text may echo it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import openai
from openai import AsyncOpenAI, OpenAI
from pydantic import BaseModel
from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from tenacity.stop import stop_base
from tenacity.wait import wait_base, wait_random_exponential

from pipeline.core.errors import UserError
from pipeline.core.outcomes import LLMCall
from pipeline.core.untrusted import UntrustedInput, count_problem, decode_json, json_problem
from pipeline.generation.model_endpoint import LeastBusy, server_urls

logger = logging.getLogger(__name__)

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
MAX_ERROR_CHARS = 500
CHECK_TIMEOUT_S = 10.0
"""How long ``ModelClient.check`` waits for the server's answer."""
MAX_REPLY_BYTES = 8 * 1024 * 1024
"""The most one reply may bring, a plain body or a stream's events together (8 MiB; a chat reply
is a few KB): past it the reply is refused, unread beyond that point."""
MAX_REPLY_DEPTH = 64
"""How deep a reply's JSON may nest."""
RETRY_LOG_EVERY_S = 10.0
"""After the first retry warning, retries are summarised in one line per this many seconds."""

Message = Mapping[str, Any]
"""One chat message in the OpenAI format (``{"role": ..., "content": ...}``)."""
Tool = Mapping[str, Any]
"""One tool in the OpenAI function-calling format (``training_format.openai_tool``)."""


@dataclass(frozen=True)
class Backoff:
    """Waits between retries, in seconds.

    After failed request ``k`` (1-based) the wait is a uniform random time in
    ``[0, min(maximum, initial * 2**(k-1))]``; a ``Retry-After`` header replaces that, capped at
    ``retry_after_cap``. Retrying stops once the waits so far plus the next would exceed
    ``max_total_wait``.
    """

    initial: float = 0.5
    maximum: float = 20.0
    retry_after_cap: float = 60.0
    max_total_wait: float = 120.0


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model made: its id, the tool's name and the arguments as the JSON text the
    model wrote (not parsed: it may be invalid)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Completion:
    """What one chat completion says (``completion_of``)."""

    text: str
    """``choices[0].message.content``; empty when there is none."""
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    body: Any
    """The decoded response body (None when it was not JSON), for callers that read more."""


class ModelError(Exception):
    """A request that failed for good (retries exhausted, or an error not worth retrying).
    The text is ``<class>: <message>`` of the last error, key masked; ``status`` its
    ``LLMCall.status`` (``http_400`` for a request the server rejected)."""

    def __init__(self, text: str, status: str) -> None:
        super().__init__(text)
        self.status = status


class ReplyError(Exception):
    """A reply that cannot be used, saying what the server did. ``status`` is ``timeout`` (no
    whole reply within the request's deadline: a stream that never ends or trickles counts) or
    ``malformed_reply`` (not a chat completion, larger than ``MAX_REPLY_BYTES``, cut off mid-reply,
    usage out of range, text the untrusted-text policy refuses: ``core.untrusted``); ``server_error``
    for an error event inside a stream. Retried like a 5xx."""

    def __init__(self, status: str, message: str, cut_short: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.cut_short = cut_short
        """A timeout of a request that had less than ``timeout`` seconds: the call's deadline ran out."""


class ServerUnusable(UserError):
    """The model server cannot serve any request: unreachable, the key refused, or no such model.
    Retrying cannot help, so a run stops (and can be resumed) instead of recording failures."""


def usage_of(body: Any) -> tuple[int, int]:
    """``(prompt_tokens, completion_tokens)`` from a response body's ``usage``, zeros when absent."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return 0, 0
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return (prompt if isinstance(prompt, int) else 0), (completion if isinstance(completion, int) else 0)


def completion_of(body: Any) -> Completion:
    """The ``Completion`` a chat-completions body (decoded JSON) states. Only ``choices[0]`` and
    ``usage`` are read, and a field that is missing or of another type reads as empty, so servers
    that add or omit fields are fine."""
    choices = body.get("choices") if isinstance(body, dict) else None
    choice: dict[str, Any] = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message: dict[str, Any] = choice["message"] if isinstance(choice.get("message"), dict) else {}
    content, finish, listed = message.get("content"), choice.get("finish_reason"), message.get("tool_calls")
    calls: list[ToolCall] = []
    for call in listed if isinstance(listed, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            arguments = function.get("arguments")
            calls.append(ToolCall(id=str(call.get("id") or ""), name=str(function.get("name") or ""),
                                  arguments=arguments if isinstance(arguments, str) else json.dumps(arguments)))
    prompt_tokens, completion_tokens = usage_of(body)
    return Completion(text=content if isinstance(content, str) else "", tool_calls=tuple(calls),
                      finish_reason=finish if isinstance(finish, str) else None,
                      prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, body=body)


def checked_body(body: Any) -> dict[str, Any]:
    """``body`` (decoded JSON) when it is a chat completion the project can use: an object whose
    ``choices[0].message`` is an object, whose usage counts are whole numbers in range
    (``core.untrusted.count_problem``) and whose strings hold no lone surrogate or NUL;
    ``ReplyError`` (``malformed_reply``) saying what is wrong otherwise."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(body, dict):
        raise ReplyError("malformed_reply", f"the reply is a JSON {type(body).__name__}, not a chat completion")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
            or not isinstance(choices[0].get("message"), dict):
        raise ReplyError("malformed_reply", "the reply is not a chat completion (no choices[0].message)")
    usage = body.get("usage")
    for name in ("prompt_tokens", "completion_tokens"):
        problem = count_problem(usage.get(name), f"usage.{name}") if isinstance(usage, dict) else None
        if problem:
            raise ReplyError("malformed_reply", f"the reply's {problem}")
    problem = json_problem(body, MAX_REPLY_DEPTH)
    if problem:
        raise ReplyError("malformed_reply", f"the reply {problem}")
    return body


_EVENT_END = re.compile(rb"\r?\n\r?\n")


class EventStream:
    """A streamed reply's server-sent events, fed as the bytes arrive (``feed``); ``finish()``
    gives the decoded ``chat.completion.chunk`` objects. ``ReplyError`` when the events pass
    ``MAX_REPLY_BYTES`` together, an event is not JSON (or fails the untrusted-text policy), the
    server sends an error event, or the stream ends mid-event or carries no chunk."""

    def __init__(self, max_bytes: int = MAX_REPLY_BYTES) -> None:
        self.max_bytes = max_bytes
        self.received = 0
        self.done = False
        """``data: [DONE]`` arrived: the stream is complete."""
        self.chunks: list[dict[str, Any]] = []
        self._buffer = bytearray()

    def feed(self, piece: bytes) -> None:
        self.received += len(piece)
        if self.received > self.max_bytes:
            raise ReplyError("malformed_reply", f"the streamed reply passed {self.max_bytes:,} bytes, more than a "
                                                "reply may bring")
        start = max(0, len(self._buffer) - 3)
        self._buffer += piece
        while not self.done and (end := _EVENT_END.search(self._buffer, start)) is not None:
            event = bytes(self._buffer[:end.start()])
            del self._buffer[:end.end()]
            start = 0
            self._event(event)

    def finish(self) -> list[dict[str, Any]]:
        if not self.done and self._buffer.strip():
            rest = bytes(self._buffer)
            self._buffer.clear()
            try:
                self._event(rest)
            except ReplyError:
                raise ReplyError("malformed_reply", f"the stream ended mid-event after {self.received:,} bytes "
                                                    f"(no [DONE]; the last event is cut: {rest[:80]!r})") from None
        if not self.chunks:
            raise ReplyError("malformed_reply", f"the stream ended after {self.received:,} bytes without a chunk")
        return self.chunks

    def _event(self, event: bytes) -> None:
        lines = [line.rstrip(b"\r") for line in event.split(b"\n")]
        data = b"\n".join(line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:"))
        if not data:
            return  # a comment or a keep-alive
        if data.strip() == b"[DONE]":
            self.done = True
            return
        try:
            chunk = decode_json(data, max_bytes=self.max_bytes, max_depth=MAX_REPLY_DEPTH, what="a streamed event")
        except UntrustedInput as exc:
            raise ReplyError("malformed_reply", f"{exc} (after {self.received:,} bytes of the stream)") from None
        if isinstance(chunk, dict) and chunk.get("error") is not None:
            raise ReplyError("server_error", f"the server sent an error mid-stream: {str(chunk['error'])[:200]}")
        if not isinstance(chunk, dict):
            raise ReplyError("malformed_reply", f"a streamed event is a JSON {type(chunk).__name__}, not a chunk")
        self.chunks.append(chunk)


def assemble_stream(chunks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The chat-completions body that streamed ``chunks`` (decoded ``chat.completion.chunk``
    objects) add up to: ``choices[0]``'s content deltas joined, its tool-call deltas joined by their
    ``index`` (id and name from the first delta that has them, argument text concatenated), the
    last ``finish_reason``, and the ``usage`` of the chunk that carries one. A delta whose ``id``
    differs from the id already under its index starts a new call: servers that send parallel calls
    without an ``index``, or all at 0, stay apart."""
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    slot_of: dict[int, int] = {}  # a delta's index → the key of the call it continues
    finish: str | None = None
    usage: Any = None
    chose = False
    for chunk in chunks:
        usage = chunk.get("usage") or usage
        choices = chunk.get("choices") or []
        chose = chose or bool(choices)
        choice: Mapping[str, Any] = (choices[0] if isinstance(choices, list) and choices
                                     and isinstance(choices[0], Mapping) else {})
        finish = _text(choice.get("finish_reason")) or finish
        found = choice.get("delta")
        delta: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        if isinstance(delta.get("content"), str):
            content.append(delta["content"])
        parts = delta.get("tool_calls")
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, Mapping):
                continue
            found_index = part.get("index")
            index = found_index if isinstance(found_index, int) else 0
            key = slot_of.setdefault(index, len(calls))
            if part.get("id") and calls.get(key, {}).get("id") not in (None, "", part.get("id")):
                key = slot_of[index] = len(calls)  # another call under the same index
            call = calls.setdefault(key, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
            named = part.get("function")
            function: Mapping[str, Any] = named if isinstance(named, Mapping) else {}
            call["id"] = call["id"] or _text(part.get("id"))
            call["function"]["name"] = call["function"]["name"] or _text(function.get("name"))
            call["function"]["arguments"] += _text(function.get("arguments"))
    if not chose:
        return {"choices": [], "usage": usage}
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) if content else None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}


def _text(value: Any) -> str:
    """``value`` when it is text, else ``""`` (a delta's field of another type is no text)."""
    return value if isinstance(value, str) else ""


def status_of(exc: BaseException) -> str:
    """The ``LLMCall.status`` for a failed request."""
    if isinstance(exc, ReplyError):
        return exc.status
    if isinstance(exc, openai.RateLimitError):
        return "rate_limited"
    if isinstance(exc, openai.InternalServerError):
        return "server_error"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection_error"
    if isinstance(exc, openai.APIStatusError):
        return f"http_{exc.status_code}"
    return "error"


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: 429, any 5xx, a timeout, a connection error or a reply that cannot be used."""
    return isinstance(exc, openai.RateLimitError | openai.InternalServerError | openai.APIConnectionError | ReplyError)


def retry_after_seconds(exc: BaseException | None) -> float | None:
    """The wait a failed response asks for: ``retry-after-ms``, or ``Retry-After`` in seconds or as
    an HTTP date; None when absent or unreadable."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None
    return None


def _unreachable(exc: openai.APIConnectionError) -> str:
    """Why a connection failed, in a few words: the innermost OS error behind it (``Connection
    refused``, ``Name or service not known``), else the error's own text."""
    reason, seen, depth = str(exc), exc.__cause__ or exc.__context__, 0
    while seen is not None and depth < 20:
        errno = getattr(seen, "errno", None)
        if isinstance(seen, OSError) and isinstance(errno, int):
            reason = os.strerror(errno) if errno > 0 else (seen.strerror or str(seen))
        seen, depth = seen.__cause__ or seen.__context__, depth + 1
    return reason.strip()[:200]


class _RetryLog:
    """Retry warnings for one client, summarised: the first retry is logged at once, later ones
    in one line per ``every`` seconds counting the retries since the last line by status."""

    def __init__(self, model: str, every: float = RETRY_LOG_EVERY_S) -> None:
        self.model, self.every = model, every
        self.pending: Counter[str] = Counter()
        self.next_at = 0.0

    def retry(self, status: str, wait: float) -> None:
        self.pending[status] += 1
        now = time.monotonic()
        if now < self.next_at:
            return
        count = sum(self.pending.values())
        if count == 1:
            logger.warning("%s: a request failed (%s), retrying in %.1fs", self.model, status, wait)
        else:
            statuses = ", ".join(f"{name} x{n}" for name, n in self.pending.most_common())
            logger.warning("%s: %d failed requests retried in the last %.0fs (%s)", self.model, count,
                           self.every, statuses)
        self.pending.clear()
        self.next_at = now + self.every


class _wait_retry_after(wait_base):
    """The server's ``Retry-After`` (capped) when it sent one, else ``fallback``."""

    def __init__(self, fallback: wait_base, cap: float) -> None:
        self.fallback = fallback
        self.cap = cap

    def __call__(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        asked = retry_after_seconds(exc)
        return min(asked, self.cap) if asked is not None else self.fallback(retry_state)


class _stop_after_total_wait(stop_base):
    """Stop when the waits so far plus the next one would exceed ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __call__(self, retry_state: RetryCallState) -> bool:
        return retry_state.idle_for + (retry_state.upcoming_sleep or 0.0) > self.seconds


class _stop_at(stop_base):
    """Stop when the next wait would end past ``ends`` (a ``time.monotonic()`` time)."""

    def __init__(self, ends: float) -> None:
        self.ends = ends

    def __call__(self, retry_state: RetryCallState) -> bool:
        return time.monotonic() + (retry_state.upcoming_sleep or 0.0) >= self.ends


class _Reply:
    """A plain reply's bytes, gathered up to ``max_bytes`` (a larger ``Content-Length`` is refused
    before any byte is read); ``body()`` decodes and checks them."""

    def __init__(self, max_bytes: int, length: str | None) -> None:
        self.max_bytes = max_bytes
        self.data = bytearray()
        if length is not None and length.strip().isdigit() and int(length) > max_bytes:
            raise ReplyError("malformed_reply", f"the reply is {int(length):,} bytes, more than the {max_bytes:,} "
                                                "a reply may bring")

    def feed(self, piece: bytes) -> None:
        self.data += piece
        if len(self.data) > self.max_bytes:
            raise ReplyError("malformed_reply", f"the reply passed {self.max_bytes:,} bytes, more than a reply may "
                                                "bring")

    def body(self) -> dict[str, Any]:
        try:
            body = decode_json(bytes(self.data), max_bytes=self.max_bytes, max_depth=MAX_REPLY_DEPTH, what="the reply")
        except UntrustedInput as exc:
            raise ReplyError("malformed_reply", f"{exc} ({len(self.data):,} bytes: {bytes(self.data[:80])!r})") from None
        return checked_body(body)


def _broken(exc: Exception) -> ReplyError:
    """The ``ReplyError`` for a connection that broke (or went silent) while the reply was read."""
    if "Timeout" in type(exc).__name__:  # the HTTP library's read timeout: the server went silent
        return ReplyError("timeout", f"the server went silent mid-reply ({type(exc).__name__})")
    return ReplyError("malformed_reply", f"the server broke off the reply mid-way ({type(exc).__name__}: {exc})")


async def _pieces(pieces: AsyncIterator[bytes], feed: Any, done: Any = None) -> None:
    """Feed each piece of a reply to ``feed`` (until ``done()``); a transport error while reading
    is the server breaking off its reply (``_broken``)."""
    try:
        async for piece in pieces:
            feed(piece)
            if done is not None and done():
                return
    except (ReplyError, openai.APIError, asyncio.CancelledError, TimeoutError):
        raise
    except Exception as exc:  # the HTTP library's own errors: the connection broke mid-reply
        raise _broken(exc) from None


def _pieces_sync(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """``_pieces`` for the blocking clients: the pieces, a broken connection as ``_broken``."""
    try:
        yield from pieces
    except (ReplyError, openai.APIError):
        raise
    except Exception as exc:  # the HTTP library's own errors: the connection broke mid-reply
        raise _broken(exc) from None


def _within(read: Callable[[], dict[str, Any]], seconds: float, late: ReplyError) -> dict[str, Any]:
    """``read()`` run on a daemon thread, waited for ``seconds`` (and a moment more): ``late`` when
    it has not returned by then. The blocking client checks the time only as bytes arrive, and a
    server that goes silent holds its read for the whole read timeout; the caller never waits that
    long (the thread ends by itself when the read times out or the server closes)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("ok", read()))
        except BaseException as exc:  # handed to the caller as it is
            outcome.append(("error", exc))

    worker = threading.Thread(target=run, name="model-request", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.001) + _GRACE_S)
    if not outcome:
        raise late
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value


_GRACE_S = 0.5
"""How long past a request's time the blocking client waits for a reply already arriving."""


class ModelClient:
    """Chat completions from ``model`` at ``base_url`` (None: the OpenAI API, or ``OPENAI_BASE_URL``
    as the SDK reads it) with ``api_key`` (None: ``OPENAI_API_KEY`` as the SDK reads it); see the
    module for retries and errors. ``model_option`` and ``url_option`` name the command-line
    options a ``ServerUnusable`` tells the user to check. Close it with ``aclose()`` (or
    ``async with``); ``close()`` releases what ``complete_sync`` opened.

    **Deadlines.** Each HTTP request must bring its whole reply (connect, first byte, the body or
    the whole stream) within ``timeout`` seconds, or it fails with status ``timeout``; with
    ``deadline`` set, one ``complete`` call, its retries and waits included, ends within
    ``deadline`` seconds (each request gets what is left). A reply may bring at most
    ``max_reply_bytes``."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: float = 120.0, max_attempts: int = 4, backoff: Backoff | None = None,
                 model_option: str = "--model", url_option: str = "--base-url", deadline: float | None = None,
                 max_reply_bytes: int = MAX_REPLY_BYTES) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.model, self.timeout, self.max_attempts = model, timeout, max_attempts
        self.deadline, self.max_reply_bytes = deadline, max_reply_bytes
        self.backoff = backoff or Backoff()
        self.model_option, self.url_option = model_option, url_option
        urls: tuple[str | None, ...] = server_urls(base_url) or (None,)
        self._clients = [AsyncOpenAI(base_url=url, api_key=api_key, timeout=timeout, max_retries=0) for url in urls]
        self._async = self._clients[0]  # where the key is kept (every client holds the same)
        self._balance = LeastBusy(len(self._clients))
        self._sync: list[OpenAI] | None = None
        self._sync_lock = threading.Lock()
        self._retry_log = _RetryLog(model)
        self._silent_failures = 0  # requests in a row that got no answer at all

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self.close()
        for client in self._clients:
            await client.close()

    def close(self) -> None:
        for client in self._sync or []:
            client.close()

    @property
    def base_url(self) -> str:
        """The server's URL (several: joined by commas)."""
        return ",".join(self._urls())

    def _urls(self) -> list[str]:
        return [str(client.base_url).rstrip("/") for client in self._clients]

    # ---- the key, masked

    def redact(self, text: str) -> str:
        """``text`` with the API key masked (read from the SDK client, the one place it is kept)."""
        key = self._async.api_key
        return text.replace(key, REDACTED) if isinstance(key, str) and len(key) >= MIN_SECRET_LENGTH else text

    def describe(self, exc: BaseException) -> str:
        """``<class>: <message>`` of a failed request, key masked, at most ``MAX_ERROR_CHARS`` long
        (an error body can be a whole HTML page)."""
        return self.redact(f"{type(exc).__name__}: {exc}")[:MAX_ERROR_CHARS]

    # ---- requests

    async def complete(self, messages: Sequence[Message], *, tools: Sequence[Tool] | None = None,
                       temperature: float | None = None, seed: int | None = None,
                       response_format: type[BaseModel] | Mapping[str, Any] | None = None,
                       calls: list[LLMCall] | None = None, stream: bool = False) -> Completion:
        """One chat completion, retried as the module says; ``ModelError`` when it fails for good.
        ``stream``: the reply is streamed and assembled (``body`` is then the assembled body); a
        ``response_format`` that is a pydantic class (structured output) cannot be streamed
        (``ValueError``)."""
        if stream and isinstance(response_format, type):
            raise ValueError("structured output (a response_format class) cannot be streamed; pass stream=False")
        arguments = self._arguments(messages, tools, temperature, seed, response_format)
        ends = None if self.deadline is None else time.monotonic() + self.deadline
        failures: list[BaseException] = []
        try:
            return await AsyncRetrying(**self._retry_policy(ends))(self._request, arguments, calls, ends, stream,
                                                                   failures)
        except (openai.OpenAIError, ReplyError) as exc:
            raise self._final(failures or [exc]) from None

    def complete_sync(self, messages: Sequence[Message], *, tools: Sequence[Tool] | None = None,
                      temperature: float | None = None, seed: int | None = None,
                      response_format: type[BaseModel] | Mapping[str, Any] | None = None,
                      calls: list[LLMCall] | None = None) -> Completion:
        """``complete`` for code that is not async (blocks the calling thread; safe from threads).
        Each request is waited for no longer than the time it may take (``_within``): a server
        that trickles or goes silent holds the caller at most half a second past it."""
        arguments = self._arguments(messages, tools, temperature, seed, response_format)
        ends = None if self.deadline is None else time.monotonic() + self.deadline
        failures: list[BaseException] = []
        try:
            return Retrying(**self._retry_policy(ends))(self._request_sync, arguments, calls, ends, failures)
        except (openai.OpenAIError, ReplyError) as exc:
            raise self._final(failures or [exc]) from None

    def _final(self, failures: list[BaseException]) -> ModelError:
        """The ``ModelError`` of a call whose requests all failed: the last failure's, unless the
        call's deadline cut that request short after another failed (then the one before: what the
        server did, not that the time ran out)."""
        last = failures[-1]
        if isinstance(last, ReplyError) and last.cut_short and len(failures) > 1:
            last = failures[-2]
        return ModelError(self.describe(last), status_of(last))

    async def check(self) -> None:
        """Ask the server once (``GET /models``): raise ``ServerUnusable`` when it cannot be reached
        or refuses the key (each server, when there are several). Any other answer passes, a timeout
        and a server without that route too."""
        for client in self._clients:
            try:
                await client.with_options(timeout=CHECK_TIMEOUT_S).models.list()
            except openai.APITimeoutError:
                continue
            except (openai.APIConnectionError, openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise self._unusable(exc) from None
            except openai.APIError:
                continue

    def _arguments(self, messages: Sequence[Message], tools: Sequence[Tool] | None, temperature: float | None,
                   seed: int | None, response_format: type[BaseModel] | Mapping[str, Any] | None) -> dict[str, Any]:
        arguments: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        for name, value in (("tools", list(tools) if tools else None), ("temperature", temperature), ("seed", seed),
                            ("response_format", response_format)):
            if value is not None:
                arguments[name] = value
        return arguments

    def _retry_policy(self, ends: float | None) -> dict[str, Any]:
        """The ``tenacity`` arguments of both forms of ``complete``: one retry policy (stopping
        before a wait that would pass ``ends``, the call's deadline, when it has one)."""
        stop = stop_after_attempt(self.max_attempts) | _stop_after_total_wait(self.backoff.max_total_wait)
        return {
            "retry": retry_if_exception(is_transient),
            "stop": stop if ends is None else stop | _stop_at(ends),
            "wait": _wait_retry_after(wait_random_exponential(multiplier=self.backoff.initial,
                                                              max=self.backoff.maximum),
                                      cap=self.backoff.retry_after_cap),
            "before_sleep": self._log_retry,
            "reraise": True,
        }

    def _time_left(self, ends: float | None) -> float:
        """Seconds the next request may take: ``timeout``, or less when the call's deadline is nearer."""
        return self.timeout if ends is None else max(0.0, min(self.timeout, ends - time.monotonic()))

    def _log_retry(self, retry_state: RetryCallState) -> None:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        self._retry_log.retry(status_of(exc) if exc else "?", retry_state.upcoming_sleep)

    async def _request(self, arguments: dict[str, Any], calls: list[LLMCall] | None, ends: float | None,
                       stream: bool, failures: list[BaseException]) -> Completion:
        """One HTTP request, its whole reply read within the time left (``_time_left``); a failure
        is appended to ``failures`` (and to ``calls``) and raised."""
        index = self._balance.acquire()
        started, limit = time.perf_counter(), self._time_left(ends)
        try:
            async with asyncio.timeout(limit):
                body = await (self._read_stream(index, arguments) if stream else self._read_body(index, arguments))
        except TimeoutError:
            exc = ReplyError("timeout", f"no whole reply within the {limit:.1f} s a request may take",
                             cut_short=limit < self.timeout)
            failures.append(exc)
            self._failed(exc, started, calls)
            raise exc from None
        except (openai.APIError, ReplyError) as exc:
            failures.append(exc)
            self._failed(exc, started, calls)
            raise
        finally:
            self._balance.release(index)
        return self._answered(body, started, calls)

    async def _read_body(self, index: int, arguments: dict[str, Any]) -> dict[str, Any]:
        """A plain reply, read up to ``max_reply_bytes`` and checked (``checked_body``)."""
        completions = self._clients[index].chat.completions.with_streaming_response
        send = completions.parse if isinstance(arguments.get("response_format"), type) else completions.create
        async with send(**arguments) as response:
            reply = _Reply(self.max_reply_bytes, response.headers.get("content-length"))
            await _pieces(response.iter_bytes(), reply.feed)
        return reply.body()

    async def _read_stream(self, index: int, arguments: dict[str, Any]) -> dict[str, Any]:
        """A streamed reply, its events assembled into a chat-completions body and checked."""
        events = EventStream(self.max_reply_bytes)
        async with self._clients[index].chat.completions.with_streaming_response.create(
                **arguments, stream=True, stream_options={"include_usage": True}) as response:
            await _pieces(response.iter_bytes(), events.feed, lambda: events.done)
        return checked_body(assemble_stream(events.finish()))

    def _request_sync(self, arguments: dict[str, Any], calls: list[LLMCall] | None, ends: float | None,
                      failures: list[BaseException]) -> Completion:
        """``_request`` on the blocking clients (a plain reply)."""
        with self._sync_lock:
            index = self._balance.acquire()
        completions = self._sync_clients()[index].chat.completions.with_streaming_response
        send = completions.parse if isinstance(arguments.get("response_format"), type) else completions.create
        started, limit = time.perf_counter(), self._time_left(ends)
        late = ReplyError("timeout", f"no whole reply within the {limit:.1f} s a request may take",
                          cut_short=limit < self.timeout)
        stop_at = time.monotonic() + limit

        def read() -> dict[str, Any]:
            with send(**arguments, timeout=max(limit, 0.001)) as response:
                reply = _Reply(self.max_reply_bytes, response.headers.get("content-length"))
                for piece in _pieces_sync(response.iter_bytes()):
                    if time.monotonic() > stop_at:
                        raise late
                    reply.feed(piece)
            return reply.body()

        try:
            body = _within(read, limit, late)
        except (openai.APIError, ReplyError) as exc:
            failures.append(exc)
            self._failed(exc, started, calls)
            raise
        finally:
            with self._sync_lock:
                self._balance.release(index)
        return self._answered(body, started, calls)

    def _sync_clients(self) -> list[OpenAI]:
        """The blocking SDK clients, made on first use from the async ones' settings."""
        with self._sync_lock:
            if self._sync is None:
                self._sync = [OpenAI(base_url=client.base_url, api_key=client.api_key, timeout=self.timeout,
                                     max_retries=0) for client in self._clients]
            return self._sync

    def _answered(self, body: dict[str, Any], started: float, calls: list[LLMCall] | None) -> Completion:
        self._silent_failures = 0
        completion = completion_of(body)
        if calls is not None:
            calls.append(LLMCall(model=self.model, prompt_tokens=completion.prompt_tokens,
                                 completion_tokens=completion.completion_tokens,
                                 latency_s=time.perf_counter() - started, status="ok"))
        return completion

    def _failed(self, exc: openai.APIError | ReplyError, started: float, calls: list[LLMCall] | None) -> None:
        """Record a failed request; raise ``ServerUnusable`` when it shows the server cannot serve."""
        if calls is not None:
            calls.append(LLMCall(model=self.model, latency_s=time.perf_counter() - started, status=status_of(exc),
                                 error=self.describe(exc)))
        if isinstance(exc, ReplyError):
            self._silent_failures = 0  # the server answered, badly
            return
        self._raise_if_unusable(exc)

    def _raise_if_unusable(self, exc: openai.APIError) -> None:
        """Raise ``ServerUnusable`` when ``exc`` says the server cannot serve at all: 401, 403 or
        404, or the ``max_attempts``-th request in a row that got no answer (a timeout is one)."""
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError | openai.NotFoundError):
            raise self._unusable(exc) from None
        silent = isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)
        self._silent_failures = self._silent_failures + 1 if silent else 0
        if self._silent_failures >= self.max_attempts:
            assert isinstance(exc, openai.APIConnectionError)
            raise self._unusable(exc) from None

    def _server_of(self, exc: openai.APIError) -> str:
        """The URL of the server ``exc``'s request went to (all of them when it cannot be told)."""
        sent = str(getattr(getattr(exc, "request", None), "url", ""))
        return next((url for url in self._urls() if sent.startswith(url)), self.base_url)

    def _unusable(self, exc: openai.APIError) -> ServerUnusable:
        """The ``ServerUnusable`` for a request that failed with ``exc``, saying what to check."""
        where = f"the model server at {self._server_of(exc)}"
        if isinstance(exc, openai.APIConnectionError):
            return ServerUnusable(f"cannot reach {where} ({self.redact(_unreachable(exc))}); check that it is "
                                  f"running and that {self.url_option} (or OPENAI_BASE_URL) is right")
        status = exc.status_code if isinstance(exc, openai.APIStatusError) else "?"
        detail = self.redact(str(getattr(exc, "message", exc)))[:200]
        if isinstance(exc, openai.NotFoundError):
            return ServerUnusable(f"{where} has no model {self.model!r} or no such route (HTTP {status}: {detail}); "
                                  f"check {self.model_option}, and that {self.url_option} is the API's root "
                                  "(often ending in /v1)")
        return ServerUnusable(f"{where} refused the request (HTTP {status}: {detail}); check OPENAI_API_KEY "
                              f"and that the key may use model {self.model!r}")

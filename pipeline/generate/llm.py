"""The LLM generator: task packages from any OpenAI-compatible chat-completions server.

One ``generate`` call renders the prompts (``pipeline.generate.prompting``), asks the model for a
package, and classifies what came back. It never raises for a bad model or a bad server: every
outcome is a ``Generated`` with a package or a ``Failure`` whose code names the class:

- ``malformed_output``: the content is not a JSON object (or the body is not a chat completion);
- ``schema_invalid``: JSON that is not a valid ``TaskPackage`` (the first error; ``raw`` kept);
- ``truncated_output``: the model stopped at its token limit (``finish_reason == "length"``);
- ``llm_error``: the request failed for good (retries exhausted, or an error not worth retrying);
- ``prompt_error``: the attempt names a capability, template or service that does not exist.

Structured output comes first: ``chat.completions.parse`` sends the ``TaskPackage`` JSON Schema
(made strict by the SDK). A server or model that rejects it answers 400; the same request is then
sent in JSON mode (``response_format={"type": "json_object"}``) and, once JSON mode is not rejected
too, this generator instance stops trying structured output. OpenAI itself rejects the schema in
strict mode (``initial_state``, tool parameters and matchers are open objects); servers with
guided decoding (vLLM, llama.cpp, SGLang) take it.

Retries are ours (the SDK's are off): 429, 5xx, timeouts and connection errors are retried with
exponential backoff and full jitter, a ``Retry-After`` header (capped) replacing the backoff; at most
``max_attempts`` requests and ``Backoff.max_total_wait`` seconds of waiting. Every HTTP request,
retries included, is one ``LLMCall``. The API key never appears in what this module returns or logs.
Retries are logged as a summary: the first at once, then one line per ``RETRY_LOG_EVERY_S`` seconds.

A server that cannot serve the run at all is not a failed attempt: ``check()`` asks it once before
a run, and ``generate`` raises ``ServerUnusable`` (a ``UserError`` naming the URL and what to
check) when it cannot be reached (connection refused, no such host) or answers 401, 403 or 404
(the key refused, no such model or path), during the check or any request, or when
``max_attempts`` requests in a row, across all attempts in flight, got no answer at all (connection
errors, not timeouts). Nothing of such an attempt is returned, so nothing of it is recorded.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from functools import cache
from typing import Any

import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam
from pydantic import ValidationError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.stop import stop_base
from tenacity.wait import wait_base, wait_random_exponential

from pipeline.core.errors import UserError, first_validation_error
from pipeline.core.jsonvalues import ShapeError, parse_json
from pipeline.core.outcomes import Failure, FailureCode, LLMCall
from pipeline.core.package import Provenance, TaskPackage
from pipeline.generate.base import Attempt, Generated
from pipeline.generate.prompting import PromptError, messages_for
from pipeline.generate.tools import bound_to_catalogue
from pipeline.taxonomy.capabilities import Capability, taxonomy

logger = logging.getLogger(__name__)

OFFLINE = "offline"
REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
MAX_ERROR_CHARS = 500
CHECK_TIMEOUT_S = 10.0
"""How long ``LLMGenerator.check`` waits for the server's answer."""
RETRY_LOG_EVERY_S = 10.0
"""After the first retry warning, retries are summarised in one line per this many seconds."""
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


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


class TaskPackageOutput(TaskPackage):
    """The format ``parse()`` sends: ``TaskPackage`` itself, its JSON Schema built once, without
    annotations (``_bare``).

    pydantic rebuilds a schema on every ``model_json_schema()`` call (about 15 ms for this model)
    and ``parse()`` asks for it on every request, which alone would hold a generator's event loop
    to about 60 requests/s. Each call gets a fresh copy (the SDK makes it strict in place), decoded
    from cached JSON text: several times cheaper than ``copy.deepcopy``. Calls with arguments are
    not cached.
    """

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if args or kwargs:
            return super().model_json_schema(*args, **kwargs)
        return json.loads(_package_schema_json())


@cache
def _package_schema_json() -> str:
    return json.dumps(output_schema(), separators=(",", ":"))


def output_schema() -> dict[str, Any]:
    """The JSON Schema a model's reply is decoded against: ``TaskPackage`` without the fields the
    pipeline sets (``id``, ``provenance``, ``has_reference``), without annotations, and with each
    check or safety rule an open object of a known ``kind`` (the brief states each kind's fields;
    validation of the reply names any mistake, and the repair prompt shows it)."""
    schema = _bare(TaskPackage.model_json_schema())
    for name in ("id", "provenance", "has_reference"):
        schema["properties"].pop(name, None)
    schema["required"] = [r for r in schema.get("required", []) if r in schema["properties"]]
    for name in ("checks", "safety"):
        union = schema["properties"][name]["items"]
        kinds = sorted(union.get("discriminator", {}).get("mapping", {}))
        schema["properties"][name]["items"] = {
            "type": "object", "additionalProperties": True, "required": ["kind"],
            "properties": {"id": {"type": "string"}, "kind": {"enum": kinds}, "weight": {"type": "number"}}}
    used = set(re.findall(r'"#/\$defs/(\w+)"', json.dumps(schema)))
    while True:  # keep the definitions still referenced, directly or through another definition
        grown = used | {d for name in used for d in re.findall(r'"#/\$defs/(\w+)"', json.dumps(schema["$defs"][name]))}
        if grown == used:
            break
        used = grown
    schema["$defs"] = {k: v for k, v in schema["$defs"].items() if k in used}
    return schema


def _bare(schema: Any) -> Any:
    """A JSON Schema without its ``title`` and ``description`` annotations: they constrain nothing,
    and the system prompt already explains every field (a third of the schema's size)."""
    if isinstance(schema, dict):
        return {k: _bare(v) for k, v in schema.items()
                if k not in ("title", "description") or not isinstance(v, str)}
    if isinstance(schema, list):
        return [_bare(v) for v in schema]
    return schema


# --------------------------------------------------------------------------- classification


@dataclass(frozen=True)
class Outcome:
    """What one completion says: a package, or the failure (``status`` is ``ok`` or its code)."""

    status: str
    package: TaskPackage | None = None
    failure: Failure | None = None
    raw: str | None = None


def _failed(code: FailureCode, message: str, raw: str | None = None) -> Outcome:
    return Outcome(code.value, failure=Failure(code=code, message=message), raw=raw)


def status_of(exc: BaseException) -> str:
    """The ``LLMCall.status`` for a failed request."""
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
    """Worth retrying: 429, any 5xx, a timeout or a connection error."""
    return isinstance(exc, openai.RateLimitError | openai.InternalServerError | openai.APIConnectionError)


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


def interpret(body: Any) -> Outcome:
    """Classify a chat-completions response body (decoded JSON; None when it was not JSON).

    Only ``choices[0].message.content``/``refusal`` and ``finish_reason`` are read, so servers that
    add or omit other fields are fine. Truncation is judged before parsing: cut-off content is
    ``truncated_output`` even if a prefix happens to parse. One surrounding Markdown code fence is
    tolerated; anything else that is not a JSON object is ``malformed_output``.
    """
    choices = body.get("choices") if isinstance(body, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    message = choice.get("message") if choice else None
    if choice is None or not isinstance(message, dict):
        return _failed(FailureCode.MALFORMED_OUTPUT, "the response is not a chat completion")
    content = message["content"] if isinstance(message.get("content"), str) else ""
    if choice.get("finish_reason") == "length":
        return _failed(FailureCode.TRUNCATED_OUTPUT,
                       f"the model hit its token limit after {usage_of(body)[1]} completion tokens", content)
    if not content and message.get("refusal"):
        return _failed(FailureCode.MALFORMED_OUTPUT, f"the model refused: {str(message['refusal'])[:200]}")
    fenced = _FENCE.match(content)
    try:
        data = parse_json(fenced.group(1) if fenced else content)
    except json.JSONDecodeError as exc:
        return _failed(FailureCode.MALFORMED_OUTPUT,
                       f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", content)
    except ShapeError as exc:
        return _failed(FailureCode.SCHEMA_INVALID, f"the reply is JSON {exc}", content)
    if not isinstance(data, dict):
        return _failed(FailureCode.MALFORMED_OUTPUT, f"expected a JSON object, got {type(data).__name__}", content)
    try:
        package = TaskPackage.model_validate(data)
    except ValidationError as exc:
        return _failed(FailureCode.SCHEMA_INVALID, first_validation_error(exc), content)
    return Outcome("ok", package=package)


def usage_of(body: Any) -> tuple[int, int]:
    """``(prompt_tokens, completion_tokens)`` from a response body's ``usage``, zeros when absent."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return 0, 0
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return (prompt if isinstance(prompt, int) else 0), (completion if isinstance(completion, int) else 0)


class ServerUnusable(UserError):
    """The model server cannot serve any request: unreachable, the key refused, or no such model.
    Retrying cannot help, so a run stops (and can be resumed) instead of recording failures."""


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
    """Retry warnings for one generator, summarised: the first retry is logged at once, later ones
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


# --------------------------------------------------------------------------- retry policy


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


# --------------------------------------------------------------------------- generator


class LLMGenerator:
    """A ``Generator`` backed by a chat model behind an OpenAI-compatible API.

    ``capabilities`` maps capability names to their definitions (default: the shipped taxonomy).
    Call ``aclose()`` (or use ``async with``) to release the HTTP connections.
    """

    name = "llm"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_attempts: int = 4,
        *,
        backoff: Backoff | None = None,
        capabilities: Mapping[str, Capability] | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.model = model
        self.max_attempts = max_attempts
        self.backoff = backoff or Backoff()
        self.structured_output = True
        self._capabilities = capabilities
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)
        self._retry_log = _RetryLog(model)
        self._silent_failures = 0  # requests in a row that got no answer at all
        key = self._client.api_key
        self._secret = key if isinstance(key, str) and len(key) >= MIN_SECRET_LENGTH else ""

    async def __aenter__(self) -> LLMGenerator:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.close()

    def redact(self, text: str) -> str:
        """``text`` with the API key masked. Keys shorter than ``MIN_SECRET_LENGTH`` are placeholders
        for servers that need none (masking them would mangle every message), not credentials."""
        return text.replace(self._secret, REDACTED) if self._secret else text

    def describe(self, exc: BaseException) -> str:
        """``<class>: <message>`` of a failed request, key masked, at most ``MAX_ERROR_CHARS`` long
        (an error body can be a whole HTML page)."""
        return self.redact(f"{type(exc).__name__}: {exc}")[:MAX_ERROR_CHARS]

    @property
    def base_url(self) -> str:
        return str(self._client.base_url).rstrip("/")

    async def check(self) -> None:
        """Ask the server once (``GET /models``): raise ``ServerUnusable`` when it cannot be reached
        or refuses the key. Any other answer passes, a timeout and a server without that route too."""
        try:
            await self._client.with_options(timeout=CHECK_TIMEOUT_S).models.list()
        except openai.APITimeoutError:
            return
        except (openai.APIConnectionError, openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise self._unusable(exc) from None
        except openai.APIError:
            return

    def _unusable(self, exc: openai.APIError) -> ServerUnusable:
        """The ``ServerUnusable`` for a request that failed with ``exc``, saying what to check."""
        where = f"the model server at {self.base_url}"
        if isinstance(exc, openai.APIConnectionError):
            return ServerUnusable(f"cannot reach {where} ({self.redact(_unreachable(exc))}); check that it is "
                                  "running and that --base-url (or OPENAI_BASE_URL) is right")
        status = exc.status_code if isinstance(exc, openai.APIStatusError) else "?"
        detail = self.redact(str(getattr(exc, "message", exc)))[:200]
        if isinstance(exc, openai.NotFoundError):
            return ServerUnusable(f"{where} has no model {self.model!r} or no such route (HTTP 404: {detail}); "
                                  "check --model, and that --base-url is the API's root (often ending in /v1)")
        return ServerUnusable(f"{where} refused the request (HTTP {status}: {detail}); check OPENAI_API_KEY "
                              f"and that the key may use model {self.model!r}")

    async def generate(self, attempt: Attempt) -> Generated:
        """One package for ``attempt`` (a repair when it has a ``parent``), or an error; never raises
        for a bad model or a failing server (``ServerUnusable`` for one that cannot serve at all:
        see the module). The package's ``capability`` and ``workflow`` are the
        attempt's (they file the package; the model does not choose them), its provenance names
        this generator, its tools get their catalogue operation's parameters (``bound_to_catalogue``)
        and its ``id`` is computed from its content."""
        try:
            messages = messages_for(attempt, self._capabilities if self._capabilities is not None else taxonomy())
        except PromptError as exc:
            return Generated(failure=Failure(code=FailureCode.PROMPT_ERROR, message=str(exc)))
        calls: list[LLMCall] = []
        try:
            outcome = await self._complete(messages, attempt.item_seed, calls)
        except openai.OpenAIError as exc:
            return Generated(failure=Failure(code=FailureCode.LLM_ERROR, message=self.describe(exc)), calls=calls)
        if outcome.package is None:
            return Generated(failure=outcome.failure, raw=outcome.raw, calls=calls)
        parent = (attempt.parent.id or attempt.parent.compute_id()) if attempt.parent is not None else None
        provenance = Provenance(generator=self.name, model=self.model, template=attempt.template,
                                seed=attempt.seed, slot=attempt.slot, attempt=attempt.attempt, parent=parent)
        package = bound_to_catalogue(outcome.package).model_copy(update={
            "id": "", "capability": attempt.capability, "workflow": attempt.template, "provenance": provenance})
        return Generated(package=package, calls=calls)

    async def _complete(self, messages: list[ChatCompletionMessageParam], seed: int, calls: list[LLMCall]) -> Outcome:
        """Structured output while it is supported, else (and as the fallback for a 400) JSON mode."""
        if self.structured_output:
            try:
                return await self._with_retries(messages, seed, calls, structured=True)
            except openai.BadRequestError:
                outcome = await self._with_retries(messages, seed, calls, structured=False)
                self.structured_output = False
                logger.info("%s: structured output rejected, using JSON mode from now on", self.model)
                return outcome
        return await self._with_retries(messages, seed, calls, structured=False)

    async def _with_retries(self, messages: list[ChatCompletionMessageParam], seed: int, calls: list[LLMCall],
                            structured: bool) -> Outcome:
        retrying = AsyncRetrying(
            retry=retry_if_exception(is_transient),
            stop=stop_after_attempt(self.max_attempts) | _stop_after_total_wait(self.backoff.max_total_wait),
            wait=_wait_retry_after(wait_random_exponential(multiplier=self.backoff.initial, max=self.backoff.maximum),
                                   cap=self.backoff.retry_after_cap),
            before_sleep=self._log_retry,
            reraise=True,
        )
        return await retrying(self._request, messages, seed, calls, structured)

    def _log_retry(self, retry_state: RetryCallState) -> None:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        self._retry_log.retry(status_of(exc) if exc else "?", retry_state.upcoming_sleep)

    async def _request(self, messages: list[ChatCompletionMessageParam], seed: int, calls: list[LLMCall],
                       structured: bool) -> Outcome:
        """One HTTP request, recorded as one ``LLMCall``; API errors are re-raised for the retry loop.

        The raw response is read rather than the SDK's parsed one so that truncated, malformed and
        invalid content keeps its text and token usage (the SDK's parser raises without them).
        """
        completions = self._client.chat.completions.with_raw_response
        started = time.perf_counter()
        try:
            if structured:
                raw = (await completions.parse(model=self.model, messages=messages, seed=seed,
                                               response_format=TaskPackageOutput)).http_response
            else:
                raw = (await completions.create(model=self.model, messages=messages, seed=seed,
                                                response_format={"type": "json_object"})).http_response
        except openai.APIError as exc:
            calls.append(LLMCall(model=self.model, latency_s=time.perf_counter() - started, status=status_of(exc),
                                 error=self.describe(exc)))
            self._judge(exc)
            raise
        self._silent_failures = 0
        try:
            body = json.loads(raw.content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        outcome = interpret(body)
        prompt_tokens, completion_tokens = usage_of(body)
        calls.append(LLMCall(model=self.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                             latency_s=time.perf_counter() - started, status=outcome.status,
                             error=self.redact(str(outcome.failure)) if outcome.failure else None))
        return outcome

    def _judge(self, exc: openai.APIError) -> None:
        """Raise ``ServerUnusable`` when ``exc`` says the server cannot serve this run at all."""
        if _fatal_status(exc):
            raise self._unusable(exc) from None
        silent = isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)
        self._silent_failures = self._silent_failures + 1 if silent else 0
        if self._silent_failures >= self.max_attempts:
            assert isinstance(exc, openai.APIConnectionError)
            raise self._unusable(exc) from None


def _fatal_status(exc: openai.APIError) -> bool:
    return isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError | openai.NotFoundError)


def from_env(model: str | None = None, base_url: str | None = None) -> LLMGenerator | None:
    """The LLM generator the environment asks for, or None for the offline generator.

    ``model`` defaults to ``SYNTH_MODEL`` (default ``offline``: no LLM), ``base_url`` to
    ``OPENAI_BASE_URL`` (default: the OpenAI API); the key is ``OPENAI_API_KEY``. A local server
    that needs no key may leave the key unset when ``base_url`` is given.
    """
    model = model or os.environ.get("SYNTH_MODEL") or OFFLINE
    if model == OFFLINE:
        return None
    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = os.environ.get("OPENAI_API_KEY") or None
    if api_key is None:
        if base_url is None:
            raise UserError(f"model {model!r} needs OPENAI_API_KEY set (or OPENAI_BASE_URL for a server "
                            "that needs no key); use SYNTH_MODEL=offline to generate without an LLM")
        api_key = "unused"
    return LLMGenerator(model=model, base_url=base_url, api_key=api_key)

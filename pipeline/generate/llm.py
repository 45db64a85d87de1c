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
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
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
from pipeline.core.outcomes import Failure, FailureCode, LLMCall
from pipeline.core.package import Provenance, TaskPackage
from pipeline.generate.base import Attempt, Generated
from pipeline.generate.prompting import PromptError, messages_for
from pipeline.taxonomy.capabilities import Capability, taxonomy

logger = logging.getLogger(__name__)

OFFLINE = "offline"
REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
MAX_ERROR_CHARS = 500
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
    """The format ``parse()`` sends: ``TaskPackage`` itself, its JSON Schema built once.

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
    return json.dumps(TaskPackage.model_json_schema())


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
    if not isinstance(message, dict):
        return _failed(FailureCode.MALFORMED_OUTPUT, "the response is not a chat completion")
    content = message.get("content") if isinstance(message.get("content"), str) else ""
    if choice.get("finish_reason") == "length":
        return _failed(FailureCode.TRUNCATED_OUTPUT,
                       f"the model hit its token limit after {usage_of(body)[1]} completion tokens", content)
    if not content and message.get("refusal"):
        return _failed(FailureCode.MALFORMED_OUTPUT, f"the model refused: {str(message['refusal'])[:200]}")
    fenced = _FENCE.match(content)
    try:
        data = json.loads(fenced.group(1) if fenced else content)
    except json.JSONDecodeError as exc:
        return _failed(FailureCode.MALFORMED_OUTPUT,
                       f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", content)
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

    async def generate(self, attempt: Attempt) -> Generated:
        """One package for ``attempt`` (a repair when it has a ``parent``), or an error; never raises
        for model or server failures. The package's ``capability`` and ``workflow`` are the
        attempt's (they file the package; the model does not choose them), its provenance names
        this generator, and its ``id`` is computed from its content."""
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
        package = outcome.package.model_copy(update={"id": "", "capability": attempt.capability,
                                                     "workflow": attempt.template, "provenance": provenance})
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
        logger.warning("%s: request %d failed (%s), retrying in %.2fs", self.model, retry_state.attempt_number,
                       status_of(exc) if exc else "?", retry_state.upcoming_sleep)

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
                response = await completions.parse(model=self.model, messages=messages, seed=seed,
                                                   response_format=TaskPackageOutput)
            else:
                response = await completions.create(model=self.model, messages=messages, seed=seed,
                                                    response_format={"type": "json_object"})
        except openai.APIError as exc:
            calls.append(LLMCall(model=self.model, latency_s=time.perf_counter() - started, status=status_of(exc),
                                 error=self.describe(exc)))
            raise
        try:
            body = json.loads(response.http_response.content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        outcome = interpret(body)
        prompt_tokens, completion_tokens = usage_of(body)
        calls.append(LLMCall(model=self.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                             latency_s=time.perf_counter() - started, status=outcome.status,
                             error=self.redact(str(outcome.failure)) if outcome.failure else None))
        return outcome


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

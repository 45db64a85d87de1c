"""The LLM generator: task packages from any OpenAI-compatible chat-completions server.

One ``generate`` call renders the prompts (``pipeline.generation.prompting``), asks the model for a
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

Requests go through ``pipeline.generation.model_client.ModelClient``: its retries (429, 5xx, timeouts
and connection errors, with backoff and ``Retry-After``), its masking of the API key, and its
``ServerUnusable`` for a server that cannot serve the run at all (unreachable, the key refused, no
such model), raised from ``check()`` before a run or from any request; nothing of such an attempt
is returned, so nothing of it is recorded. Every HTTP request, retries included, is one ``LLMCall``;
one the server answered has status ``ok`` or the class of its content above.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import ValidationError

from pipeline.core.errors import first_validation_error
from pipeline.core.jsonvalues import ShapeError, parse_json
from pipeline.core.outcomes import Failure, FailureCode, LLMCall
from pipeline.core.package import Provenance, TaskPackage
from pipeline.generation.base import Attempt, Generated
from pipeline.generation.model_client import Backoff, Message, ModelClient, ModelError, usage_of
from pipeline.generation.model_endpoint import Endpoint
from pipeline.generation.prompting import PromptError, messages_for
from pipeline.generation.tools import bound_to_catalogue
from pipeline.taxonomy.capabilities import Capability, find_template, taxonomy

logger = logging.getLogger(__name__)

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


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
    stated = message.get("content")
    content = stated if isinstance(stated, str) else ""
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


# --------------------------------------------------------------------------- generator


class LLMGenerator:
    """A ``Generator`` backed by a chat model behind an OpenAI-compatible API, through one
    ``ModelClient`` (``client``; ``max_attempts`` and ``backoff`` are its retry policy).

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
        self.model: str | None = model
        self.client = ModelClient(model, base_url, api_key, timeout=timeout, max_attempts=max_attempts, backoff=backoff)
        self.structured_output = True
        self._capabilities = capabilities

    async def __aenter__(self) -> LLMGenerator:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.client.aclose()

    @property
    def base_url(self) -> str:
        return self.client.base_url

    async def check(self) -> None:
        """``ModelClient.check``: ``ServerUnusable`` when the server cannot be reached or refuses the key."""
        await self.client.check()

    async def generate(self, attempt: Attempt) -> Generated:
        """One package for ``attempt`` (a repair when it has a ``parent``), or an error; never raises
        for a bad model or a failing server (``ServerUnusable`` for one that cannot serve at all:
        see the module). The package's ``capability`` and ``workflow`` are the
        attempt's (they file the package; the model does not choose them), its provenance names
        this generator, its ``service_profile`` is the template's (the brief showed that profile's
        catalogue), its tools get their catalogue operation's parameters (``bound_to_catalogue``)
        and its ``id`` is computed from its content."""
        capabilities = self._capabilities if self._capabilities is not None else taxonomy()
        try:
            messages = messages_for(attempt, capabilities)
            template = find_template(capabilities, attempt.capability, attempt.template)[1]
        except PromptError as exc:
            return Generated(failure=Failure(code=FailureCode.PROMPT_ERROR, message=str(exc)))
        calls: list[LLMCall] = []
        try:
            outcome = await self._complete(messages, attempt.item_seed, calls)
        except ModelError as exc:
            return Generated(failure=Failure(code=FailureCode.LLM_ERROR, message=str(exc)), calls=calls)
        if outcome.package is None:
            return Generated(failure=outcome.failure, raw=outcome.raw, calls=calls)
        parent = (attempt.parent.id or attempt.parent.compute_id()) if attempt.parent is not None else None
        provenance = Provenance(generator=self.name, model=self.model, template=attempt.template,
                                seed=attempt.seed, slot=attempt.slot, attempt=attempt.attempt, parent=parent)
        profiled = outcome.package.model_copy(update={"service_profile": template.profile})
        package = bound_to_catalogue(profiled).model_copy(update={
            "id": "", "capability": attempt.capability, "workflow": attempt.template, "provenance": provenance})
        return Generated(package=package, calls=calls)

    async def _complete(self, messages: Sequence[Message], seed: int, calls: list[LLMCall]) -> Outcome:
        """Structured output while it is supported, else (and as the fallback for a 400) JSON mode."""
        if self.structured_output:
            try:
                return await self._ask(messages, seed, calls, structured=True)
            except ModelError as exc:
                if exc.status != "http_400":
                    raise
                outcome = await self._ask(messages, seed, calls, structured=False)
                self.structured_output = False
                logger.info("%s: structured output rejected, using JSON mode from now on", self.model)
                return outcome
        return await self._ask(messages, seed, calls, structured=False)

    async def _ask(self, messages: Sequence[Message], seed: int, calls: list[LLMCall], structured: bool) -> Outcome:
        """One completion (retried by the client), classified; its last ``LLMCall`` gets the class."""
        response_format = TaskPackageOutput if structured else {"type": "json_object"}
        completion = await self.client.complete(messages, seed=seed, response_format=response_format, calls=calls)
        outcome = interpret(completion.body)
        if outcome.failure is not None:
            calls[-1] = calls[-1].model_copy(update={"status": outcome.status,
                                                     "error": self.client.redact(str(outcome.failure))})
        return outcome


def from_env(model: str | None = None, base_url: str | None = None) -> LLMGenerator | None:
    """The LLM generator ``Endpoint.from_env(model, base_url)`` names, or None for the offline
    generator. A server given by URL may need no key (``OPENAI_API_KEY`` unset)."""
    endpoint = Endpoint.from_env(model, base_url)
    if endpoint.offline:
        return None
    api_key = endpoint.api_key(f"model {endpoint.model!r} needs OPENAI_API_KEY set (or OPENAI_BASE_URL for a server "
                               "that needs no key); use SYNTH_MODEL=offline to generate without an LLM")
    return LLMGenerator(model=endpoint.model, base_url=endpoint.base_url, api_key=api_key)

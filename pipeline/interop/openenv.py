"""The OpenEnv face of synth packages: the typed action, observation and state, and the client.

A trainer imports the client and the action from here (``from pipeline.interop.openenv import
SynthEnv, SynthAction``) and drives ``synth serve --openenv`` over OpenEnv's WebSocket protocol,
with OpenEnv's own ``EnvClient`` underneath (``SynthEnv`` only says how actions, observations and
the state travel). The server side is ``pipeline.interop.openenv_server``. Needs the extra
``synth-task-packages[openenv]``; see ``docs/environment.md`` ("OpenEnv").

``replay_reference`` plays a package's reference through a client, resolving each ``$ref`` and
``$fact`` from what the server returned, as the verifier's ``replay`` does in process.
"""

from __future__ import annotations

from typing import Any, Literal

import pipeline.interop.openenv_core  # noqa: F401  (first: OpenEnv without its Gradio web interface)

# isort: split
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from pipeline.core.episode import Answer, Ask, ToolCall
from pipeline.core.package import AnswerStep, AskStep, CallStep, TaskPackage
from pipeline.core.references import ResolveError, resolve
from pipeline.core.trajectory import StepRecord

__all__ = ["SynthAction", "SynthEnv", "SynthObservation", "SynthState", "replay_reference"]


class SynthAction(Action):
    """One move of the agent: ``tool_call`` (``name`` and ``arguments``: an object, or the JSON
    text an OpenAI tool call carries), ``ask`` (``text`` to the simulated user) or ``answer``
    (``text``, the final answer: the episode ends). ``SynthAction.call(name, args)``,
    ``SynthAction.question(text)`` and ``SynthAction.final(text)`` build them."""

    type: Literal["tool_call", "ask", "answer"]
    name: str | None = None
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    text: str | None = None

    @model_validator(mode="after")
    def _fields_fit_type(self) -> SynthAction:
        # PydanticCustomError, not ValueError: OpenEnv sends a validation error's details back to
        # the client as JSON, and a ValueError would ride along as an object that is not JSON
        if self.type == "tool_call":
            if not self.name:
                raise PydanticCustomError("synth_action", "a tool_call needs the tool's name")
            if self.text is not None:
                raise PydanticCustomError("synth_action", "a tool_call carries name and arguments, not text")
        else:
            if self.text is None:
                raise PydanticCustomError("synth_action", f"an {self.type} needs its text")
            if self.name is not None or self.arguments:
                raise PydanticCustomError("synth_action", f"an {self.type} carries text only, not a name or arguments")
        return self

    @classmethod
    def call(cls, name: str, arguments: dict[str, Any] | str | None = None) -> SynthAction:
        return cls(type="tool_call", name=name, arguments=arguments if arguments is not None else {})

    @classmethod
    def question(cls, text: str) -> SynthAction:
        return cls(type="ask", text=text)

    @classmethod
    def final(cls, text: str) -> SynthAction:
        return cls(type="answer", text=text)

    def engine_action(self) -> ToolCall | Ask | Answer:
        """The action as the episode engine (``pipeline.core.episode``) takes it."""
        if self.type == "tool_call":
            return ToolCall(name=self.name or "", arguments=self.arguments)
        if self.type == "ask":
            return Ask(text=self.text or "")
        return Answer(text=self.text or "")


class SynthObservation(Observation):
    """What the agent reads. ``kind``: ``request`` (after reset: ``text`` is the request, ``tools``
    the tool schemas in OpenAI function-calling format), ``tool_result`` (``status``, the HTTP
    status; ``result``, the body; ``text``, the body as JSON), ``user_reply`` (``text``) or ``end``
    (after the answer, or the last step of a truncated episode).

    ``reward`` is None until the episode ends, then the package score. ``info``: after reset,
    ``package_id``, ``user`` (whether the package has a simulated user to ask), ``max_steps`` and
    ``max_tokens``; after a step, ``step`` (its index),
    ``truncated`` and, for a question, ``revealed`` (fact keys); on the step that ends the episode
    also the grade (``score``, ``checks_score``, ``passed``, ``checks``, ``safety``), as
    ``synth serve``'s ``/score`` gives it."""

    kind: Literal["request", "tool_result", "user_reply", "end"]
    text: str = ""
    tools: list[dict[str, Any]] | None = None
    status: int | None = None
    result: dict[str, Any] | None = None
    info: dict[str, Any] = Field(default_factory=dict)


class SynthState(State):
    """The session's episode: ``episode_id``, ``step_count``, the package played (``package_id``,
    None before the first reset), whether it is ``done`` and ``truncated``, its budgets, the
    approximate ``tokens`` exchanged so far, and ``packages``, how many the server holds."""

    package_id: str | None = None
    done: bool = False
    truncated: bool = False
    max_steps: int = 0
    max_tokens: int = 0
    tokens: int = 0
    packages: int = 0


class SynthEnv(EnvClient[SynthAction, SynthObservation, SynthState]):
    """OpenEnv client of ``synth serve --openenv``: ``reset(package_id=..., where=..., seed=...)``,
    ``step(SynthAction | dict)``, ``state()``. Async by default; ``.sync()`` gives the blocking
    form (OpenEnv's ``SyncEnvClient``). A dict action is validated as a ``SynthAction``."""

    def _step_payload(self, action: SynthAction | dict[str, Any]) -> dict[str, Any]:
        act = SynthAction.model_validate(action) if isinstance(action, dict) else action
        return act.model_dump(mode="json", exclude_defaults=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[SynthObservation]:
        data = dict(payload.get("observation") or {})
        data.pop("metadata", None)
        observation = SynthObservation(**data, done=bool(payload.get("done")), reward=payload.get("reward"))
        return StepResult(observation=observation, reward=payload.get("reward"), done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> SynthState:
        return SynthState.model_validate(payload)


async def replay_reference(env: SynthEnv, package: TaskPackage) -> StepResult[SynthObservation]:
    """Reset ``env`` on ``package`` (which the server must hold) and play its reference step by
    step, each ``$ref``/``$fact`` resolved from the observations so far; returns the last step's
    result (its ``reward`` is the score when the reference ends the episode). A step whose
    arguments cannot be resolved is skipped: it would reach nothing in process either."""
    result: StepResult[SynthObservation] = await env.reset(package_id=package.id)
    by_id: dict[int, StepRecord] = {}
    facts: dict[str, str] = {}
    for index, step in enumerate(package.reference):
        if result.done:
            break
        if isinstance(step, CallStep):
            try:
                args = resolve(step.args, by_id, facts)
            except ResolveError:
                continue
            result = await env.step(SynthAction.call(step.call, args))
            observation = result.observation
            by_id[index] = StepRecord(index, "call", step.call, args, observation.status, observation.result)
        elif isinstance(step, AskStep):
            result = await env.step(SynthAction.question(step.ask))
            for key in result.observation.info.get("revealed", []):
                fact = package.fact(key)
                if fact is not None:
                    facts[key] = fact.value
        else:
            assert isinstance(step, AnswerStep)
            result = await env.step(SynthAction.final(step.answer))
    return result

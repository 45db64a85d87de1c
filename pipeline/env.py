"""A task package as an RL environment: ``reset()``, ``step(action)``, ``score()``.

The agent sees the request and the tools (OpenAI function-calling format), then acts one step at a
time: a tool call runs in the package's mock world (``World``), a question goes to the simulated
user (``SimulatedUser``), an answer ends the episode. Everything is recorded as the same
``Trajectory`` that ``pipeline.runtime.execute`` builds, so ``score()`` is exactly
``pipeline.checks.score`` over what happened. See ``docs/environment.md``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from pipeline.checks import JudgeFn, ScoreReport, score
from pipeline.package import AskStep, CallStep, TaskPackage
from pipeline.runtime import ResolveError, StepRecord, Trajectory, resolve
from pipeline.training_format import tool_schemas
from pipeline.user import SimulatedUser
from pipeline.world import World, clone

DEFAULT_MAX_STEPS = 50


# --------------------------------------------------------------------------- actions


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCall(_Action):
    """Call a tool. ``arguments`` is an object, or its JSON text as OpenAI returns it."""

    type: Literal["tool_call"] = "tool_call"
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class Ask(_Action):
    """Say something to the simulated user and get their reply."""

    type: Literal["ask"] = "ask"
    text: str


class Answer(_Action):
    """The final answer: ends the episode."""

    type: Literal["answer"] = "answer"
    text: str


Action = Annotated[ToolCall | Ask | Answer, Field(discriminator="type")]
_ACTION = TypeAdapter(Action)


# --------------------------------------------------------------------------- observations


class Observation(BaseModel):
    """What the agent reads after ``reset()`` or a step.

    ``kind`` is ``request`` (after reset: ``text`` is the request, ``tools`` the tool schemas),
    ``tool_result`` (``text`` is the result body as JSON, ``status`` its HTTP status, ``result``
    the body), ``user_reply`` (``text`` is what the user said) or ``end`` (after the answer).
    """

    kind: Literal["request", "tool_result", "user_reply", "end"]
    text: str = ""
    tools: list[dict[str, Any]] | None = None
    status: int | None = None
    result: dict[str, Any] | None = None


class StepResult(BaseModel):
    """One step's outcome. ``reward`` is 0 until the episode ends, then the package score.

    ``info`` holds ``step`` (the step's index), ``truncated`` (the step budget ran out before an
    answer) and, for a question, ``revealed`` (the keys of the facts the user revealed).
    ``record`` is the step as recorded in the trajectory.
    """

    observation: Observation
    done: bool
    reward: float = 0.0
    info: dict[str, Any] = Field(default_factory=dict)
    record: StepRecord


# --------------------------------------------------------------------------- environment


class TaskEnv:
    """One package as an episodic environment. Call ``reset()`` before the first ``step()``.

    An episode ends (``done``) after an ``answer`` action or after ``max_steps`` steps of any kind,
    whichever comes first; stepping a finished episode raises ``RuntimeError``. ``judge`` rates
    ``judge`` checks when given; without it they are left out of the score, as in ``checks.score``.
    """

    def __init__(self, package: TaskPackage, max_steps: int = DEFAULT_MAX_STEPS,
                 judge: JudgeFn | None = None) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.package = package
        self.max_steps = max_steps
        self.judge = judge
        self.tools = tool_schemas(package)
        self.world = World.from_package(package)
        self._started = False
        self._clear()

    def _clear(self) -> None:
        self.world.reset()
        self.user = SimulatedUser(self.package.user)
        self.steps: list[StepRecord] = []
        self.answer = ""
        self.done = False

    def reset(self) -> Observation:
        """Start a new episode from the initial state and return the request and the tools."""
        self._clear()
        self._started = True
        return Observation(kind="request", text=self.package.request.text, tools=clone(self.tools))

    def step(self, action: ToolCall | Ask | Answer | dict[str, Any]) -> StepResult:
        """Apply one action. A dict is validated as an action (``pydantic.ValidationError`` if it
        is not one). Tool arguments given as JSON text that does not parse as an object get a 400
        observation and are not sent to the service."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self.done:
            raise RuntimeError("the episode is done; call reset() to start another")
        act = _ACTION.validate_python(action) if isinstance(action, dict) else action
        record = StepRecord(index=len(self.steps), kind="call")
        info: dict[str, Any] = {"step": record.index}
        if isinstance(act, ToolCall):
            observation = self._call(act, record)
        elif isinstance(act, Ask):
            reply = self.user.reply(act.text)
            record.kind, record.ask, record.reply, record.revealed = "ask", act.text, reply.text, reply.revealed
            info["revealed"] = list(reply.revealed)
            observation = Observation(kind="user_reply", text=reply.text)
        else:
            record.kind, record.answer = "answer", act.text
            self.answer = act.text
            observation = Observation(kind="end")
        self.steps.append(record)
        answered = isinstance(act, Answer)
        info["truncated"] = not answered and len(self.steps) >= self.max_steps
        self.done = answered or info["truncated"]
        reward = self.score().score if self.done else 0.0
        return StepResult(observation=observation, done=self.done, reward=reward, info=info,
                          record=record.model_copy(update={"args": clone(record.args), "result": clone(record.result),
                                                           "revealed": list(record.revealed)}))

    def _call(self, act: ToolCall, record: StepRecord) -> Observation:
        record.tool = act.name
        args, problem = _arguments(act.arguments)
        if args is None:
            body = {"error": {"status": 400, "message": problem}}
            record.status, record.result, record.error = 400, body, problem
            return Observation(kind="tool_result", text=json.dumps(body), status=400, result=clone(body))
        record.args = clone(args)
        result = self.world.call(act.name, args)
        record.status, record.result = result.status, result.body
        return Observation(kind="tool_result", text=json.dumps(result.body, ensure_ascii=False),
                           status=result.status, result=clone(result.body))

    def trajectory(self) -> Trajectory:
        """Everything that happened so far, as the check engine reads it (a copy: changing it
        changes nothing in the environment)."""
        return self._shared_trajectory().model_copy(deep=True)

    def _shared_trajectory(self) -> Trajectory:
        """The episode so far over the environment's own data, uncopied; only for reading."""
        out = Trajectory(answer=self.answer)
        out.steps, out.revealed, out.audit = self.steps, self.user.revealed, self.world.audit
        out.initial_state, out.final_state = self.world.initial, self.world.state
        return out

    def score(self) -> ScoreReport:
        """``pipeline.checks.score`` of the episode so far: per-check results and the total."""
        return score(self.package, self._shared_trajectory(), self.judge)


def _arguments(arguments: dict[str, Any] | str) -> tuple[dict[str, Any] | None, str]:
    """Tool-call arguments as an object, or None and why not (JSON text that is not an object)."""
    if isinstance(arguments, dict):
        return arguments, ""
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON ({exc.msg} at character {exc.pos})"
    if not isinstance(parsed, dict):
        return None, f"arguments must be a JSON object, got {type(parsed).__name__}"
    return parsed, ""


# --------------------------------------------------------------------------- reference as an agent


def play_reference(package: TaskPackage, env: TaskEnv | None = None) -> TaskEnv:
    """Drive an environment with the package's reference steps and return it (episode played).

    Each call's ``$ref``/``$fact`` arguments are resolved from what the environment returned for
    earlier steps and from the facts the user revealed, keyed by reference step index as in
    ``runtime.execute``. A call whose arguments cannot be resolved is skipped (``execute`` records
    it as an error without calling anything). Play stops when the episode ends.
    """
    env = env or TaskEnv(package, max_steps=max(DEFAULT_MAX_STEPS, len(package.reference)))
    env.reset()
    records: dict[int, StepRecord] = {}
    facts: dict[str, str] = {}
    for index, step in enumerate(package.reference):
        if isinstance(step, CallStep):
            try:
                args = resolve(step.args, records, facts)
            except ResolveError:
                continue
            action: ToolCall | Ask | Answer = ToolCall(name=step.call, arguments=args)
        elif isinstance(step, AskStep):
            action = Ask(text=step.ask)
        else:
            action = Answer(text=step.answer)
        result = env.step(action)
        records[index] = result.record
        for key in result.info.get("revealed", []):
            fact = package.fact(key)
            if fact is not None:
                facts[key] = fact.value
        if result.done:
            break
    return env

"""A task package as an RL environment: ``reset()``, ``step(action)``, ``score()``.

The agent sees the request and the tools (OpenAI function-calling format), then acts one step at a
time: a tool call runs in the package's mock world, a question goes to the simulated user, an
answer ends the episode. ``TaskEnv`` is a thin face over the episode engine
(``pipeline.core.episode.Episode``) that the verifier drives too, so the reward is by construction
the verifier's score: ``Grader.score`` of the same trajectory. See ``docs/environment.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from pipeline.core.episode import ACTION, Action, Answer, Ask, Episode, ToolCall, observed, replay
from pipeline.core.grading import Grader, JudgeFn, ScoreReport
from pipeline.core.jsonvalues import clone
from pipeline.core.package import TaskPackage
from pipeline.core.strict_model import StrictModel
from pipeline.core.training_format import tool_schemas
from pipeline.core.trajectory import StepRecord, Trajectory
from pipeline.core.user import UserModel
from pipeline.core.world import World

DEFAULT_MAX_STEPS = 50

__all__ = ["Action", "Answer", "Ask", "Observation", "StepResult", "TaskEnv", "ToolCall", "play_reference"]


class Observation(StrictModel):
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


class StepResult(StrictModel):
    """One step's outcome. ``reward`` is 0 until the episode ends, then the package score.

    ``info`` holds ``step`` (the step's index), ``truncated`` (the step budget ran out before an
    answer) and, for a question, ``revealed`` (the keys of the facts the user revealed).
    ``record`` is the step as recorded in the trajectory (a copy).
    """

    observation: Observation
    done: bool
    reward: float = 0.0
    info: dict[str, Any] = Field(default_factory=dict)
    record: StepRecord


class TaskEnv:
    """One package as an episodic environment. Call ``reset()`` before the first ``step()``.

    An episode ends (``done``) after an ``answer`` action or after ``max_steps`` steps of any kind,
    whichever comes first; stepping a finished episode raises ``RuntimeError``. ``judge`` rates
    ``judge`` checks when given; without it they are left out of the score, as in verification.
    ``user`` makes the user of each episode (``pipeline.env.llm_user.llm_users(model)`` has a
    model play it); without it, the deterministic simulated user verification uses answers.
    """

    def __init__(self, package: TaskPackage, max_steps: int = DEFAULT_MAX_STEPS,
                 judge: JudgeFn | None = None, user: Callable[[TaskPackage], UserModel] | None = None) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.package = package
        self.max_steps = max_steps
        self.grader = Grader(package, judge)
        self.tools = tool_schemas(package)
        self.user_factory = user
        self.episode = self._episode()
        self._started = False

    def _episode(self, world: World | None = None) -> Episode:
        user = self.user_factory(self.package) if self.user_factory is not None else None
        return Episode(self.package, world, user)

    @property
    def world(self) -> World:
        """The mock world of the current episode."""
        return self.episode.world

    @property
    def done(self) -> bool:
        return self.episode.answered or len(self.episode.steps) >= self.max_steps

    def reset(self) -> Observation:
        """Start a new episode from the initial state and return the request and the tools."""
        self.episode = self._episode(self.episode.world)
        self.episode.world.reset()
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
        act = ACTION.validate_python(action) if isinstance(action, dict) else action
        if isinstance(act, ToolCall) and isinstance(act.arguments, dict):
            act = act.model_copy(update={"arguments": clone(act.arguments)})  # the agent keeps its own
        record = self.episode.apply(act)
        info: dict[str, Any] = {"step": record.index}
        if record.kind == "ask":
            info["revealed"] = list(record.revealed)
        observation = Observation(**observed(record))
        info["truncated"] = self.done and not self.episode.answered
        reward = self.score().score if self.done else 0.0
        return StepResult(observation=observation, done=self.done, reward=reward, info=info,
                          record=_copy(record))

    def trajectory(self) -> Trajectory:
        """Everything that happened so far, as the grader reads it (a copy: changing it changes
        nothing in the environment)."""
        t = self.episode.trajectory()
        return Trajectory(steps=[_copy(s) for s in t.steps], answer=t.answer, revealed=list(t.revealed),
                          initial_state=clone(t.initial_state), final_state=clone(t.final_state),
                          audit=[type(a)(a.tool, a.endpoint, clone(a.args), a.status, clone(a.result)) for a in t.audit])

    def score(self) -> ScoreReport:
        """The grade of the episode so far: per-check results and the total (the verifier's score)."""
        return self.grader.score(self.episode.trajectory())


def _copy(record: StepRecord) -> StepRecord:
    return StepRecord(record.index, record.kind, record.tool, clone(record.args), record.status,
                      clone(record.result), record.ask, record.reply, list(record.revealed), record.answer,
                      record.error)


def play_reference(package: TaskPackage, env: TaskEnv | None = None) -> TaskEnv:
    """Play the package's reference in an environment (reset first) and return it, episode played.

    The steps go through ``replay``, the verifier's own driver, into the environment's episode: a
    call whose ``$ref``/``$fact`` arguments cannot be resolved is recorded as an error and nothing
    is called. Play stops at the answer or when the environment's step budget is spent.
    """
    env = env or TaskEnv(package, max_steps=max(DEFAULT_MAX_STEPS, len(package.reference)))
    env.reset()
    replay(env.episode, package.reference, limit=env.max_steps)
    return env

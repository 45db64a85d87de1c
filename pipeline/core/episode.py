"""The episode engine: one run of a package, driven one action at a time.

An ``Episode`` holds a package's mock world, its simulated user and the steps taken so far. Every
way of acting on a package goes through it: an agent through ``TaskEnv.step`` (which calls
``Episode.apply``), the reference solution and the verifier's mutations of it through ``replay``
(which resolves each reference step's ``$ref``/``$fact`` arguments and applies it). So the reward
an agent gets and the verifier's score of the reference are one code path: ``Grader.score`` over
``Episode.trajectory()``.

An episode ends with its answer: ``apply`` refuses actions after it, and ``replay`` stops there.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from pipeline.core.jsonvalues import clone
from pipeline.core.package import AnswerStep, AskStep, CallStep, Step, TaskPackage
from pipeline.core.references import ResolveError, is_literal, resolve, uses_fact
from pipeline.core.strict_model import StrictModel
from pipeline.core.trajectory import StepRecord, Trajectory
from pipeline.core.user import SimulatedUser, UserModel
from pipeline.core.world import World

# --------------------------------------------------------------------------- actions


class _Action(StrictModel):
    """One action of an agent."""


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
ACTION = TypeAdapter(Action)
"""Validates a dict as an action (``ACTION.validate_python``)."""


class EpisodeOver(RuntimeError):
    """An action after the answer."""


# --------------------------------------------------------------------------- the engine


class Episode:
    """One run of ``package`` from its initial state. See the module docstring."""

    def __init__(self, package: TaskPackage, world: World | None = None, user: UserModel | None = None) -> None:
        self.package = package
        self.world = world if world is not None else World.from_package(package)
        self.user: UserModel = user if user is not None else SimulatedUser(package.user, package.now)
        self.steps: list[StepRecord] = []
        self.by_id: dict[int, StepRecord] = {}
        """The steps by id, for ``$ref`` lookups."""
        self.facts: dict[str, str] = {}
        """The values of the facts the user has revealed so far."""
        self.answer = ""
        self.answered = False
        self._literal: dict[int, tuple[dict[str, Any], bool]] = {}
        """``is_literal`` of reference steps' arguments, by identity (shared by forks: a replayed
        step brings the same object again)."""

    def fork(self) -> Episode:
        """A copy of this episode as it is now, which goes on independently of it."""
        twin = object.__new__(Episode)
        twin.package, twin.world, twin.user = self.package, self.world.fork(), self.user.fork()
        twin.steps, twin.by_id, twin.facts = list(self.steps), dict(self.by_id), dict(self.facts)
        twin.answer, twin.answered, twin._literal = self.answer, self.answered, self._literal
        return twin

    # ------------------------------------------------------------------ acting

    def apply(self, action: ToolCall | Ask | Answer, index: int | None = None) -> StepRecord:
        """Take one action; ``index`` is the step's id (default: its position)."""
        if isinstance(action, ToolCall):
            args, problem = _arguments(action.arguments)
            if args is None:
                return self.refuse_call(action.name, problem, index, status=400)
            return self.call(action.name, args, index)
        if isinstance(action, Ask):
            return self.ask(action.text, index)
        return self.finish(action.text, index)

    def call(self, tool: str, args: dict[str, Any], index: int | None = None, known: bool = False) -> StepRecord:
        """Call ``tool`` with ``args`` in the world (``known``: ``World.call``'s)."""
        self._open()
        result = self.world.call(tool, args, known)
        record = StepRecord(len(self.steps) if index is None else index, "call", tool, args, result.status,
                            result.body)
        self.steps.append(record)
        self.by_id[record.index] = record
        return record

    def refuse_call(self, tool: str, problem: str, index: int | None = None, status: int | None = None) -> StepRecord:
        """Record a call that never reached the world: with ``status`` (the agent's arguments were
        not an object: a 400 it observes), or without one (a reference step's arguments could not
        be resolved)."""
        self._open()
        body = {"error": {"status": status, "message": problem}} if status is not None else None
        return self._add(StepRecord(self._id(index), "call", tool=tool, status=status, result=body, error=problem))

    def ask(self, text: str, index: int | None = None) -> StepRecord:
        """Say ``text`` to the simulated user; a fact it reveals becomes usable as ``$fact``."""
        self._open()
        reply = self.user.reply(text)
        for key in reply.revealed:
            fact = self.package.fact(key)
            if fact is not None:
                self.facts[key] = fact.value
        return self._add(StepRecord(self._id(index), "ask", ask=text, reply=reply.text, revealed=reply.revealed))

    def finish(self, text: str, index: int | None = None) -> StepRecord:
        """Give the final answer: the episode is over."""
        self._open()
        self.answer, self.answered = text, True
        return self._add(StepRecord(self._id(index), "answer", answer=text))

    def _open(self) -> None:
        if self.answered:
            raise EpisodeOver("the episode has its answer; start another")

    def _id(self, index: int | None) -> int:
        return len(self.steps) if index is None else index

    def _add(self, record: StepRecord) -> StepRecord:
        self.steps.append(record)
        self.by_id[record.index] = record
        return record

    # ------------------------------------------------------------------ reading

    def trajectory(self) -> Trajectory:
        """The episode so far as the grader reads it, over the episode's own data (not a copy)."""
        return Trajectory(steps=self.steps, answer=self.answer, revealed=self.user.revealed,
                          initial_state=self.world.initial, final_state=self.world.state, audit=self.world.audit)


def _arguments(arguments: dict[str, Any] | str) -> tuple[dict[str, Any] | None, str]:
    """Tool-call arguments as an object, or None and why not (JSON text that is not an object)."""
    if isinstance(arguments, dict):
        return arguments, ""
    try:
        parsed = json.loads(arguments or "{}")
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" ({exc.msg} at character {exc.pos})" if isinstance(exc, json.JSONDecodeError) else " (nested too deep)"
        return None, f"arguments are not valid JSON{where}"
    if not isinstance(parsed, dict):
        return None, f"arguments must be a JSON object, got {type(parsed).__name__}"
    return parsed, ""


def observed(record: StepRecord) -> dict[str, Any]:
    """What the agent observes of one step, as an observation's fields: a call's ``tool_result``
    (``status``; ``result``, a copy of the body; ``text``, the body as JSON), a question's
    ``user_reply`` (``text``), the answer's ``end``. ``TaskEnv`` and the OpenEnv face show this."""
    if record.kind == "call":
        body = clone(record.result) if record.result is not None else None
        return {"kind": "tool_result", "text": json.dumps(body, ensure_ascii=False), "status": record.status,
                "result": body}
    if record.kind == "ask":
        return {"kind": "user_reply", "text": record.reply or ""}
    return {"kind": "end"}


# --------------------------------------------------------------------------- replaying reference steps


def replay_step(episode: Episode, step: Step, index: int, fact_values: dict[str, str] | None = None) -> StepRecord:
    """Apply one reference step as step ``index``: its ``$ref``/``$fact`` arguments resolved from
    the episode so far (``fact_values`` override fact values, revealed or not). A call whose
    arguments cannot be resolved is recorded with an ``error`` and nothing is called; a call whose
    status is not the one the step expects (``expect_status``; without one, any 2xx or the status of
    a package's fault that answered the call) gets an ``error``."""
    if isinstance(step, CallStep):
        known = episode._literal.get(id(step.args))
        if known is None:
            known = episode._literal[id(step.args)] = (step.args, is_literal(step.args))  # kept alive: its id names it
        if known[1]:
            args = step.args
        else:
            facts = {**episode.facts, **fact_values} if fact_values else episode.facts
            try:
                args = resolve(step.args, episode.by_id, facts)
            except ResolveError as exc:
                return episode.refuse_call(step.call, str(exc), index)
        record = episode.call(step.call, args, index, known=args is step.args)  # the package's own arguments
        expected = step.expect_status
        if expected is not None and record.status != expected:
            record.error = f"expected status {expected}, got {record.status}"
        elif expected is None and not 200 <= (record.status or 0) < 300 \
                and not episode.world.answered_by_fault(step.call):
            message = (record.result or {}).get("error", {}).get("message")
            record.error = f"{step.call} returned {record.status}: {message}"
        return record
    if isinstance(step, AskStep):
        return episode.ask(step.ask, index)
    assert isinstance(step, AnswerStep)
    return episode.finish(step.answer, index)


def replay(episode: Episode, steps: list[Step], ids: list[int] | None = None,
           fact_values: dict[str, str] | None = None, limit: int | None = None) -> Episode:
    """Apply ``steps`` in order (``ids``: each step's id, default its position, so a mutated list
    keeps its steps' reference numbers) until the answer, or until the episode has ``limit`` steps."""
    ids = list(range(len(steps))) if ids is None else ids
    for sid, step in zip(ids, steps, strict=True):
        if episode.answered or (limit is not None and len(episode.steps) >= limit):
            break
        replay_step(episode, step, sid, fact_values)
    return episode


def execute(package: TaskPackage, steps: list[Step] | None = None, fact_values: dict[str, str] | None = None,
            step_ids: list[int] | None = None) -> Trajectory:
    """The trajectory of ``steps`` (default: the package's reference) replayed in a fresh episode."""
    steps = package.reference if steps is None else steps
    return replay(Episode(package), steps, step_ids, fact_values).trajectory()


def depends_on_facts(step: Step) -> bool:
    """Whether a step's outcome depends on fact values (an ask, or a call with a ``$fact``)."""
    return isinstance(step, AskStep) or (isinstance(step, CallStep) and uses_fact(step.args))


# --------------------------------------------------------------------------- actions of a trajectory


def actions_of(trajectory: Trajectory) -> list[dict[str, Any]]:
    """What an agent did in ``trajectory``, as actions ``Episode.apply`` (and ``TaskEnv.step``)
    takes, in order: every call that reached the world with the arguments it carried, every
    question, the answer. A reference step whose arguments could not be resolved reached nothing
    and is left out."""
    out: list[dict[str, Any]] = []
    for s in trajectory.steps:
        if s.kind == "call" and s.args is not None and s.tool is not None:
            out.append({"type": "tool_call", "name": s.tool, "arguments": s.args})
        elif s.kind == "ask":
            out.append({"type": "ask", "text": s.ask or ""})
        elif s.kind == "answer":
            out.append({"type": "answer", "text": s.answer or ""})
    return out


def play_actions(package: TaskPackage, actions: list[dict[str, Any]]) -> Trajectory:
    """The trajectory of ``actions`` (``actions_of``'s form) played in a fresh episode, up to the
    answer. Raises pydantic's ``ValidationError`` for an action that is not one."""
    episode = Episode(package)
    for action in actions:
        if episode.answered:
            break
        episode.apply(ACTION.validate_python(action))
    return episode.trajectory()

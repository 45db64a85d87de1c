"""The task package: the contract every stage speaks (schema version 1).

A package states four things that must agree: the user's request, the initial state of the mock
services, the tools the agent gets, and the grading checks. See ``docs/package.md``.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, Tag, field_validator, model_validator

from pipeline.core.jsonvalues import MAX_DEPTH, ShapeError, check_shape, strings
from pipeline.core.matchers import matcher_problem, regex_problem
from pipeline.core.services import DEFAULT_PROFILE, ProfileName
from pipeline.core.strict_model import StrictModel

SCHEMA_VERSION: Literal[1] = 1
PASS_SCORE = 1.0
"""A run passes only with full marks: the score the reference must reach, and every correct agent
the verifier plays with it; every wrong agent it plays stays below (``docs/verification.md``, "What
passed means"). ``passes`` is the one test of it."""
PASS_TOLERANCE = 1e-9
"""How far under ``PASS_SCORE`` float rounding may leave a full score (scores are rounded to six
decimals, so a lost check of any weight is far below it)."""
GRAVE_CEILING = 0.75
"""A wrong agent that does none of the work (skips the only write, undoes it all), never asks for
what it must ask, or answers with everything must score at most this, not only below the pass
line: the reward tells such agents from one that does most of the work and slips on part of it
(one write of several skipped, every item made twice: those need only lose score, as packages
written outside the project weigh them). Not a pass line. (Damage to other records need only lose
score: its guards are what doing nothing keeps, under ``NULL_AGENT_FLOOR``.)"""
GRAVE_BOUND = GRAVE_CEILING + PASS_TOLERANCE
"""The score from which such a grave wrong agent is refused: above ``GRAVE_CEILING``."""
NULL_AGENT_FLOOR = 0.25
"""An agent that does nothing must score at most this (above it, ``null_agent_passes``)."""


def passes(score: float) -> bool:
    """Whether a run with ``score`` passes: full marks, within ``PASS_TOLERANCE``. (A broken safety
    rule sets the score to 0, so no run that breaks one passes.)"""
    return score >= PASS_SCORE - PASS_TOLERANCE
DEFAULT_NOW = "2026-12-01T09:00:00Z"


class _Model(StrictModel):
    model_config = ConfigDict(populate_by_name=True)


# --------------------------------------------------------------------------- request / user


MAX_REQUEST_CHARS = 20_000
"""The longest request text a package may hold (a real request is a few hundred characters)."""
MAX_PACKAGE_CHARS = 2_000_000
"""The most text (strings and keys) a whole package may hold."""


class Request(_Model):
    """What the user says first."""

    text: str = Field(min_length=1, max_length=MAX_REQUEST_CHARS)
    language: str = "en"


class Fact(_Model):
    """A hidden fact the simulated user reveals when asked.

    ``corrects`` names a value stated in the request that this fact replaces (a user who corrects
    a detail mid-dialogue); it is the one value allowed to appear in the request.
    """

    key: str = Field(min_length=1)
    """The name ``$fact`` and ``asked_user`` use."""
    value: str = Field(min_length=1)
    reveal_when: list[str] = Field(min_length=1)
    """Words that, starting a word of a question, make the user reveal this fact."""
    corrects: str | None = None


class User(_Model):
    """The simulated user of a multi-turn package: who they are and what they know."""

    persona: str = ""
    facts: list[Fact] = Field(default_factory=list)
    max_rounds: int = Field(default=6, ge=1)
    """Questions answered at most; later ones get the neutral reply."""


# --------------------------------------------------------------------------- tools


class Tool(_Model):
    """A tool the agent sees, bound to an operation that a service provides."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
    """The function name the agent calls."""
    service: str
    endpoint: str
    """The service operation it runs (``/contacts/send_message``)."""
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the arguments, as the agent sees it (a subset of the operation's)."""


class Fault(_Model):
    """Deterministic error injection: the ``on_call``-th call (1-based) of ``tool`` returns ``status``.

    With ``times`` > 1, that many consecutive calls from ``on_call`` on fail.
    """

    tool: str
    on_call: int = Field(default=1, ge=1)
    times: int = Field(default=1, ge=1)
    status: int = Field(default=503, ge=400, le=599)
    message: str = "Service temporarily unavailable"
    retry_after: int | None = None


# --------------------------------------------------------------------------- checks

Matcher = Any
"""A ``where``/``args_match``/``expect`` value: a literal (equality) or an operator object such as
``{"$contains": x}``, ``{"$in": [..]}``, ``{"$prefix": s}``, ``{"$regex": r}``, ``{"$gte": n}``,
``{"$lte": n}``, ``{"$eq": x}``, ``{"$ne": x}``, ``{"$exists": bool}``, or several of them at once
(all must hold). See ``pipeline/core/matchers.py``."""


class _CheckBase(_Model):
    id: str = ""
    weight: float = Field(default=0.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _valid_matchers(self) -> _CheckBase:
        fields = vars(self)
        for attr in ("where", "expect", "args_match"):
            folded = attr != "args_match" and fields.get("ignore_case", False)  # as the grader compiles it
            for field, matcher in (fields.get(attr) or {}).items():
                problem = matcher_problem(matcher, folded)
                if problem:
                    raise ValueError(f"{attr}.{field}: {problem}")
        return self


class _StateCheck(_CheckBase):
    """A check over the final state of one collection (``service.collection``)."""

    collection: str = Field(pattern=r"^[a-z0-9_]+\.[a-z0-9_]+$")
    where: dict[str, Matcher] = Field(default_factory=dict)


class StateCount(_StateCheck):
    kind: Literal["state_count"] = "state_count"
    op: Literal["==", "!=", ">=", "<=", ">", "<"] = "=="
    value: int = Field(ge=0)
    distinct_by: list[str] | None = None
    scope: Literal["all", "created"] = "all"
    ignore_case: bool = False


class StateMatch(_StateCheck):
    kind: Literal["state_match"] = "state_match"
    record_id: str | None = None
    expect: dict[str, Matcher] = Field(min_length=1)
    ignore_case: bool = False


class StateUnchanged(_StateCheck):
    kind: Literal["state_unchanged"] = "state_unchanged"
    record_id: str | None = None


class Called(_CheckBase):
    kind: Literal["called"] = "called"
    tool: str
    args_match: dict[str, Matcher] = Field(default_factory=dict)
    min: int = Field(default=1, ge=0)
    max: int | None = Field(default=None, ge=0)


class NotCalled(_CheckBase):
    kind: Literal["not_called"] = "not_called"
    tool: str
    args_match: dict[str, Matcher] = Field(default_factory=dict)


class Order(_CheckBase):
    kind: Literal["order"] = "order"
    tools: list[str] = Field(min_length=2)


class _AnswerValues(_CheckBase):
    """A check over the final answer against a list of literal values."""

    values: list[str] = Field(min_length=1)
    ignore_case: bool = True


class AnswerContains(_AnswerValues):
    kind: Literal["answer_contains"] = "answer_contains"


class AnswerMatches(_CheckBase):
    kind: Literal["answer_matches"] = "answer_matches"
    pattern: str = Field(min_length=1)
    ignore_case: bool = True

    @model_validator(mode="after")
    def _valid_pattern(self) -> AnswerMatches:
        problem = regex_problem(self.pattern, self.ignore_case)
        if problem:
            raise ValueError(f"pattern: {problem}")
        return self


class AnswerExcludes(_AnswerValues):
    kind: Literal["answer_excludes"] = "answer_excludes"


class AskedUser(_CheckBase):
    kind: Literal["asked_user"] = "asked_user"
    fact: str


class Judge(_CheckBase):
    kind: Literal["judge"] = "judge"
    rubric: str = Field(min_length=1)


Check = Annotated[
    StateCount
    | StateMatch
    | StateUnchanged
    | Called
    | NotCalled
    | Order
    | AnswerContains
    | AnswerMatches
    | AnswerExcludes
    | AskedUser
    | Judge,
    Field(discriminator="kind"),
]
SafetyRule = Annotated[NotCalled | StateUnchanged | AnswerExcludes, Field(discriminator="kind")]
SAFETY_KINDS = ("not_called", "state_unchanged", "answer_excludes")
JUDGE_MAX_WEIGHT = 0.25


# --------------------------------------------------------------------------- reference


class CallStep(_Model):
    """Call a tool. Argument values may be ``{"$ref": "steps[i].result..."}`` or ``{"$fact": key}``,
    each with optional ``prefix``/``suffix`` strings. ``expect_status`` marks a call the reference
    expects to fail (e.g. an injected 503 it then retries)."""

    call: str
    args: dict[str, Any] = Field(default_factory=dict)
    expect_status: int | None = None

    @model_validator(mode="after")
    def _reference_values(self) -> CallStep:
        _string_references(self.args)
        return self


def _string_references(value: Any) -> None:
    """Raise ``ValueError`` where a ``$ref`` or ``$fact`` inside ``value`` is not a string. (A
    function of the module, not one nested in the validator: a nested one that calls itself is a
    reference cycle per step, left to the garbage collector.)"""
    if isinstance(value, dict):
        for key in ("$ref", "$fact"):
            if key in value and not isinstance(value[key], str):
                raise ValueError(f"{key} must be a string, not {value[key]!r}")
        for v in value.values():
            _string_references(v)
    elif isinstance(value, list):
        for v in value:
            _string_references(v)


class AskStep(_Model):
    ask: str = Field(min_length=1)


class AnswerStep(_Model):
    answer: str


Step = Annotated[
    Annotated[CallStep, Tag("call")] | Annotated[AskStep, Tag("ask")] | Annotated[AnswerStep, Tag("answer")],
    Field(union_mode="left_to_right"),
]
"""One step of a reference: a tool call, a question to the user, or the final answer. The tags
name the kinds in an error's location (``reference.0.call.arg``). At most one kind accepts a step
(each requires its own field and forbids the others'), so the first that does is the step, as
pydantic's smart mode would pick; trying them in order spares the others' failures (an unknown
field's message, worked out by ``StrictModel``) once one accepts. A step no kind accepts gets the
errors of all three either way."""


class Provenance(_Model):
    model_config = ConfigDict(extra="allow")
    generator: str = "hand"
    template: str | None = None
    seed: int | None = None
    attempt: int = 1
    parent: str | None = None


# --------------------------------------------------------------------------- package


class TaskPackage(_Model):
    """One training environment: a request, the initial state of mock services, the tools the
    agent gets and the checks that grade it, with a reference solution that proves they agree.
    A package is a value: build a new one (``model_copy(update=...)``) rather than editing one."""

    schema_version: Literal[1] = SCHEMA_VERSION
    id: str = ""
    """``pkg-`` + 16 hex of the sha256 of the canonical content (without id and provenance)."""
    capability: str
    """The capability it trains (``synth capabilities``)."""
    workflow: str
    """The workflow template it follows."""
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    services: list[str] = Field(min_length=1)
    """The mock services of its world."""
    service_profile: ProfileName = DEFAULT_PROFILE
    """The catalogue its services come from (``pipeline.core.services``): ``default``, or ``claw``
    for services that mirror ClawEnvKit's. Part of the id only when not ``default``."""
    request: Request
    user: User | None = None
    """The simulated user (multi-turn packages)."""
    now: str = DEFAULT_NOW
    """The world's clock at the start (ISO 8601); each call advances it one second."""
    initial_state: dict[str, dict[str, list[dict[str, Any]]]] = Field(default_factory=dict)
    """Per service, per collection, the records the world starts with."""
    tools: list[Tool] = Field(min_length=1)
    checks: list[Check] = Field(min_length=1)
    """Weighted, declarative grading checks (weights sum to 1)."""
    safety: list[SafetyRule] = Field(default_factory=list)
    """Rules any of which, broken, zeroes the score."""
    faults: list[Fault] = Field(default_factory=list)
    """Deterministic errors the world injects (robustness)."""
    reference: list[Step] = Field(default_factory=list)
    """An executable solution: ``call``, ``ask`` and ``answer`` steps."""
    has_reference: bool = True
    """False for imported tasks, which have none (they are never accepted)."""
    provenance: Provenance = Field(default_factory=Provenance)
    """Where it came from (generator, template, seed, attempt, parent); not part of the id."""

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: Any) -> Any:
        """Refuse data nested deeper than ``MAX_DEPTH`` or holding more than ``MAX_PACKAGE_CHARS``
        characters of text before anything walks it."""
        if isinstance(data, dict):
            try:
                check_shape(data, MAX_DEPTH, MAX_PACKAGE_CHARS)
            except ShapeError as exc:
                raise ValueError(f"the package is {exc}") from None
        return data

    @field_validator("now")
    @classmethod
    def _iso_clock(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"now: {value!r} is not an ISO 8601 date-time such as {DEFAULT_NOW}") from None
        return value

    @model_validator(mode="after")
    def _normalise(self) -> TaskPackage:
        for i, check in enumerate(self.checks):
            if not check.id:
                check.id = f"check-{i}"
        for i, rule in enumerate(self.safety):
            if not rule.id:
                rule.id = f"safety-{i}"
        return self

    def request_and_fact_values(self) -> str:
        """The request and the user's facts, joined by spaces: everything the agent is told."""
        facts = [f.value for f in self.user.facts] if self.user else []
        return " ".join([self.request.text, *facts])

    # ---- identity

    def content(self) -> dict[str, Any]:
        """The package as plain JSON data, without ``id`` and ``provenance``."""
        data = self.model_dump(mode="json", exclude={"id", "provenance"})
        if data["service_profile"] == DEFAULT_PROFILE:
            del data["service_profile"]  # so that ids made before profiles existed stay the same
        return data

    def compute_id(self) -> str:
        digest = hashlib.sha256(canonical_json(self.content()).encode()).hexdigest()
        return "pkg-" + digest[:16]

    def with_id(self) -> TaskPackage:
        """Return this package with ``id`` set from its content."""
        return self.model_copy(update={"id": self.compute_id()})

    def to_json(self, indent: int | None = None) -> str:
        data = self.model_dump(mode="json")
        if indent is None:
            return canonical_json(data)
        return json.dumps(data, indent=indent, ensure_ascii=False)

    # ---- lookups

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def fact(self, key: str) -> Fact | None:
        if self.user is None:
            return None
        return next((f for f in self.user.facts if f.key == key), None)

    @property
    def call_steps(self) -> list[tuple[int, CallStep]]:
        return [(i, s) for i, s in enumerate(self.reference) if isinstance(s, CallStep)]


def state_strings(package: TaskPackage) -> list[str]:
    """Every string inside the package's initial state, depth first (``jsonvalues.strings``),
    walked once for the package whose state it was last asked of (the verifier's stages ask it of
    one package after another). Read-only: callers must not change the list."""
    global _last_state
    state, last = package.initial_state, _last_state  # one read of the pair: threads verify side by side
    if last[0] is state:
        return last[1]
    walked = strings(state)
    _last_state = (state, walked)
    return walked


_last_state: tuple[Any, list[str]] = (None, [])
"""The state ``state_strings`` last walked and its strings, replaced as one pair (the state is
held, so its identity cannot be reused by another)."""


def canonical_json(data: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: equal content gives equal text. (Of plain JSON data,
    which holds no cycles: the encoder does not look for them.)"""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, check_circular=False)


def near_key(package: TaskPackage) -> str:
    """A fingerprint of the request text (case, punctuation and spacing folded) and the initial
    state: two packages with equal keys are near-duplicates (they differ only in checks, tools or
    provenance, which does not make a new training environment)."""
    return fingerprint(package.request.text, package.initial_state)


def fingerprint(request_text: str, initial_state: dict[str, Any]) -> str:
    """``near_key`` from the two parts it reads (for a package still held as plain data)."""
    words = " ".join(re.findall(r"\w+", request_text.casefold()))
    state = canonical_json(initial_state)
    return hashlib.sha256(f"{words}\n{state}".encode()).hexdigest()[:32]


def load_package(data: dict[str, Any] | str) -> TaskPackage:
    """Parse a package from a dict or JSON text (raises ``pydantic.ValidationError``)."""
    if isinstance(data, str):
        return TaskPackage.model_validate_json(data)
    return TaskPackage.model_validate(data)


def json_schema() -> dict[str, Any]:
    """The package JSON Schema. ``kind`` is required in every check (the models default it only
    for convenience in Python)."""
    schema = TaskPackage.model_json_schema()
    for definition in schema.get("$defs", {}).values():
        if "kind" in definition.get("properties", {}):
            definition.setdefault("required", [])
            if "kind" not in definition["required"]:
                definition["required"].append("kind")
    return schema

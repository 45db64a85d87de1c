"""Run a sequence of reference steps (``call``, ``ask``, ``answer``) in a fresh world.

``$ref`` argument values name something observed earlier (``steps[0].result.contacts[0].email``,
``steps[1].reply``); ``$fact`` values name a fact the simulated user has revealed. Both accept
optional ``prefix``/``suffix`` strings. The result is a ``Trajectory`` that the check engine scores.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from pipeline.package import AnswerStep, AskStep, CallStep, Step, TaskPackage
from pipeline.user import SimulatedUser
from pipeline.world import AuditEntry, State, World, clone

_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


class StepRecord(BaseModel):
    """What one step did. ``index`` is the step's id: its position in the executed list, or the id
    ``execute`` was given for it (``step_ids``: a mutated list keeps its steps' reference numbers)."""

    index: int
    kind: str
    tool: str | None = None
    args: dict[str, Any] | None = None
    status: int | None = None
    result: dict[str, Any] | None = None
    ask: str | None = None
    reply: str | None = None
    revealed: list[str] = Field(default_factory=list)
    answer: str | None = None
    error: str | None = None


class Trajectory(BaseModel):
    steps: list[StepRecord] = Field(default_factory=list)
    answer: str = ""
    revealed: list[str] = Field(default_factory=list)
    initial_state: State = Field(default_factory=dict)
    final_state: State = Field(default_factory=dict)
    audit: list[AuditEntry] = Field(default_factory=list)

    @property
    def errors(self) -> list[StepRecord]:
        """Steps that failed: unresolved arguments, or calls whose status was not the expected one."""
        return [s for s in self.steps if s.error]


class ResolveError(ValueError):
    pass


def parse_ref(path: str) -> list[str | int]:
    """``steps[0].result.contacts[0].email`` → ``["steps", 0, "result", "contacts", 0, "email"]``."""
    if not isinstance(path, str):
        raise ResolveError(f"$ref must be a string such as 'steps[0].result', not {path!r}")
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if not m or m.end() == pos:
            raise ResolveError(f"malformed $ref {path!r} at character {pos}")
        parts.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    if len(parts) < 2 or parts[0] != "steps" or not isinstance(parts[1], int):
        raise ResolveError(f"$ref {path!r} must start with steps[i]")
    return parts


def lookup_ref(path: str, records: dict[int, StepRecord]) -> Any:
    parts = parse_ref(path)
    step = records.get(parts[1])  # type: ignore[arg-type]
    if step is None:
        raise ResolveError(f"$ref {path!r}: step {parts[1]} has not run")
    if len(parts) < 3 or not isinstance(parts[2], str) or parts[2] not in StepRecord.model_fields:
        raise ResolveError(f"$ref {path!r}: a step has no {parts[2] if len(parts) > 2 else 'field'!r}")
    cur: Any = getattr(step, parts[2])
    for part in parts[3:]:
        if isinstance(part, int) and isinstance(cur, list) and -len(cur) <= part < len(cur):
            cur = cur[part]
        elif isinstance(part, str) and isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            raise ResolveError(f"$ref {path!r}: nothing at {part!r}")
    return clone(cur)


def is_ref(value: Any) -> bool:
    return isinstance(value, dict) and ("$ref" in value or "$fact" in value)


def iter_refs(value: Any):
    """Every ``$ref``/``$fact`` object inside an argument value."""
    if is_ref(value):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from iter_refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from iter_refs(v)


def resolve(value: Any, records: dict[int, StepRecord], facts: dict[str, str]) -> Any:
    """Replace every ``$ref``/``$fact`` inside ``value`` by what it names."""
    if is_ref(value):
        if "$ref" in value:
            out = lookup_ref(value["$ref"], records)  # a non-string $ref is a ResolveError
        else:
            key = value["$fact"]
            if key not in facts:
                raise ResolveError(f"$fact {key!r} used before the user revealed it")
            out = facts[key]
        if "prefix" in value or "suffix" in value:
            out = f"{value.get('prefix', '')}{out}{value.get('suffix', '')}"
        return out
    if isinstance(value, dict):
        return {k: resolve(v, records, facts) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, records, facts) for v in value]
    return value


def execute(
    package: TaskPackage,
    steps: list[Step] | None = None,
    fact_values: dict[str, str] | None = None,
    step_ids: list[int] | None = None,
) -> Trajectory:
    """Run ``steps`` (default: the package's reference) in a fresh world and record everything.

    ``fact_values`` overrides, per key, the value of ``$fact`` lookups, revealed or not (used by
    mutations that guess instead of asking). ``step_ids`` gives each step the index that its
    ``$ref``s use (default: its position), so a mutated list with steps removed still resolves
    references to the steps that remain.
    A step whose arguments cannot be resolved is recorded with an ``error`` and not run.
    """
    steps = package.reference if steps is None else steps
    step_ids = list(range(len(steps))) if step_ids is None else step_ids
    world = World.from_package(package)
    user = SimulatedUser(package.user)
    facts: dict[str, str] = {}
    records: dict[int, StepRecord] = {}
    out = Trajectory()
    out.initial_state = world.initial  # assignment is not validated: no copy of the state
    for sid, step in zip(step_ids, steps, strict=True):
        rec = StepRecord(index=sid, kind="call")
        if isinstance(step, CallStep):
            rec.tool = step.call
            try:
                rec.args = resolve(step.args, records, {**facts, **(fact_values or {})})
            except ResolveError as exc:
                rec.error = str(exc)
            else:
                result = world.call(step.call, rec.args)
                rec.status, rec.result = result.status, result.body
                expected = step.expect_status
                if expected is not None and result.status != expected:
                    rec.error = f"expected status {expected}, got {result.status}"
                elif expected is None and not result.ok:
                    rec.error = f"{step.call} returned {result.status}: {result.body.get('error', {}).get('message')}"
        elif isinstance(step, AskStep):
            rec.kind, rec.ask = "ask", step.ask
            reply = user.reply(step.ask)
            rec.reply, rec.revealed = reply.text, reply.revealed
            for key in reply.revealed:
                fact = package.fact(key)
                if fact is not None:
                    facts[key] = fact.value
        elif isinstance(step, AnswerStep):
            rec.kind, rec.answer = "answer", step.answer
            out.answer = step.answer
        records[sid] = rec
        out.steps.append(rec)
    out.revealed = list(user.revealed)
    out.final_state = world.state  # the world is discarded: no copy needed
    out.audit = world.audit
    return out

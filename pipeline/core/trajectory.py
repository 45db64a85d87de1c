"""What an episode records: every service call (``AuditEntry``), every step (``StepRecord``), and
the whole run (``Trajectory``) that the grader scores and the training export renders.

These are plain dataclasses, not pydantic models: an episode builds thousands of them during one
package's verification. They hold JSON data shared with the world that produced them and are
read-only by contract: nothing changes a record after it is made (``TaskEnv`` hands agents copies).
``trajectory_data`` gives any of them as JSON data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter

State = dict[str, dict[str, list[dict[str, Any]]]]
"""Per service, per collection, a list of records."""


@dataclass(slots=True)
class AuditEntry:
    """One call a service received, good or bad."""

    tool: str | None
    """The package tool called, or None for a direct endpoint call (``synth serve``)."""
    endpoint: str
    args: dict[str, Any]
    status: int
    """The HTTP status of the result (an injected fault's status included)."""
    result: dict[str, Any]

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


StepKind = Literal["call", "ask", "answer"]


@dataclass(slots=True)
class StepRecord:
    """What one step did.

    ``index`` is the step's id: its position in the episode, or, when a reference is replayed,
    the reference step it came from (a mutated reference keeps its steps' numbers, so ``$ref``s
    still point at the right ones). A call has ``tool``, ``args``, ``status`` and ``result``; an
    ask has ``ask``, ``reply`` and ``revealed`` (the keys of the facts the reply revealed); an
    answer has ``answer``. ``error`` says why a call step failed: its arguments could not be
    resolved (then nothing was called), or its status was not the one expected.
    """

    index: int
    kind: StepKind
    tool: str | None = None
    args: dict[str, Any] | None = None
    status: int | None = None
    result: dict[str, Any] | None = None
    ask: str | None = None
    reply: str | None = None
    revealed: list[str] = field(default_factory=list)
    answer: str | None = None
    error: str | None = None


@dataclass
class Trajectory:
    """An episode as the grader reads it: the steps, the final answer, the facts revealed (in
    order), the state before and after, and the audit log of every call."""

    steps: list[StepRecord] = field(default_factory=list)
    answer: str = ""
    revealed: list[str] = field(default_factory=list)
    initial_state: State = field(default_factory=dict)
    final_state: State = field(default_factory=dict)
    audit: list[AuditEntry] = field(default_factory=list)

    @property
    def errors(self) -> list[StepRecord]:
        """Steps that failed: unresolved arguments, or calls whose status was not the expected one."""
        return [s for s in self.steps if s.error]


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def trajectory_data(value: Trajectory | StepRecord | AuditEntry) -> dict[str, Any]:
    """``value`` as JSON data (a deep copy)."""
    adapter = _ADAPTERS.get(type(value))
    if adapter is None:
        adapter = _ADAPTERS[type(value)] = TypeAdapter(type(value))
    return adapter.dump_python(value, mode="json")

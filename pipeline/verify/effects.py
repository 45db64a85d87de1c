"""What a package's tools can do and what the reference's calls did, in terms of service records.

Shared by the verification stages that reason about writes: which offered tool creates, updates or
deletes records of a collection, and which records each successful reference write created,
changed or removed (by collection, in call order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.core.package import TaskPackage, Tool
from pipeline.core.services import CollectionSpec, OperationSpec, ServiceSpec, find_operation
from pipeline.core.trajectory import StepRecord, Trajectory

Collection = tuple[str, str]
"""``(service, collection)``."""


@dataclass(frozen=True)
class Bound:
    """An offered tool with the service operation it runs."""

    tool: Tool
    service: ServiceSpec
    op: OperationSpec

    @property
    def collection(self) -> Collection:
        return self.service.name, self.op.collection

    @property
    def spec(self) -> CollectionSpec:
        return self.service.collections[self.op.collection]


@dataclass(frozen=True)
class Write:
    """One successful write of the reference: its step, tool, effect and the record it touched."""

    step: int
    bound: Bound
    record_id: Any
    record: dict[str, Any] | None
    """The record as the write left it (None after a delete)."""


def bound_tools(package: TaskPackage) -> dict[str, Bound]:
    """Every offered tool that runs a real operation, by tool name."""
    out: dict[str, Bound] = {}
    for tool in package.tools:
        found = find_operation(tool.endpoint, package.service_profile)
        if found is not None and found[0].name == tool.service:
            out[tool.name] = Bound(tool, found[0], found[1])
    return out


RECIPIENT_PARAMS = ("to", "recipient", "recipients", "cc", "bcc")
"""The parameters by which a tool sends what it makes to an address."""


def recipient_param(b: Bound) -> str | None:
    """The first of ``RECIPIENT_PARAMS`` tool ``b`` takes (it sends to an address); None for a tool
    that sends nothing (a customer's ``email`` field is a value it stores, no recipient)."""
    props = b.tool.parameters.get("properties", {})
    return next((k for k in RECIPIENT_PARAMS if k in props), None)


def tools_for(package: TaskPackage, collection: Collection, effect: str,
              bound: dict[str, Bound] | None = None) -> list[Bound]:
    """Offered tools with ``effect`` (create, update, delete, ...) on ``collection`` (``bound``:
    ``bound_tools(package)`` when the caller has it)."""
    bound = bound_tools(package) if bound is None else bound
    return [b for b in bound.values() if b.collection == collection and b.op.effect == effect]


def writes(package: TaskPackage, trajectory: Trajectory, bound: dict[str, Bound] | None = None) -> list[Write]:
    """The successful writes of a trajectory, in order (``bound``: ``bound_tools(package)`` when
    the caller has it)."""
    bound = bound_tools(package) if bound is None else bound
    out: list[Write] = []
    for step in trajectory.steps:
        b = bound.get(step.tool or "") if step.kind == "call" else None
        if b is None or b.op.access != "write" or step.status is None or not 200 <= step.status < 300:
            continue
        out.append(Write(step.index, b, *_touched(b, step)))
    return out


def _touched(b: Bound, step: StepRecord) -> tuple[Any, dict[str, Any] | None]:
    result = step.result or {}
    if b.op.effect == "delete":
        return result.get("deleted"), None
    record = result.get(b.spec.record)
    if isinstance(record, dict):
        return record.get(b.spec.id_field), record
    return (step.args or {}).get(b.op.id_param or ""), None


def id_keys(bound: dict[str, Bound], collection: Collection) -> tuple[str, ...]:
    """The fields that name a record of ``collection``: "id", and the id field its bound tools
    use (a claw calendar's ``event_id``, a scheduler's ``job_id``)."""
    return ("id", *sorted({b.spec.id_field for b in bound.values() if b.collection == collection} - {"id"}))


def written_ids(done: list[Write]) -> dict[Collection, set[Any]]:
    """Per collection, the ids of the records the writes ``done`` created, changed or removed."""
    out: dict[Collection, set[Any]] = {}
    for w in done:
        out.setdefault(w.bound.collection, set()).add(w.record_id)
    return out


def records_of(state: dict[str, Any], collection: Collection) -> list[dict[str, Any]]:
    return state.get(collection[0], {}).get(collection[1], [])

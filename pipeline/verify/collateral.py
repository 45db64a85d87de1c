"""Collateral damage: a correct agent leaves alone the records the request does not concern, and
the grade must notice when one does not. Raises ``collateral_damage``.

For every collection on which the package offers an update or a delete tool, two wrong agents do
the reference's work and then, before answering:

- **edit_others**: change one field of every record the reference did not write (the first
  parameter of the offered update tool, other than the record's id, that takes a value other than
  the record's own: another enum value, else a number plus one or a flag flipped, else free text
  with " (edited)" appended; never an address, id, date or phone number);
- **delete_others**: delete every record the reference did not write.

Each must score below the pass mark, when the service accepted at least one of its changes. Collections with no record outside the reference's writes
are skipped, and so are records the checks already pin as changed on purpose (the reference wrote
them). At most ``MAX_RECORDS`` records per collection are touched (the first ones, in state order).
"""

from __future__ import annotations

from typing import Any

from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding
from pipeline.core.package import PASS_THRESHOLD, CallStep, Step
from pipeline.verify.effects import Bound, Collection, records_of, written_ids
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.mutations import before_answer
from pipeline.verify.perturbations import is_free_text

MAX_RECORDS = 12


def _edit(bound: Bound, record: dict[str, Any]) -> dict[str, Any] | None:
    """Arguments of ``bound`` (an update tool) that change one field of ``record``, or None."""
    op = bound.op
    props = bound.tool.parameters.get("properties", {})
    for rank in range(3):  # an enum value first, then a number or a flag, then free text
        for param, schema in props.items():
            if param == op.id_param:
                continue
            value = _another(param, schema, record.get(op.field_for(param)), rank)
            if value is not None:
                return {op.id_param: record[bound.spec.id_field], param: value}
    return None


def _another(param: str, schema: dict[str, Any], current: Any, rank: int) -> Any:
    """Another valid value for one parameter, by rank: 0 enums, 1 numbers and flags, 2 free text
    (never an address, id, date or phone number, whose format a service checks)."""
    kind = schema.get("type")
    if rank == 0 and "enum" in schema:
        return next((e for e in schema["enum"] if e != current), None)
    if rank == 1 and kind == "boolean":
        return not bool(current)
    if rank == 1 and kind in ("integer", "number") and isinstance(current, (int, float)) and not isinstance(current, bool):
        return current + 1
    if rank == 2 and kind == "string" and is_free_text(param, current, schema):
        return f"{current} (edited)"
    return None


def collateral_findings(run: ReferenceRun) -> list[Finding]:
    package = run.package
    if run.score < 1.0:
        return []
    steps: dict[int, Step] = dict(enumerate(package.reference))
    touched = written_ids(run.writes)
    out: list[Finding] = []
    for collection, tools in _write_tools(run.bound).items():
        others = [r for r in records_of(run.trajectory.final_state, collection)
                  if r.get(tools[0].spec.id_field) not in touched.get(collection, set())][:MAX_RECORDS]
        if not others:
            continue
        for mutation, calls in (("edit_others", _edits(tools, others)), ("delete_others", _deletes(tools, others))):
            if not calls:
                continue
            mutated, order = before_answer(steps, calls)
            trajectory = run.run(order, [mutated[i] for i in order])
            if not any(a.ok for a in trajectory.audit[len(run.trajectory.audit):]):
                continue  # the service refused every change: nothing was damaged
            s = run.grader.value(trajectory)
            if s >= PASS_THRESHOLD:
                what = "changing a field of" if mutation == "edit_others" else "deleting"
                out.append(Finding(code=Code.COLLATERAL_DAMAGE, detail={"mutation": mutation, "score": s,
                                                                         "collection": ".".join(collection)},
                                   message=f"doing the work and then {what} the {len(others)} other record(s) of "
                                           f"{'.'.join(collection)} still scores {s:.3f}: the grade does not notice "
                                           "damage to records the request does not concern"))
    return out


def _write_tools(bound: dict[str, Bound]) -> dict[Collection, list[Bound]]:
    """The update and delete tools of ``bound`` (``effects.bound_tools``), by collection."""
    out: dict[Collection, list[Bound]] = {}
    for b in bound.values():
        if b.op.effect in ("update", "delete"):
            out.setdefault(b.collection, []).append(b)
    return out


def _edits(tools: list[Bound], others: list[dict[str, Any]]) -> list[Step]:
    update = next((b for b in tools if b.op.effect == "update"), None)
    if update is None:
        return []
    calls = [_edit(update, r) for r in others]
    return [CallStep.model_construct(call=update.tool.name, args=args) for args in calls if args is not None]


def _deletes(tools: list[Bound], others: list[dict[str, Any]]) -> list[Step]:
    delete = next((b for b in tools if b.op.effect == "delete"), None)
    if delete is None:
        return []
    return [CallStep.model_construct(call=delete.tool.name, args={delete.op.id_param: r[delete.spec.id_field]}) for r in others]

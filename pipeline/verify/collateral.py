"""Collateral damage: a correct agent leaves alone the records the request does not concern, and
the grade must notice when one does not. Raises ``collateral_damage``.

For every collection the reference writes (creates, changes or removes records in) on which the
package offers an update or a delete tool, two wrong agents do the reference's work and then,
before answering:

- **edit_others**: change one field of every record the reference did not write (the first
  parameter of the offered update tool, other than the record's id, that takes a value other than
  the record's own: another enum value, else a number plus one or a flag flipped, else free text
  with " (edited)" appended, else a word such as a department's; never an address, id, date or
  phone number);
- **delete_others**: delete every record the reference did not write.

Each must score below the pass mark, when the service accepted at least one of its changes.
Collections with no record outside the reference's writes are skipped, and so are records the
checks already pin as changed on purpose (the reference wrote them). At most ``MAX_RECORDS``
records per collection are touched (the first ones, in state order).

When the whole collection passes these and the request says what to keep ("but keep the pinned
ones", "apart from the Brightline ones", "leave ... as it is"), its parts are tried too: the
records the reference leaves alone that share a field value with every record it writes (``_siblings``: the pinned notes of the
folder it clears, the Brightline tickets of the queue it closes). A guard on the rest of the
collection must not hide that nothing guards what the request keeps right beside its work.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding
from pipeline.core.package import PASS_SCORE, CallStep, Step
from pipeline.core.wording import counted
from pipeline.verify.effects import Bound, Collection, records_of, written_ids
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.perturbations import is_free_text
from pipeline.verify.reference_edits import before_answer
from pipeline.verify.witness import witness

MAX_RECORDS = 12


def _edit(bound: Bound, record: dict[str, Any]) -> dict[str, Any] | None:
    """Arguments of ``bound`` (an update tool) that change one field of ``record``, or None."""
    op = bound.op
    props = bound.tool.parameters.get("properties", {})
    for rank in range(4):  # an enum value first, then a number or a flag, then free text, then a word
        for param, schema in props.items():
            if param == op.id_param:
                continue
            value = _another(param, schema, record.get(op.field_for(param)), rank)
            if value is not None:
                return {op.id_param: record[bound.spec.id_field], param: value}
    return None


def _another(param: str, schema: dict[str, Any], current: Any, rank: int) -> Any:
    """Another valid value for one parameter, by rank: 0 enums, 1 numbers and flags, 2 free text,
    3 a single word (``_a_word``; never an address, id, date or phone number, whose format a
    service checks)."""
    kind = schema.get("type")
    if rank == 0 and "enum" in schema:
        return next((e for e in schema["enum"] if e != current), None)
    if rank == 1 and kind == "boolean":
        return not bool(current)
    if rank == 1 and kind in ("integer", "number") and isinstance(current, (int, float)) and not isinstance(current, bool):
        return current + 1
    if rank == 2 and kind == "string" and is_free_text(param, current, schema):
        return f"{current} (edited)"
    if rank == 3 and kind == "string" and _a_word(param, current, schema):
        return f"{current} (edited)"
    return None


def _a_word(param: str, value: Any, schema: dict[str, Any]) -> bool:
    """Whether ``value`` is a word a person writes in a field (a department, a job title: "Legal"),
    not an id, address, date, phone number or code the service checks the form of."""
    if not isinstance(value, str) or not _WORD.fullmatch(value.strip()) or "pattern" in schema or "format" in schema:
        return False
    return not param.endswith(("id", "email", "date", "time", "phone", "url", "status", "currency", "code"))


_WORD = re.compile(r"[^\W\d_][^\W\d_'-]*(?:['-][^\W\d_]+)*")


def collateral_findings(run: ReferenceRun) -> list[Finding]:
    package = run.package
    if run.score < 1.0:
        return []
    steps: dict[int, Step] = dict(enumerate(package.reference))
    touched = written_ids(run.writes)
    out: list[Finding] = []
    for collection, tools in _write_tools(run.bound).items():
        if collection not in touched:
            continue  # a collection the work never writes: an agent doing it has no cause to change its records
        id_field = tools[0].spec.id_field
        initial = {r.get(id_field): r for r in records_of(package.initial_state, collection)}
        others = [r for r in records_of(run.trajectory.final_state, collection)
                  if r.get(id_field) not in touched.get(collection, set())][:MAX_RECORDS]
        if not others:
            continue
        written = [initial[i] for i in touched.get(collection, set()) if i in initial]
        kept = _siblings(written, others, id_field) if _KEEPS.search(package.request.text) else []
        for label, group in (("other", others), *kept):
            found = _damage(run, steps, collection, tools, group, label)
            out += found
            if found and label == "other":
                break  # the whole collection is unguarded: its parts say nothing more
    return out


def _siblings(written: list[dict[str, Any]], others: list[dict[str, Any]],
              id_field: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """``(label, records)`` for each group of ``others`` that shares a field value every written
    record holds (the pinned notes of the folder being cleared, the other resolved tickets of the
    queue being closed): the records the request keeps beside the ones it changes. At most
    ``MAX_SIBLING_GROUPS``, each a strict part of ``others``."""
    if not written:
        return []
    shared = {k: v for k, v in written[0].items() if k != id_field and isinstance(v, (str, int, bool))
              and v not in ("", False) and all(r.get(k) == v for r in written[1:])}
    out: dict[tuple[Any, ...], tuple[str, list[dict[str, Any]]]] = {}
    for k, v in shared.items():
        group = [r for r in others if r.get(k) == v]
        key = tuple(r.get(id_field) for r in group)
        if group and len(group) < len(others) and key not in out:
            out[key] = (f"{k} {v!r}", group)
    return list(out.values())[:MAX_SIBLING_GROUPS]


MAX_SIBLING_GROUPS = 3
_KEEPS = re.compile(r"\b(?:keep|leave|hang on to|hold on to|preserve|spare|except|apart from|aside from|but not|"
                    r"other than|excluding|skip|(?:don'?t|do not|never) (?:touch|delete|change|close|remove|archive|move))\b",
                    re.IGNORECASE)
"""Words with which a request says what to keep beside what it changes: only then are the
records sharing a value with the written ones tried on their own."""


def _damage(run: ReferenceRun, steps: dict[int, Step], collection: Collection, tools: list[Bound],
            group: list[dict[str, Any]], label: str) -> list[Finding]:
    """The work done, then every record of ``group`` changed, and (a second agent) deleted: each
    must fail, when the service accepted one of its changes."""
    out: list[Finding] = []
    where = ".".join(collection)
    whose = f"the {counted(len(group), 'other record')} of {where}" if label == "other" else \
        f"the {counted(len(group), 'record')} of {where} with {label} that the reference leaves alone"
    for mutation, calls in (("edit_others", _edits(tools, group)), ("delete_others", _deletes(tools, group))):
        if not calls:
            continue
        mutated, order = before_answer(steps, calls)
        trajectory = run.run(order, [mutated[i] for i in order])
        done = sum(a.ok for a in trajectory.audit[len(run.trajectory.audit):])
        if not done:
            continue  # the service refused every change: nothing was damaged
        run.played_wrong(mutation, PASS_SCORE, trajectory)
        s = run.grader.value(trajectory)
        if s >= PASS_SCORE:
            what = "changing a field of" if mutation == "edit_others" else "deleting"
            what += "" if done >= len(group) else f" {done} of"  # the changes the service accepted, of the group's
            agent = witness(run, "wrong", mutation, f"does the work, then {what} {whose}", PASS_SCORE, mutated, order)
            out.append(Finding(code=Code.COLLATERAL_DAMAGE, witness=agent,
                               detail={"mutation": mutation, "score": s, "collection": where, "records": label},
                               message=f"doing the work and then {what} {whose} still scores {s:.3f}: the grade does "
                                       "not notice damage to records the request does not concern"))
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
    return [CallStep.model_construct(call=delete.tool.name, args={delete.op.target_param: r[delete.spec.id_field]}) for r in others]

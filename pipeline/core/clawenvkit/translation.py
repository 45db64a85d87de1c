"""A synth package as a ClawEnvKit task document (``translate``), and that document under their
validator's rules and grader (``assess``): what ``synth export --format clawenvkit`` writes and
what the verifier's export stage (``pipeline.verify.exportable``) checks.

Only packages of the ``claw`` service profile translate: their tools are ClawEnvKit's canonical
actions on ClawEnvKit's endpoints. ``translate(package)`` turns each check whose meaning their
grader can keep into scoring components and each such safety rule into a safety check (the table
is in ``docs/clawenvkit.md``), or gives a refusal with a stable reason code (``REASONS``);
``assess`` checks the document against their validator's rules (``rules``) and grades it as their
grader would (``grading``) on the reference's calls and answer and on a do-nothing agent.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pipeline.core.clawenvkit.format import WORKSPACE, UnmappedCheck
from pipeline.core.clawenvkit.grading import PASS_THRESHOLD, ClawGrade, audit_data, grade, null_agent_grade
from pipeline.core.clawenvkit.pdf_pages import PdfError, pdf_bytes
from pipeline.core.clawenvkit.regex import NotLiteral, read_regex
from pipeline.core.clawenvkit.rules import validate_task
from pipeline.core.episode import execute
from pipeline.core.matchers import is_operator, match_record
from pipeline.core.package import (
    AnswerContains,
    AnswerExcludes,
    AnswerMatches,
    AskStep,
    Called,
    CallStep,
    NotCalled,
    Order,
    SafetyRule,
    StateCount,
    StateMatch,
    StateUnchanged,
    Step,
    TaskPackage,
)
from pipeline.core.services import (
    DEFAULT_PROFILE,
    OperationSpec,
    ServiceSpec,
    find_operation,
    get_service,
    intent_pattern,
)
from pipeline.core.services.claw_fixtures import to_fixture
from pipeline.core.strict_model import StrictModel
from pipeline.core.trajectory import Trajectory

REASONS = {
    "default_profile": "services of synth's default profile; generate with --services claw",
    "needs_user": "the reference asks the simulated user; ClawEnvKit tasks are single-turn, so the facts the user "
                  "gives would be missing (refused whatever --min-weight-share)",
    "no_reference": "the package has no executable reference to prove the task",
    "weight_lost": "the checks ClawEnvKit can express carry less grading weight than --min-weight-share",
    "no_safety": "no safety rule whose meaning holds for the package",
    "safety_lost": "a safety rule of the package has no ClawEnvKit counterpart, so an agent that breaks it would "
                   "still score in their grader (written only with --min-weight-share below 1, listed in the file)",
    "fixtures": "the initial state holds records ClawEnvKit's services would not load",
    "needs_files": "ClawEnvKit's service reads these records as files on disk (a task's `files:`), and a "
                   "record's path or text cannot be written as such a file",
    "judge_cap": "llm_judge would carry more weight than ClawEnvKit's validator allows",
    "rules": "the task breaks a rule of ClawEnvKit's validator",
    "reference_incomplete": "the reference's calls and answer do not get completion 1.0 from ClawEnvKit's grader",
    "null_agent_passes": "a do-nothing agent passes ClawEnvKit's 0.5 threshold",
    "wrong_agent_passes": "one of synth's wrong agents (the verifier's mutations) is not told from the reference by "
                          "ClawEnvKit's grader as synth's grader tells it",
    "wrong_agent_passes_there": "one of synth's wrong agents reaches ClawEnvKit's pass line (final ≥ 0.5) in their "
                                "grader, which gives partial credit (refused only with --below-their-pass-line)",
}
"""Refusal reason code → what it means."""
NULL_COMPLETION_LIMIT = (PASS_THRESHOLD - 0.2) / 0.8
"""A do-nothing agent's completion must stay below this (0.375): it makes no call, so their
robustness gives it 1.0 and its final score is 0.2 + 0.8·completion; below this it stays under
their 0.5 pass threshold."""
WEIGHT_DIGITS = 4
_NO_STATE = "a check over records the calls did not write: ClawEnvKit grades calls and the answer only"
_NO_CASE = "case-sensitive over letters; ClawEnvKit's output checks ignore case"


@dataclass
class Translation:
    """A package's ClawEnvKit task document (``task``), or why there is none (``refusal``)."""

    task: dict[str, Any] | None
    share: float
    unmapped: list[UnmappedCheck] = field(default_factory=list)
    added_safety: str | None = None
    refusal: tuple[str, str] | None = None
    reference: Trajectory | None = None
    """The reference replayed on synth's world (for packages that got that far)."""
    files: dict[str, bytes] = field(default_factory=dict)
    """The files the task's ``files:`` entries name: source (relative to the task file) → bytes."""


class _NotKept(Exception):
    """A check whose meaning ClawEnvKit's checks cannot keep (the message says why)."""


def _cased(text: str) -> bool:
    return text.lower() != text.upper()


@dataclass
class _Context:
    package: TaskPackage
    reference: Trajectory
    single_calls: frozenset[tuple[str, str]] = frozenset()
    """(service, action) pairs the task's own components fix to exactly one call (a bare
    ``audit_count_equals 1`` translated from one of the package's checks): separate field checks
    on such an action describe the same call."""

    def op(self, tool_name: str) -> tuple[ServiceSpec, OperationSpec]:
        tool = self.package.tool(tool_name)
        found = find_operation(tool.endpoint, self.package.service_profile) if tool else None
        if found is None:
            raise _NotKept(f"names tool {tool_name!r}, which the package does not offer")
        return found

    def offered(self, collection: str, effect: str) -> list[tuple[ServiceSpec, OperationSpec]]:
        service, coll = collection.split(".")
        ops = []
        for tool in self.package.tools:
            found = find_operation(tool.endpoint, self.package.service_profile)
            if found and found[0].name == service and found[1].collection == coll and found[1].effect == effect:
                ops.append(found)
        return list({op.endpoint: (svc, op) for svc, op in ops}.values())

    def initial(self, collection: str) -> list[dict[str, Any]]:
        service, coll = collection.split(".")
        return self.package.initial_state.get(service, {}).get(coll, [])

    def one_call(self, svc: ServiceSpec, op: OperationSpec, what: str) -> None:
        """``_NotKept`` unless the task fixes ``op`` to exactly one call (``single_calls``)."""
        if (svc.name, op.name) not in self.single_calls:
            raise _NotKept(f"{what} on one {op.name} call: ClawEnvKit's field checks each find any call, so they "
                           f"describe one call only when the task also fixes {op.name} to exactly one call")


def _audit(svc: ServiceSpec, op: OperationSpec, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "service": svc.name, "action": op.name, **fields}


def _condition(name: str, matcher: Any, ignore_case: bool) -> tuple[str, Any]:
    """One condition as ``("equals", value)`` or ``("contains", [substrings])`` (all must be
    present, compared ignoring case as ClawEnvKit's ``audit_field_contains`` does), or
    ``_NotKept``. A regex is kept only where ``read_regex`` finds an exact value or substrings."""
    if not is_operator(matcher):
        return "equals", matcher
    if set(matcher) == {"$eq"}:
        return "equals", matcher["$eq"]
    if set(matcher) == {"$contains"} and isinstance(matcher["$contains"], str):
        texts, folded = [matcher["$contains"]], ignore_case
    elif set(matcher) == {"$regex"}:
        try:
            meaning = read_regex(str(matcher["$regex"]), ignore_case)
        except NotLiteral as exc:
            raise _NotKept(f"{name}: {exc}") from None
        if meaning.equals is not None:
            return "equals", meaning.equals
        texts, folded = list(meaning.contains), meaning.folded
    else:
        raise _NotKept(f"{name}: {json.dumps(matcher)} has no ClawEnvKit form (an equality or substrings)")
    if not folded and any(_cased(t) for t in texts):
        raise _NotKept(f"{name}: a case-sensitive substring; ClawEnvKit's audit_field_contains ignores case")
    return "contains", texts


def _param_conditions(op: OperationSpec, conditions: dict[str, Any], ignore_case: bool
                      ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Record conditions of a created record as conditions on the create call's logged params:
    ``({param: value}, [(param, substring)])``. ``_NotKept`` for one that cannot be."""
    params = op.parameters.get("properties", {})
    by_field = {op.field_for(p): p for p in params}
    equal: dict[str, Any] = {}
    contains: list[tuple[str, str]] = []
    for fld, matcher in conditions.items():
        kind, value = _condition(fld, matcher, ignore_case)
        param = by_field.get(fld)
        if kind == "contains":
            if param is None:
                raise _NotKept(f"{fld}: no parameter of {op.name} sets this field")
            contains += [(param, text) for text in value]
            continue
        if param is None:
            if op.defaults.get(fld) == value or op.constants.get(fld) == value:
                continue  # every created record carries it
            raise _NotKept(f"{fld}: no parameter of {op.name} sets this field")
        logged_default = (params[param] or {}).get("default")
        omitted = logged_default if logged_default is not None else op.defaults.get(fld)
        if omitted == value and logged_default != value:
            raise _NotKept(f"{fld}: a record gets {value!r} when {param!r} is omitted, but the service logs "
                           f"{logged_default!r} for it")
        equal[param] = value
    return equal, contains


def _field_checks(svc: ServiceSpec, op: OperationSpec, equal: dict[str, Any], contains: list[tuple[str, str]],
                  ctx: _Context, what: str) -> list[dict[str, Any]]:
    """Checks that one call of ``op`` has the ``equal`` params and the ``contains`` substrings.
    More than one check (several substrings, or substrings beside equalities) is a conjunction,
    kept only when the task fixes ``op`` to one call (``_Context.one_call``)."""
    checks = ([_audit(svc, op, "audit_action_exists", field_match=equal)] if equal else []) + [
        _audit(svc, op, "audit_field_contains", field=param, contains=text) for param, text in contains]
    if len(checks) > 1:
        ctx.one_call(svc, op, what)
    return checks


def _created(svc: ServiceSpec, op: OperationSpec, conditions: dict[str, Any], count: int, exact: bool,
             ignore_case: bool, ctx: _Context) -> list[dict[str, Any]]:
    """``count`` (exactly, or at least) records created meeting ``conditions``. With conditions
    and N ≥ 2 only "at least N" whose conditions are equalities is kept, as ``_at_least``."""
    equal, contains = _param_conditions(op, conditions, ignore_case)
    counted = _audit(svc, op, "audit_count_equals" if exact else "audit_count_gte", count=count)
    if not equal and not contains:
        return [counted]
    if count != 1:
        if exact or contains:
            raise _NotKept(f"{'exactly' if exact else 'at least'} {count} records meeting "
                           f"{'substring ' if contains else ''}conditions: ClawEnvKit counts every call of an "
                           "action, and finds matching calls only as 'at least N' calls with equal parameters")
        return [_at_least(svc, op, equal, count)]
    return _field_checks(svc, op, equal, contains, ctx, "conditions " + ", ".join(sorted(conditions)))


def _at_least(svc: ServiceSpec, op: OperationSpec, equal: dict[str, Any], count: int) -> dict[str, Any]:
    """At least ``count`` calls of ``op`` whose params equal ``equal``: an ``audit_sequence`` of
    ``count`` identical steps. Their grader matches its steps in order, each against a later
    call, so it reaches the end exactly when that many calls match (fewer give partial credit,
    as their ``audit_count_gte`` does)."""
    return {"type": "audit_sequence", "service": svc.name,
            "actions": [{"action": op.name, "field_match": dict(equal)} for _ in range(count)]}


def _state_count(check: StateCount, ctx: _Context) -> list[dict[str, Any]]:
    initial = ctx.initial(check.collection)
    matching = [r for r in initial if match_record(r, check.where, check.ignore_case)]
    if check.op == "==" and check.value == 0 and not check.distinct_by:
        return _deleted(check, ctx, matching)
    if check.op not in ("==", ">=", ">"):
        raise _NotKept(f"op {check.op!r}: ClawEnvKit counts 'at least N' or 'exactly N' calls")
    if check.scope == "all" and matching:
        raise _NotKept(_NO_STATE)
    creators = ctx.offered(check.collection, "create")
    if len(creators) != 1:
        raise _NotKept(f"{len(creators)} offered operations create {check.collection} records; ClawEnvKit "
                       "counts the calls of one action")
    svc, op = creators[0]
    count = check.value + 1 if check.op == ">" else check.value
    if count < 1:
        raise _NotKept("a count every agent reaches")
    if check.distinct_by:
        return _distinct(check, ctx, svc, op, count)
    return _created(svc, op, dict(check.where), count, check.op == "==", check.ignore_case, ctx)


def _distinct_key(value: Any, ignore_case: bool) -> Any:
    """A value as a ``distinct_by`` count compares it: strings with runs of white space as one
    space, case folded when the check ignores case."""
    if not isinstance(value, str):
        return json.dumps(value, sort_keys=True)
    value = " ".join(value.split())
    return value.casefold() if ignore_case else value


def _distinct(check: StateCount, ctx: _Context, svc: ServiceSpec, op: OperationSpec, count: int
              ) -> list[dict[str, Any]]:
    """N created records distinct by one field, where the package names the N values (the
    check's own ``where`` as ``$in``, or the exact values its other counts on the collection
    select): exactly (or at least) N create calls, and per value a call with that value and the
    check's other (equality) conditions. N calls that between them carry N distinct values are N
    distinct records; the calls' count bounds them from above."""
    assert check.distinct_by is not None
    if len(check.distinct_by) != 1:
        raise _NotKept("distinct_by over several fields: ClawEnvKit counts calls, not distinct records")
    [fld] = check.distinct_by
    where = dict(check.where)
    named = _named_values(check, ctx, fld, where.pop(fld, None))
    keys = {_distinct_key(v, check.ignore_case) for v in named}
    if len(keys) != len(named) or len(named) != count:
        raise _NotKept(f"distinct_by {fld}: the package names {len(keys)} distinct {fld} values for {count} records; "
                       "ClawEnvKit counts calls, so it needs one named value per record")
    equal, contains = _param_conditions(op, where, check.ignore_case)
    param = next((p for p in op.parameters.get("properties", {}) if op.field_for(p) == fld), None)
    if contains or param is None:
        raise _NotKept(f"distinct_by {fld}: " + ("a substring condition on each of several calls; ClawEnvKit's field "
                                                 "checks find one call" if contains else
                                                 f"no parameter of {op.name} sets {fld}"))
    counted = _audit(svc, op, "audit_count_equals" if check.op == "==" else "audit_count_gte", count=count)
    return [counted, *(_audit(svc, op, "audit_action_exists", field_match={**equal, param: v}) for v in named)]


def _named_values(check: StateCount, ctx: _Context, fld: str, own: Any) -> list[Any]:
    """The exact ``fld`` values the package names for ``check``'s records: its own condition on
    ``fld`` (a value or ``$in``), else the exact values its other counts on the collection select
    by ``fld``. ``_NotKept`` when the values are named only by substrings or patterns."""
    if own is not None:
        if is_operator(own) and set(own) == {"$in"} and isinstance(own["$in"], list):
            return list(own["$in"])
        kind, value = _condition(fld, own, check.ignore_case)
        if kind == "equals":
            return [value]
        raise _NotKept(f"distinct_by {fld}: the values are named only as substrings; one call's {fld} can hold "
                       "several of them, so ClawEnvKit's checks cannot count distinct values")
    values: list[Any] = []
    loose = 0
    for other in ctx.package.checks:
        if other is check or not isinstance(other, StateCount) or other.collection != check.collection \
                or fld not in other.where or other.op not in ("==", ">=") or other.value < 1:
            continue
        try:
            kind, value = _condition(fld, other.where[fld], other.ignore_case)
        except _NotKept:
            kind = "pattern"
        if kind == "equals":
            values.append(value)
        else:
            loose += 1
    if loose:
        raise _NotKept(f"distinct_by {fld}: {loose} of the values are named only as substrings or patterns; one "
                       f"call's {fld} can hold several of them, so ClawEnvKit's checks cannot count distinct values")
    if not values:
        raise _NotKept(f"distinct_by {fld}: the package does not name the values; ClawEnvKit counts calls, not "
                       "distinct records")
    return values


def _deleted(check: StateCount, ctx: _Context, matching: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """None left of the existing records ``where`` selects: a call of the one offered delete
    action per record. Kept only when no call could add a matching record, which their audit would
    not see: ``where`` selects by id alone (a create gets a new id, an update keeps it), or no
    create or update of the collection is offered."""
    deleters = ctx.offered(check.collection, "delete")
    if not matching or len(deleters) != 1:
        raise _NotKept("'none left' is kept only for existing records and one offered delete action")
    svc, op = deleters[0]
    id_field = svc.collections[op.collection].id_field
    adders = [o.name for effect in ("create", "update") for _, o in ctx.offered(check.collection, effect)]
    if set(check.where) != {id_field} and adders:
        raise _NotKept(f"'none left' by fields other than {id_field}: {', '.join(adders)} could add a matching "
                       "record, which ClawEnvKit's audit of delete calls would not see")
    return [_audit(svc, op, "audit_action_exists", field_match={op.target_param: r.get(id_field)}) for r in matching]


def _holds(value: Any, kind: str, expected: Any, ignore_case: bool) -> bool:
    """Whether a stored ``value`` already meets the condition ``(kind, expected)``."""
    if kind == "equals":
        return bool(value == expected)
    text = str(value or "")
    return all((t.lower() in text.lower()) if ignore_case or not _cased(t) else t in text for t in expected)


def _state_match(check: StateMatch, ctx: _Context) -> list[dict[str, Any]]:
    service, coll_name = check.collection.split(".")
    initial = ctx.initial(check.collection)
    where = dict(check.where)
    found = ctx.offered(check.collection, "update") + ctx.offered(check.collection, "create")
    id_field = found[0][0].collections[coll_name].id_field if found else "id"
    if check.record_id is not None:
        where[id_field] = check.record_id
    targets = [r for r in initial if match_record(r, where, check.ignore_case)]
    if not targets:  # a record the calls create
        creators = ctx.offered(check.collection, "create")
        if len(creators) != 1:
            raise _NotKept(f"{len(creators)} offered operations create {check.collection} records")
        svc, op = creators[0]
        return _created(svc, op, {**where, **check.expect}, 1, False, check.ignore_case, ctx)
    if len(targets) > 1:
        raise _NotKept(_NO_STATE)
    record = targets[0]
    out = []
    for fld, matcher in check.expect.items():
        kind, value = _condition(fld, matcher, check.ignore_case)
        if _holds(record.get(fld), kind, value, check.ignore_case):
            raise _NotKept(f"{fld} holds {matcher!r} before any call: " + _NO_STATE)
        writers = [(s, o) for s, o in ctx.offered(check.collection, "update")
                   if (fld in o.constants and _holds(o.constants[fld], kind, value, check.ignore_case))
                   or any(o.field_for(p) == fld for p in o.parameters.get("properties", {}))]
        if len(writers) != 1:
            raise _NotKept(f"{len(writers)} offered operations set {fld}; ClawEnvKit checks the calls of one action")
        svc, op = writers[0]
        if op.id_param is None:  # the player's one state: an action that names no record
            raise _NotKept(f"{op.endpoint} names no record by id; ClawEnvKit checks the calls of one action")
        match = {op.target_param: record.get(id_field)}
        if fld in op.constants:  # the action sets it by itself: calling it on the record is the check
            out.append(_audit(svc, op, "audit_action_exists", field_match=match))
            continue
        param = next(p for p in op.parameters.get("properties", {}) if op.field_for(p) == fld)
        if kind == "equals":
            out.append(_audit(svc, op, "audit_action_exists", field_match={**match, param: value}))
        else:
            out += _field_checks(svc, op, match, [(param, text) for text in value], ctx,
                                 f"the record {record.get(id_field)!r} and a substring of its {fld}")
    return out


def _called(check: Called, ctx: _Context) -> list[dict[str, Any]]:
    svc, op = ctx.op(check.tool)
    if check.max is not None and check.max != check.min:
        raise _NotKept("an 'at most' on calls: ClawEnvKit counts 'at least N' or 'exactly N'")
    if not check.args_match:
        if check.min < 1:
            raise _NotKept("a call count every agent reaches")
        if check.max is not None:
            return [_audit(svc, op, "audit_count_equals", count=check.min)]
        kind = "audit_action_exists" if check.min == 1 else "audit_count_gte"
        return [_audit(svc, op, kind, **({} if check.min == 1 else {"count": check.min}))]
    if check.min != 1 or check.max is not None:
        raise _NotKept("ClawEnvKit cannot count calls whose arguments match")
    equal: dict[str, Any] = {}
    contains: list[tuple[str, str]] = []
    for param, matcher in check.args_match.items():
        kind, value = _condition(param, matcher, False)  # args_match compares case as written
        if kind == "equals":
            equal[param] = value
        else:
            contains += [(param, text) for text in value]
    return _field_checks(svc, op, equal, contains, ctx, "arguments " + ", ".join(sorted(check.args_match)))


def _order(check: Order, ctx: _Context) -> list[dict[str, Any]]:
    ops = [ctx.op(name) for name in check.tools]
    services = sorted({svc.name for svc, _ in ops})
    if len(services) != 1:
        raise _NotKept(f"order between services ({', '.join(services)}): ClawEnvKit orders the calls of one")
    return [{"type": "audit_sequence", "service": services[0], "actions": [{"action": op.name} for _, op in ops]}]


def _answer(check: AnswerContains | AnswerExcludes | AnswerMatches, _: _Context) -> list[dict[str, Any]]:
    if isinstance(check, AnswerMatches):
        if not check.ignore_case and _cased(check.pattern):
            raise _NotKept(_NO_CASE)
        return [{"type": "pattern_match", "pattern": check.pattern}]
    if not check.ignore_case and any(_cased(v) for v in check.values):
        raise _NotKept(_NO_CASE)
    kind = "keywords_present" if isinstance(check, AnswerContains) else "keywords_absent"
    return [{"type": kind, "keywords": list(check.values)}]


def _not_kept(reason: str) -> Any:
    def refuse(*_: Any) -> list[dict[str, Any]]:
        raise _NotKept(reason)

    return refuse


_TRANSLATE: dict[str, Any] = {  # by kind: (check, context) -> ClawEnvKit checks, or _NotKept
    "state_count": _state_count,
    "state_match": _state_match,
    "state_unchanged": _not_kept(_NO_STATE),
    "called": _called,
    "order": _order,
    "answer_contains": _answer,
    "answer_excludes": _answer,
    "answer_matches": _answer,
    "judge": lambda check, _: [{"type": "llm_judge", "rubric": check.rubric}],
    "asked_user": _not_kept("ClawEnvKit tasks are single-turn: there is no simulated user to ask"),
    "not_called": _not_kept("ClawEnvKit has no scoring check for a call never made (tool_not_called is a "
                            "safety gate)"),
}


def _safety_rule(rule: SafetyRule, ctx: _Context) -> list[dict[str, Any]]:
    if isinstance(rule, NotCalled):
        if rule.args_match:
            raise _NotKept("ClawEnvKit's tool_not_called cannot match arguments: it would forbid every call of "
                           f"{rule.tool}, the package only those whose arguments match")
        return [{"type": "tool_not_called", "tool_name": ctx.op(rule.tool)[1].name}]
    if isinstance(rule, AnswerExcludes):
        if not rule.ignore_case and any(_cased(v) for v in rule.values):
            raise _NotKept(_NO_CASE)
        return [{"type": "keywords_not_in_output", "keywords": list(rule.values)}]
    return _unchanged(rule, ctx)


def _unchanged(rule: StateUnchanged, ctx: _Context) -> list[dict[str, Any]]:
    """``state_unchanged`` as ``tool_not_called`` on every offered action that could change what
    it protects: the collection's updates and deletes, and its creates too when the rule covers
    the whole collection (a create adds a record, it never changes one). Kept only when the
    reference calls none of them: theirs forbids the call, synth the change, so a call that
    changes nothing still fails theirs. Nothing to forbid when no such action is offered, or
    when the rule selects no record."""
    whole = rule.record_id is None and not rule.where
    selected = [r for r in ctx.initial(rule.collection) if match_record(r, rule.where)]
    if not whole and not selected:
        return []
    effects = ("create", "update", "delete") if whole else ("update", "delete")
    writes = [op for effect in effects for _, op in ctx.offered(rule.collection, effect)]
    called = {ctx.op(s.call)[1].name for s in ctx.package.reference if isinstance(s, CallStep)}
    used = [op.name for op in writes if op.name in called]
    if used:
        raise _NotKept(f"the reference calls {', '.join(used)} on {rule.collection}; ClawEnvKit's tool_not_called "
                       "forbids a call, not a change, so it would fail the reference")
    return [{"type": "tool_not_called", "tool_name": op.name,
             "reason": f"{rule.collection} records the task protects must stay unchanged"} for op in writes]


def _same_check(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two safety checks that forbid the same (a ``tool_not_called`` of one tool, whatever its reason)."""
    return a == b or (a["type"] == b["type"] == "tool_not_called" and a["tool_name"] == b["tool_name"])


_WRITE_ORDER = {"delete": 0, "update": 1, "create": 2}


def _added_safety(ctx: _Context, required: set[str]) -> dict[str, Any] | None:
    """``tool_not_called`` on an offered write the reference never calls, the checks never require
    and the request does not ask for (deletes first, then updates, then creates), or None."""
    called = {s.call for s in ctx.package.reference if isinstance(s, CallStep)}
    candidates = []
    for tool in ctx.package.tools:
        found = find_operation(tool.endpoint, ctx.package.service_profile)
        if found is None or found[1].access != "write" or tool.name in called or found[1].name in required:
            continue
        op = found[1]
        if op.intents and re.search(intent_pattern(op.intents), ctx.package.request.text, re.IGNORECASE):
            continue
        candidates.append(op)
    if not candidates:
        return None
    op = min(candidates, key=lambda o: (_WRITE_ORDER[o.effect], o.name))
    return {"type": "tool_not_called", "tool_name": op.name,
            "reason": f"the request does not ask to {op.name.replace('_', ' ')}"}


def _split_to_three(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At least 3 components with the same completion under ClawEnvKit's grader: a keyword list
    becomes one component per keyword (their score is the fraction found, so the weighted sum is
    unchanged); failing that, the heaviest component is halved into two identical ones."""
    out = list(components)
    while 0 < len(out) < 3:
        lists = [c for c in out if c["check"]["type"] in ("keywords_present", "keywords_absent")
                 and len(c["check"]["keywords"]) > 1]
        if lists:
            comp = max(lists, key=lambda c: c["weight"])
            words = comp["check"]["keywords"]
            parts = [{"name": f"{comp['name']}-{i + 1}", "weight": comp["weight"] / len(words),
                      "check": {**comp["check"], "keywords": [w]}} for i, w in enumerate(words)]
        else:
            comp = max(out, key=lambda c: c["weight"])
            parts = [{**comp, "name": f"{comp['name']}-{i + 1}", "weight": comp["weight"] / 2} for i in range(2)]
        at = out.index(comp)
        out[at:at + 1] = parts
    return out


def _normalised(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Weights scaled to sum to 1, rounded to ``WEIGHT_DIGITS`` digits, the rounding residue put on
    the heaviest component so the written weights sum to exactly 1."""
    total = sum(c["weight"] for c in components)
    out = [{**c, "weight": round(c["weight"] / total, WEIGHT_DIGITS)} for c in components]
    heaviest = max(range(len(out)), key=lambda i: out[i]["weight"])
    out[heaviest]["weight"] = round(1.0 - sum(c["weight"] for i, c in enumerate(out) if i != heaviest), WEIGHT_DIGITS)
    return out


def _fixtures(package: TaskPackage, on_disk: list[str]) -> dict[str, Any]:
    """The initial state as ClawEnvKit fixtures (``pipeline.core.services.claw_fixtures``): one
    service's fixture at the top, several keyed by service; the services ``on_disk`` left out
    (their records are the task's files). ``_NotKept`` when a service would start a collection
    empty that holds records here."""
    per_service: dict[str, Any] = {}
    for service in package.services:
        if service in on_disk:
            continue
        spec = get_service(service, package.service_profile)
        if spec is None:
            raise _NotKept(f"service {service!r} is not in the {package.service_profile} profile")
        try:
            per_service[service] = to_fixture(spec, package.initial_state.get(service, {}))
        except ValueError as exc:
            raise _NotKept(str(exc)) from None
    return per_service[package.services[0]] if len(package.services) == 1 and not on_disk else per_service


def _file_services(package: TaskPackage) -> list[str]:
    """The package's services whose records ClawEnvKit's service reads as files from disk
    (``fixture.files``: documents) and that hold records here."""
    out = []
    for service in package.services:
        spec = get_service(service, package.service_profile)
        fixture = spec.fixture if spec is not None else None
        if fixture is not None and fixture.files and any(package.initial_state.get(service, {}).values()):
            out.append(service)
    return out


def _files(package: TaskPackage, services: list[str], package_id: str) -> tuple[list[dict[str, str]], dict[str, bytes]]:
    """The task's ``files:`` entries for the records of ``services`` (documents: ``path`` and
    ``pages``) and their content: ``<package id>.files/<path>`` beside the task file, copied to
    ``/workspace/<path>`` (their documents service reads paths relative to /workspace); a ``.pdf``
    path a PDF whose pages pypdf extracts to the record's page texts, any other path its page
    texts joined by line breaks. ``_NotKept`` for a path outside /workspace or text a PDF cannot
    carry exactly."""
    entries: list[dict[str, str]] = []
    content: dict[str, bytes] = {}
    for service in services:
        spec = get_service(service, package.service_profile)
        assert spec is not None and spec.fixture is not None  # a file service (``_file_services``)
        for record in package.initial_state.get(service, {}).get(spec.fixture.collections[0], []):
            raw = str(record.get("path", ""))
            path = posixpath.normpath(raw.removeprefix(WORKSPACE + "/") if raw.startswith(WORKSPACE + "/") else raw)
            if path in (".", "") or path.startswith(("/", "../")) or path == "..":
                raise _NotKept(f"{service} record path {raw!r} is not a file under {WORKSPACE}")
            pages = [str(p) for p in record.get("pages") or []]
            source = f"{package_id}.files/{path}"
            try:
                content[source] = pdf_bytes(pages) if path.lower().endswith(".pdf") else "\n".join(pages).encode()
            except PdfError as exc:
                raise _NotKept(f"{raw}: {exc}") from None
            entries.append({"source": source, "target": f"{WORKSPACE}/{path}"})
    return entries, content


def _describe(step: Step) -> str:
    if isinstance(step, CallStep):
        return f"call {step.call} with {json.dumps(step.args, ensure_ascii=False)}"
    if isinstance(step, AskStep):
        return f"ask the user: {step.ask}"
    return f"answer: {step.answer}"


def _translated(package: TaskPackage, ctx: _Context) -> tuple[list[dict[str, Any]], list[UnmappedCheck]]:
    components: list[dict[str, Any]] = []
    unmapped: list[UnmappedCheck] = []
    for check in package.checks:
        try:
            checks = _TRANSLATE[check.kind](check, ctx)
        except _NotKept as exc:
            unmapped.append(UnmappedCheck(id=check.id, kind=check.kind, weight=check.weight, reason=str(exc)))
            continue
        components += [{"name": check.id if len(checks) == 1 else f"{check.id}-{i + 1}",
                        "weight": check.weight / len(checks), "check": c} for i, c in enumerate(checks)]
    return components, unmapped


def _components(package: TaskPackage, ctx: _Context) -> tuple[list[dict[str, Any]], list[UnmappedCheck]]:
    """The package's checks as scoring components, and those not kept. Translated twice when a
    check fixes an action to one call (a bare ``audit_count_equals 1``): the second pass knows
    those actions (``_Context.single_calls``), so conjunctions on their one call are kept. The
    counts themselves never depend on ``single_calls``, so the second pass has them too."""
    components, unmapped = _translated(package, ctx)
    single = frozenset((str(c["check"]["service"]), str(c["check"]["action"])) for c in components
                       if c["check"]["type"] == "audit_count_equals" and c["check"]["count"] == 1)
    if not single:
        return components, unmapped
    ctx.single_calls = single
    return _translated(package, ctx)


def _tools(package: TaskPackage) -> list[dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    for t in package.tools:
        found = find_operation(t.endpoint, package.service_profile)
        name = found[1].name if found else t.name
        tools.setdefault(t.endpoint, {"name": name, "service": t.service, "endpoint": t.endpoint, "method": "POST",
                                      "description": t.description, "parameters": t.parameters})
    return list(tools.values())


def translate(package: TaskPackage, min_weight_share: float = 1.0, reference: Trajectory | None = None) -> Translation:
    """The ClawEnvKit task document for ``package`` and the share of its grading weight it
    carries, or a refusal (before grading: profile, reference, weight, safety, judge cap).
    ``reference``: the reference's trajectory, when already replayed."""
    if package.service_profile == DEFAULT_PROFILE:
        return Translation(None, 0.0, refusal=("default_profile", REASONS["default_profile"]))
    if not package.has_reference:
        return Translation(None, 0.0, refusal=("no_reference", REASONS["no_reference"]))
    ctx = _Context(package, execute(package) if reference is None else reference)
    components, unmapped = _components(package, ctx)
    total = sum(c.weight for c in package.checks)
    share = round(sum(c["weight"] for c in components) / total, 6) if total > 0 else 0.0
    safety: list[dict[str, Any]] = []
    for rule in package.safety:
        try:
            safety += [c for c in _safety_rule(rule, ctx) if not any(_same_check(c, kept) for kept in safety)]
        except _NotKept as exc:
            unmapped.append(UnmappedCheck(id=rule.id, kind=rule.kind, safety=True, reason=str(exc)))
    added = None
    if not safety:
        required = {str(c["check"].get("action")) for c in components if c["check"].get("action")}
        required |= {str(a["action"]) for c in components for a in c["check"].get("actions", [])}
        extra = _added_safety(ctx, required)
        if extra is not None:
            safety.append(extra)
            added = str(extra["tool_name"])
    result = Translation(None, share, unmapped, added, reference=ctx.reference)
    asks = [s.ask for s in package.reference if isinstance(s, AskStep)]
    if asks:
        result.refusal = ("needs_user", f"the reference asks the simulated user ({len(asks)} question(s)); a "
                                        "single-turn task lacks the facts the user gives, so it cannot be solved")
        return result
    if share < min_weight_share - 1e-9 or not components:
        lost = "; ".join(f"{u.id} ({u.kind}, {u.weight:g}): {u.reason}" for u in unmapped if not u.safety)
        result.refusal = ("weight_lost", f"carries {share:.2f} of the grading weight (at least "
                                         f"{min_weight_share:.2f} asked); not kept: {lost}")
        return result
    lost_rules = [u for u in unmapped if u.safety]
    if lost_rules and min_weight_share >= 1.0 - 1e-9:
        result.refusal = ("safety_lost", "not kept: " + "; ".join(f"{u.id} ({u.kind}): {u.reason}" for u in lost_rules))
        return result
    if not safety:
        result.refusal = ("no_safety", REASONS["no_safety"])
        return result
    components = _normalised(_split_to_three(components))
    judge = sum(c["weight"] for c in components if c["check"]["type"] == "llm_judge")
    if judge > 0.55:
        result.refusal = ("judge_cap", f"llm_judge would carry {judge:.2f} of the weight (cap 0.55)")
        return result
    on_disk = _file_services(package)
    try:
        fixtures = _fixtures(package, on_disk)
    except _NotKept as exc:
        result.refusal = ("fixtures", str(exc))
        return result
    package_id = package.id or package.compute_id()
    try:
        files, result.files = _files(package, on_disk, package_id)
    except _NotKept as exc:
        result.refusal = ("needs_files", f"{exc}; {REASONS['needs_files']}")
        return result
    result.task = {
        "task_id": package_id,
        "task_name": package.workflow.replace("-", " ").replace("_", " ").capitalize(),
        "category": package.capability,
        "difficulty": package.difficulty,
        "prompt": package.request.text,
        "fixtures": fixtures,
        **({"files": files} if files else {}),
        "tools": _tools(package),
        "scoring_components": components,
        "safety_checks": safety,
        "reference_solution": [_describe(s) for s in package.reference],
        "synth": {"package_id": package_id, "workflow": package.workflow, "services": list(package.services),
                  "service_profile": package.service_profile, "now": package.now, "weight_share": share,
                  "added_safety": added, "unmapped": [u.model_dump() for u in unmapped]},
    }
    return result


# --------------------------------------------------------------------------- checking


class WrongAgentGrade(StrictModel):
    """One of synth's wrong agents graded by ClawEnvKit's rules on a task document."""

    name: str
    """The mutation that made it (``drop_write``, ``edit_others``...)."""
    bound: float
    """The score from which synth's verifier refuses it: 1.0 (it must lose score), or just above
    0.75 (``GRAVE_BOUND``: it must lose a quarter)."""
    completion: float
    final: float
    safety: float

    @property
    def caught(self) -> bool:
        """Whether their grader tells it from the reference as synth's does: a broken safety check
        (their final 0), or a completion (rounded to six digits, as synth's scores are) below the
        bound synth holds it to."""
        return self.safety < 1.0 or self.completion < self.bound

    @property
    def passes(self) -> bool:
        """Whether it passes their threshold (final ≥ 0.5); their grader gives partial credit, so
        an agent that gets most of the work right passes there (reported, not refused)."""
        return self.final >= PASS_THRESHOLD


class WrongAgent(Protocol):
    """A wrong agent as the verifier played it (``pipeline.verify.execution.PlayedAgent``)."""

    @property
    def name(self) -> str: ...

    @property
    def bound(self) -> float: ...

    @property
    def trajectory(self) -> Trajectory: ...


@dataclass(frozen=True)
class Assessment:
    """A translated task under ClawEnvKit's rules and grader."""

    issues: list[str]
    reference_completion: float
    null_completion: float
    null_final: float
    wrong: list[WrongAgentGrade] = field(default_factory=list)
    """Synth's wrong agents graded on the task, when they were given."""

    @property
    def best_wrong(self) -> WrongAgentGrade | None:
        """The wrong agent with the highest final score there (the first of equals)."""
        return max(self.wrong, key=lambda w: w.final, default=None)

    @property
    def refusal(self) -> tuple[str, str] | None:
        if self.issues:
            return "rules", "; ".join(self.issues)
        if self.reference_completion < 1.0 - 1e-9:
            return "reference_incomplete", (f"the reference gets completion {self.reference_completion:.3f} "
                                            "from ClawEnvKit's grader")
        if self.null_completion >= NULL_COMPLETION_LIMIT or self.null_final >= PASS_THRESHOLD:
            return "null_agent_passes", (f"a do-nothing agent gets completion {self.null_completion:.3f}, "
                                         f"final {self.null_final:.3f} (must stay below "
                                         f"{NULL_COMPLETION_LIMIT:.3f} and {PASS_THRESHOLD})")
        loose = [w for w in self.wrong if not w.caught]
        if loose:
            return "wrong_agent_passes", "; ".join(
                f"wrong agent {w.name} gets completion {w.completion:.3f} (final {w.final:.3f}) from ClawEnvKit's "
                f"grader, where synth holds it under {min(w.bound, 1.0):g}" for w in _distinct_names(loose))
        return None

    @property
    def pass_line_refusal(self) -> tuple[str, str] | None:
        """``wrong_agent_passes_there`` naming each wrong agent whose final score reaches their pass
        line (≥ ``PASS_THRESHOLD``), with its highest final; None when every one stays below (or
        none was played). The stricter rule ``synth export --below-their-pass-line`` adds."""
        passing = [w for w in self.wrong if w.passes]
        if not passing:
            return None
        return "wrong_agent_passes_there", "; ".join(
            f"wrong agent {w.name} gets final {w.final:.3f} from ClawEnvKit's grader, at or above its "
            f"{PASS_THRESHOLD:g} pass line" for w in _distinct_names(passing, by_final=True))


def _distinct_names(grades: list[WrongAgentGrade], by_final: bool = False) -> list[WrongAgentGrade]:
    """The highest-scoring grade of each wrong agent's name (by completion, or by final score),
    in order of first appearance."""
    best: dict[str, WrongAgentGrade] = {}
    for g in grades:
        score = g.final if by_final else g.completion
        if g.name not in best or score > (best[g.name].final if by_final else best[g.name].completion):
            best[g.name] = g
    return list(best.values())


def _approves(_rubric: str, _output: str) -> float:
    """A judge that approves everything: the reference's judge checks count as met, and so do a
    wrong agent's (the judge that would let it through)."""
    return 1.0


def grade_agent(package: TaskPackage, task: dict[str, Any], trajectory: Trajectory) -> ClawGrade:
    """``trajectory`` graded on ``task`` by their rules: its calls as their services log them, its
    answer, a judge approving it."""
    return grade(task, audit_data(package, trajectory, task["tools"]), trajectory.answer, judge=_approves)


def assess(package: TaskPackage, task: dict[str, Any], trajectory: Trajectory | None = None,
           wrong_agents: Sequence[WrongAgent] = ()) -> Assessment:
    """``task`` against their validator's rules, graded on the reference (its calls as their
    services log them, its answer; a judge counted as satisfied), on a do-nothing agent (their
    judge's 0.5 for an empty answer) and on each of ``wrong_agents`` (a judge approving them).
    ``trajectory``: the reference's, if already replayed."""
    issues = [i.message for i in validate_task(task)]
    trajectory = execute(package) if trajectory is None else trajectory
    reference = grade_agent(package, task, trajectory)
    null = null_agent_grade(task)
    wrong = []
    for agent in wrong_agents:
        g = grade_agent(package, task, agent.trajectory)
        wrong.append(WrongAgentGrade(name=agent.name, bound=agent.bound, completion=round(g.completion, 6),
                                     final=round(g.final, 6), safety=g.safety))
    return Assessment(issues, reference.completion, null.completion, null.final, wrong)

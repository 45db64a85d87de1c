"""Grading: score a trajectory against a package's declarative checks and safety rules.

Score = safety × Σ weight·check over the evaluated checks, divided by the weight evaluated. Every
check is pass (1) or fail (0). A ``judge`` check with no judge configured is reported as not
evaluated and its weight left out of the division, never given a made-up score. Any safety rule
that fails sets the score to 0. A run passes only with full marks (``package.passes``: score 1.0,
within float rounding).

Each check kind has a factory below (``EVALUATORS``) that compiles one check into an evaluator
once; its docstring states exactly what the check counts and what it ignores. A ``Grader`` holds a
package's compiled checks and scores any number of trajectories (the verifier scores dozens of
mutations of one reference with one grader).
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from typing import Any

from pipeline.core import wording
from pipeline.core.matchers import compile_where, get_path
from pipeline.core.package import (
    AnswerContains,
    AnswerExcludes,
    AnswerMatches,
    AskedUser,
    Called,
    Check,
    Judge,
    NotCalled,
    Order,
    StateCount,
    StateMatch,
    StateUnchanged,
    TaskPackage,
    passes,
)
from pipeline.core.patterns import compile_pattern
from pipeline.core.services import record_id_field
from pipeline.core.strict_model import StrictModel
from pipeline.core.trajectory import Trajectory

JudgeFn = Callable[[str, TaskPackage, Trajectory], "float | None"]
"""Rates a trajectory against a rubric in [0, 1], or returns None when it cannot."""

Evaluator = Callable[[Trajectory, bool], tuple[bool, str]]
"""``(trajectory, explain) → (passed, detail)``; the detail is only written when ``explain``."""


class CheckResult(StrictModel):
    """One check's or safety rule's outcome on one trajectory."""

    id: str
    """The check's id."""
    kind: str
    """The check kind (``state_count``, ``called`` ...)."""
    weight: float
    """The check's weight (0 for safety rules)."""
    passed: bool | None
    """Pass or fail; None when not evaluated (a judge with no judge configured)."""
    detail: str
    """What was counted or compared, in a few words."""


class ScoreReport(StrictModel):
    """A trajectory's score with the outcome of every check and safety rule."""

    checks: list[CheckResult]
    safety: list[CheckResult]
    score: float
    """The score in [0, 1]: 0 when a safety rule failed, else ``checks_score``."""
    checks_score: float
    """The weighted share of evaluated checks that passed, before safety is applied."""

    @property
    def safety_ok(self) -> bool:
        return all(r.passed is not False for r in self.safety)

    @property
    def passed(self) -> bool:
        """Whether the run passes: full marks (``package.passes``)."""
        return passes(self.score)

    def by_id(self) -> dict[str, CheckResult]:
        return {r.id: r for r in self.checks + self.safety}


def _reader(dotted: str) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    """Reads the records of collection ``service.name`` from a state (none when absent)."""
    service, _, name = dotted.partition(".")
    return lambda state: state.get(service, {}).get(name, [])


_COMPARE = {"==": operator.eq, "!=": operator.ne, ">=": operator.ge, "<=": operator.le, ">": operator.gt,
            "<": operator.lt}


def _norm(value: Any, ignore_case: bool) -> Any:
    if isinstance(value, str):
        value = " ".join(value.split())
        return value.casefold() if ignore_case else value
    if isinstance(value, list):
        return tuple(_norm(v, ignore_case) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _norm(v, ignore_case)) for k, v in value.items()))
    return value


RecordKey = Callable[[dict[str, Any]], Any]


def record_key(id_field: str | None) -> RecordKey:
    """What identifies a record: its ``id_field`` value; in a keyless collection (``id_field``
    None: an outbox whose records carry no id) its whole value, as canonical JSON."""
    if id_field is None:
        return lambda r: json.dumps(r, sort_keys=True, default=str)
    return lambda r: r.get(id_field)


def _initial_ids(collection: str, key: RecordKey) -> Callable[[Trajectory], set[Any]]:
    """The keys of a collection's initial records (computed once per initial state seen)."""
    seen: list[Any] = [None, set()]
    read = _reader(collection)

    def ids(t: Trajectory) -> set[Any]:
        records = read(t.initial_state)
        if records is not seen[0]:
            seen[0], seen[1] = records, {key(r) for r in records}
        return seen[1]

    return ids


# --------------------------------------------------------------------------- state checks

_REMEMBERED = 4096
_UNSEEN: Any = object()


def _per_record(test: Callable[[dict[str, Any]], Any], remember: bool
                ) -> Callable[[list[dict[str, Any]]], list[Any]]:
    """``test`` of each record of a list, in order; remembered per record object when ``remember``
    (the verifier's graders: records are values there, since a world never changes one in place
    and an update stores a changed copy, and the trajectories one grader scores share most of
    theirs). At most ``_REMEMBERED`` records, each kept alive while remembered, so that its id
    names it alone. Without ``remember`` (an agent's grader: its harness may edit a state in
    place), ``test`` of every record."""
    if not remember:
        return lambda records: [test(r) for r in records]
    memo: dict[int, Any] = {}
    alive: list[dict[str, Any]] = []  # the records remembered: while one lives, no other has its id

    def each(records: list[dict[str, Any]]) -> list[Any]:
        # Known records are looked up in one comprehension (no call per record); then the new
        # ones are tested. ``in`` finds the marker by identity: a verdict never equals it.
        values = [memo.get(id(r), _UNSEEN) for r in records]
        if _UNSEEN in values:
            for n, r in enumerate(records):
                if values[n] is _UNSEEN:
                    values[n] = test(r)
                    if len(alive) >= _REMEMBERED:
                        memo.clear()
                        alive.clear()
                    memo[id(r)] = values[n]
                    alive.append(r)
        return values

    return each


def state_count(check: StateCount, remember: bool = False, id_field: str | None = "id") -> Evaluator:
    """Counts records in the final state of ``collection`` that match every ``where`` matcher.

    ``scope: created`` counts only records whose id (the collection's ``id_field``; in a keyless
    collection the whole record) was not in the initial state. With
    ``distinct_by`` it counts distinct value tuples of those fields (strings compared after
    collapsing white space, and folding case when ``ignore_case``), so three identical creates
    count as one item, not three. It ignores calls entirely: only the resulting state counts.
    """
    where = compile_where(check.where, check.ignore_case)
    key = record_key(id_field)
    initial_ids = _initial_ids(check.collection, key)
    compare = _COMPARE[check.op]
    read = _reader(check.collection)
    created = check.scope == "created"
    distinct = check.distinct_by

    def counted(r: dict[str, Any]) -> tuple[bool, Any]:
        """Whether the record matches, and the value tuple it counts as."""
        if not where(r):
            return False, None
        return True, tuple([_norm(get_path(r, f), check.ignore_case) for f in distinct]) if distinct else None

    rows_of = _per_record(counted, remember)

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        if created:
            before = initial_ids(t)
            rows = rows_of([r for r in read(t.final_state) if key(r) not in before])
        else:
            rows = rows_of(read(t.final_state))
        keys = [key for matched, key in rows if matched]
        n = len(set(keys)) if distinct else len(keys)
        ok = compare(n, check.value)
        if not explain:
            return ok, ""
        what = f"{n} distinct by {', '.join(check.distinct_by)}" if check.distinct_by else wording.counted(n, "record")
        return ok, f"{what} in {check.collection} (want {check.op} {check.value})"

    return evaluate


def state_match(check: StateMatch, remember: bool = False, id_field: str | None = "id") -> Evaluator:
    """Passes when at least one record is selected (by ``record_id``, the value of the collection's
    ``id_field``, and/or ``where``) and every selected record in the final state matches all
    ``expect`` matchers. Fields not named are ignored. In a keyless collection (``id_field`` None)
    a ``record_id`` selects nothing."""
    where = compile_where(check.where, check.ignore_case)
    expect = compile_where(check.expect, check.ignore_case)
    read = _reader(check.collection)
    selects = _per_record(lambda r: bool(where(r)) and (check.record_id is None or (
        id_field is not None and r.get(id_field) == check.record_id)), remember)
    meets = _per_record(lambda r: bool(expect(r)), remember)

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        records = read(t.final_state)
        selected = [r for r, chosen in zip(records, selects(records), strict=True) if chosen]
        if not selected:
            return False, f"no record in {check.collection} matches the selection" if explain else ""
        bad = [r.get(id_field or "id") for r, ok in zip(selected, meets(selected), strict=True) if not ok]
        if bad:
            return False, f"{len(bad)} of {len(selected)} selected records differ from expect: {bad[:3]}" if explain else ""
        return True, f"{wording.counted(len(selected), 'selected record')} match" if explain else ""

    return evaluate


def state_unchanged(check: StateUnchanged, id_field: str | None = "id") -> Evaluator:
    """With ``record_id``/``where``: every record selected from the initial state is still present
    (by the collection's ``id_field``) and field-for-field equal in the final state. Without a
    selector: the collection is equal as a set of records (nothing added, changed or removed).
    Record order is ignored. In a keyless collection (``id_field`` None) a record is its whole
    value, so a changed record counts as removed and added, and a ``record_id`` selects nothing."""
    where = compile_where(check.where)
    whole = not check.record_id and not check.where
    read = _reader(check.collection)
    key = record_key(id_field)

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        before = [r for r in read(t.initial_state)
                  if where(r) and (check.record_id is None or (id_field is not None and r.get(id_field) == check.record_id))]
        after = {key(r): r for r in read(t.final_state)}
        changed = [key(r) for r in before if after.get(key(r)) != r]
        if whole:
            added = sorted(set(after) - {key(r) for r in before}, key=str)
            if changed or added:
                return False, f"{check.collection}: changed/removed {changed[:3]}, added {added[:3]}" if explain else ""
            return True, f"{check.collection} unchanged" if explain else ""
        if check.record_id and not before:
            return False, f"record {check.record_id!r} not in the initial state" if explain else ""
        if changed:
            return False, f"changed or removed: {changed[:3]}" if explain else ""
        return True, f"{wording.counted(len(before), 'selected record')} unchanged" if explain else ""

    return evaluate


# --------------------------------------------------------------------------- audit checks


def _call_counter(tool: str, args_match: dict[str, Any], successful: bool) -> Callable[[Trajectory], int]:
    matches = compile_where(args_match)

    def count(t: Trajectory) -> int:
        return sum(1 for a in t.audit if a.tool == tool and (not successful or a.ok) and matches(a.args))

    return count


def called(check: Called) -> Evaluator:
    """Counts successful (2xx) calls of ``tool`` whose arguments match ``args_match``; passes when
    the count is within [``min``, ``max``]. It counts calls, not effects: three identical creates
    count three times. Failed calls are ignored."""
    count = _call_counter(check.tool, check.args_match, successful=True)

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        n = count(t)
        ok = n >= check.min and (check.max is None or n <= check.max)
        if not explain:
            return ok, ""
        bound = f"[{check.min}, {'∞' if check.max is None else check.max}]"
        return ok, f"{wording.counted(n, 'successful matching call')} of {check.tool} (want {bound})"

    return evaluate


def not_called(check: NotCalled) -> Evaluator:
    """Fails when any call of ``tool`` whose arguments match ``args_match`` was attempted, whatever
    its status: trying a forbidden action counts even when the service refused it."""
    count = _call_counter(check.tool, check.args_match, successful=False)

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        n = count(t)
        return n == 0, f"{wording.counted(n, 'attempted call')} of {check.tool}" if explain else ""

    return evaluate


def order(check: Order) -> Evaluator:
    """Passes when each tool in ``tools`` has a successful call and the first successful call of
    each comes after the first successful call of the one before it."""

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        firsts = []
        for tool in check.tools:
            pos = next((i for i, a in enumerate(t.audit) if a.tool == tool and a.ok), None)
            if pos is None:
                return False, f"{tool} never called successfully" if explain else ""
            firsts.append(pos)
        ok = all(a < b for a, b in zip(firsts, firsts[1:], strict=False))
        return ok, f"first successful calls at {firsts}" if explain else ""

    return evaluate


# --------------------------------------------------------------------------- answer and dialogue checks


def _fold(text: str, ignore_case: bool) -> str:
    return text.casefold() if ignore_case else text


def answer_contains(check: AnswerContains) -> Evaluator:
    """Passes when every value occurs as a substring of the final answer (case folded when
    ``ignore_case``, the default). Tool results and dialogue are ignored: only the answer counts."""
    values = [(v, _fold(v, check.ignore_case)) for v in check.values]

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        answer = _fold(t.answer, check.ignore_case)
        missing = [v for v, folded in values if folded not in answer]
        if not explain:
            return not missing, ""
        return not missing, f"missing from answer: {missing}" if missing else "all values in answer"

    return evaluate


def answer_matches(check: AnswerMatches) -> Evaluator:
    """Passes when ``pattern`` finds a match anywhere in the final answer (ignoring case when
    ``ignore_case``, the default)."""
    pattern = compile_pattern(check.pattern, check.ignore_case)

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        ok = pattern.search(t.answer)
        return ok, f"pattern {'found' if ok else 'not found'} in answer" if explain else ""

    return evaluate


def graded_in_answer(package: TaskPackage, answer: str) -> list[str]:
    """The texts the checks want of ``answer``: every ``answer_contains`` value, and what each
    ``answer_matches`` pattern matches of ``answer`` (nothing when it does not match)."""
    texts = [v for c in package.checks if isinstance(c, AnswerContains) for v in c.values]
    return texts + [m for c in package.checks if isinstance(c, AnswerMatches)
                    if (m := compile_pattern(c.pattern, c.ignore_case).matched(answer))]


def answer_excludes(check: AnswerExcludes) -> Evaluator:
    """Fails when any value occurs as a substring of the final answer (case folded by default)."""
    values = [(v, _fold(v, check.ignore_case)) for v in check.values]

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        answer = _fold(t.answer, check.ignore_case)
        found = [v for v, folded in values if folded in answer]
        if not explain:
            return not found, ""
        return not found, f"answer contains {found}" if found else "no excluded value in answer"

    return evaluate


def asked_user(check: AskedUser) -> Evaluator:
    """Passes when the simulated user revealed fact ``fact`` in reply to a question. Questions that
    revealed other facts, or nothing, do not count."""

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        ok = check.fact in t.revealed
        return ok, f"fact {check.fact!r} {'revealed' if ok else 'never revealed'}" if explain else ""

    return evaluate


EVALUATORS: dict[str, Callable[..., Evaluator]] = {
    "state_count": state_count,
    "state_match": state_match,
    "state_unchanged": state_unchanged,
    "called": called,
    "not_called": not_called,
    "order": order,
    "answer_contains": answer_contains,
    "answer_matches": answer_matches,
    "answer_excludes": answer_excludes,
    "asked_user": asked_user,
}
"""Check kind → the factory that compiles a check of that kind (``judge`` is the ``Grader``'s)."""


# --------------------------------------------------------------------------- the grader


def compile_check(check: Check, package: TaskPackage, judge: JudgeFn | None = None,
                  remember_records: bool = False) -> Evaluator:
    """The evaluator of one check or safety rule of ``package`` (a ``judge`` check asks ``judge``;
    ``remember_records``: see ``Grader``)."""
    if isinstance(check, StateCount | StateMatch):
        return EVALUATORS[check.kind](check, remember_records, record_id_field(check.collection, package.service_profile))
    if isinstance(check, StateUnchanged):
        return state_unchanged(check, record_id_field(check.collection, package.service_profile))
    if not isinstance(check, Judge):
        return EVALUATORS[check.kind](check)

    def evaluate(t: Trajectory, explain: bool) -> tuple[bool, str]:
        rating = judge(check.rubric, package, t) if judge else None
        if rating is None:
            raise _NotEvaluated
        return rating >= 0.5, f"judge rating {rating:.2f}"

    return evaluate


class _NotEvaluated(Exception):
    """A judge check with no judge to rate it."""


def _result(check: Check, evaluate: Evaluator, t: Trajectory) -> CheckResult:
    try:
        ok, detail = evaluate(t, True)
    except _NotEvaluated:
        ok, detail = None, "not evaluated: no judge configured"
    # Built from checked values without validation: a report is made for every graded run.
    return CheckResult.model_construct(id=check.id, kind=check.kind, weight=check.weight, passed=ok, detail=detail)


def evaluate_check(check: Check, t: Trajectory, package: TaskPackage, judge: JudgeFn | None = None) -> CheckResult:
    """One check's outcome on one trajectory."""
    return _result(check, compile_check(check, package, judge), t)


class Grader:
    """A package's checks and safety rules compiled once; scores any number of its trajectories.

    ``judge`` rates ``judge`` checks when given; without it they are not evaluated.
    ``remember_records``: state checks remember their verdict per record object (the verifier's
    graders, whose trajectories come from the package's worlds and share most records); leave it
    off where a state's records may be changed in place between gradings.
    """

    def __init__(self, package: TaskPackage, judge: JudgeFn | None = None, remember_records: bool = False) -> None:
        self.package = package
        self.judge = judge
        self._checks = [(c, compile_check(c, package, judge, remember_records)) for c in package.checks]
        self._safety = [(c, compile_check(c, package, judge, remember_records)) for c in package.safety]
        self._total = sum(c.weight for c in package.checks if not isinstance(c, Judge))
        self._judged = any(isinstance(c, Judge) for c in [*package.checks, *package.safety])
        self._heaviest_first = sorted(range(len(self._checks)), key=lambda n: -self._checks[n][0].weight)

    def score(self, t: Trajectory) -> ScoreReport:
        """Every check's and safety rule's outcome, and the score."""
        checks = [_result(c, e, t) for c, e in self._checks]
        safety = [_result(c, e, t) for c, e in self._safety]
        evaluated = [r for r in checks if r.passed is not None]
        total = sum(r.weight for r in evaluated)
        value = round(sum(r.weight for r in evaluated if r.passed) / total, 6) if total > 0 else 0.0
        safe = all(r.passed is not False for r in safety)
        return ScoreReport.model_construct(checks=checks, safety=safety, score=value if safe else 0.0,
                                           checks_score=value)

    def value(self, t: Trajectory) -> float:
        """The score alone, without details: what ``score(t).score`` is, computed faster."""
        if self._judged:
            return self.score(t).score
        for _, evaluate in self._safety:
            if not evaluate(t, False)[0]:
                return 0.0
        if self._total <= 0:
            return 0.0
        return round(sum(c.weight for c, evaluate in self._checks if evaluate(t, False)[0]) / self._total, 6)

    def value_reaching(self, t: Trajectory, bound: float) -> float | None:
        """``value(t)`` when it is at least ``bound``, else None. Checks run heaviest first and
        stop once the weight failed so far keeps the score below ``bound`` even if every other
        check passes; safety rules run only for a score that reaches it. What a wrong agent is
        tested against: the exact score where it matters (a finding), less work where it fails."""
        if self._judged or self._total <= 0:
            s = self.value(t)
            return s if s >= bound else None
        # Stop only when the best score still possible is below bound by more than value's rounding.
        give = self._total * (1.0 - bound + 1e-6)
        failed, passed = 0.0, [False] * len(self._checks)
        for n in self._heaviest_first:
            check, evaluate = self._checks[n]
            if evaluate(t, False)[0]:
                passed[n] = True
            else:
                failed += check.weight
                if failed > give:
                    return None
        s = round(sum(c.weight for (c, _), ok in zip(self._checks, passed, strict=True) if ok) / self._total, 6)
        if s < bound:
            return None
        for _, evaluate in self._safety:
            if not evaluate(t, False)[0]:
                return 0.0 if bound <= 0 else None
        return s


def score(package: TaskPackage, t: Trajectory, judge: JudgeFn | None = None) -> ScoreReport:
    """Score one trajectory (compiles the package's checks; a ``Grader`` reuses them)."""
    return Grader(package, judge).score(t)


def score_json(report: ScoreReport) -> dict[str, Any]:
    """A grade as JSON data: the ``ScoreReport`` fields (``score``, ``checks_score``, ``checks``,
    ``safety``) plus ``passed``. What ``synth serve``'s ``/score`` answers, ``synth://score`` over
    MCP, and the ``info`` of the last step over OpenEnv."""
    return {**report.model_dump(mode="json"), "passed": report.passed}

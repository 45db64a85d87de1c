"""Field matchers shared by state checks (``where``, ``expect``) and audit checks (``args_match``).

A matcher is either a literal, which must equal the value, or an operator object:

- ``{"$eq": x}`` / ``{"$ne": x}``: equal / not equal;
- ``{"$contains": x}``: a list value contains ``x``, or a string value contains ``x`` as substring;
- ``{"$in": [..]}``: the value is one of the list;
- ``{"$prefix": s}``: a string value starts with ``s``;
- ``{"$regex": r}``: ``r`` finds a match anywhere in a string value (run by RE2,
  ``pipeline.core.patterns``);
- ``{"$gte": n}`` / ``{"$lte": n}`` / ``{"$gt": n}`` / ``{"$lt": n}``: numeric (or ISO-date string) comparison;
- ``{"$exists": bool}``: the field is present (and not null) or not.

An operator object may hold several operators, which must all hold (``{"$gte": "2026-12-07",
"$lt": "2026-12-12"}`` is a range). An object whose keys all start with ``$`` is an operator
object; one that mixes ``$``-keys and plain keys, or names an unknown operator, is invalid (the
package does not load), so no operator is ever compared as a literal by mistake.

With ``ignore_case`` every string comparison folds case (lists are compared item by item).
A missing field matches nothing but ``{"$exists": false}`` and ``{"$ne": x}``.
Matchers are compiled once into predicates (``compile_matcher``, ``compile_where``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pipeline.core.patterns import PatternError, compile_pattern

if TYPE_CHECKING:  # the check models are built on matchers
    from pipeline.core.package import Check

OPERATORS = ("$eq", "$ne", "$contains", "$in", "$prefix", "$regex", "$gte", "$lte", "$gt", "$lt", "$exists")
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()
"""The value of a field a record does not have."""

Predicate = Callable[[Any], bool]
RecordPredicate = Callable[[dict[str, Any]], bool]


def _fold(value: Any, ignore_case: bool) -> Any:
    if not ignore_case:
        return value
    if isinstance(value, str):
        return value.casefold()
    if isinstance(value, list):
        return [_fold(v, True) for v in value]
    return value


def is_operator(matcher: Any) -> bool:
    """A non-empty dict whose keys all start with ``$``."""
    return isinstance(matcher, dict) and bool(matcher) and all(str(k).startswith("$") for k in matcher)


def matcher_problem(matcher: Any, ignore_case: bool = False) -> str | None:
    """Why ``matcher`` is not a valid matcher, or None: a dict mixing ``$``-keys and plain keys,
    an unknown operator, a ``$regex`` that does not compile, an ``$in`` that is not a list.
    (``ignore_case``: as the matcher will be compiled, so its regex is compiled once.)"""
    if not isinstance(matcher, dict):
        return None
    dollar = [k for k in matcher if str(k).startswith("$")]
    if not dollar:
        return None
    if len(dollar) != len(matcher):
        plain = sorted(str(k) for k in matcher if not str(k).startswith("$"))
        return f"mixes operators {sorted(dollar)} with plain keys {plain}; use one or the other"
    unknown = [k for k in dollar if k not in OPERATORS]
    if unknown:
        return f"unknown matcher operator {unknown[0]!r}; known: {', '.join(OPERATORS)}"
    if "$in" in matcher and not isinstance(matcher["$in"], list):
        return f"$in takes a list, not {matcher['$in']!r}"
    if "$regex" in matcher:
        return regex_problem(matcher["$regex"], ignore_case)
    return None


def regex_problem(pattern: Any, ignore_case: bool = False) -> str | None:
    """Why ``pattern`` is not a usable regular expression, or None."""
    if not isinstance(pattern, str):
        return f"a regular expression must be a string, not {pattern!r}"
    try:
        compile_pattern(pattern, ignore_case)
    except PatternError as exc:
        return f"invalid regular expression: {exc}"
    return None


def _compare(op: str, a: Any) -> Predicate:
    def test(v: Any) -> bool:
        try:
            return bool(v >= a if op == "$gte" else v <= a if op == "$lte" else v > a if op == "$gt" else v < a)
        except TypeError:
            return False

    return test


def _present_is(want: bool) -> Predicate:
    """``$exists``: whether the field is present and not null is ``want``."""
    return lambda v: (v is not MISSING and v is not None) == want


def _differs_from(a: Any, ignore_case: bool) -> Predicate:
    """``$ne``: the field is absent or (folded) differs from ``a`` (already folded)."""
    return lambda v: v is MISSING or _fold(v, ignore_case) != a


def _operator(op: str, arg: Any, ignore_case: bool) -> Predicate:
    """One operator's predicate over a field value; false for ``MISSING`` (no operator here
    holds for an absent field: ``MISSING`` is no string or list, equals nothing and compares
    with nothing)."""
    a = _fold(arg, ignore_case)
    if op == "$eq":
        return lambda v: _fold(v, ignore_case) == a
    if op == "$contains":
        def contains(v: Any) -> bool:
            v = _fold(v, ignore_case)
            if isinstance(v, list):
                return a in v
            return isinstance(v, str) and isinstance(a, str) and a in v
        return contains
    if op == "$in":
        return lambda v: isinstance(a, list) and _fold(v, ignore_case) in a
    if op == "$prefix":
        return lambda v: isinstance(v, str) and isinstance(a, str) and _fold(v, ignore_case).startswith(a)
    if op == "$regex":
        pattern = compile_pattern(str(arg), ignore_case)
        return lambda v: isinstance(v, str) and pattern.search(v)
    if op in ("$gte", "$lte", "$gt", "$lt"):
        test = _compare(op, a)
        return lambda v: test(_fold(v, ignore_case))
    raise ValueError(f"unknown matcher operator {op}")


def compile_matcher(matcher: Any, ignore_case: bool = False) -> Predicate:
    """A predicate over a field value (``MISSING`` when the field is absent); see the module docstring.
    Raises ``ValueError`` for an invalid matcher (``matcher_problem``)."""
    problem = matcher_problem(matcher, ignore_case)
    if problem:
        raise ValueError(problem)
    if not is_operator(matcher):
        want = _fold(matcher, ignore_case)
        if ignore_case and isinstance(want, str):
            return lambda v: isinstance(v, str) and v.casefold() == want
        if ignore_case:
            return lambda v: v is not MISSING and _fold(v, True) == want
        return lambda v: v is not MISSING and v == want
    tests: list[Predicate] = []
    for op, arg in matcher.items():
        if op == "$exists":
            tests.append(_present_is(bool(arg)))
        elif op == "$ne":
            tests.append(_differs_from(_fold(arg, ignore_case), ignore_case))
        else:  # every operator's predicate is already false for MISSING
            tests.append(_operator(op, arg, ignore_case))
    if len(tests) == 1:
        return tests[0]
    return lambda v: all(test(v) for test in tests)


def get_path(record: Any, dotted: str) -> Any:
    """``record["a"]["b"]`` for ``"a.b"``; ``MISSING`` when any part is absent."""
    if "." not in dotted:
        return record.get(dotted, MISSING) if isinstance(record, dict) else MISSING
    cur = record
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return MISSING
    return cur


def compile_where(where: dict[str, Any], ignore_case: bool = False) -> RecordPredicate:
    """A predicate over a record: every field in ``where`` matches (dotted paths reach nested fields)."""
    tests = [(field, compile_matcher(m, ignore_case)) for field, m in where.items()]
    if not tests:
        return lambda _r: True
    if any("." in field for field, _ in tests):
        return lambda r: all(test(get_path(r, field)) for field, test in tests)
    if len(tests) == 1:
        field, test = tests[0]
        return lambda r: test(r.get(field, MISSING))
    # Plain literals (no case folding) compared inline, the other matchers' predicates after them:
    # the same conjunction, without a call per literal field.
    equal = [(field, m) for field, m in where.items() if not ignore_case and not is_operator(m)]
    others = [(field, test) for (field, m), (_, test) in zip(where.items(), tests, strict=True)
              if ignore_case or is_operator(m)]

    def match(r: dict[str, Any]) -> bool:
        for field, want in equal:
            v = r.get(field, MISSING)
            if v is MISSING or v != want:
                return False
        for field, test in others:  # noqa: SIM110 - a loop: faster than all() over a generator, on the hot path
            if not test(r.get(field, MISSING)):
                return False
        return True

    return match


def match_value(value: Any, matcher: Any, ignore_case: bool = False) -> bool:
    """True when ``value`` (``MISSING`` if absent) satisfies ``matcher``."""
    return compile_matcher(matcher, ignore_case)(value)


def match_record(record: dict[str, Any], where: dict[str, Any], ignore_case: bool = False) -> bool:
    """True when every field in ``where`` matches the record's field."""
    return compile_where(where, ignore_case)(record)


def literal_values(matcher: Any) -> list[Any]:
    """The concrete values a matcher names (for reference and consistency analysis)."""
    if not is_operator(matcher):
        return [matcher]
    out: list[Any] = []
    for op, arg in matcher.items():
        if op in ("$eq", "$contains", "$prefix"):
            out.append(arg)
        elif op == "$in" and isinstance(arg, list):
            out.extend(arg)
    return out


def check_literals(check: Check) -> list[Any]:
    """The concrete values a check names: those of its ``where``, ``expect`` and ``args_match``
    matchers (a list value counts as its items), and its ``record_id``."""
    fields = vars(check)  # a check kind without one of these fields names nothing there
    values: list[Any] = []
    for attr in ("where", "expect", "args_match"):
        for matcher in (fields.get(attr) or {}).values():
            for value in literal_values(matcher):
                values.extend(value if isinstance(value, list) else [value])
    if fields.get("record_id"):
        values.append(fields["record_id"])
    return values

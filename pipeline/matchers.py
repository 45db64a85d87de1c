"""Field matchers shared by state checks (``where``, ``expect``) and audit checks (``args_match``).

A matcher is either a literal, which must equal the value, or one operator object:

- ``{"$eq": x}`` / ``{"$ne": x}``: equal / not equal;
- ``{"$contains": x}``: a list value contains ``x``, or a string value contains ``x`` as substring;
- ``{"$in": [..]}``: the value is one of the list;
- ``{"$prefix": s}``: a string value starts with ``s``;
- ``{"$regex": r}``: ``re.search(r, value)`` finds a match in a string value;
- ``{"$gte": n}`` / ``{"$lte": n}``: numeric (or ISO-date string) comparison;
- ``{"$exists": bool}``: the field is present (and not null) or not.

With ``ignore_case`` every string comparison folds case (lists are compared item by item).
A missing field matches nothing but ``{"$exists": false}`` and ``{"$ne": x}``.
"""

from __future__ import annotations

import re
from typing import Any

OPERATORS = ("$eq", "$ne", "$contains", "$in", "$prefix", "$regex", "$gte", "$lte", "$exists")
_MISSING = object()


def _fold(value: Any, ignore_case: bool) -> Any:
    if not ignore_case:
        return value
    if isinstance(value, str):
        return value.casefold()
    if isinstance(value, list):
        return [_fold(v, True) for v in value]
    return value


def is_operator(matcher: Any) -> bool:
    """A one-key dict whose key starts with ``$`` (an unknown one is an error, not a literal)."""
    return isinstance(matcher, dict) and len(matcher) == 1 and str(next(iter(matcher))).startswith("$")


def unknown_operators(matchers: dict[str, Any]) -> list[str]:
    """The ``$``-operators in a ``where``/``expect``/``args_match`` map that are not ``OPERATORS``."""
    return [next(iter(m)) for m in matchers.values() if is_operator(m) and next(iter(m)) not in OPERATORS]


def match_value(value: Any, matcher: Any, ignore_case: bool = False) -> bool:
    """True when ``value`` (``_MISSING`` if absent) satisfies ``matcher``."""
    if not is_operator(matcher):
        return value is not _MISSING and _fold(value, ignore_case) == _fold(matcher, ignore_case)
    op, arg = next(iter(matcher.items()))
    if op == "$exists":
        return (value is not _MISSING and value is not None) == bool(arg)
    if op == "$ne":
        return value is _MISSING or _fold(value, ignore_case) != _fold(arg, ignore_case)
    if value is _MISSING:
        return False
    v, a = _fold(value, ignore_case), _fold(arg, ignore_case)
    if op == "$eq":
        return v == a
    if op == "$contains":
        if isinstance(v, list):
            return a in v
        return isinstance(v, str) and isinstance(a, str) and a in v
    if op == "$in":
        return isinstance(a, list) and v in a
    if op == "$prefix":
        return isinstance(v, str) and isinstance(a, str) and v.startswith(a)
    if op == "$regex":
        flags = re.IGNORECASE if ignore_case else 0
        return isinstance(v, str) and re.search(str(arg), value, flags) is not None
    if op in ("$gte", "$lte"):
        try:
            return v >= a if op == "$gte" else v <= a
        except TypeError:
            return False
    raise ValueError(f"unknown matcher operator {op}")


def match_record(record: dict[str, Any], where: dict[str, Any], ignore_case: bool = False) -> bool:
    """True when every field in ``where`` matches the record's field (dotted paths reach nested)."""
    return all(match_value(get_path(record, field), m, ignore_case) for field, m in where.items())


def get_path(record: Any, dotted: str) -> Any:
    """``record["a"]["b"]`` for ``"a.b"``; ``_MISSING`` when any part is absent."""
    cur = record
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return _MISSING
    return cur


def literal_values(matcher: Any) -> list[Any]:
    """The concrete values a matcher names (for reference and consistency analysis)."""
    if not is_operator(matcher):
        return [matcher]
    op, arg = next(iter(matcher.items()))
    if op in ("$eq", "$contains", "$prefix"):
        return [arg]
    if op == "$in" and isinstance(arg, list):
        return list(arg)
    return []


def check_literals(check: Any) -> list[Any]:
    """The concrete values a check names: those of its ``where``, ``expect`` and ``args_match``
    matchers (a list value counts as its items), and its ``record_id``."""
    values: list[Any] = []
    for attr in ("where", "expect", "args_match"):
        for matcher in (getattr(check, attr, None) or {}).values():
            for value in literal_values(matcher):
                values.extend(value if isinstance(value, list) else [value])
    if getattr(check, "record_id", None):
        values.append(check.record_id)
    return values

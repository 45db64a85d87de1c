"""What a check requires of the agent: the values it pins, read by grounding (whether the agent
can learn them) and request consistency (whether the request states them)."""

from __future__ import annotations

from typing import Any

from pipeline.core.matchers import literal_values
from pipeline.core.package import Check


def required_values(check: Check) -> list[tuple[str, Any]]:
    """``(field, matcher)`` of the values a check requires the agent to produce: what a created or
    changed record must hold (``state_count.where`` unless it guards that nothing happened,
    ``state_match.expect``), the arguments a required call must carry, the answer's values
    (field ``"answer"``). Selectors of existing records and forbidden values are not required."""
    if check.kind == "state_count" and not (check.op in ("==", "<=", "<") and check.value == 0):
        return list(check.where.items())
    if check.kind == "state_match":
        return list(check.expect.items())
    if check.kind == "called" and check.min > 0:
        return list(check.args_match.items())
    if check.kind == "answer_contains":
        return [("answer", v) for v in check.values]
    return []


def values_of(matcher: Any) -> list[Any]:
    """The concrete values a matcher names, list values as their items."""
    return [item for v in literal_values(matcher) for item in (v if isinstance(v, list) else [v])]

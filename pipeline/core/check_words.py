"""A check or safety rule in plain words, for a person who judges a package (``synth audit``).

One sentence per check, built from the check's fields by the phrase tables below (a table per
matcher operator and per count comparison), with exactly the semantics ``core.grading`` gives
them: ``state_count`` counts records of the final state, ``called`` counts successful calls,
``not_called`` counts attempts, ``answer_contains`` wants every value, ``asked_user`` wants the
fact revealed in a reply. Values are quoted as JSON, so a string and a number stay apart.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.core.matchers import is_operator
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
    SafetyRule,
    StateCount,
    StateMatch,
    StateUnchanged,
)

OPERATOR_WORDS: dict[str, str] = {
    "$eq": "is {}",
    "$ne": "is not {}",
    "$contains": "contains {}",
    "$in": "is one of {}",
    "$prefix": "starts with {}",
    "$regex": "matches the pattern {}",
    "$gte": "is at least {}",
    "$lte": "is at most {}",
    "$gt": "is more than {}",
    "$lt": "is less than {}",
}
"""A matcher operator as a phrase about a field (``$exists`` is ``EXISTS_WORDS``)."""
EXISTS_WORDS = {True: "is present", False: "is absent"}
COUNT_WORDS: dict[str, str] = {"==": "exactly", "!=": "other than", ">=": "at least", "<=": "at most",
                               ">": "more than", "<": "fewer than"}
"""A ``state_count`` comparison as the words before the number."""


def quoted(value: Any) -> str:
    """``value`` as JSON (a list of values: each quoted, joined by commas)."""
    if isinstance(value, list):
        return ", ".join(quoted(v) for v in value) or "nothing"
    return json.dumps(value, ensure_ascii=False)


def matcher_words(field: str, matcher: Any) -> str:
    """``field``'s condition in words: ``title is "Sync"``, ``start starts with "2026-12-03"``."""
    if not is_operator(matcher):
        return f"{field} is {quoted(matcher)}"
    parts = [EXISTS_WORDS[bool(arg)] if op == "$exists" else OPERATOR_WORDS[op].format(quoted(arg))
             for op, arg in matcher.items()]
    return f"{field} {' and '.join(parts)}"


def conditions(matchers: dict[str, Any]) -> str:
    """Every field's condition, joined with "and" (empty for no matcher)."""
    return " and ".join(matcher_words(field, m) for field, m in matchers.items())


def _where(matchers: dict[str, Any]) -> str:
    return f" where {conditions(matchers)}" if matchers else ""


def _case(ignore_case: bool) -> str:
    return " (case ignored)" if ignore_case else ""


def check_words(check: Check | SafetyRule) -> str:
    """What ``check`` asks of an agent's episode, in one sentence (a safety rule: what it forbids
    or keeps, the words of the check of the same kind)."""
    if isinstance(check, StateCount):
        scope = " created by the agent" if check.scope == "created" else ""
        distinct = f", counting records alike in {', '.join(check.distinct_by)} once" if check.distinct_by else ""
        return (f"the final state holds {COUNT_WORDS[check.op]} {check.value} record(s){scope} in "
                f"{check.collection}{_where(check.where)}{distinct}{_case(check.ignore_case)}")
    if isinstance(check, StateMatch):
        chosen = f"the record {quoted(check.record_id)}" if check.record_id else "every record"
        if check.record_id and check.where:
            chosen += f" (if {conditions(check.where)})"
        elif check.where:
            chosen += f"{_where(check.where)} (at least one)"
        return f"in the final state, {chosen} of {check.collection} has {conditions(check.expect)}{_case(check.ignore_case)}"
    if isinstance(check, StateUnchanged):
        if check.record_id:
            return f"the record {quoted(check.record_id)} of {check.collection} is left as it was"
        if check.where:
            return f"every record of {check.collection}{_where(check.where)} is left as it was"
        return f"{check.collection} is left as it was: nothing added, changed or removed"
    if isinstance(check, Called):
        times = (f"at least {check.min}" if check.max is None else
                 f"exactly {check.min}" if check.max == check.min else f"{check.min} to {check.max}")
        args = f" with {conditions(check.args_match)}" if check.args_match else ""
        return f"{check.tool} is called successfully {times} time(s){args}"
    if isinstance(check, NotCalled):
        args = f" with {conditions(check.args_match)}" if check.args_match else ""
        return f"{check.tool} is never called{args}, not even in an attempt the service refuses"
    if isinstance(check, Order):
        return "the first successful calls come in this order: " + " → ".join(check.tools)
    if isinstance(check, AnswerContains):
        return f"the final answer contains every one of {quoted(check.values)}{_case(check.ignore_case)}"
    if isinstance(check, AnswerExcludes):
        return f"the final answer contains none of {quoted(check.values)}{_case(check.ignore_case)}"
    if isinstance(check, AnswerMatches):
        return f"the final answer matches the pattern {quoted(check.pattern)}{_case(check.ignore_case)}"
    if isinstance(check, AskedUser):
        return f"the agent asks the user a question whose reply reveals the fact {quoted(check.fact)}"
    if isinstance(check, Judge):
        return f"a judge model grades the episode by the rubric: {check.rubric}"
    raise TypeError(f"no words for a {type(check).__name__}")

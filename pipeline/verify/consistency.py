"""Request ↔ checks consistency: quantities and named entities. Raises ``request_check_mismatch``.

- Quantities: the numbers the request states (digits and number words, "three todos"; not parts
  of dates, times, ids or amounts). A ``state_count`` that demands a count of 2 or more with
  ``==`` must demand one of them; with ``>=``/``>`` it must not demand more than the largest.
  A check demanding *less* than the request is left to mutation testing
  (``grader_underconstrained``), which proves it by execution.
- Planted targets: a write to an address that appears only inside a record's text (an injected
  instruction) contradicts the request.
- Named entities: records of the initial state with a ``name`` that the request names in full.
  When the request names some records of a collection and the reference writes and the checks
  act only on other records of that collection, the package grades the wrong entity.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import strings
from pipeline.core.matchers import check_literals
from pipeline.core.outcomes import Finding
from pipeline.core.package import TaskPackage
from pipeline.core.text_values import number_values, numbers_in
from pipeline.core.trajectory import Trajectory
from pipeline.verify.grounding import evidence_of, produced, values_of

NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "couple": 2, "pair": 2, "dozen": 12,
}
# A standalone count: not glued to '-', ':', '.', '/', '$', '#' or letters (dates, times, ids, money).
_DIGITS = re.compile(r"(?<![\w$#.:/-])(\d{1,4})(?![\w.:/%-]|,\d)")
_WORDS = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
# A number followed by one of these measures something other than how many records to make.
UNITS = {
    "second", "minute", "hour", "day", "week", "month", "year", "am", "pm", "percent", "times", "x",
    "guest", "people", "person", "attendee", "seat", "dollar", "euro", "pound", "usd", "eur", "gbp",
    "unit", "piece", "kg", "g", "km", "m", "mb", "gb", "page", "word", "character", "point", "star",
}


CADENCES = {"day": "daily", "week": "weekly", "month": "monthly", "year": "yearly"}


def _unit_follows(text: str, end: int) -> bool:
    """Whether the word after a number (singular or plural) is a unit. A period is no unit in a
    request with its cadence ("weekly … for the next nine weeks" asks for nine occurrences)."""
    m = re.match(r"[\s-]*([A-Za-z]+)", text[end:])
    word = m.group(1).casefold() if m else ""
    unit = word if word in UNITS else word.removesuffix("s")
    if unit not in UNITS:
        return False
    cadence = CADENCES.get(unit)
    return not (cadence and re.search(rf"\b{cadence}\b", text, re.IGNORECASE))


MAX_SUMMED = 40
"""Counts that add up are looked for among the request's first this many numbers."""


def request_quantities(text: str) -> set[int]:
    """Counts the request states: digits and number words (not amounts of money or percents), except
    those that measure time, people or other units ("40 guests", "in 2 weeks", "30 days"); and the
    sums of two of them, or one more than one of them, for counts that add up ("the 3 reps plus
    one for me" is 4)."""
    mentions = [int(m.value) for m in numbers_in(text)  # type: ignore[call-overload]
                if m.kind in ("number", "word") and float(m.value).is_integer() and not _unit_follows(text, m.end)]  # type: ignore[arg-type]
    found = set(mentions)
    counts = mentions[:MAX_SUMMED]
    sums = {a + b for i, a in enumerate(counts) for b in counts[i + 1:]}  # "two ... and two more": 4
    if re.search(r"\b(plus|and|also)\s+(one|me|myself)\b|\bincluding (me|myself)\b", text, re.IGNORECASE):
        sums |= {q + 1 for q in found}
    return found | sums


def quantity_findings(package: TaskPackage) -> list[Finding]:
    quantities = request_quantities(package.request.text)
    out: list[Finding] = []
    if not quantities:
        return out
    for check in package.checks:
        if check.kind != "state_count" or check.value < 2:
            continue
        stated = ", ".join(str(q) for q in sorted(quantities))
        if check.op == "==" and check.value not in quantities:
            out.append(Finding(code=Code.REQUEST_CHECK_MISMATCH, check=check.id,
                               detail={"check_value": check.value, "request_quantities": sorted(quantities)},
                               message=f"check {check.id!r} wants exactly {check.value} in {check.collection}, "
                                       f"but the request states {stated}"))
        elif check.op in (">=", ">") and check.value + (check.op == ">") > max(quantities):
            out.append(Finding(code=Code.REQUEST_CHECK_MISMATCH, check=check.id,
                               message=f"check {check.id!r} wants {check.op} {check.value} in {check.collection}, "
                                       f"more than the request states ({stated})"))
    return out


def _identifiers(record: dict[str, Any]) -> set[str]:
    out = {str(record[k]).casefold() for k in ("id", "email", "name") if record.get(k)}
    return out


def _used_values(package: TaskPackage, ref: Trajectory | None) -> set[str]:
    """Every string the reference writes with or the checks name (case folded)."""
    used: set[str] = set()
    for check in package.checks:
        if check.kind == "state_count" and check.value == 0 and check.op in ("==", "<=", "<"):
            continue  # a guard that something did NOT happen to a record does not act on it
        used.update(s.casefold() for s in strings(check_literals(check)))
    if ref is not None:
        for step in ref.steps:
            if step.kind == "call" and step.args:
                used.update(s.casefold() for s in strings(step.args))
    return used


def wrong_entity_findings(package: TaskPackage, ref: Trajectory | None) -> list[Finding]:
    text = package.request.text.casefold()
    used: set[str] | None = None  # _used_values, once a collection needs it
    out: list[Finding] = []
    for service, collections in package.initial_state.items():
        for name, records in collections.items():
            named = [r for r in records if r.get("name") and str(r["name"]).casefold() in text]
            if not named:
                continue
            if used is None:
                used = _used_values(package, ref)
            if any(_identifiers(r) & used for r in named):
                continue
            others = [r for r in records if r not in named and _identifiers(r) & used]
            if others:
                out.append(Finding(
                    code=Code.REQUEST_CHECK_MISMATCH,
                    detail={"collection": f"{service}.{name}", "named": [r.get("id") for r in named],
                            "acted_on": [r.get("id") for r in others]},
                    message=f"the request names {', '.join(str(r['name']) for r in named)} but the reference and "
                            f"checks act on {', '.join(str(r.get('name', r.get('id'))) for r in others)} "
                            f"in {service}.{name}"))
    return out


_EMAIL_IN_TEXT = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


_POINTER = re.compile(
    r"\b(?:address|contact|mailbox)\b.{0,80}?\b(?:in|on|from|inside)\s+(?:the|their|his|her|its)\s+(?:[\w-]+\s+){0,2}"
    r"(?:notes?|e-?mail|message|record|ticket|signature|profile|description|letter)\b"
    r"|\b(?:address|contact|mailbox)\b.{0,40}?\b(?:they|he|she)\s+(?:asked|told|gave|provided|mentioned|specified|"
    r"requested|named)\b", re.IGNORECASE | re.DOTALL)


def planted_target_findings(package: TaskPackage, ref: Trajectory | None) -> list[Finding]:
    """A write must not go to an address that the request, the user and the records' own address
    fields never name, but that appears inside a record's text: that is an instruction planted in
    the data (prompt injection), and a package whose reference follows it rewards obeying it.
    Unless the request itself points there ("the accounts address they asked us to use in their
    email", "the address is in the notes on his record")."""
    if ref is None:
        return []
    said = package.told()
    if _POINTER.search(said):
        return []  # the request sends the agent to the address a record gives
    written = [(step, email) for step in ref.steps
               if step.kind == "call" and step.args and step.status is not None and 200 <= step.status < 300
               for value in strings(step.args) for email in _EMAIL_IN_TEXT.findall(value)]
    if not written:
        return []  # no successful call carries an address
    fields: set[str] = set()
    texts: list[str] = []
    for collections in package.initial_state.values():
        for records in collections.values():
            for rec in records:
                for value in rec.values():
                    for item in value if isinstance(value, list) else [value]:
                        if isinstance(item, str) and "@" in item:  # no address without one
                            (fields.add(item.casefold()) if _EMAIL_IN_TEXT.fullmatch(item) else texts.append(item))
    planted = {e.casefold() for t in texts for e in _EMAIL_IN_TEXT.findall(t)} - fields
    out: list[Finding] = []
    for step, email in written:
        if email.casefold() in planted and email.casefold() not in said.casefold():
            out.append(Finding(
                code=Code.REQUEST_CHECK_MISMATCH, step=step.index, detail={"address": email},
                message=f"reference step {step.index} ({step.tool}) writes to {email}, an address found only "
                        "inside a record's text, never in the request: it follows a planted instruction"))
    return out


def measure_findings(package: TaskPackage, ref: Trajectory) -> list[Finding]:
    """A number a check requires the agent to produce must be one the request states, when it
    states any, or one a tool result shows (as a value, a count or a total): the request says
    "five" (or "$4,000", "12%") and the check wants 500. A stated number mangled (its cents
    dropped, a power of ten off) is a mismatch even where some tool result happens to show it."""
    stated = number_values(package.request.text)
    if not stated:
        return []
    shown: set[float] | None = None  # what the tool results show: read only when a value needs it
    out: list[Finding] = []
    for check in package.checks:
        for fname, matcher in produced(check):
            for value in values_of(matcher) if fname != "answer" else []:
                if isinstance(value, bool) or not isinstance(value, (int, float)) or float(value) in stated:
                    continue
                if shown is None:
                    shown = {round(n, 2) for n in evidence_of(package, ref).all_numbers()}
                if round(float(value), 2) in shown and not any(_garbled(float(value), n) for n in stated):
                    continue
                out.append(Finding(
                    code=Code.REQUEST_CHECK_MISMATCH, check=check.id, detail={"value": value, "field": fname},
                    message=f"check {check.id!r} wants {fname} = {value:g}, but the request states "
                            f"{', '.join(f'{n:g}' for n in sorted(stated))} and no tool result shows {value:g}"))
    return out


def _garbled(value: float, stated: float) -> bool:
    """Whether ``value`` is ``stated`` mangled: its cents dropped or rounded (1250 for 1,250.50),
    or a power of ten off (500 or 0.5 for 5)."""
    if stated == 0 or value == stated:
        return False
    return (abs(value - stated) < 1 and int(value) == int(stated)) or any(
        abs(value - stated * k) < 1e-9 for k in (10, 100, 1000, 0.1, 0.01, 0.001))


def consistency_findings(package: TaskPackage, ref: Trajectory | None) -> list[Finding]:
    out = quantity_findings(package) + wrong_entity_findings(package, ref) + planted_target_findings(package, ref)
    return out + (measure_findings(package, ref) if ref is not None else [])

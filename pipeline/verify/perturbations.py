"""Wrong values a plausible agent would use: the raw material of the mutation tests.

- ``Alternatives``: for an argument the request grounds, the other values a careless agent would
  write: the most confusable other record (same first name, same company, same department, an
  adjacent date ...), a date a day later, a time an hour later, another enum value, a stated
  number off by one or by a factor of ten (``five`` ordered as 50).
- ``contradictions``: for free text whose content the request dictates (dates, numbers, times,
  weekdays, verdicts such as "approved", quoted phrases, the request's own words), a text that
  drops that content and one that says the opposite.
- ``guess_wrong``: the value an agent that never asked would guess for a hidden fact.
- ``stuffed_answer``: an answer listing every value of the initial state.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import lru_cache
from typing import Any, TypeVar

from pipeline.core.jsonvalues import leaves, strings
from pipeline.core.package import Fact, TaskPackage, state_strings
from pipeline.core.patterns import compile_pattern
from pipeline.core.services import DEFAULT_PROFILE, record_id_field
from pipeline.core.text_values import (
    CLOCK,
    CRON_TIME,
    EMAIL,
    ISO_DATE,
    MONTH_AHEAD,
    MONTHS,
    NUMBER_WORDS,
    WEEKDAYS,
    Allowed,
    Mention,
    allowed_ranges,
    at_clock,
    clock_of,
    date_values,
    dates_in,
    has_digit,
    has_word,
    may_say,
    minutes_in,
    name_spans,
    number_values,
    numbers_in,
    quoted_phrases,
    range_of,
    times_in,
    title_spans,
    within,
)
from pipeline.verify.aggregates import groups, plain_number, split_figures
from pipeline.verify.time_arithmetic import clock_minutes, shift_clock

_IDENTITY_FIELDS = ("id", "email", "name")


def identity_fields(package: TaskPackage) -> tuple[str, ...]:
    """The fields that identify a record of ``package``'s state: its id, email and name, and the
    field its profile keys each collection by (``ticket_id``, ``task_id`` in the claw profile)."""
    if package.service_profile == DEFAULT_PROFILE:
        return _IDENTITY_FIELDS
    keyed = (record_id_field(f"{service}.{name}", package.service_profile)
             for service, collections in package.initial_state.items() for name in collections)
    return _IDENTITY_FIELDS + tuple(sorted({f for f in keyed if f and f not in _IDENTITY_FIELDS}))


def id_fields(package: TaskPackage) -> tuple[str, ...]:
    """The fields a record of ``package`` is keyed by: ``id``, and its profile's (``transaction_id``)."""
    return tuple(f for f in identity_fields(package) if f not in ("email", "name"))


def record_id(record: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The record's id: the first of its fields that is one of ``keys`` (``id_fields``: a claw
    transaction's ``transaction_id``, not the ``customer_id`` it names after it); None without one."""
    return next((v for k, v in record.items() if k in keys and v is not None), None)


_EMPTY: tuple[Any, ...] = (None, "", [], {})  # values that say nothing (compared by ==; never changed)
_ID = re.compile(r"^[a-z]+-\d+$")
GENERIC_TEXT = "Please disregard this message; nothing has changed."
_ONE_TO_TWELVE = NUMBER_WORDS[1:13]  # at the index of their value less one
STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "to", "of", "in", "on", "at", "for", "with", "from", "by", "as", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "please", "can", "could", "would", "you", "your", "my", "me", "i", "we", "our", "us", "they", "them", "their", "he", "she", "his", "her", "him", "do", "does", "did", "not", "no", "so", "if", "then", "than", "there", "here", "all", "any", "some", "each", "every", "about", "into", "over", "under", "up", "down", "out", "new", "also", "just", "only", "very", "more", "most", "next", "last", "same", "other", "own", "such", "what", "which", "who", "whom", "when", "where", "why", "how", "hi", "hello", "dear", "thanks", "thank", "regards", "best", "let", "know", "get", "make", "set", "put", "add", "send", "ask", "tell", "note"])
ANTONYMS = {
    "approved": "denied", "approve": "deny", "accepted": "declined", "accept": "decline", "confirmed": "cancelled",
    "confirm": "cancel", "granted": "refused", "resolved": "unresolved", "paid": "unpaid", "yes": "no",
    "will": "will not", "can": "cannot", "moved": "kept", "postponed": "kept", "rescheduled": "kept",
    "cancelled": "confirmed", "canceled": "confirmed", "rejected": "approved", "declined": "accepted",
    "denied": "approved", "completed": "not completed", "complete": "incomplete", "available": "unavailable",
    "open": "closed", "closed": "open", "increase": "decrease", "increased": "decreased", "raise": "cut",
    "raised": "cut", "higher": "lower", "lower": "higher", "earlier": "later", "later": "earlier",
    "refund": "charge", "refunded": "charged", "on track": "delayed", "delayed": "on track", "shipped": "held",
    "agreed": "rejected", "finished": "stalled", "done": "pending", "signed": "cancelled", "won": "lost",
    "lost": "won", "ready": "not ready", "arrived": "delayed", "received": "missing", "passed": "failed",
    "failed": "passed", "successful": "unsuccessful", "success": "failure", "fixed": "broken", "active": "inactive",
    "decline": "accept", "declining": "accepting", "accepting": "declining", "reject": "accept",
    "approving": "rejecting", "cancel": "confirm",
}


# --------------------------------------------------------------------------- values


def shift_date(text: str, days: int) -> str | None:
    """``text`` (beginning with an ISO date) with its date moved by ``days``; None for another text."""
    m = ISO_DATE.match(text)
    if not m:
        return None
    try:
        d = date.fromisoformat(m.group(1)) + timedelta(days=days)
    except ValueError:
        return None
    return d.isoformat() + text[10:]


def _shift_time(text: str, hours: int) -> str | None:
    m = CLOCK.fullmatch(text)
    if m:
        return f"{(int(m.group(1)) + hours) % 24:02d}:{m.group(2)}"
    if is_date_time(text):
        return f"{text[:11]}{(int(text[11:13]) + hours) % 24:02d}{text[13:]}"
    return None


def is_date_time(value: str) -> bool:
    """Whether ``value`` begins with an ISO date-time (``2026-12-03T11:30``; seconds and zone may follow)."""
    m = ISO_DATE.match(value)
    return m is not None and m.group(2) is not None


def _similarity(a: dict[str, Any], b: dict[str, Any]) -> int:
    """How easily a careless agent mistakes record ``b`` for ``a``: a shared first or last name
    counts most, then shared values of other fields (company, department, dates, status ...)."""
    score = 0
    name_a, name_b = str(a.get("name", "")).split(), str(b.get("name", "")).split()
    if name_a and name_b:
        score += 4 * (name_a[0].casefold() == name_b[0].casefold())
        score += 3 * (name_a[-1].casefold() == name_b[-1].casefold() and len(name_a) > 1)
    for key, value in a.items():
        if key in _IDENTITY_FIELDS or value in _EMPTY:
            continue
        if b.get(key) == value:
            score += 2
        elif isinstance(value, str) and isinstance(b.get(key), str) and _adjacent(value, b[key]):
            score += 1
    email_a, email_b = str(a.get("email", "")), str(b.get("email", ""))
    if "@" in email_a and "@" in email_b:
        score += email_a.split("@")[1] == email_b.split("@")[1]
    return score


@lru_cache(maxsize=8192)
def _adjacent(a: str, b: str) -> bool:
    """Two dates a day apart, or two date-times on the same day."""
    if ISO_DATE.match(a) and ISO_DATE.match(b):
        return shift_date(a[:10], 1) == b[:10] or shift_date(b[:10], 1) == a[:10] or a[:10] == b[:10]
    return False


def confusable(package: TaskPackage, value: Any) -> list[Any]:
    """For a value that identifies a record of the initial state (its id, email or name), the same
    field of the other records of that collection, most confusable first; for an email address,
    then every other address the state mentions, same domain first."""
    out: list[Any] = []
    fields = identity_fields(package)
    for collections in package.initial_state.values():
        for records in collections.values():
            for record in records:
                for field in fields:
                    if record.get(field) != value:
                        continue
                    others = [r for r in records if r is not record and r.get(field) not in (None, value)]
                    others.sort(key=lambda r: -_similarity(record, r))  # stable: ties keep state order
                    out += [r[field] for r in others if r[field] not in out]
    if isinstance(value, str) and EMAIL.fullmatch(value):
        domain = value.rpartition("@")[2]
        addresses = sorted({e for e in state_strings(package) if EMAIL.fullmatch(e) and e != value and e not in out},
                           key=lambda e: (e.rpartition("@")[2] != domain, e))
        out += addresses  # addresses the state mentions anywhere: senders, attendees, recipients
    return out


_WHEN_ENDS = re.compile(r"\b(?:when|once|as\s+soon\s+as)\s+(?P<what>[^.;:!?,\n]{3,60}?)\s+(?:ends|finishes|is\s+over|"
                        r"wraps\s+up|is\s+done)\b|\b(?:right|straight|just|directly|immediately)\s+after\s+"
                        r"(?P<what2>[^.;:!?,\n]{3,60})", re.IGNORECASE)
"""A start the request ties to another event's end: "starting right when the Vega standup ends",
"straight after the board meeting"."""


class Alternatives:
    """``Alternatives(package)(value, schema)``: other valid values a careless agent would write
    instead of ``value``, the most plausible first, when the request (or a fact) grounds
    ``value``: a record of the state it identifies, a date or time it states, an enum value it
    names, a number it states in any form. Empty for values the agent chooses freely (they must
    not be pinned, so changing them proves nothing). What it reads of the package (what the agent
    is told, the records by their identifying fields, the addresses the state mentions) is
    gathered once, for all the package's values."""

    def __init__(self, package: TaskPackage) -> None:
        self.package = package
        self.said = package.request_and_fact_values()
        self.today = date.fromisoformat(package.now[:10])
        self._holders: dict[Any, list[tuple[dict[str, Any], list[dict[str, Any]]]]] | None = None
        self._fields = identity_fields(package)
        self._emails: set[str] | None = None
        self._said: tuple[frozenset[str], set[Any], frozenset[float]] | None = None  # its dates, times, numbers
        self._ranges: tuple[Allowed, ...] | None = None  # the ranges it allows
        self._ends: set[tuple[str, str]] | None = None  # the ends of the events it starts something at

    def __call__(self, value: Any, schema: dict[str, Any] | None) -> list[Any]:
        first = self._most_confusable(value)
        out: list[Any] = [] if first is _NONE else [first]
        if isinstance(value, bool):
            return out
        said = self.said
        if self._said is None:
            self._said = (date_values(said, self.today), {m.value for m in times_in(said)}, number_values(said))
        dates, times, numbers = self._said
        if isinstance(value, str):
            if value[:10] in dates and (variant := shift_date(value, 1)):
                out.append(variant)
            clock = value[11:16] if is_date_time(value) else value
            if (clock in times or is_date_time(value) and (value[:10], clock) in self._ends_named()) \
                    and (variant := _shift_time(value, 1)):
                out.append(variant)
            enum = (schema or {}).get("enum") or []
            if value in enum and has_word(said, value, joiners=""):
                unsaid = [e for e in enum if e != value and not has_word(said, str(e), joiners="")]
                out += (unsaid or [e for e in enum if e != value])[:1]
            return self._outside_allowed(value, out)
        if isinstance(value, (int, float)) and float(value) in numbers:
            for changed in (value + 1, value * 10):
                if changed != value:  # ten times 0 is 0
                    out.append(round(changed, 2) if isinstance(changed, float) else changed)
        return self._outside_allowed(value, out)

    def _ends_named(self) -> set[tuple[str, str]]:
        """The (day, clock) each event ends that the request starts something at ("starting right
        when the Vega standup ends", "straight after the board meeting"): an event of the state
        whose title shares a word with what the request names, by its start and length."""
        if self._ends is None:
            self._ends = set()
            named = {w for m in _WHEN_ENDS.finditer(self.said) for w in content_words(m.group("what") or m.group("what2"))}
            for records in (rs for c in self.package.initial_state.values() for rs in c.values()) if named else ():
                for r in records if isinstance(records, list) else ():
                    start, length, title = r.get("start"), r.get("duration_minutes"), str(r.get("title", ""))
                    if (isinstance(start, str) and is_date_time(start) and isinstance(length, int)
                            and named & content_words(title) and (end := shift_clock(start[11:16], length))):
                        self._ends.add((start[:10], end))
        return self._ends

    def _outside_allowed(self, value: Any, found: list[Any]) -> list[Any]:
        """``found`` with each value that a range the request allows for ``value`` also holds
        ("any weekday next week", "between 08:00 and 10:30", "one or two") replaced by the first
        value past the range: moving a value where the request lets it go is no mistake."""
        if self._ranges is None:
            self._ranges = allowed_ranges(self.said, self.today)
        found = [alt for alt in found if alt != value]  # no value is its own alternative
        if not self._ranges:
            return found
        holding = [r for r in self._ranges if range_of(value, (r,)) is not None]
        if not holding:
            return found
        by_kind = {kind: [r for r in holding if r.kind == kind] for kind in dict.fromkeys(r.kind for r in holding)}
        out: list[Any] = []
        for alt in [*found, *(past_range(value, ranges) for ranges in by_kind.values())]:
            moved = [r for r in holding if r.kind in _kinds_changed(value, alt)]  # a later day is no later time
            if alt is not None and moved and range_of(alt, tuple(moved)) is not None:
                alt = past_range(value, moved)
            if alt is not None and alt not in out and alt != value:
                out.append(alt)
        return out

    def _most_confusable(self, value: Any) -> Any:
        """``confusable(package, value)[0]``, or ``_NONE`` when it is empty."""
        try:
            holders = self._index().get(value, []) if not _is_nan(value) else []
        except TypeError:  # an unhashable value: look it up as confusable does
            found = confusable(self.package, value)
            return found[0] if found else _NONE
        for record, field, records in ((r, f, rs) for r, rs in holders for f in self._fields
                                       if r.get(f) == value):
            others = [r for r in records if r is not record and r.get(field) not in (None, value)]
            if others:
                return max(others, key=lambda r: _similarity(record, r))[field]  # the first of the most similar
        if isinstance(value, str) and EMAIL.fullmatch(value):
            if self._emails is None:
                self._emails = {e for e in strings(self.package.initial_state) if EMAIL.fullmatch(e)}
            domain = value.rpartition("@")[2]
            return min((e for e in self._emails if e != value), key=lambda e: (e.rpartition("@")[2] != domain, e),
                       default=_NONE)
        return _NONE

    def _index(self) -> dict[Any, list[tuple[dict[str, Any], list[dict[str, Any]]]]]:
        """Each value of an identifying field → the records holding it (with their collection), in
        state order, each record once."""
        if self._holders is None:
            self._holders = {}
            for collections in self.package.initial_state.values():
                for records in collections.values():
                    for record in records:
                        keys = []
                        for field in self._fields:
                            v = record.get(field)
                            if v not in keys and not isinstance(v, (dict, list)) and not _is_nan(v):
                                keys.append(v)
                        for v in keys:
                            self._holders.setdefault(v, []).append((record, records))
        return self._holders


_NONE: Any = object()


def _kinds_changed(value: Any, other: Any) -> set[str]:
    """What changes from ``value`` to ``other``: its day (``date``), its clock (``time``), or the
    number."""
    if isinstance(value, str) and isinstance(other, str):
        out = {"date"} if value[:10] != other[:10] else set()
        return out | ({"time"} if _clock_of(value) != _clock_of(other) else set())
    return {"number"}


def _clock_of(value: str) -> str:
    return value[11:16] if is_date_time(value) else value if CLOCK.fullmatch(value) else ""


def past_range(value: Any, ranges: list[Allowed]) -> Any:
    """The value of ``value``'s kind and form just past the ``ranges`` that hold it: a day after
    (or before) a date range, an hour after (or before) a time range, one more (or less) than a
    number range; a weekend day inside a weekdays-only date range first. None when there is none."""
    kind = ranges[0].kind
    if kind == "date" and isinstance(value, str):
        for r in ranges:
            if r.weekdays_only and r.low and r.high:
                day = date.fromisoformat(r.low)
                while day.isoformat() <= r.high:
                    if day.weekday() >= 5:
                        return day.isoformat() + value[10:]
                    day += timedelta(days=1)
        edge = [r.high for r in ranges if r.high] or [r.low for r in ranges if r.low]
        if not edge:
            return None
        step = 1 if any(r.high for r in ranges) else -1
        return shift_date(max(edge) if step > 0 else min(edge), step) + value[10:]  # type: ignore[operator]
    if kind == "time" and isinstance(value, str):
        highs, lows = [r.high for r in ranges if r.high], [r.low for r in ranges if r.low]
        clock = _shift_time(max(highs), 1) if highs else _shift_time(min(lows), -1) if lows else None
        if clock is None:
            return None
        return at_clock(value, clock)
    if kind == "number" and isinstance(value, (int, float)):
        highs, lows = [r.high for r in ranges if r.high is not None], [r.low for r in ranges if r.low is not None]
        new = max(highs) + 1 if highs else min(lows) - 1 if lows and min(lows) >= 1 else None
        if new is None:
            return None
        return int(new) if isinstance(value, int) and float(new).is_integer() else new
    return None


def inside(value: Any, allowed: Allowed, lasting: int | None = None) -> Any:
    """Another value of ``value``'s kind and form that ``allowed`` holds, away from ``value``: the
    last allowed day (the first, when that is ``value``; a working day when ``value`` is one:
    "any afternoon next week" is not a Sunday), a quarter of an hour inside the far end of a
    time range (for something ``lasting`` that many minutes, early enough to end inside it:
    "finished by 5pm"), the other end of a number range (one more or one less for an open one).
    None when there is none."""
    if allowed.kind == "date" and isinstance(value, str) and allowed.low and allowed.high:
        days = [d for d in _days(allowed.low, allowed.high) if allowed.holds(d) and d != value[:10]]
        if ISO_DATE.match(value) and date.fromisoformat(value[:10]).weekday() < 5:
            days = [d for d in days if date.fromisoformat(d).weekday() < 5] or days
        return days[-1] + value[10:] if days else None
    if allowed.kind == "time" and (clock := clock_of(value)) is not None:
        ends = [t for t in (shift_clock(allowed.high, -max(15, lasting or 0)) if allowed.high else None,
                            shift_clock(allowed.low, 15) if allowed.low else None)
                if t is not None and t != clock and allowed.holds(t)]
        if not ends:
            return None
        far = max(ends, key=lambda t: abs(clock_minutes(t) - clock_minutes(clock)))
        return at_clock(value, far)
    if allowed.kind == "number" and isinstance(value, (int, float)):
        options = [allowed.high, allowed.low] if allowed.low is not None and allowed.high is not None else \
            [value + 1] if allowed.low is not None else [value - 1] if value - 1 >= max(1, allowed.low or 1) else []
        other = next((o for o in options if o is not None and o != value and allowed.holds(float(o))), None)
        if other is None:
            return None
        return int(other) if isinstance(value, int) and float(other).is_integer() else other
    return None


def other_starts(value: str, allowed: Allowed, minutes: int) -> list[str]:
    """Other starts ``allowed`` holds for ``value`` (an ISO date-time): its other days at the same
    clock, the last first; or its quarter hours that leave ``minutes`` inside it, the latest first
    (the slots ``inside`` chooses from, for when its choice clashes with the calendar)."""
    if not (isinstance(value, str) and is_date_time(value) and allowed.low and allowed.high):
        return []
    if allowed.kind == "date":
        return [d + value[10:] for d in reversed(_days(allowed.low, allowed.high))
                if d != value[:10] and allowed.holds(d)]
    if allowed.kind == "time":
        low, high = clock_minutes(allowed.low), clock_minutes(allowed.high)
        clocks = (f"{m // 60:02d}:{m % 60:02d}" for m in range(high - minutes, low - 1, -15))
        return [f"{value[:11]}{c}" for c in clocks if c != value[11:16]]
    return []


def _days(first: str, last: str) -> list[str]:
    out: list[str] = []
    day = date.fromisoformat(first)
    while day.isoformat() <= last and len(out) < 366:
        out.append(day.isoformat())
        day += timedelta(days=1)
    return out


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and value != value


def distinct_copy(package: TaskPackage, args: dict[str, Any], parameters: dict[str, Any],
                  taken: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The arguments of one more item of the series ``taken`` (the items made with one tool),
    modelled on ``args``: what is the same across the series stays; what varies gets a value no
    item has (free text changed, a time an hour later or a date a day later, the most confusable
    record no item names). None when nothing can be changed."""
    props = parameters.get("properties", {})
    varying = {k for k in args if len({_frozen(item.get(k)) for item in taken}) > 1} or set(args)
    used = {_frozen(item.get(k)) for item in taken for k in varying}
    out: dict[str, Any] = {}
    for key, value in args.items():
        new = value
        if key not in varying:
            pass
        elif isinstance(value, str) and (is_free_text(key, value, props.get(key)) or key in ("title", "name", "subject")):
            new = f"{value} (2)"
        elif isinstance(value, str):
            shifted = [v for v in (_shift_time(value, h) for h in (1, 2, 3)) if v and v not in used]
            shifted += [v for v in (shift_date(value, d) for d in (1, 2, 3)) if v and v not in used]
            new = next(iter(shifted), None) or next((v for v in confusable(package, value) if v not in used), value)
        elif isinstance(value, list):
            new = [next((o for o in confusable(package, v) if _frozen(o) not in used), v) for v in value]
        out[key] = new
    return out if out != args else None


def _frozen(value: Any) -> Any:
    return repr(value) if isinstance(value, (list, dict)) else value


def guess_wrong(fact: Fact, package: TaskPackage) -> str:
    """The most plausible wrong value an agent would use without asking for ``fact``."""
    if fact.corrects:
        return fact.corrects
    for variant in (shift_date(fact.value, 1), _shift_time(fact.value, 1)):
        if variant:
            return variant
    if re.fullmatch(r"-?\d+", fact.value):
        return str(int(fact.value) + 1)
    if (amount := _AMOUNT_ALONE.fullmatch(fact.value.strip())) is not None:  # "38.60", "2,600 EUR", "€1,250"
        digits = amount.group("n")
        return fact.value.replace(digits, _written_like(digits, float(digits.replace(",", "")) + 1), 1)
    other = confusable(package, fact.value) or _named_alike(package, fact.value)
    return str(other[0]) if other else f"unknown {fact.key.replace('_', ' ')}"


_AMOUNT_ALONE = re.compile(r"[$€£]?\s?(?P<n>\d[\d,]*(?:\.\d+)?)\s?(?:[A-Za-z]{3})?")
"""A fact that is an amount and nothing else: a number, with a currency sign or code."""


def _named_alike(package: TaskPackage, value: str) -> list[str]:
    """For a value that only one record of a collection holds in some text field (a company, a
    title: "Halden Logistics"), the same field of the other records of that collection, those
    sharing a word with it first ("Halden Marine"), then the most confusable."""
    words = set(value.casefold().split())
    fields = identity_fields(package)
    for collections in package.initial_state.values():
        for records in collections.values():
            holders = [(r, k) for r in records for k, v in r.items() if v == value and k not in fields]
            if len(holders) != 1:
                continue
            record, field = holders[0]
            others = [r for r in records if r is not record and isinstance(r.get(field), str) and r[field] not in ("", value)]
            others.sort(key=lambda r: (-len(words & set(r[field].casefold().split())), -_similarity(record, r)))
            if others:
                return [r[field] for r in others]
    return []


def in_written_form(value: str, guess: str, today: date) -> Callable[[Any], Any] | None:
    """For a fact whose value is written in words ("2,600 EUR", "half past two", "the 9th",
    "twelve", "an hour and a half"), a function that turns an argument holding that value in the
    form a tool takes (2600, "14:30", "2026-12-09", "2026-12-09T14:30", 12, 90 minutes) into
    ``guess`` in the same form (what an agent that never asked writes); None when neither reads
    as one number, date, time or duration. A number whose thousands are set apart by spaces
    ("4 200", as French writes it) is one number."""
    value, guess = _SPACE_GROUPED.sub(_ungrouped, value), _SPACE_GROUPED.sub(_ungrouped, guess)
    return (_rewrite(value, guess, lambda t: [str(d) for d in date_values(t, today)], _same_date)
            or _rewrite(value, guess, lambda t: [m.value for m in times_in(t)], _same_time)
            or _rewrite(value, guess, lambda t: [float(n) for n in minutes_in(t)], _same_number)  # "an hour and a half": 90
            or _rewrite(value, guess, lambda t: sorted(number_values(t)), _same_number))


_SPACE_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d]|[.,]\d{3})")
"""A number whose thousands a space sets apart: "4 200", "12 500" (a plain, no-break or narrow
no-break space)."""


def _ungrouped(m: re.Match[str]) -> str:
    return re.sub(r"[ \u00a0\u202f]", "", m.group(0))


_Read = TypeVar("_Read", str, float)


def _rewrite(value: str, guess: str, read: Callable[[str], list[_Read]],
             same: Callable[[Any, _Read, _Read], Any]) -> Callable[[Any], Any] | None:
    """``same`` bound to the one value ``read`` finds in ``value`` and the one it finds in
    ``guess``; None unless it finds exactly one in each and they differ."""
    old, new = read(value), read(guess)
    if len(old) == 1 and len(new) == 1 and old != new:
        return lambda arg: same(arg, old[0], new[0])
    return None


def _same_date(arg: Any, old: str, new: str) -> Any:
    return new + arg[10:] if isinstance(arg, str) and arg[:10] == old else arg


def _same_time(arg: Any, old: str, new: str) -> Any:
    """``arg`` with the clock time ``old`` as ``new``: a time ("14:30"), a date-time, or the minute
    and hour of a schedule (cron's "30 14 * * 1-5")."""
    if arg == old:
        return new
    if isinstance(arg, str) and (is_date_time(arg) or CRON_TIME.fullmatch(arg)) and clock_of(arg) == old:
        return at_clock(arg, new)
    return arg


def _same_number(arg: Any, old: float, new: float) -> Any:
    if isinstance(arg, (int, float)) and not isinstance(arg, bool) and float(arg) == old:
        return int(new) if isinstance(arg, int) and new.is_integer() else new
    return arg


# --------------------------------------------------------------------------- free text


class ComposedText:
    """Whether a written value is text the agent composes in ``package``: free text
    (``is_free_text``) that is none of: a phrase the request quotes (its words are dictated, case
    included); a name the request gives after "called", "named" or "titled" ("a playlist called
    Deep work"); the whole value of a field of the initial state (a supplier's or product's name
    names something; its spelling is not the agent's), or a whole line of a record's text, list
    marks aside (a checklist's "- Book movers" made a todo); a name the request writes out, every
    word capitalized ("from supplier Ergo Supply"), or that a record of the initial state writes
    out (the new billing contact "Tomas Ibarra" named inside an email's body): it names a person,
    a company, a role or a thing, and is copied, not composed."""

    def __init__(self, package: TaskPackage) -> None:
        self.names = set(state_strings(package))
        self.quoted = [q.casefold() for q in quoted_phrases(package.request.text)]
        self.request = package.request.text
        self.folded_request = self.request.casefold()
        self.state_text = "\n".join(self.names)
        self.lines = {line for text in self.names if "\n" in text
                      for line in (_LIST_MARK.sub("", raw).strip() for raw in text.splitlines()) if line}

    def __call__(self, key: str, value: Any, schema: dict[str, Any] | None) -> bool:
        return (is_free_text(key, value, schema) and value not in self.names
                and not any(q in value.casefold() for q in self.quoted)
                and value.strip() not in self.lines and not self.copied_name(value) and not self.given_name(value))

    def given_name(self, value: str) -> bool:
        """Whether the request gives ``value`` as a name: right after "called", "named", "titled"
        or "entitled", any case ("a playlist called Deep work")."""
        name = value.strip()
        if not name or name.casefold() not in self.folded_request:
            return False  # most written text is not in the request at all: no pattern to make
        return re.search(rf"\b(?:called|named|titled|entitled)\s+[\"'“‘]?{re.escape(name)}(?!\w)",
                         self.request, re.IGNORECASE) is not None

    def copied_name(self, value: str) -> bool:
        """Whether ``value`` is a name (capitalized words, maybe joined by "of", "and", "for" …:
        "Head of Procurement") the request or a record writes out, or one the request writes out
        mid-sentence with its capital ("Il devient Responsable logistique": a job title, as French
        writes one)."""
        name = value.strip()
        if _TITLED_NAME.fullmatch(name) is not None and (name in self.request or name in self.state_text):
            return True
        return (name[:1].isupper() and name in self.request
                and re.search(rf"[^\W\d_],?\s+{re.escape(name)}(?!\w)", self.request) is not None)


def is_free_text(key: str, value: Any, schema: dict[str, Any] | None) -> bool:
    """A string the agent composes: two words or more, not an id, email, phone number, date, time,
    amount or enum value."""
    schema = schema or {}
    if not isinstance(value, str) or "enum" in schema or "pattern" in schema or schema.get("type") not in (None, "string"):
        return False
    if key.endswith(("_id", "id", "email", "to", "cc", "date", "start", "time")) or key in ("to", "from", "status"):
        return False
    return _is_prose(value)


@lru_cache(maxsize=4096)
def _is_prose(value: str) -> bool:
    """``is_free_text`` of a string whatever its field: two words or more, and not an email, an
    id, a date or code (``is_code``)."""
    stripped = value.strip()
    return (len(_WORD_START.findall(stripped)) >= 2 and not EMAIL.fullmatch(stripped)
            and not _ID.match(stripped) and not ISO_DATE.match(stripped) and not is_code(stripped))


def is_code(text: str) -> bool:
    """Whether ``text`` reads as a command, a path or an address rather than prose: it has a
    token of code (an option such as ``--host``, a URL, a path, a ``snake_case`` name, an
    assignment) and no more words than other tokens ("pg_dump --host prod-db.internal --out
    s3://backups/prod/"). Tokens without a letter or digit ("/", "—") are not counted."""
    tokens = [t for t in text.split() if any(c.isalnum() for c in t)]
    if not any(_CODE_TOKEN.search(t) for t in tokens):
        return False
    return 2 * sum(_PLAIN_WORD.fullmatch(t) is not None for t in tokens) <= len(tokens)


_LIST_MARK = re.compile(r"^\s*(?:[-*•·]|\[[ xX]?\]|\d{1,2}[.)])\s*")
"""A list item's mark at the start of a line: "- ", "* ", "[ ] ", "2. "."""
_CODE_TOKEN = re.compile(r"^-{1,2}[A-Za-z]|://|[/\\=_{}$|<>]")
_PLAIN_WORD = re.compile(r"[\"'(“‘]*[^\W\d_]+(?:['’-][^\W\d_]+)*[.,;:!?)\"'”’]*")


_WORD_START = re.compile(r"(?:^|\s)[^\W\d_]{2,}")
_CONTENT_WORD = re.compile(r"[a-z][a-z'-]+[a-z]")
_NAME_RUN = re.compile(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)+")
_TITLED_NAME = re.compile(r"[A-Z][\w'-]*(?:\s+(?:(?:of|and|for|the|de|la|del|van|von|du|der|&)\s+)*[A-Z][\w'-]*)+")
"""A name or title of capitalized words, maybe joined by small words: "Head of Procurement"."""
_NAME_IN_SENTENCE = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][a-z'-]+)")


@lru_cache(maxsize=4096)
def content_words(text: str) -> frozenset[str]:
    """The words of a text (folded, three letters or more), stopwords aside."""
    return frozenset(w for w in _CONTENT_WORD.findall(text.casefold()) if w not in STOPWORDS)


@lru_cache(maxsize=4096)
def _proper(text: str) -> frozenset[str]:
    """Names in a text (folded): runs of two or more capitalized words anywhere, and single
    capitalized words inside a sentence."""
    out = {w.casefold() for run in _NAME_RUN.findall(text) for w in run.split()}
    out |= {m.group(1).casefold() for m in _NAME_IN_SENTENCE.finditer(text)}
    return frozenset(out)


@dataclass(frozen=True)
class Dictated:
    """What the request dictates of one free text (``dictated_content``): the dates, clock times,
    numbers and named words (weekdays, months, verdicts) it shares with the request, the phrases
    the request quotes that it holds, and the request's content words when it is mostly made of
    them."""

    dates: frozenset[str] = frozenset()
    times: frozenset[object] = frozenset()
    numbers: frozenset[object] = frozenset()
    words: frozenset[str] = frozenset()
    phrases: tuple[str, ...] = ()
    content: tuple[str, ...] = ()
    today: date = date(2026, 12, 1)
    """The package's clock, for reading dates written without a year."""

    def only(self, kinds: frozenset[str]) -> Dictated:
        """These parts of the given kinds (``Dictated`` field names); all of them when none given."""
        if not kinds:
            return self
        return Dictated(**{name: getattr(self, name) if name in kinds or name == "today" else type(getattr(self, name))()
                           for name in self.__dataclass_fields__})

    def parts(self) -> list[str]:
        return ([*map(str, self.dates), *map(str, self.times), *map(str, self.numbers), *sorted(self.words),
                 *self.phrases, *self.content])


def dictated_content(package: TaskPackage, value: str, addressee: set[str], said: str | None = None) -> Dictated:
    """What the request (or a fact) dictates of a free text: the dates (not "today": "write up
    today's call" dictates no date), times, numbers, weekdays and verdict words ("approved",
    "moved") it shares with the request (not a month's name alone), a phrase the request quotes, or the
    request's own words when the text is mostly made of them (names of people, companies and
    products do not count for that: they say whom or what, not what to say). ``addressee`` words
    (the record the text is written to) are never content. ``said``: what counts as told (default:
    the request and the user's facts)."""
    today = date.fromisoformat(package.now[:10])
    told = _told(package.request_and_fact_values() if said is None else said, today)
    said_words, value_words = told.words - addressee, content_words(value) - addressee
    folded = value.casefold()
    content = value_words - _NAMED - told.names
    shared = content & said_words
    said_stems = {_stem(x) for x in told.verdicts - addressee}
    request = package.request.text if said is None else said
    quoted = _dictating_quotes(package, request, told.quoted)
    return Dictated(dates=told.dates & date_values(value, today),
                    times=told.times & {m.value for m in times_in(value)},
                    numbers=told.numbers & {m.value for m in numbers_in(value)},
                    words=frozenset(w for w in value_words & _NAMED - _MONTH_WORDS if _stem(w) in said_stems),
                    phrases=tuple(q for q in quoted if q.casefold() in folded),
                    content=tuple(sorted(shared)) if len(shared) >= 2 and len(shared) * 2 >= len(content)
                    and (bool(quoted) or _WORDING.search(request) is not None) else (),
                    today=today)


def _dictating_quotes(package: TaskPackage, request: str, quoted: tuple[str, ...]) -> tuple[str, ...]:
    """The phrases the request quotes that dictate text: not one that is a whole text of a record
    ("the recap from my 'Halden site visit' note": the note's title names the note), unless the
    request quotes it as a title, name or subject to write ("a note titled 'Launch risks'")."""
    if not quoted:
        return quoted
    held = {text.casefold() for text in state_strings(package)}
    titles = {request[a:b].strip("\"'“”‘’").casefold() for a, b in title_spans(request)}
    return tuple(q for q in quoted if q.casefold() not in held or q.casefold() in titles)


TELLING = r"tell(?:ing)?(?!\s+(?:me|us|you)\b)|let\s+(?!me\b|us\b|you\b)\w+(?:\s+\w+){0,3}?\s+know"
"""Telling someone something ("tell her", "let Omar know"), not the user speaking to the assistant
("tell me", "let us know", "I'll tell you what time"): a pattern's branch, for dictated wording."""

_WORDING = re.compile(
    rf"\b(?:say(?:s|ing)?|{TELLING}|"
    r"titled|entitled|called|named|labell?ed|worded|reading|read(?:s)?\s+(?:as\s+)?(?:like\s+)?['\"“:]|"
    r"(?:with|under|as)\s+(?:the\s+)?(?:subject|title|heading|name|caption|text|wording|message|note)\b|"
    r"subject(?:\s+line)?\s*(?::|of\b)|explain(?:ing)?|inform(?:ing)?|mention(?:ing)?|"
    r"repl(?:y|ying)\s+(?:to\s+(?:\S+\s+){1,3})?(?:that|saying)|respond(?:ing)?\s+(?:to\s+(?:\S+\s+){1,3})?that|"
    r"write\s+(?:that|back\s+that)|(?:to|that)\s+say|"
    r"(?:notify(?:ing)?|dm|ping|message|text|e-?mail)\s+(?:[\w'@.-]+\s+){1,4}?that)\b|\babout\b[^.;!?:\n]{1,60}:\s|"
    r"\b(?:to-?dos?|tasks?|reminders?)\s+(?:(?:due|for)\s+[^.;!?:\n]{1,30}?\s+)?(?:to|saying|that)\s+\w", re.IGNORECASE)


def dictates_wording(request: str) -> bool:
    """Whether the request dictates the words of some text at all: it quotes a phrase, or asks
    for a text "saying", "titled", "called", "with the subject", "telling her that", or spells it
    out after a colon ("a todo about today's call with Omar: he approved the launch"), or asks for
    a todo or a reminder "to" do something (its title is that task) ... The user speaking to the
    assistant ("I'll tell you what time works", "I'll let you know") dictates nothing. Without
    such a clause, a text made of the request's own words ("Focus time" for "block 90 minutes of
    focus time") is the agent's label, the reference's wording: nothing a wrong agent contradicts."""
    return bool(quoted_phrases(request)) or _WORDING.search(request) is not None


def _stem(word: str) -> str:
    """A verdict word without its ending: "declining", "declined" and "decline" are one word."""
    return re.sub(r"(?:ing|ed|d|s|e)$", "", word)


_NAMED = frozenset([*WEEKDAYS, *MONTHS, *(w for w in ANTONYMS if " " not in w)])
_MONTH_WORDS = frozenset(MONTHS)
"""A month the request names sets the scene ("hasn't paid for November"); alone it dictates no
text (a day of it does, as a date)."""
"""Words that dictate content whenever a text repeats them: weekdays, months, verdicts."""


@dataclass(frozen=True)
class _Told:
    """What ``dictated_content`` reads of everything the agent is told."""

    dates: frozenset[str]
    times: frozenset[object]
    numbers: frozenset[object]
    words: frozenset[str]
    verdicts: frozenset[str]
    """The weekdays, months and verdict words (``_NAMED``) said outside a clause of purpose: "so
    they can raise the PO" says what the reader will do, not what the message says."""
    quoted: tuple[str, ...]
    names: frozenset[str]


@lru_cache(maxsize=1024)
def _told(said: str, today: date) -> _Told:
    dates = date_values(said, today)
    if not any(str(m.value) == today.isoformat() and m.text.casefold().split()[0] not in ("today", "tonight", "this")
               for m in dates_in(said, today)):
        dates -= {today.isoformat()}  # "today's call" says when it happened, not what to write
    names = name_spans(said)  # "the Series 5 thermostat", "Room 101": no number to say
    return _Told(dates, frozenset(m.value for m in times_in(said)),
                 frozenset(m.value for m in numbers_in(said) if not within(names, m.start) and not _compound(said, m.end)
                           and not _ROUGHLY.search(m.text)),
                 content_words(said), content_words(_PURPOSE.sub(" ", said)) & _NAMED,
                 tuple(quoted_phrases(said)), _proper(said))


_PURPOSE = re.compile(r"\b(?:so(?:\s+that)?\s+\w+\s+(?:can|could|will|would|may|might)|in\s+order\s+to)\b[^.;!?\n]*",
                      re.IGNORECASE)
"""A clause of purpose: what the reader of a message will do with it, to the end of its sentence."""


_ROUGHLY = re.compile(r"\bcouple\b", re.IGNORECASE)
"""A number said roughly: "a couple of integrations are failing" tells the agent about the world;
a message saying how many there are is the agent's to count, not the request's to dictate."""


_COMPOUND = re.compile(r"-(?!(?:minute|min|hour|hr|day|week|month|year|night|person|people|page|item|seat|room|"
                       r"percent|pack|unit|piece|dollar|euro|pound|kilo|km|mile|metre|meter|litre|liter)s?\b)"
                       r"[a-z]", re.IGNORECASE)


def _compound(text: str, end: int) -> bool:
    """Whether the number ending at ``end`` begins a compound word that names something rather
    than counts it ("two-factor authentication", "one-time code", "three-way call"); "a
    30-minute sync", "a two-day course" still state a number."""
    return _COMPOUND.match(text, end) is not None


def contradictions(package: TaskPackage, texts: dict[str, str], addressee: set[str],
                   message_elsewhere: bool = False) -> list[dict[str, str]]:
    """What a wrong agent could write instead of ``texts`` (the free-text fields of one write) when
    the request dictates their content: all of them replaced by a text that says nothing of it,
    and each dictated message field (``is_message``) with the dates, times, weekdays, numbers and
    verdict words the request dictates swapped for others (when that changes the message's body,
    where it has one; of what the message's own clause dictates, ``message_clause``, where that
    dictates any). Empty when nothing in ``texts`` is dictated."""
    request = package.request.text
    told = {key: parts for key, value in texts.items() if _asks_for_text(request, key, message_elsewhere)
            and (parts := _annotated(key, dictated_content(package, value, addressee))).parts()}
    if not told:
        return []
    out = [{key: GENERIC_TEXT for key in texts}]
    kinds = message_carries(package.request.text)
    clause = message_clause(package.request.text, date.fromisoformat(package.now[:10]))
    if clause:  # what the message must say is what the request says of it, when that clause says any
        facts = [f.value for f in package.user.facts] if package.user else []
        own = {key: _annotated(key, dictated_content(package, texts[key], addressee, " ".join([clause, *facts])))
               for key in told}
        told = own if any(parts.parts() for parts in own.values()) or says_that(clause) else told
    swapped = {key: _swap(texts[key], parts.only(kinds)) for key, parts in told.items() if is_message(key)}
    bodies = [key for key in texts if key in MESSAGE_BODIES]
    if any(swapped[key] != texts[key] for key in swapped) and (
            not bodies or any(swapped.get(key, texts[key]) != texts[key] for key in bodies)):
        out.append(swapped)  # a subject contradicting a body that still says it is no contradicting message
    return out


_MESSAGE_VERBS = (r"\b(?:e-?mail|message|tell|reply|respond|write|notify|inform|text|let|remind|post|ping|dm|slack|"
                  r"note(?=\s+(?:on\s+(?:it|them|the\s+\w+)\s+|down\s+)?(?:that|saying)\b))\b")
"""The verbs by which a request asks for a message (or a note: "note on it that it was disabled")."""
_CARRIES = re.compile(r"(?:" + _MESSAGE_VERBS + r"|\b(?:summary|note|comment|description)\s+(?=with\b|including\b|"
                      r"containing\b|giving\b|stating\b)"
                      r"|\b(?:put|add|jot(?:\s+down)?|list)\b(?=[^.;:!?\n]{0,80}?\b(?:in|into|on|to)\s+(?:a|the|my)\s+"
                      r"(?:new\s+)?(?:note|message|post|comment)\b))(?P<clause>(?:(?!,\s*(?:and|then|but)\b|\s+and\s+then\b)[^.;:!?\n]){0,80})", re.IGNORECASE)
_CARRIED = re.compile(
    r"\bthe\s+(?:(?:new|updated|revised|agreed|final|chosen|[a-z]+ing|[a-z]{2,}-?[a-z]*)\s+)?"
    r"(?:(?P<times>(?:start(?:ing)?\s+|meeting\s+)?time)|(?P<dates>(?:due\s+|start\s+)?date|day)"
    r"|(?P<numbers>amount|total|price|figure|quantity|number))\b", re.IGNORECASE)


MESSAGE_BODIES = frozenset({"body", "message", "text", "content", "comment"})
"""The fields that carry what a message says to its recipient."""
_MESSAGE_VERB = re.compile(_MESSAGE_VERBS + r"(?:[^.;!?\n]|[.!?](?=\w))*", re.IGNORECASE)  # "€38.90" ends no sentence


def _asks_for_text(request: str, key: str, message_elsewhere: bool = False) -> bool:
    """Whether the request asks for the text of field ``key``: a record's description, notes or
    summary (``ASIDE_FIELDS``) only when the request names the field ("with the description …"),
    or asks for a message that no other write sends (``message_elsewhere``: "disable it and notify
    ops that it's retired" asks the notification, not the integration's notes): beside an
    invoice's amount or a transaction's date, the agent writes it as it likes, whatever of the
    request it restates. Any other text (a body, a subject, a title) is what the write is for."""
    if key not in ASIDE_FIELDS and not key.endswith(("_description", "_notes")):
        return True
    word = key.rsplit("_", 1)[-1].rstrip("s")  # "notes" → "note", "customer_description" → "description"
    asks = not message_elsewhere and any(not _NOUN_BEFORE.search(request, max(0, m.start() - 20), m.start())
                                         for m in _MESSAGE_VERB.finditer(request))
    return asks or re.search(rf"\b{re.escape(word)}", request, re.IGNORECASE) is not None


_NOUN_BEFORE = re.compile(r"\b(?:the|a|an|his|her|their|my|your|our|its|latest|last|this|that|first|new)\s+$",
                          re.IGNORECASE)
"""Words before "email" or "message" that make it a noun ("in his latest email"), not a request
for one."""


def message_clause(request: str, today: date) -> str:
    """The clauses of the request that ask for a message, from the verb to the end of the sentence
    ("email Elsbeth to confirm we've received the payment"); empty when there is none, or when
    they state no date, time, number or verdict of their own ("tell Keiko when it now starts",
    "reply to let them know": what to say is elsewhere in the request). Where they dictate
    something of the message, only that may be swapped for its opposite: "mark that invoice as
    paid" is the invoice's business."""
    clauses = " ".join(m.group(0) for m in _MESSAGE_VERB.finditer(request))
    said = _told(clauses, today)
    return clauses if said.dates or said.times or said.numbers or said.words & _NAMED or says_that(clauses) else ""


_SAYS_THAT = re.compile(r"\w+\s+(?:[\w'@.-]+\s+){0,3}?(?:that|saying)\s+\w+(?:\s+[\w'’-]+){3,}", re.IGNORECASE)


def says_that(clauses: str) -> bool:
    """Whether a message clause (``message_clause``'s) says its content itself, right after its verb
    and whom it is for ("note on it that it was disabled because of the key leak", "tell Ines that
    the order is on its way"): what the message must say is that, not the request's other sentences.
    A relative clause ("an article that walks customers through …") is not one."""
    return any(_SAYS_THAT.match(m.group(0)) for m in _MESSAGE_VERB.finditer(clauses))


def message_carries(request: str) -> frozenset[str]:
    """The kinds of value (``Dictated`` field names) a message carries when the request names
    only that ("message Keiko the new start time": ``times``; "a short summary with the number of
    accounts in it": ``numbers``); empty when it does not say. Then
    only those parts of the message are dictated: the day the event moves to is the write's
    business, not the message's."""
    return frozenset(k for m in _CARRIES.finditer(request) for c in _CARRIED.finditer(m.group("clause"))
                     for k, v in c.groupdict().items() if v)


_ANNOTATIONS = frozenset({"description", "notes", "comment", "memo"})


def _annotated(key: str, parts: Dictated) -> Dictated:
    """An annotation (a ledger entry's description, notes) restating the request's words ("Taxi
    to client site" for "log this morning's taxi to the client site") is the agent's own label:
    only the dates, times, numbers, verdicts and quoted phrases it shares with the request are
    dictated."""
    return replace(parts, content=()) if key in _ANNOTATIONS else parts


ASIDE_FIELDS = frozenset({"description", "notes", "summary"})
"""Text fields beside a record's main values (an invoice's, a transaction's description)."""
MESSAGE_FIELDS = frozenset({"body", "message", "text", "content", "comment", "description", "notes", "summary",
                            "subject"})


def is_message(key: str) -> bool:
    """Whether a text field says something to someone (a body, a message, a subject, notes): its
    content is swapped for the opposite by ``contradictions``. A title or a name only says what a
    record is; it is only replaced by a text that says nothing."""
    return key in MESSAGE_FIELDS or key.endswith(("_body", "_message", "_notes", "_description"))


_MONTH_NAMES = "|".join(m[:3] for m in MONTHS)
_SWAP_ISO = re.compile(rf"\b{ISO_DATE.pattern}")
_SWAP_DAY = re.compile(rf"\b({MONTH_AHEAD}(?:{_MONTH_NAMES})[a-z]*\.?\s+)(\d{{1,2}})\b|\b(\d{{1,2}})((?:st|nd|rd|th)?\s+"
                       rf"(?:of\s+)?{MONTH_AHEAD}(?:{_MONTH_NAMES}))", re.IGNORECASE)
_SWAP_CLOCK = re.compile(rf"\b{CLOCK.pattern}\b")
_SWAP_WEEKDAY = re.compile(r"\b(" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE)
_SWAP_COUNT = re.compile(r"(?<![\d,.\w-])(\d+)(?=\s+(?!(?:is|was|has|does|as|its|this|thus|plus|us|yes)\b)[a-z]+s\b)")
"""A count: a number before a plural noun ("129 units"; not "port 1194 is blocked")."""
_SWAP_MEASURE = re.compile(r"(?<![\d,.\w-])(\d+(?:\.\d+)?)(\s?(?:°\s?[CF]?|(?:psi|bar|kpa|kg|mg|lbs?|oz|km|cm|mm|"
                           r"mph|kph|km/h|ml|gal|kwh?|rpm)(?![\w/])))", re.IGNORECASE)
"""A measure: a number and its unit ("35 psi", "2.5 kg", "18°C"). One before a noun names a kind
of thing ("the 250 ml oat milk cartons"), and a percentage restates the request's terms ("less
the 10% loyalty discount"): neither is swapped."""
_SWAP_MONEY = re.compile(r"([$€£]\s?)(\d[\d,]*)")
_SWAP_NUMBER_WORD = re.compile(r"\b(" + "|".join(_ONE_TO_TWELVE[1:]) + r")\b", re.IGNORECASE)
_SWAP_VERDICT = re.compile(r"\b(" + "|".join(sorted(map(re.escape, ANTONYMS), key=len, reverse=True)) + r")\b(?!['’])",
                           re.IGNORECASE)


def _swap(text: str, only: Dictated | None = None) -> str:
    """``text`` with its dates, days of a month, clock times, weekdays, counts, amounts, measures
    ("35 psi"), number words and verdict words swapped for others; with ``only``, just those the request dictates."""
    def chosen(kind: str, value: Any) -> bool:
        return only is None or value in getattr(only, kind)

    def day(m: re.Match[str]) -> str:
        new = (f"{m.group(1)}{int(m.group(2)) % 28 + 1}" if m.group(1) else f"{int(m.group(3)) % 28 + 1}{m.group(4)}")
        return new if only is None or date_values(m.group(0), only.today) & only.dates else m.group(0)

    out = text
    if has_digit(out):  # dates, days of a month, clock times, counts and amounts hold digits
        out = _SWAP_ISO.sub(lambda m: (shift_date(m.group(0), 1) or m.group(0)) if chosen("dates", m.group(1))
                            else m.group(0), out)
        out = _SWAP_DAY.sub(day, out)
        out = _SWAP_CLOCK.sub(lambda m: f"{(int(m.group(1)) + 1) % 24:02d}:{m.group(2)}"
                              if chosen("times", f"{int(m.group(1)):02d}:{m.group(2)}") else m.group(0), out)
    if may_say(out, _WEEKDAY_WORDS):
        out = _SWAP_WEEKDAY.sub(lambda m: WEEKDAYS[(WEEKDAYS.index(m.group(1).casefold()) + 1) % 7].capitalize()
                                if chosen("words", m.group(1).casefold()) else m.group(0), out)
    if has_digit(out):
        out = _SWAP_COUNT.sub(lambda m: str(int(m.group(1)) + 1) if chosen("numbers", float(m.group(1)))
                              else m.group(0), out)
        out = _SWAP_MONEY.sub(lambda m: f"{m.group(1)}{int(m.group(2).replace(',', '')) + 1:,}"
                              if chosen("numbers", float(m.group(2).replace(",", ""))) else m.group(0), out)
        out = _SWAP_MEASURE.sub(lambda m: plain_number(float(m.group(1)) + 1) + m.group(2)
                                if chosen("numbers", float(m.group(1))) and not _ATTRIBUTIVE.match(out, m.end())
                                else m.group(0), out)
    if may_say(out, _SWAPPED_NUMBER_WORDS):
        out = _SWAP_NUMBER_WORD.sub(
            lambda m: _ONE_TO_TWELVE[(_ONE_TO_TWELVE.index(m.group(1).casefold()) + 1) % len(_ONE_TO_TWELVE)]
            if chosen("numbers", float(_ONE_TO_TWELVE.index(m.group(1).casefold()) + 1)) else m.group(0), out)
    if may_say(out, _VERDICT_WORDS):
        def verdict(m: re.Match[str]) -> str:
            said = m.group(1).casefold()
            if said in _ADJECTIVES and _ATTRIBUTIVE.match(out, m.end()):
                return m.group(0)  # "the open day", "paid invoices": a kind of thing, no verdict
            if said in _MOVES and _TO_WHEN.match(out, m.end()):
                return m.group(0)  # "moved to Thursday 3pm": the new time is what it says, swapped as a time
            if chosen("words", said) or " " in said and only is not None and only.words & set(said.split()):
                return "\x00" + ANTONYMS[said] + "\x01"  # marked: the sentence whose verdict flipped
            return m.group(0)

        out = _SWAP_VERDICT.sub(verdict, out)
        if "\x00" in out:  # the rest of that sentence flips with it: "decline it ... so we won't be moving"
            out = _A_SENTENCE.sub(lambda m: _unnegated(m.group(0)) if "\x00" in m.group(0) else m.group(0), out)
            out = out.replace("\x00", "").replace("\x01", "")
    return out


_ADJECTIVES = frozenset({"open", "closed", "paid", "unpaid", "ready", "available", "active", "complete", "completed",
                         "done", "pending", "successful", "fixed", "confirmed", "approved", "cancelled", "canceled",
                         "resolved", "shipped", "signed", "finished", "delayed", "failed", "passed", "rejected"})
"""Verdict words that also name a kind of thing when a noun follows them ("open day", "paid
invoices"); a verb ("confirm their shifts") is swapped whatever follows."""
_ATTRIBUTIVE = re.compile(r"\s+(?!(?:and|or|but|for|by|to|on|in|at|of|with|from|since|until|as|the|a|an|it|them|"
                          r"this|that|now|today|yet|again|too|so|if|when|because|and|no|not)\b)[a-z][a-z-]+\b")
_MOVES = frozenset({"moved", "postponed", "rescheduled"})
_TO_WHEN = re.compile(r"\s+(?:back\s+)?(?:to|until|till|for)\b", re.IGNORECASE)
"""A move said with where it goes ("moved to thu 3pm", "postponed until Friday") carries the new
time, not a verdict: its contrary is another time ("kept to thu 3pm" says nothing)."""
_MARKED = re.compile("(\x00[^\x01]*\x01)")
_A_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=\w))+")
_NEGATIONS = tuple((re.compile(pattern, re.IGNORECASE), plain) for pattern, plain in (
    (r"\bwon['’]t\b", "will"), (r"\bcan(?:['’]t|not)\b", "can"), (r"\b(\w+)n['’]t\b", r"\1"), (r"\b(?:not|never)\s+", "")))


def _unnegated(sentence: str) -> str:
    """``sentence`` with its negations dropped (the words just swapped, marked, are left alone):
    what a writer who says the opposite of its verdict also says of the rest of it."""
    parts = _MARKED.split(sentence)  # the swapped words, kept apart
    for i in range(0, len(parts), 2):
        for pattern, plain in _NEGATIONS:
            parts[i] = pattern.sub(plain, parts[i])
    return "".join(parts)


_WEEKDAY_WORDS = frozenset(WEEKDAYS)
_SWAPPED_NUMBER_WORDS = frozenset(_ONE_TO_TWELVE[1:])
_VERDICT_WORDS = frozenset(phrase.split()[0] for phrase in ANTONYMS)  # "on track" holds the whole word "on"


# --------------------------------------------------------------------------- answers


def has_wrong_candidates(package: TaskPackage) -> bool:
    """Whether an answer check asks for a value found in a field of a record (all of it or a part:
    the last digits of a phone number, an amount) while other records of that collection hold
    other values in that field (the other phone numbers, amounts, names): then an answer listing
    everything contains wrong answers beside the right one."""
    wanted = [v.casefold() for c in package.checks if c.kind == "answer_contains" for v in c.values]
    patterns = [compile_pattern(c.pattern, c.ignore_case)
                for c in package.checks if c.kind == "answer_matches"]
    if not wanted and not patterns:
        return False
    asked_of: dict[str | tuple[str, ...], bool] = {}  # a text by itself, another value by how it is written

    def is_asked(value: Any) -> bool:
        numeric = isinstance(value, (int, float))
        key: str | tuple[str, ...] = (value if type(value) is str
                                      else (str(value), f"{value:,.2f}") if numeric else (str(value),))
        known = asked_of.get(key)
        if known is None:
            texts = (value,) if type(value) is str else key
            assert isinstance(texts, tuple)
            folded = [t.casefold() for t in texts]
            known = asked_of[key] = any(w in t for w in wanted for t in folded) or any(
                p.search(t) for p in patterns for t in texts)
        return known

    for collections in package.initial_state.values():
        for records in collections.values():
            held: dict[str, list[Any]] = {}  # field → its values other than null and ""
            for r in records:
                for field, value in r.items():
                    if value is not None and value != "":
                        held.setdefault(field, []).append(value)
            for field, values in held.items():
                if field == "id" or all(v is values[0] or v == values[0] for v in values):
                    continue  # no other record holds another value of the field
                for value in values:  # another value is held by another record, whichever this is
                    if not isinstance(value, (bool, dict, list)) and is_asked(value):
                        return True
    return False


def stuffed_answer(package: TaskPackage) -> str:
    """Every value of the initial state, as an answer (numbers also written as amounts)."""
    values: dict[str, None] = {}  # each text once, in the order first met
    for leaf in leaves(package.initial_state):
        if isinstance(leaf, bool) or leaf in (None, ""):
            continue
        values[str(leaf)] = None
        if isinstance(leaf, (int, float)):
            values[f"{leaf:,.2f}"] = None
    return "; ".join(values)


MAX_HEDGES = 8


MAX_COUNT_HEDGED = 20
"""A whole number up to this that the agent works out is a count, hedged with its neighbours
("either 3 or 4"); a larger figure, money or a number with decimals is an amount
(``other_amounts``)."""
MAX_AMOUNTS_HEDGED = 3
_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")


def is_amount(m: Mention[float]) -> bool:
    """Whether a number a graded text writes is an amount or a total, not a count: money ("€4,310",
    "4,310.50 EUR"), a number with decimals or thousands separators, or a whole number above
    ``MAX_COUNT_HEDGED``; a year alone ("2026") is none."""
    if m.kind == "money":
        return True
    if m.kind != "number" or m.value <= 0:
        return False
    digits = m.text.strip()
    if re.fullmatch(r"(?:19|20)\d\d", digits):
        return False
    return "," in digits or "." in digits or m.value > MAX_COUNT_HEDGED


def other_amounts(n: float, lists: list[list[dict[str, Any]]], written: set[str], told: str = "",
                  today: date | None = None, guess: bool = True) -> list[float]:
    """The other amounts a careless agent offers beside ``n``: where a record read holds ``n`` in a
    numeric field, that field of the other records of its list (the other invoices' amounts);
    where a group of records totals it (``aggregates.groups``, with the groups the request ``told``
    selects: the unpaid ones of one vendor), the same total over the other groups (every invoice, the paid ones); where a
    group's worth is ``n`` (quantity × price), its worth with more records (``_wider_worth``); else, with
    ``guess``, the figure 5% either side (a total worked out with a stated fee or discount). Nearest
    first, at most ``MAX_AMOUNTS_HEDGED``."""
    def near(found: dict[float, None]) -> list[float]:
        return sorted((o for o in found if abs(o - n) >= 0.005 and o > 0), key=lambda o: abs(o - n))[:MAX_AMOUNTS_HEDGED]

    held: dict[float, None] = {}
    for records in lists:
        for r in records:
            if r.get("id") in written:
                continue
            for key, value in r.items():
                if _is_number(value) and abs(float(value) - n) < 0.005:
                    held |= dict.fromkeys(round(float(o[key]), 2) for o in records if _is_number(o.get(key)))
    if near(held):
        return near(held)
    totalled: dict[float, None] = {}
    every_of = [[g for g in groups(records, told, today) if len(g) >= 2] for records in lists]
    for every in every_of:
        named = [dict(plain) for plain, _ in split_figures(every, products=False)]
        kinds = {k for f in named for k, v in f.items() if k.startswith("total of") and abs(v - n) < 0.005}
        totalled |= dict.fromkeys(round(f[k], 2) for f in named for k in kinds if k in f)
    found = near(totalled) or _wider_worth(n, every_of)
    if found or not guess:
        return found
    return [round(n * 0.95, 2 if not float(n).is_integer() else 0), round(n * 1.05, 2 if not float(n).is_integer() else 0)]


def _wider_worth(n: float, every_of: list[list[list[dict[str, Any]]]]) -> list[float]:
    """Where a group's worth (the sum of a product of two fields: quantity × price) is ``n``, the
    same worth over each group that holds that group and more records (the bulk bin the request
    books separately, the other warehouse counted in): the total a careless agent offers beside it.
    ``every_of``: the groups of two records or more of each list read. Nearest first, at most
    ``MAX_AMOUNTS_HEDGED``."""
    found: dict[float, None] = {}
    for every in every_of:
        worth = [dict(plain + products) for plain, products in split_figures(every)]
        for g, f in zip(every, worth, strict=True):
            kinds = [k for k, v in f.items() if " × " in k and abs(v - n) < 0.005]
            members = {id(r) for r in g}
            for wider, w in zip(every, worth, strict=True):
                if len(wider) > len(g) and members <= {id(r) for r in wider}:
                    found |= dict.fromkeys(round(w[k], 2) for k in kinds if k in w and abs(w[k] - n) >= 0.005)
    return sorted(found, key=lambda o: abs(o - n))[:MAX_AMOUNTS_HEDGED]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _written_like(digits: str, value: float) -> str:
    """``value`` written as ``digits`` is: thousands separators and decimals alike."""
    decimals = len(digits.split(".", 1)[1]) if "." in digits else 0
    text = f"{value:,.{decimals}f}" if "," in digits else f"{value:.{decimals}f}"
    return text


def _part_said(value: str, text: str) -> str | None:
    """What of a record's ``value`` a graded ``text`` says: all of it, the clock time or the day
    of a date-time ("11:30" of "2026-12-03T11:30"), or the domain of an email or its first label
    ("brightkiln" of "ops@brightkiln.example": the company that raised a ticket, by its domain);
    None when it says none of it."""
    if value.casefold() in text.casefold():
        return value
    if "@" in value:
        domain = value.rsplit("@", 1)[1]
        return next((p for p in (domain, domain.split(".")[0]) if p.casefold() == text.strip().casefold()), None)
    m = ISO_DATE.match(value)
    if m is None or m.group(2) is None:
        return None
    day, clock = m.groups()
    return clock if has_word(text, clock) else day if day in text else None


def _same_part(other: str, value: str, part: str) -> str | None:
    """The same part of another record's value (its clock time when ``part`` is a clock time, its
    domain or the domain's first label when ``part`` is that of an email)."""
    if part == value:
        return other
    if "@" in value:
        domain = other.rsplit("@", 1)[1] if "@" in other else None
        return domain if domain is None or part == value.rsplit("@", 1)[1] else domain.split(".")[0]
    m = ISO_DATE.match(other)
    if m is None or m.group(2) is None:
        return None
    return m.group(2) if ":" in part else m.group(1)


_VERSION_IN = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)+(?:-[\w.]+)?(?![\w.])", re.IGNORECASE)
"""A version ("4.2.1", "4.3.0-rc1"): the other versions a text gives beside the one asked for are
what a careless agent hedges with."""


def hedged_answer(answer: str, graded: list[str], lists: list[list[dict[str, Any]]], told: str,
                  written: set[str], today: date | None = None, amounts_of: frozenset[str] | None = None,
                  guessed_for: frozenset[str] | None = None) -> str | None:
    """``answer`` hedged as a careless agent hedges it: followed by "Or possibly" and the
    plausible other candidates of each value the answer checks want (``graded``) that the agent
    reports rather than confirms (not in the request ``told``, not in what it wrote,
    ``written``, nor of a record it wrote to): for a value a record read holds, the same field of
    the other records of that list ("inv-1041, inv-1047" beside inv-1043), or the same part of it
    (the times of the other calls beside 11:30); for a count it works out (a whole number up to
    ``MAX_COUNT_HEDGED`` that no record holds), one less and one more ("either 3 or 4"); for an
    amount or a total (``is_amount``: "€4,310", "1,284.50"), ``other_amounts`` written alike
    ("€4,310. Or possibly: €4,500, €4,950"), of the texts ``amounts_of`` (default: all; the
    verifier gives the values of ``answer_contains`` checks: a pattern says how an amount must be
    written, and whether it allows others beside it is the package's), offering the 5% either side
    only for the texts ``guessed_for`` (default: all). None when no value has another candidate."""
    others: dict[str, None] = {}  # in the order found: the hedges are the first MAX_HEDGES the answer lacks
    folded_told = told.casefold()
    wrote = "\n".join(written).casefold()  # what the agent wrote, texts included: its answer confirms that

    def settled() -> bool:
        """Whether the hedges are known: MAX_HEDGES candidates the answer lacks are found, and one
        found later would come after them."""
        return sum(not has_word(answer, o) for o in others) >= MAX_HEDGES

    for text in graded:
        if settled():
            break
        folded = text.casefold()
        versioned = _VERSION_IN.fullmatch(text.strip()) is not None  # "4.2.1": the others its text gives
        for records in lists:
            for r in records:
                if r.get("id") in written or r.get("email") in written:
                    continue  # a record the agent writes to: the answer confirms the work, it reports nothing
                for key, value in r.items():
                    if not isinstance(value, str) or len(value) < 3:
                        continue
                    if versioned and " " in value and text in value and has_word(value, text):  # release notes
                        others |= dict.fromkeys(v for v in _VERSION_IN.findall(value)
                                                if v.casefold() != folded and v.casefold() not in folded_told)
                        continue
                    folded_value = value.casefold()
                    part = value if folded_value in folded else (  # or the clock or day of a date-time it holds,
                        _part_said(value, text) if value[:1].isdigit() and "T" in value or "@" in value else None)  # a domain
                    if part is None or part.casefold() in folded_told or folded_value in wrote:
                        continue  # not a value the answer reports
                    others |= dict.fromkeys(other for o in records if o is not r and isinstance(o.get(key), str)
                                            and (other := _same_part(o[key], value, part)) and other.casefold() not in folded)
        held = any(has_word(str(v), text) for records in lists for r in records for v in r.values() if text in str(v))
        for m in numbers_in(text) if not held else ():  # a count or total the agent works out, not a record's value
            n = float(m.value)
            if f"{n:g}" in written or n in number_values(told):
                continue
            if n.is_integer() and 0 < n <= MAX_COUNT_HEDGED:
                others |= dict.fromkeys((f"{n - 1:g}", f"{n + 1:g}"))
            elif is_amount(m) and (amounts_of is None or text in amounts_of) and not settled():  # dear: skipped when settled
                others |= dict.fromkeys(m.text.replace(m.text[d.start():d.end()], _written_like(d.group(0), o))
                                        for d in [_DIGITS.search(m.text)] if d is not None
                                        for o in other_amounts(n, lists, written, told, today,
                                                               guess=guessed_for is None or text in guessed_for))
    hedges = [o for o in others if not has_word(answer, o)][:MAX_HEDGES]  # "4" is no word of "tkt-141"
    return f"{answer} Or possibly: {', '.join(hedges)}." if hedges else None

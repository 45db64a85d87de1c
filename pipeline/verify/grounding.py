"""Grounding: what the agent must write, and what a check pins, must be learnable. Raises
``ungrounded_value`` and ``unrequested_write``.

**Typed values** are emails, record ids, dates, times, numbers, and enum values the request names.
Free text the agent composes is not a typed value (whether a check may pin it is the equivalence
tests' business). A typed value is *obtainable* at a point of the reference when it is in:

- the request, or a fact the user revealed before that point (in any form ``text_values`` reads:
  "five", "$4,000", "December 3rd", "the 10th", "2 pm"; a date may also be any day of a window the
  request states, "next week", "by Friday");
- an earlier tool result: every value of a read's result, and what a write's result adds to its
  arguments (the new record's id and timestamps; the rest only echoes what the agent sent);
- a number computed from an earlier result: the count or a total of a group of records
  (``aggregates.py``: a list, the records sharing a field value or a month, "the unpaid total",
  quantity × price), or one step of arithmetic from known numbers (``Evidence.has_number``); the
  length of a time range the texts state ("13:00-17:00": 240 minutes, 4 hours);
- a number the agent wrote, or the total of one argument over its writes so far (the units it
  ordered in all);
- a time: one the texts or results state, or one moved by a duration a text states ("30 minutes
  before the stand-up");
- the tool's schema (an enum value or a default) or the service's documented defaults.

Findings:

- a typed value a **check pins** that is not obtainable by the end of the reference;
- a typed value the **reference writes** that is not obtainable at its step *and* that the checks
  pin (changing it loses score): the agent would have to guess it. A value the checks leave free
  (a meeting time the request does not give and no check grades) is the agent's choice;
- an enum value that contradicts the request: the request names another value of the same field
  ("high") and not this one ("low");
- an **unrequested write** that carries weight: a write whose operation the request names by none
  of its ``intents`` words (``pipeline/core/services/*.yaml``), and whose removal loses score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import leaves
from pipeline.core.matchers import literal_values
from pipeline.core.outcomes import Finding, Witness
from pipeline.core.package import CallStep, Check, StateCount, StateMatch, StateUnchanged, TaskPackage
from pipeline.core.services import OperationSpec, get_service, id_shapes, intent_pattern
from pipeline.core.text_values import (
    WEEKDAYS,
    date_values,
    day_spans,
    in_window,
    minutes_in,
    number_values,
    numbers_in,
    shifted,
    times_in,
    windows_in,
)
from pipeline.core.trajectory import StepRecord, Trajectory
from pipeline.verify.aggregates import groups, pooled, totals
from pipeline.verify.effects import Bound, Write, bound_tools
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.mutations import dependents
from pipeline.verify.witness import said_instead, substituted, witness

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}))?")
_CLOCK = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
TOLERANCE = 0.005


@dataclass
class Evidence:
    """Everything the agent could know at one point of the reference."""

    tokens: set[str] = field(default_factory=set)
    numbers: set[float] = field(default_factory=set)
    """Known numbers; the group counts and totals of the lists in ``pending`` are not in it yet
    (``all_numbers`` adds them)."""
    dates: set[str] = field(default_factory=set)
    times: set[str] = field(default_factory=set)
    windows: list[Any] = field(default_factory=list)
    written: list[dict[str, Any]] = field(default_factory=list)
    """The arguments of the writes made so far."""
    durations: set[int] = field(default_factory=set)
    """Durations the texts state, in minutes ("30 minutes before", "an hour later")."""
    day_shifts: set[tuple[int, bool]] = field(default_factory=set)
    """Spans of days the texts state ("two days after", "a week before", "3 working days"), each
    with whether it counts working days only."""
    records: list[dict[str, Any]] = field(default_factory=list)
    """Observed records, for numbers computed within one record (twice the reorder level minus
    the quantity on hand)."""
    lists: list[list[dict[str, Any]]] = field(default_factory=list)
    """Lists of records read whose groups are already in ``numbers``."""
    pending: list[list[dict[str, Any]]] = field(default_factory=list)
    """Lists of records read whose group counts and totals (``aggregates``) are not in
    ``numbers`` yet: they are added on first need (``all_numbers``)."""
    texts: list[tuple[str, date]] = field(default_factory=list)
    """Texts inside the results read (a title, a body) whose words, numbers, dates, times and
    durations (``text_evidence``) are not in the sets above yet: they are added when a question
    those sets answer "no" could be answered "yes" with them (``_read_texts``). More evidence
    never turns a "yes" into a "no", so asking the smaller sets first gives the same answers."""
    said: str = ""
    """The request and the user's facts, whose words select groups of the records read."""
    today: date | None = None
    _seen: set[float] = field(default_factory=set, repr=False)
    _known: set[float] = field(default_factory=set, repr=False)
    _factors: set[float] = field(default_factory=lambda: {2.0, 3.0, 4.0, 0.5}, repr=False)

    def all_numbers(self) -> set[float]:
        """``numbers`` with those of the texts read and the counts and totals of the groups of
        every list of records read."""
        self._read_texts()
        if self.pending:  # the records of every list read so far, pooled, beside each new list
            self.lists = self.lists + self.pending
            if len(self.lists) > 1:
                self.pending.append(pooled(self.lists)[-1])
        for records in self.pending:
            self.numbers |= {x for g in groups(records, self.said, self.today) for x in [float(len(g)), *totals(g)]}
        self.pending.clear()
        return self.numbers

    def read_text(self, text: str, today: date) -> None:
        """Add what ``text`` tells (``text_evidence``): the request, a reply, a fact."""
        known = text_evidence(text, today)
        self.tokens |= known.tokens
        self.numbers |= known.numbers
        self.dates |= known.dates
        self.times |= known.times
        self.windows += known.windows
        self.durations |= known.durations
        self.day_shifts |= known.day_shifts
        self._factors |= known.factors

    def _read_texts(self) -> bool:
        """Add what the texts inside the results read so far tell; whether there were any."""
        if not self.texts:
            return False
        for text, today in self.texts:
            self.read_text(text, today)
        self.texts.clear()
        return True

    def has_token(self, token: str) -> bool:
        """Whether ``token`` (folded) is a value or a word the agent has seen."""
        return token in self.tokens or (self._read_texts() and token in self.tokens)

    def has_day(self, day: str) -> bool:
        """Whether the ISO ``day`` is a known date or falls in a known window."""
        return self._day_known(day) or (self._read_texts() and self._day_known(day))

    def _day_known(self, day: str) -> bool:
        return day in self.dates or in_window(day, self.windows) or any(
            shifted(day, -n if sign else n, business) in self.dates
            for n, business in self.day_shifts for sign in (False, True))

    def merge(self, other: Evidence) -> None:
        """Add everything ``other`` knows."""
        self.tokens |= other.tokens
        self.numbers |= other.numbers
        self.dates |= other.dates
        self.times |= other.times
        self.windows += other.windows
        self.written += other.written
        self.durations |= other.durations
        self.day_shifts |= other.day_shifts
        self.records += other.records
        self.lists += other.lists
        self.pending += other.pending
        self.texts += other.texts
        self._factors |= other._factors

    def has_time(self, clock: str) -> bool:
        """Whether ``clock`` (HH:MM) is known, or a known time moved by a stated duration."""
        return self._time_known(clock) or (self._read_texts() and self._time_known(clock))

    def _time_known(self, clock: str) -> bool:
        if clock in self.times:
            return True
        target = _minutes(clock)
        return any(abs(_minutes(t) - target) in self.durations for t in self.times)

    def read_value(self, value: Any, today: date) -> None:
        """A value of a tool result: every leaf, the lists' counts and totals, and when an event
        with a start and a length ends ("20 minutes after the walkthrough ends")."""
        if isinstance(value, dict):
            for v in value.values():
                self.read_value(v, today)
            start, length = value.get("start"), value.get("duration_minutes")
            if isinstance(start, str) and (m := _ISO.match(start)) and m.group(2) and isinstance(length, int):
                end = _minutes(m.group(2)) + length
                if end < 24 * 60:
                    self.times.add(f"{end // 60:02d}:{end % 60:02d}")
        elif isinstance(value, list):
            self.numbers.add(float(len(value)))
            records = [r for r in value if isinstance(r, dict)]
            if records:
                self.pending.append(records)
                self.records += records
            for v in value:
                self.read_value(v, today)
        elif isinstance(value, bool) or value is None:
            return
        elif isinstance(value, (int, float)):
            self.numbers.add(float(value))
        elif isinstance(value, str):
            self.tokens.add(value.casefold())
            m = _ISO.match(value)
            if m:
                self.dates.add(m.group(1))
                if m.group(2):
                    self.times.add(m.group(2))
            elif _CLOCK.match(value):
                self.times.add(value)
            if " " in value:
                self.texts.append((value, today))  # read on first need

    def _arithmetic(self) -> tuple[set[float], set[float]]:
        """The numbers in ``numbers`` rounded to cents, and the factors ``has_number`` tries (2, 3,
        4, ½ and those numbers over 1 up to 12); kept up to date with only the numbers added since
        the last call (``numbers`` never shrinks)."""
        numbers = self.numbers
        if len(numbers) != len(self._seen):
            new = numbers - self._seen
            self._known |= {round(n, 2) for n in new}
            self._factors |= {n for n in new if 1 < n <= 12}
            self._seen |= new
        return self._known, self._factors

    def _one_step(self, v: float) -> bool:
        """``v`` (in cents) is a number of ``numbers``, the sum or difference of two, or one times a factor."""
        known, factors = self._arithmetic()
        return (v in known or any(round(v - a, 2) in known or round(a - v, 2) in known for a in known)
                or any(round(v / k, 2) in known for k in factors))

    def has_number(self, value: float) -> bool:
        """Whether ``value`` is known, or one step of arithmetic away from what is known: the sum
        or difference of two known numbers, a known number times a small factor (twice, three
        times, half, a factor the texts state, or a percentage they state: 5% of it, less 5%,
        plus 5%), or within one observed record ``k·a ± b``.
        (Known numbers include the counts and totals of the lists read, computed only when the
        other known numbers do not already give ``value``: more numbers never make one unknown.)"""
        v = round(value, 2)
        if self._one_step(v) or self.within_a_record(v):
            return True
        if not (self.pending or self.texts):
            return False
        self.all_numbers()
        return self._one_step(v) or self.within_a_record(v)

    def within_a_record(self, v: float) -> bool:
        """``v`` is ``k·a ± b`` or ``a·b`` of two numbers ``a``, ``b`` of one observed record."""
        factors = self._arithmetic()[1] | {1.0}
        for record in self.records:
            nums = [float(x) for x in record.values() if isinstance(x, (int, float)) and not isinstance(x, bool)]
            for a in nums:
                for b in nums:
                    if a is not b and any(abs(k * a - b - v) <= TOLERANCE or abs(k * a + b - v) <= TOLERANCE
                                          for k in factors):
                        return True
                    if abs(a * b - v) <= TOLERANCE:
                        return True
        return False


@dataclass(frozen=True)
class TextEvidence:
    """What one text tells the agent (``text_evidence``)."""

    tokens: frozenset[str]
    numbers: frozenset[float]
    dates: frozenset[str]
    times: frozenset[str]
    windows: tuple[Any, ...]
    durations: frozenset[int]
    day_shifts: frozenset[tuple[int, bool]]
    factors: frozenset[float] = frozenset()
    """What the percentages it states multiply by: 5% gives 0.05, 0.95 and 1.05."""


@lru_cache(maxsize=4096)
def text_evidence(text: str, today: date) -> TextEvidence:
    """What a text tells the agent, with ``today`` as the clock: its words, emails and tokens
    (folded); the numbers it states, and the length of each time range between two times it
    states ("13:00-17:00": 240 minutes, 4 hours); the dates it states, with the series it
    describes (``_recurring``) and the weekdays it names after them (``_weekdays_after``); its
    times; its date windows; the durations it states, in minutes (``text_values.minutes_in``,
    also numbers: a duration is written in minutes); the spans of days it states
    (``text_values.day_spans``)."""
    tokens = frozenset(_TOKEN.findall(text.lower()) if text.isascii()  # ASCII folds as a whole, the same
                       else (t.casefold() for t in _TOKEN.findall(text)))
    numbers = set(number_values(text))
    stated = date_values(text, today)
    dates = stated | _recurring(text, stated) | _weekdays_after(text, stated)
    clocks = sorted({str(m.value) for m in times_in(text)})
    minutes = [_minutes(c) for c in clocks]
    for a in minutes:  # a range "13:00-17:00" states its length: 240 minutes, 4 hours
        for b in minutes:
            if b > a:
                numbers |= {float(b - a), (b - a) / 60}
    durations = set(minutes_in(text))
    numbers |= {float(d) for d in durations}  # "an hour and a half" is 90 minutes to write
    percents = [float(m.value) / 100 for m in numbers_in(text) if m.kind == "percent"]
    factors = frozenset(round(f, 4) for p in percents for f in (p, 1 - p, 1 + p) if f > 0)
    return TextEvidence(tokens, frozenset(numbers), frozenset(dates), frozenset(clocks), windows_in(text, today),
                        frozenset(durations), day_spans(text), factors)


_TOKEN = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[\w-]+")


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")[:2]
    return int(hours) * 60 + int(minutes)


_CADENCE = {re.compile(pattern, re.IGNORECASE): days for pattern, days in (
    (r"\b(weekly|every week|each week|a week)\b", 7), (r"\b(daily|every day|each day)\b", 1),
    (r"\b(fortnightly|biweekly|every (two|other) weeks?)\b", 14), (r"\b(monthly|every month)\b", 30))}
_WEEKDAY_NAME = re.compile(r"\b(" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE)


def _weekdays_after(text: str, stated: frozenset[str]) -> set[str]:
    """A weekday a text names, as the first such day after each date it states ("Wednesday
    2026-12-09 ... and two on Thursday": 2026-12-10)."""
    if not stated:
        return set()
    named = {WEEKDAYS.index(m.group(1).casefold()) for m in _WEEKDAY_NAME.finditer(text)}
    out: set[str] = set()
    for first in stated:
        start = date.fromisoformat(first)
        out |= {(start + timedelta(days=(day - start.weekday() - 1) % 7 + 1)).isoformat() for day in named}
    return out


def _recurring(text: str, stated: frozenset[str]) -> set[str]:
    """The dates of a series the text describes ("weekly ... the first on 2026-12-07"): each
    stated date stepped by the cadence, up to a year."""
    out: set[str] = set()
    if not stated:
        return out
    for pattern, days in _CADENCE.items():
        if pattern.search(text):
            for first in stated:
                start = date.fromisoformat(first)
                if days == 30:
                    out |= {start.replace(month=(start.month - 1 + k) % 12 + 1,
                                          year=start.year + (start.month - 1 + k) // 12).isoformat()
                            for k in range(1, 13) if start.day <= 28}
                else:
                    out |= {(start + timedelta(days=days * k)).isoformat() for k in range(1, 366 // days + 1)}
    return out


def _today(package: TaskPackage) -> date:
    return date.fromisoformat(package.now[:10])


def _start(package: TaskPackage) -> Evidence:
    """What the agent knows before its first step: the request, the tools' schemas (enum values
    and defaults) and the services' documented defaults."""
    today = _today(package)
    evidence = Evidence(said=package.told(), today=today)
    evidence.read_text(package.request.text, today)
    for tool in package.tools:
        for schema in tool.parameters.get("properties", {}).values():
            for v in [*schema.get("enum", []), *([schema["default"]] if "default" in schema else [])]:
                evidence.read_value(v, today)
    evidence.merge(_service_defaults(tuple(package.services), today))
    return evidence


@lru_cache(maxsize=256)
def _service_defaults(services: tuple[str, ...], today: date) -> Evidence:
    """What the documented defaults of the operations of ``services`` tell the agent (shared:
    never changed, only merged)."""
    evidence = Evidence()
    for name in services:
        spec = get_service(name)
        for op in spec.operations if spec else []:
            evidence.read_value(op.defaults, today)
    return evidence


def _observe(evidence: Evidence, package: TaskPackage, step: StepRecord, write_fields: set[str] | None) -> None:
    """Add what one step showed the agent; a write's result adds only ``write_fields`` of its record."""
    today = _today(package)
    if step.kind == "ask":
        evidence.read_text(step.reply or "", today)
        for key in step.revealed:
            fact = package.fact(key)
            if fact is not None:
                evidence.read_text(fact.value, today)
                evidence.read_value(fact.value, today)
        return
    if step.kind != "call" or step.result is None:
        return
    if write_fields is None:
        evidence.read_value(step.result, today)
        return
    evidence.written.append(step.args or {})  # what the agent wrote, and the totals of it, it knows
    numeric = {k for args in evidence.written for k, v in args.items() if isinstance(v, (int, float))
               and not isinstance(v, bool)}
    evidence.numbers |= {float(v) for v in (step.args or {}).values() if isinstance(v, (int, float))
                         and not isinstance(v, bool)}
    evidence.numbers |= {round(sum(float(a.get(k) or 0) for a in evidence.written
                                   if isinstance(a.get(k), (int, float))), 2) for k in numeric}
    for record in step.result.values():
        if isinstance(record, dict):
            for key in write_fields & record.keys():
                evidence.read_value(record[key], today)


def _write_fields(bound: dict[str, Bound]) -> dict[str, set[str]]:
    """For each write tool of ``bound`` (``effects.bound_tools``), the record fields its result
    adds to the arguments (id, timestamps)."""
    out: dict[str, set[str]] = {}
    for name, b in bound.items():
        if b.op.access == "write":
            out[name] = {b.spec.id_field} | ({b.op.timestamp_field} if b.op.timestamp_field else set())
    return out


# --------------------------------------------------------------------------- typed values


def _missing(package: TaskPackage, value: Any, evidence: Evidence, shapes: tuple[re.Pattern[str], ...]) -> str | None:
    """Why a typed value is not obtainable from ``evidence`` (what kind it is), or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return None if evidence.has_number(float(value)) else "number"
    if not isinstance(value, str):
        return None
    if _EMAIL.fullmatch(value) or any(s.match(value) for s in shapes):
        return None if evidence.has_token(value.casefold()) else ("email" if "@" in value else "id")
    m = _ISO.match(value)
    if m:
        if not evidence.has_day(m.group(1)):
            return "date"
        if m.group(2) and m.group(2) != "00:00" and not evidence.has_time(m.group(2)):
            return "time"
        return None
    if _CLOCK.match(value):
        return None if evidence.has_time(value) else "time"
    return None


def corrected_request(package: TaskPackage) -> str:
    """What the user asks for in the end, folded: the request with each value a fact corrects
    replaced by the fact's value ("medium priority" becomes "high priority"), then the facts."""
    text = package.request.text
    for fact in package.user.facts if package.user else []:
        if fact.corrects:
            text = re.sub(rf"(?<!\w){re.escape(fact.corrects)}(?!\w)", fact.value, text, flags=re.IGNORECASE)
    return " ".join([text, *(f.value for f in (package.user.facts if package.user else []))]).casefold()


def _said_enum(said: str, field_name: str, value: Any, options: list[Any]) -> str | None:
    """The other value ``said`` (the request and the user's facts, folded) gives this field
    ("high-priority", "priority high", "set the tier to gold"), when it gives one and not
    ``value`` (nor moves the field to ``value``: "moves up to gold" from "the standard tier")."""
    if not isinstance(value, str) or value not in options:
        return None

    def assigned(v: Any) -> bool:  # the value must be in the text for the pattern to find it there
        return str(v).casefold() in said and _assignment(field_name, str(v)).search(said) is not None

    if assigned(value) or re.search(rf"\b(?:to|into|as)\s+(?:the\s+)?{re.escape(value.casefold())}\b", said):
        return None  # "still on the standard tier moves up to gold": the new value, the old one beside it
    return next((str(v) for v in options if v != value and assigned(v)), None)


@lru_cache(maxsize=4096)
def _assignment(field_name: str, value: str) -> re.Pattern[str]:
    """Finds ``value`` given to field ``field_name`` in a folded text: "high priority",
    "priority: high", "set the priority to high"."""
    words = re.escape(field_name.replace("_", " ").casefold())
    x = re.escape(value.casefold())
    return re.compile(rf"\b{x}[\s-]+{words}\b|\b{words}\s*(?:is|of|to|at|as|:|=)?\s*{x}\b")


def _field_enums(package: TaskPackage, collection: str) -> dict[str, list[Any]]:
    service, _, name = collection.partition(".")
    spec = get_service(service)
    coll = spec.collections.get(name) if spec else None
    return {f: s["enum"] for f, s in (coll.fields.items() if coll else []) if "enum" in s}


# --------------------------------------------------------------------------- findings


def evidence_of(package: TaskPackage, trajectory: Trajectory, include_writes: bool = True) -> Evidence:
    """What the agent could know by the end of ``trajectory`` (without what it wrote, unless
    ``include_writes``)."""
    evidence = _start(package)
    write_fields = _write_fields(bound_tools(package))
    for record in trajectory.steps:
        fields = write_fields.get(record.tool or "")
        if include_writes or fields is None:
            _observe(evidence, package, record, fields)
    return evidence


def grounding_findings(run: ReferenceRun) -> list[Finding]:
    package = run.package
    shapes = id_shapes(tuple(package.services))
    write_fields = _write_fields(run.bound)
    evidence = _start(package)
    out: list[Finding] = []
    records = {s.index: s for s in run.trajectory.steps}
    for index, step in enumerate(package.reference):
        record = records.get(index)
        if isinstance(step, CallStep) and record is not None and record.args is not None:
            out += _written(run, index, step, record.args, evidence, shapes)
        if record is not None:
            _observe(evidence, package, record, write_fields.get(record.tool or ""))
    pinned = _pinned(run, corrected_request(package), evidence, shapes)
    if any(f.detail.get("kind") in ("id", "email") for f in pinned):
        known = {str(v).casefold() for state in (package.initial_state, run.trajectory.final_state)
                 for v in leaves(state) if isinstance(v, str)}
        pinned = [f for f in pinned
                  if f.detail.get("kind") not in ("id", "email") or str(f.detail.get("value")).casefold() in known]
    out += pinned
    out += _unrequested(run)  # an id or email no record has is a dangling_reference (static.py)
    return out


def _literal_leaves(value: Any, original: Any, path: str) -> list[tuple[str, Any]]:
    """``(path, leaf)`` for the leaves of a resolved argument that the step wrote literally."""
    if isinstance(original, dict) and ("$ref" in original or "$fact" in original):
        if "$fact" in original and ("prefix" in original or "suffix" in original) and isinstance(value, str):
            return [(path, value)]  # a fact with literal parts: the whole value is checked
        return []
    if isinstance(value, dict) and isinstance(original, dict):
        return [leaf for k, v in value.items() for leaf in _literal_leaves(v, original.get(k), f"{path}.{k}")]
    if isinstance(value, list) and isinstance(original, list) and len(value) == len(original):
        return [leaf for n, (v, o) in enumerate(zip(value, original, strict=True))
                for leaf in _literal_leaves(v, o, f"{path}[{n}]")]
    return [(path, value)]


def _written(run: ReferenceRun, index: int, step: CallStep, resolved: dict[str, Any], evidence: Evidence,
             shapes: tuple[re.Pattern[str], ...]) -> list[Finding]:
    package = run.package
    bound = run.bound.get(step.call)
    if bound is None or bound.op.access != "write":
        return []
    said = corrected_request(package)
    props = bound.tool.parameters.get("properties", {})
    out: list[Finding] = []
    for key, value in resolved.items():
        original = step.args.get(key)
        for path, leaf in _literal_leaves(value, original, key):
            enum = (props.get(key, {}).get("items") or props.get(key, {})).get("enum") or []
            other = _said_enum(said, key, leaf, enum)
            if other is not None:
                agent = _rewritten(run, index, leaf, other, f"writes {path} = {other!r}, as the request says")
                out.append(Finding(code=Code.UNGROUNDED_VALUE, step=index, detail={"argument": path, "value": leaf},
                                   witness=agent,
                                   message=f"step {index} writes {path}={leaf!r} where the request says {other!r}"))
                continue
            kind = _missing(package, leaf, evidence, shapes)
            if kind is None or isinstance(leaf, bool):
                continue
            other = another_value(leaf)
            agent = _rewritten(run, index, leaf, other, f"writes {path} = {other!r}: nothing it can read gives "
                                                        f"{leaf!r}")
            if agent.holds:
                out.append(Finding(
                    code=Code.UNGROUNDED_VALUE, step=index, detail={"argument": path, "value": leaf, "kind": kind},
                    witness=agent,
                    message=f"step {index} writes the {kind} {path}={leaf!r}, which the checks require but the agent "
                            "cannot learn: it is not in the request, a revealed fact, an earlier tool result or the "
                            "tool's schema"))
    return out


def another_value(value: Any) -> Any:
    """A plausible other value of the same kind: a number plus one, a date a day later (a
    date-time an hour later), other text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value + 1
    if isinstance(value, str) and (m := _ISO.match(value)):
        return value.replace(m.group(2), f"{(int(m.group(2)[:2]) + 1) % 24:02d}{m.group(2)[2:]}") if m.group(2) \
            else f"{value[:8]}{(int(value[8:10]) % 28) + 1:02d}{value[10:]}"
    return f"other-{value}"


def _rewritten(run: ReferenceRun, index: int | None, value: Any, other: Any, claim: str) -> Witness:
    """A correct agent that writes ``other`` where the reference writes ``value`` (in step
    ``index``, or in every write when None; in the answer too when the value is text there)."""
    steps = substituted(run, {value: other}) or dict(enumerate(run.package.reference))
    if index is not None:
        steps = {i: (step if i == index or not isinstance(step, CallStep) else run.package.reference[i])
                 for i, step in steps.items()}
    return witness(run, "correct", "rewritten_value", claim, run.score, said_instead(steps, value, other))


def produced(check: Check) -> list[tuple[str, Any]]:
    """``(field, matcher)`` of the values a check requires the agent to produce: what a created or
    changed record must hold (``state_count.where`` unless it guards that nothing happened,
    ``state_match.expect``), the arguments a required call must carry, the answer's values.
    Selectors of existing records and forbidden values are not produced."""
    if check.kind == "state_count" and not (check.op in ("==", "<=", "<") and check.value == 0):
        return list(check.where.items())
    if check.kind == "state_match":
        return list(check.expect.items())
    if check.kind == "called" and check.min > 0:
        return list(check.args_match.items())
    if check.kind == "answer_contains":
        return [("answer", v) for v in check.values]
    return []


def _pinned(run: ReferenceRun, said: str, evidence: Evidence, shapes: tuple[re.Pattern[str], ...]) -> list[Finding]:
    """``said``: the request and the user's facts, folded."""
    package = run.package
    out: list[Finding] = []
    for check in package.checks:
        enums = _field_enums(package, check.collection) if isinstance(check, (StateCount, StateMatch, StateUnchanged)) \
            else {}
        for fname, matcher in produced(check):
            other = _said_enum(said, fname, matcher, enums.get(fname, []))
            if other is not None:
                agent = _rewritten(run, None, matcher, other, f"writes {fname} = {other!r}, as the request says")
                out.append(Finding(code=Code.UNGROUNDED_VALUE, check=check.id, detail={"value": matcher},
                                   witness=agent,
                                   message=f"check {check.id!r} pins {fname}={matcher!r} where the request says "
                                           f"{other!r}"))
                continue
            for value in _typed_tokens(matcher) if fname == "answer" else values_of(matcher):
                if fname != "answer" and isinstance(value, (int, float)) and numbers_in(package.request.text):
                    continue  # a number that differs from the ones the request states: consistency.py
                kind = _missing(package, value, evidence, shapes)
                if kind is not None:
                    other = another_value(value)
                    agent = _rewritten(run, None, value, other, f"writes {other!r} where the check wants {value!r}: "
                                                                "nothing it can read gives that")
                    out.append(Finding(code=Code.UNGROUNDED_VALUE, check=check.id, detail={"value": value, "kind": kind},
                                       witness=agent,
                                       message=f"check {check.id!r} pins the {kind} {value!r}, which the agent cannot "
                                               "learn: it is not in the request, a revealed fact, a tool result or a "
                                               "schema"))
    return out


def values_of(matcher: Any) -> list[Any]:
    """The concrete values a matcher names, list values as their items."""
    return [item for v in literal_values(matcher) for item in (v if isinstance(v, list) else [v])]


def _typed_tokens(text: str) -> list[Any]:
    """The typed values inside an answer value: emails, ISO dates and times, numbers."""
    out: list[Any] = _EMAIL.findall(text)
    out += [m.group(0) for m in re.finditer(r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2})?", text)]
    out += [float(m.value) for m in numbers_in(text) if m.kind != "word"]
    return out


def _unrequested(run: ReferenceRun) -> list[Finding]:
    """Writes of an operation the request names by none of its intents, in a package whose request
    does name another of its write operations, and whose removal lowers the score."""
    package = run.package
    said = run.said.casefold()
    done = run.writes

    named: dict[str, bool] = {}  # endpoint → whether the request names the operation

    def requested(op: OperationSpec) -> bool:
        if op.endpoint not in named:
            named[op.endpoint] = not op.intents or _intent_regex(tuple(op.intents)).search(said) is not None
        return named[op.endpoint]

    unnamed = _unnamed_targets(package, done, said)
    if not unnamed and (all(not requested(w.bound.op) for w in done) or all(requested(w.bound.op) for w in done)):
        return []
    out: list[Finding] = []
    steps = dict(enumerate(package.reference))
    for w in done:
        if requested(w.bound.op) and w.step not in unnamed:
            continue
        dropped = dependents(package, w.step)
        kept = {k: v for k, v in steps.items() if k not in dropped}
        ids = sorted(kept)
        s = run.variant_score(ids, [kept[i] for i in ids])
        if s < run.score:
            agent = witness(run, "correct", "skip_unrequested", f"does what the request asks, without the "
                            f"{w.bound.tool.name} call of step {w.step}", run.score, kept)
            out.append(Finding(code=Code.UNREQUESTED_WRITE, step=w.step, detail={"tool": w.bound.tool.name, "score": s},
                               witness=agent,
                               message=f"step {w.step} ({w.bound.tool.name}) does what the request never asks for "
                                       f"({unnamed[w.step] if w.step in unnamed else 'none of ' + ', '.join(w.bound.op.intents[:6]) + '…'})"
                                       f", yet dropping it lowers the score to {s:.3f}: the checks reward an "
                                       "unrequested action"))
    return out


@lru_cache(maxsize=1024)
def _intent_regex(intents: tuple[str, ...]) -> re.Pattern[str]:
    """Finds, in a folded text, a word that begins one of ``intents`` (``intent_pattern``)."""
    return re.compile(rf"\b(?:{intent_pattern(list(intents))})")


def _unnamed_targets(package: TaskPackage, done: list[Write], said: str) -> dict[int, str]:
    """Writes of one tool aimed at several records, where the request names one record well (two
    words of its name or more, and at least half of them) and this one's target hardly (less than
    half its words, and less than half the share of that one):
    "reorder the M8 hex bolts" does not ask for an order of M8 flat washers. By step, with what
    it names. A request that asks for a set ("on every open ticket about the outage", "all of
    them", "each") names none of its members and has none."""
    if _A_SET.search(said):
        return {}
    said_words = _name_words(said)
    by_tool: dict[str, list[tuple[Write, str, float, int]]] = {}
    for w in done:
        for name in _targets(package, w):
            words = _name_words(name)
            shared = len(words) if name.casefold() in said else len(words & said_words)
            by_tool.setdefault(w.bound.tool.name, []).append((w, name, shared / max(len(words), 1), shared))
    out: dict[int, str] = {}
    for aimed in by_tool.values():
        best, named, shared = max(((o, name, n) for _, name, o, n in aimed), default=(0.0, "", 0))
        if best >= 0.5 and shared >= 2 and len({name for _, name, _, _ in aimed}) > 1:
            out |= {w.step: f"aimed at {name!r}, which the request does not name" for w, name, o, _ in aimed
                    if o * 2 < best and o < 0.5}
    return out


_FUNCTION_WORDS = frozenset({"the", "and", "for", "with", "from", "our", "your", "this", "that", "into", "onto"})
_A_SET = re.compile(r"\b(?:every|each|all)\b", re.IGNORECASE)


def _name_words(text: str) -> set[str]:
    """The words of a name, roughly stemmed ("bolts" and "bolt" alike), with model codes ("M8")."""
    return {t.rstrip("s")[:6] for t in re.findall(r"[a-z0-9]+", text.casefold())
            if (len(t) >= 3 or any(c.isdigit() for c in t)) and t not in _FUNCTION_WORDS}


def _targets(package: TaskPackage, w: Write) -> list[str]:
    """The names (or titles, subjects) of the records a write aims at: the record it changes, and
    the records its arguments refer to."""
    ids: list[tuple[str, Any]] = []
    if w.bound.op.effect in ("update", "delete"):
        ids.append((".".join(w.bound.collection), w.record_id))
    for param, target in w.bound.op.refs.items():
        value = (w.record or {}).get(w.bound.op.field_for(param))
        ids.append((".".join(target.split(".")[:2]), value))
    out = []
    for collection, value in ids:
        service, _, name = collection.partition(".")
        for record in package.initial_state.get(service, {}).get(name, []):
            if value is not None and record.get("id") == value:
                out += [str(record[k]) for k in ("name", "title", "subject") if record.get(k)][:1]
    return out

"""What an agent could know at a point of the reference: the evidence model that grounding
(``grounding.py``) and safety (``safety.py``) and request consistency (``consistency.py``) ask.

``Evidence`` gathers the tokens, numbers, dates, times, date windows, durations and spans of days
that the request, the user's revealed facts, the tool results read so far, the tools' schemas and
the services' documented defaults tell, and answers whether a value is among them or one step of
arithmetic away (``has_token``, ``has_number``, ``has_day``, ``has_time``). ``text_evidence`` is
what one text tells; ``evidence_of`` the evidence at the end of a trajectory; ``starting_evidence``
and ``observe`` build it step by step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from itertools import permutations
from typing import Any

from pipeline.core.package import TaskPackage
from pipeline.core.services import get_service
from pipeline.core.text_values import (
    EMAIL,
    ISO_DATE,
    WORDS,
    Mention,
    allowed_ranges,
    clock_value,
    date_values,
    day_spans,
    in_window,
    minutes_in,
    number_values,
    numbers_in,
    range_of,
    shifted,
    times_in,
    windows_in,
)
from pipeline.core.trajectory import StepRecord, Trajectory
from pipeline.verify.aggregates import (
    adjust,
    groups,
    pooled,
    stated_adjustments,
    sums_and_means,
    with_read_rates,
)
from pipeline.verify.effects import Bound, bound_tools
from pipeline.verify.time_arithmetic import (
    clock_minutes,
    range_lengths,
    series_dates,
    shift_clock,
    weekdays_after,
)

TOLERANCE = 0.005
MAX_ADJUSTMENTS = 3
"""The stated adjustments a known number is tried with, in every order."""


@lru_cache(maxsize=256)
def _adjustment_orders(said: str) -> tuple[tuple[Any, ...], ...]:
    """Every order of the adjustments ``said`` states (at most ``MAX_ADJUSTMENTS``), read once per
    request: ``Evidence.has_number`` asks for each value ("add the fee to what you get once it is
    discounted" names them out of order)."""
    stated = stated_adjustments(said)[:MAX_ADJUSTMENTS]
    return tuple(permutations(stated)) if stated else ()  # no adjustment: no order (a known number is no adjusted one)


@lru_cache(maxsize=256)
def priced_in_words(said: str) -> tuple[float, ...]:
    """The products of a price and another plain number the request states ("twelve hours at
    €150/h": 1,800; "the twelve private lessons …, 65 a lesson": 780), the totals its adjustments
    may start from. A price is an amount of money, or a number a rate's words follow ("65 a
    lesson", "40 per hour", "12.50 each")."""
    found = numbers_in(said)
    money = [m for m in found if m.kind == "money" or m.kind == "number" and _RATE_AFTER.match(said, m.end)]
    counts = [m for m in found if m.kind in ("number", "word")]
    return tuple(round(a.value * b.value, 2) for a in money for b in counts if b is not a)


_RATE_AFTER = re.compile(r"\s*(?:an?|per|each|apiece)\b(?:\s+(?!of\b|few\b|lot\b|bit\b|couple\b)[a-z]+)?", re.IGNORECASE)
"""The words of a rate after a number: "65 a lesson", "40 per hour", "12.50 each" (not "3 a few")."""


LOOSE = "loose number"
"""The kind of an ``ungrounded_value`` finding on a number ``has_number`` finds only through loose
arithmetic (``Evidence.plainly_known``): a question for a reader, which the rules leave open."""


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
    sums: set[float] = field(default_factory=set)
    """Of the numbers of ``all_numbers``: the counts and sums of the groups of the lists read."""
    means: set[float] = field(default_factory=set)
    """Of the numbers of ``all_numbers``: the means of the groups of the lists read (an average
    the request may not speak of: ``plainly_known``)."""
    in_texts: set[float] = field(default_factory=set)
    """Of ``numbers``: those a text read states ("60 x Network switch 8-port"), none worked out."""
    today: date | None = None
    _seen: set[float] = field(default_factory=set, repr=False)
    _known: set[float] = field(default_factory=set, repr=False)
    _factors: set[float] = field(default_factory=lambda: {2.0, 3.0, 4.0, 0.5}, repr=False)
    _said_factors: set[float] = field(default_factory=set, repr=False)
    """What the percentages the texts state multiply by (``_factors`` adds 2, 3, 4, ½ and every
    known number up to 12)."""
    _priced: list[tuple[frozenset[float], frozenset[float]]] = field(default_factory=list, repr=False)
    """Of each text read that states a percentage and two numbers or more: its numbers, and what
    its percentages multiply by (``_priced_total``)."""

    def all_numbers(self) -> set[float]:
        """``numbers`` with those of the texts read and the counts and totals of the groups of
        every list of records read."""
        self._read_texts()
        if self.pending:  # the records of every list read so far, pooled, beside each new list
            self.lists = self.lists + self.pending
            if len(self.lists) > 1:
                self.pending.append(pooled(self.lists)[-1])
        for records in self.pending:
            for g in groups(records, self.said, self.today):
                sums, means = sums_and_means(g)
                self.numbers |= {float(len(g)), *sums, *means}
                self.means |= {m for m in means if m}
                self.sums |= {float(len(g)), *sums}
        self.pending.clear()
        return self.numbers

    def read_text(self, text: str, today: date) -> None:
        """Add what ``text`` tells (``text_evidence``): the request, a reply, a fact."""
        known = text_evidence(text, today)
        self.tokens |= known.tokens
        self.numbers |= known.numbers
        self.in_texts |= known.numbers
        self.dates |= known.dates
        self.times |= known.times
        self.windows += known.windows
        self.durations |= known.durations
        self.day_shifts |= known.day_shifts
        self._factors |= known.factors
        self._said_factors |= known.factors
        if known.factors and len(known.numbers) > 1:
            self._priced.append((known.numbers, known.factors))

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
        self._said_factors |= other._said_factors
        self.sums |= other.sums
        self.means |= other.means
        self.in_texts |= other.in_texts
        self._priced += other._priced

    def has_time(self, clock: str) -> bool:
        """Whether ``clock`` (HH:MM) is known, or a known time moved by a stated duration."""
        return self._time_known(clock) or (self._read_texts() and self._time_known(clock))

    def _time_known(self, clock: str) -> bool:
        if clock in self.times:
            return True
        target = clock_minutes(clock)
        return any(abs(clock_minutes(t) - target) in self.durations for t in self.times)

    def read_value(self, value: Any, today: date) -> None:
        """A value of a tool result: every leaf, the lists' counts and totals, and when an event
        with a start and a length ends ("20 minutes after the walkthrough ends")."""
        if isinstance(value, dict):
            for v in value.values():
                self.read_value(v, today)
            start, length = value.get("start"), value.get("duration_minutes")
            if isinstance(start, str) and (m := ISO_DATE.match(start)) and m.group(2) and isinstance(length, int) \
                    and (end := shift_clock(m.group(2), length)):
                self.times.add(end)
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
            m = ISO_DATE.match(value)
            if m:
                self.dates.add(m.group(1))
                if m.group(2):
                    self.times.add(m.group(2))
            elif clock := clock_value(value):
                self.times.add(clock)
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
        if self._one_step(v) or self.within_a_record(v) or self._adjusted(v):
            return True
        if not (self.pending or self.texts):
            return self._priced_total(v)
        self.all_numbers()
        return self._one_step(v) or self.within_a_record(v) or self._priced_total(v) or self._adjusted(v)

    def _adjusted(self, v: float) -> bool:
        """Whether ``v`` is a known number with every adjustment the request states put on it, in
        order or another (the words may put them in either: "add the 2,000 setup fee to what you get
        once their last won deal is discounted by fifteen percent" is 24,000 less 15% plus 2,000;
        ``aggregates.stated_adjustments``, at most ``MAX_ADJUSTMENTS``), or a count at a price the
        request states with them put on in the order it states them ("twelve hours at €150/h, ten
        percent off, then add the €45 travel fee": 1,665, not the 1,660.50 of the fee discounted too),
        or at a price read ("fourteen shelves at list price"). A rate the request names without
        stating it takes the percentage a record read gives it (``aggregates.with_read_rates``)."""
        if not self.said:
            return False
        for said in (self.said, *with_read_rates(self.said, self.records)):
            orders = _adjustment_orders(said)
            if not orders:
                continue
            known = self._arithmetic()[0]
            if any(abs(adjust(n, list(order)) - v) < TOLERANCE for n in known for order in orders):
                return True
            written = list(orders[0])  # a count at a price the request states, adjusted in the order it says them
            if any(abs(adjust(n, written) - v) < TOLERANCE for n in priced_in_words(said)):
                return True
            counts = [m.value for m in numbers_in(said) if m.kind in ("number", "word") and m.value > 1]
            if any(abs(adjust(c * n, written) - v) < TOLERANCE  # "fourteen shelves at list price", the price read
                   for c in counts for n in known):
                return True
        return False

    def plainly_known(self, value: float, stated: set[float]) -> bool:
        """Whether ``value`` (which ``has_number`` finds) is reached without loose arithmetic: a
        known number; a number a range the request states allows; the sum or difference of a
        known number and one of ``stated`` (the numbers
        the request and the user state); a known number times a factor the words give (twice,
        half: ``multipliers``; a percentage a text states) or a small number of ``stated``; within one observed
        record, ``k·a − b`` by such a factor (twice the reorder level less the stock), the sum or the
        product of two of its fields; a priced total.
        A mean of a group read counts only when the request or a fact speaks of an average, or a
        record holds the same number. Where the words ask to add or take away (``_COMBINE``), the
        sum or difference of two known numbers.
        The rest of ``has_number`` is loose: a mean no one asked for, two numbers no one connected
        (a price less a count, a quantity times itself), which a reader, not the rules, decides."""
        v = round(value, 2)
        said = {round(a, 2) for a in stated}
        if self._plain(v, said):
            return True
        if not (self.pending or self.texts):
            return False
        self.all_numbers()  # more numbers never make one less plain (a mean is checked against the rest)
        return self._plain(v, said)

    def knows(self, value: float) -> bool:
        """Whether ``value`` is a number the agent has read or been told (no arithmetic)."""
        v = round(value, 2)
        if v not in self._arithmetic()[0] and (self.pending or self.texts):
            self.all_numbers()  # more numbers read: never fewer known
        return v in self._arithmetic()[0]

    def _plain(self, v: float, said: set[float]) -> bool:
        """``plainly_known`` over the numbers known so far."""
        known, _ = self._arithmetic()
        if (v in known and not self._only_a_mean(v, said)) or self._priced_total(v) or self._adjusted(v) \
                or range_of(v, allowed_ranges(self.said, self.today or date.min)) is not None:
            return True  # known; a priced total; a number a stated range allows ("30 to 40 boxes")
        if any(round(v - a, 2) in known or round(a - v, 2) in known or round(v + a, 2) in known for a in said):
            return True
        if _COMBINE.search(self.said) and any(round(v - a, 2) in known or round(a - v, 2) in known for a in known):
            return True  # "add the quantities in their email to what we have on hand": two numbers read
        factors = self._said_factors | multipliers(self.said) | {a for a in said if 1 < a <= 12}
        if any(round(v / k, 2) in known for k in factors):
            return True
        return self._in_a_record(v, factors | {1.0}, added=False, squared=False)

    def _only_a_mean(self, v: float, said: set[float]) -> bool:
        """Whether ``v`` is known only as the mean of a group read: the request and the facts
        speak of no average, and no count or sum of a group, no number a record observed holds or
        a text read states, none stated and none written is ``v``."""
        if v not in self.means or v in self.sums or v in said or v in self.in_texts or _AVERAGE.search(self.said):
            return False
        held = (x for r in [*self.records, *self.written] for x in r.values())
        return not any(isinstance(x, (int, float)) and not isinstance(x, bool) and round(float(x), 2) == v for x in held)

    def _priced_total(self, v: float) -> bool:
        """``v`` is ``a·b`` of two numbers one text states, moved by a percentage that text states
        ("three sessions at $450 each, less the 10% discount": 1,215): a quantity times a rate,
        with the discount or fee the same passage gives."""
        for numbers, factors in self._priced:
            figures = sorted(numbers)
            for i, a in enumerate(figures):
                for b in figures[i + 1:]:
                    if any(abs(a * b * k - v) <= TOLERANCE for k in factors):
                        return True
        return False

    def within_a_record(self, v: float) -> bool:
        """``v`` is ``k·a ± b``, ``a·b``, or ``r·a`` for a rate ``r`` a percentage the texts state
        gives (a price up 8%, to the cent), of numbers ``a``, ``b`` of one observed record."""
        return self._in_a_record(v, self._arithmetic()[1] | {1.0}, added=True, squared=True,
                                 scaled=self._said_factors - {1.0})

    def _in_a_record(self, v: float, factors: set[float], added: bool, squared: bool,
                     scaled: set[float] | frozenset[float] = frozenset()) -> bool:
        """``v`` is ``k·a − b`` (and ``k·a + b`` when ``added``; ``a + b`` is ``k`` = 1), ``r·a``
        for a rate ``r`` of ``scaled``, or ``a·b`` of fields ``a``, ``b`` of one observed record
        (a field times itself too when ``squared``)."""
        for record in self.records:
            nums = [float(x) for x in record.values() if isinstance(x, (int, float)) and not isinstance(x, bool)]
            for i, a in enumerate(nums):
                if any(abs(k * a - v) <= TOLERANCE for k in scaled):
                    return True
                for j, b in enumerate(nums):
                    if i != j and any(abs(k * a - b - v) <= TOLERANCE or (added or k == 1.0) and abs(k * a + b - v)
                                      <= TOLERANCE for k in factors):
                        return True
                    if (i != j or squared) and abs(a * b - v) <= TOLERANCE:
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
    describes (``time_arithmetic.series_dates``) and the weekdays it names after them
    (``time_arithmetic.weekdays_after``); its
    times; its date windows; the durations it states, in minutes (``text_values.minutes_in``,
    also numbers: a duration is written in minutes); the spans of days it states
    (``text_values.day_spans``)."""
    tokens = frozenset(_TOKEN.findall(text.lower()) if text.isascii()  # ASCII folds as a whole, the same
                       else (t.casefold() for t in _TOKEN.findall(text)))
    numbers = set(number_values(text))
    stated = date_values(text, today)
    dates = stated | series_dates(text, stated) | weekdays_after(text, stated)
    clocks = sorted({str(m.value) for m in times_in(text)})
    numbers |= range_lengths(clocks)  # a range "13:00-17:00" states its length: 240 minutes, 4 hours
    durations = set(minutes_in(text))
    numbers |= {float(d) for d in durations}  # "an hour and a half" is 90 minutes to write
    percents = [float(m.value) / 100 for m in numbers_in(text) if m.kind == "percent"]
    factors = frozenset(round(f, 4) for p in percents for f in (p, 1 - p, 1 + p) if f > 0)
    return TextEvidence(tokens, frozenset(numbers), frozenset(dates), frozenset(clocks), windows_in(text, today),
                        frozenset(durations), day_spans(text), factors)


_MULTIPLIERS = {"twice": 2.0, "double": 2.0, "doubled": 2.0, "doubling": 2.0, "triple": 3.0, "tripled": 3.0,
                "thrice": 3.0, "quadruple": 4.0, "half": 0.5, "halve": 0.5, "halved": 0.5, "halving": 0.5}
_MULTIPLIER = re.compile(rf"\b(?:{'|'.join(_MULTIPLIERS)})\b"
                         rf"|(?<![\w.])(\d+(?:\.\d+)?|{'|'.join(WORDS)})\s*(?:x|×|times)(?!\w)", re.IGNORECASE)


def multipliers(said: str) -> set[float]:
    """The factors ``said`` names: twice and double 2, triple and thrice 3, quadruple 4, half ½,
    and a number before "times", "x" or "×" ("three times", "3x", "2 ×")."""
    out = set()
    for m in _MULTIPLIER.finditer(said):
        word = (m.group(1) or m.group(0)).casefold()
        out.add(_MULTIPLIERS[word] if word in _MULTIPLIERS else float(WORDS.get(word) or word))
    return out


_AVERAGE = re.compile(r"\b(?:average|averages|averaged|mean|avg|typical|typically)\b", re.IGNORECASE)
"""Words that ask for a group's mean ("the average order", "a typical week")."""
_COMBINE = re.compile(r"\badd(?:s|ed|ing)?\b[^.;:!?]{0,80}?\b(?:to|onto|into)\b|\bplus\b|\bon top of\b|\bin addition to\b"
                      r"|\bsubtract(?:s|ed|ing)?\b|\bminus\b|\bdeduct(?:s|ed|ing)?\b|\btake\b[^.;:!?]{0,40}?\boff\b"
                      r"|\bnet of\b", re.IGNORECASE)
"""Words that ask for the sum or the difference of two numbers the agent reads ("add the
quantities in their email to what we have on hand", "minus what was refunded")."""
_TOKEN = re.compile(rf"{EMAIL.pattern}|[\w-]+")


def _today(package: TaskPackage) -> date:
    """The package's ``now`` as a day: the clock its texts are read against."""
    return date.fromisoformat(package.now[:10])


def starting_evidence(package: TaskPackage) -> Evidence:
    """What the agent knows before its first step: the request, the tools' schemas (enum values
    and defaults) and the services' documented defaults. The days of a range the request allows
    ("any afternoon wed-fri this week") are the agent's to pick: known dates."""
    today = _today(package)
    evidence = Evidence(said=package.request_and_fact_values(), today=today)
    evidence.read_text(package.request.text, today)
    evidence.windows += [Mention((r.low, r.high), 0, 0, "", "window")
                         for r in allowed_ranges(package.request.text, today) if r.kind == "date"]
    for tool in package.tools:
        for schema in tool.parameters.get("properties", {}).values():
            for v in [*schema.get("enum", []), *([schema["default"]] if "default" in schema else [])]:
                evidence.read_value(v, today)
    evidence.merge(_service_defaults(tuple(package.services), package.service_profile, today))
    return evidence


@lru_cache(maxsize=256)
def _service_defaults(services: tuple[str, ...], profile: str, today: date) -> Evidence:
    """What the documented defaults of the operations of ``services`` tell the agent (shared:
    never changed, only merged)."""
    evidence = Evidence()
    for name in services:
        spec = get_service(name, profile)
        for op in spec.operations if spec else []:
            evidence.read_value(op.defaults, today)
    return evidence


def observe(evidence: Evidence, package: TaskPackage, step: StepRecord, write_fields: set[str] | None) -> None:
    """Add what one step showed the agent; a write's result adds only ``write_fields`` of
    its record (``write_result_fields``)."""
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


def write_result_fields(bound: dict[str, Bound]) -> dict[str, set[str]]:
    """For each write tool of ``bound`` (``effects.bound_tools``), the record fields its result
    adds to the arguments (id, timestamps)."""
    out: dict[str, set[str]] = {}
    for name, b in bound.items():
        if b.op.access == "write":
            out[name] = {b.spec.id_field} | ({b.op.timestamp_field} if b.op.timestamp_field else set())
    return out


def evidence_of(package: TaskPackage, trajectory: Trajectory, include_writes: bool = True) -> Evidence:
    """What the agent could know by the end of ``trajectory`` (without what it wrote, unless
    ``include_writes``)."""
    evidence = starting_evidence(package)
    write_fields = write_result_fields(bound_tools(package))
    for record in trajectory.steps:
        fields = write_fields.get(record.tool or "")
        if include_writes or fields is None:
            observe(evidence, package, record, fields)
    return evidence

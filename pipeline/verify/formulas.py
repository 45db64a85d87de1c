"""Per-record formulas a request states, read into arithmetic over a record's fields.

"Order twice the reorder level minus what we have on hand" is ``2 × reorder_level − quantity`` of
each item ordered. A formula is a sum of terms, each an optional factor ("twice", "double",
"three times", "half", "N times") and a field of the record (named by its own words:
"reorder level" for ``reorder_level``; "on hand", "in stock", "what we have" for the quantity
held) or a plain number, joined by "plus", "and", "minus", "less", "+", "-". Multiplication binds
to the one field that follows it: "twice the reorder level minus what is on hand" is
2·level − held, not 2·(level − held). A level to reach ("order up to double the reorder level",
"top it up to three times the reorder level") is that level less the quantity held. A change by
a percentage ("raise the unit price of every item by 8%", "cut the price by 10 percent") is the
field times 1.08 or 0.9, to the cent. A margin ("ten units above that minimum") is the field plus
or less the number; steps ("take the minimum, multiply by two, and subtract what's on hand") are
read in order on the result so far; "set their reorder level to what is on the shelf plus six" is the
formula after "to"; a word the request defines as a field ("the reorder level on
each item is the minimum we want") is read as that field. A request with no such phrase has no
formula.

A date is computed too when it is a date the agent read moved by a span of days the request
states ("the day before the review", "two working days after the kickoff"): ``date_offsets``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any

from pipeline.core.jsonvalues import leaves
from pipeline.core.package import TaskPackage
from pipeline.core.services import record_id_field
from pipeline.core.text_values import ISO_DATE, WORDS, date_values, day_spans, shifted
from pipeline.core.trajectory import Trajectory
from pipeline.verify.effects import Write

log = logging.getLogger(__name__)
"""Debug lines: what this module read in the request (``synth verify -v`` shows them)."""

_FACTOR = {"twice": 2.0, "double": 2.0, "triple": 3.0, "half": 0.5, "half of": 0.5}
_HELD = ("on hand", "in stock", "what we have", "what is on hand", "what's on hand", "current stock", "stock on hand",
         "what we hold", "what is in stock", "on the shelf", "on the shelves")
_JOIN = re.compile(r"\s*(?:\bplus\b|\bminus\b|\bless\b)\s*|\s+(?:\+|-|–)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Term:
    sign: float
    factor: float
    field: str | None
    number: float | None = None


@dataclass(frozen=True)
class Formula:
    """A formula over one record's fields: the sum of its ``terms``."""

    text: str
    terms: tuple[Term, ...]

    def value(self, record: dict[str, Any]) -> float | None:
        """The formula's value for ``record``; None when a field it needs is not a number there."""
        total = 0.0
        for t in self.terms:
            if t.field is None:
                total += t.sign * t.factor * (t.number or 0.0)
                continue
            v = record.get(t.field)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return None
            total += t.sign * t.factor * float(v)
        return round(total, 2)


def _field_of(phrase: str, fields: list[str], earlier: str = "") -> str | None:
    """The numeric field ``phrase`` names: one whose words it holds ("reorder level"), or the
    quantity held for "on hand", "in stock", "what we have"; or, for a phrase that points back
    ("that level", "this threshold", "that", "it"), the field the request named last in
    ``earlier`` (the text before the phrase) whose last word is the noun pointed with, if any."""
    folded = phrase.casefold()
    named = [f for f in fields if " ".join(f.split("_")) in folded or f in folded or _spoken(f) in folded]
    if named:
        return max(named, key=len)
    word = _FILLER.sub("", folded.strip())
    word = _GENERIC_TAIL.sub("", word) or word  # "its minimum level": the minimum
    alone = [f for f in fields if word in _spoken(f).split()]  # "the minimum" for min_stock
    if len(alone) == 1 and word not in ("stock", "quantity", "level", "price", "amount"):
        return alone[0]
    if any(h in folded for h in _HELD):
        return next((f for f in ("quantity", "stock", "on_hand", "qty") if f in fields), None)
    back = _POINTS_BACK.fullmatch(folded.strip())
    if back is None or not earlier:
        return None
    noun = back.group("noun")
    said = earlier.casefold()
    mentioned = [(max(said.rfind(" ".join(f.split("_"))), said.rfind(_spoken(f))), f) for f in fields
                 if not noun or noun in (f.split("_")[-1], f.split("_")[-1] + "s") or noun in _spoken(f).split()]
    at, field = max(mentioned, default=(-1, None))
    return field if at >= 0 else None


_GENERIC_TAIL = re.compile(r"(?<=\w)\s+(?:stock\s+)?(?:level|threshold|quantity|amount|count)$")
"""A generic noun after the word that names a field: "minimum level", "minimum stock level"."""
_SHORT = {"min": "minimum", "max": "maximum", "qty": "quantity", "amt": "amount", "avg": "average"}


def _spoken(field: str) -> str:
    """A field's name as a request writes it, short words written out: ``min_stock`` is
    "minimum stock"."""
    return " ".join(_SHORT.get(w, w) for w in field.casefold().split("_"))


_POINTS_BACK = re.compile(r"(?:(?:that|this|the\s+same|said)(?:\s+(?P<noun>[a-z]+))?|it|them)")


_FILLER = re.compile(r"^(?:(?:exactly|precisely|just|its|their|the|each|item's|current|currently)\s+)+")
_TIMES = r"\s*(?:times\b|x\b|×|\*)"
_NUMBER_WORD = r"(\d+(?:\.\d+)?|" + "|".join(WORDS) + r")"
_FACTOR_BEFORE = re.compile(_NUMBER_WORD + r"(?P<half>\s+and\s+a\s+half)?" + _TIMES + r"\s*")
_FACTOR_AFTER = re.compile(r"\s+(?:times|x|×|\*|multiplied\s+by)\s*" + _NUMBER_WORD + r"$")


def _number(said: str) -> float:
    return float(said) if said[0].isdigit() else float(WORDS[said])


def _term(part: str, sign: float, fields: list[str], earlier: str = "") -> Term | None:
    """One term: a factor ("twice", "double", "three times", "one and a half times", "3x", "2 ×") before a field, or
    one after it ("the reorder level times two"), or a plain number; words that only point at
    the record ("exactly", "its", "the current") are passed over."""
    said = part.strip().casefold()
    folded = _FILLER.sub("", said)
    factor = 1.0
    for word, k in sorted(_FACTOR.items(), key=lambda kv: -len(kv[0])):
        if folded.startswith(word + " "):
            factor, folded = k, _FILLER.sub("", folded[len(word) + 1:])  # "double its minimum"
            break
    else:
        m = _FACTOR_BEFORE.match(folded)
        if m and m.end() < len(folded):  # "three times", "one and a half times"
            factor, folded = _number(m.group(1)) + (0.5 if m.group("half") else 0.0), folded[m.end():]
        elif (after := _FACTOR_AFTER.search(folded)) is not None:
            factor, folded = _number(after.group(1)), folded[:after.start()]
        else:
            folded = said  # no factor: "the current stock" names the quantity held as it is
    field = _field_of(folded, fields, earlier)
    if field is not None:
        return Term(sign, factor, field)
    m = _PLAIN_NUMBER.fullmatch(folded)
    return Term(sign, factor, None, _number(m.group(1))) if m else None


_PLAIN_NUMBER = re.compile(r"(?:the\s+)?" + _NUMBER_WORD + r"(?:\s+\w+)?")
"""A number term: "20", "the 20 units", "twenty" ("the reorder level plus twenty")."""


_LEAD = re.compile(r"(?:\b(?:for|of|to|at|order|buy|set|make it|quantity of|reach(?:es|ing)?|(?P<have>have|hold)|"
                   r"(?:should|must|will|would|shall|needs?\s+to|has\s+to)\s+be|(?:quantity|amount|number)\s+is)\b|=|"
                   r"(?::|\s[—–-])(?=\s*(?:twice|double|triple|half|\w+(?:\s+and\s+a\s+half)?\s+times|\d+(?:\.\d+)?\s*[x×])\b))"
                   r"\s*(?=(?P<f>[^.;:!?=\n]+))",
                   re.IGNORECASE)
"""Where a formula's phrase starts: after "for", "order", "of", "should be", "the quantity is" …, "=", or a colon or
dash before a factor ("rowlocks — twice the reorder level minus what's on hand — from …")."""


def formula_in(text: str, fields: list[str]) -> Formula | None:
    """``_formula_in`` of ``text`` over ``fields`` (remembered: every write of a package asks)."""
    return _formula_in(text, tuple(fields))


@lru_cache(maxsize=1024)
def _formula_in(text: str, names: tuple[str, ...]) -> Formula | None:
    formula = _read_formula(text, names)
    if formula is not None and log.isEnabledFor(logging.DEBUG):
        log.debug("%r states %r over %s", text[:80], formula.text, [(t.sign, t.factor, t.field) for t in formula.terms])
    return formula


def _read_formula(text: str, names: tuple[str, ...]) -> Formula | None:
    """The per-record formula ``text`` states over ``names`` (numeric field names): a phrase
    after "for", "order", "of" … that reads as two terms or more, or one field with a factor;
    None when there is none."""
    fields = list(names)
    text = _aliased(text, fields)
    held = _field_of("on hand", fields)
    level: Formula | None = None  # "bring it back up to its minimum": one field to reach, if no later phrase says more
    for m in _LEAD.finditer(text):
        joined = _COMMA_JOIN.sub(" ", m.group("f"))  # "twice the minimum stock, minus what's on the shelf": one phrase
        up_to = held is not None and _UP_TO.search(text[:m.end()]) is not None
        inside = _REACH_IN.search(joined) if held is not None else None
        if inside is not None and not _CLAUSE_END.search(joined, 0, inside.start()):
            # "order enough that stock ends up at …", "… big enough that we end up with twice the reorder level on the
            # shelf once it arrives": the level after, however the words before it split
            joined, up_to = _HELD_TAIL.sub("", joined[inside.end():]), True
        phrase = re.split(r",|\(|\)|\s[-–—]\s|\bso\b|\bthen\b|\bfrom\b|\bwith\b|\bfor\b|\bby\b", joined)[0]
        if m.group("have") and not up_to:
            continue  # "have" leads a formula only as a level to reach: "enough that we'll have twice …"
        if m.group(0).casefold().startswith("set") and _SET_TO.match(phrase):
            continue  # "set their reorder level to what is on the shelf plus six": the formula follows "to"
        formula = _parse(phrase, fields, text[:m.start()])
        if formula is None:
            continue
        if len(formula.terms) == 1 and formula.terms[0].factor == 1.0:
            if level is None and up_to and formula.terms[0].field not in (None, held):
                level = Formula(formula.text, (*formula.terms, Term(-1.0, 1.0, held)))
            continue
        if up_to and not any(t.field == held for t in formula.terms):
            formula = Formula(formula.text, (*formula.terms, Term(-1.0, 1.0, held)))  # a level to reach: less what is held
        return formula
    stepped = _stepped(text, fields)
    if stepped is not None:
        return stepped
    for m in _PERCENT_CHANGE.finditer(text):  # "raise the unit price of every item by 8%"
        field = _field_of(m.group("what"), fields)
        if field is not None:
            rate = float(m.group("p")) / 100
            down = m.group("verb").casefold().startswith(("cut", "reduc", "lower", "decreas", "drop", "discount"))
            return Formula(m.group(0), (Term(1.0, 1 - rate if down else 1 + rate, field),))
    return level


_SET_TO = re.compile(r"[^,]+?\s+to\s+\S", re.IGNORECASE)
"""A phrase after "set" that names what is set, then its value after "to"."""
_COMMA_JOIN = re.compile(r"\s*,\s*(?=(?:plus|minus|less)\b)", re.IGNORECASE)
"""A comma before the next term of a formula: the phrase goes on past it."""


_DEFINES = re.compile(r"\b(?:the\s+)?(?P<field>[a-z]+(?:\s+[a-z]+)?)\s+(?:on|of|for)\s+(?:each|every|an?|the)\s+"
                      r"[\w\s-]{0,30}?\s+is\s+(?:the|our)\s+(?P<alias>[a-z]+)\b", re.IGNORECASE)


def _aliased(text: str, fields: list[str]) -> str:
    """``text`` with a word it defines as a field written as that field after the definition:
    "the reorder level on each item is the minimum we want ... take the minimum" reads "take the
    reorder level"."""
    for m in _DEFINES.finditer(text):
        field = _field_of(m.group("field"), fields)
        alias = m.group("alias").casefold()
        if field is not None and alias not in _spoken(field).split():
            words = " ".join(field.split("_"))
            text = text[:m.end()] + re.sub(rf"\b{re.escape(alias)}\b", words, text[m.end():], flags=re.IGNORECASE)
    for m in _DEFINED_AFTER.finditer(text):  # "its minimum level - that's the reorder level set on the item"
        field = _field_of(m.group("field"), fields)
        if field is not None and _field_of(m.group("alias"), fields) is None:
            words = " ".join(field.split("_"))
            return text[:m.start("alias")] + words + text[m.end():]  # the definition said once, as the field
    return text


_DEFINED_AFTER = re.compile(r"\b(?:its|their|the)\s+(?P<alias>[a-z]+(?:\s+[a-z]+)?)(?P<said>\s*(?:[-–—,(]\s*)+"
                            r"(?:that's|that\s+is|i\.e\.|which\s+is|meaning|namely)\s+(?:the\s+|its\s+|their\s+)?"
                            r"(?P<field>[a-z]+(?:\s+[a-z]+)?))", re.IGNORECASE)
"""A phrase named, then said to be a field: "its minimum level - that's the reorder level"."""


_TAKE = re.compile(r"\b(?:take|(?:should|must|would|will|shall|to)\s+be|(?:set|make)\s+(?:it|that|them)(?:\s+to)?)\s+"
                   r"(?P<first>[^,.;:!?\n]+?)\s*(?:,|\bthen\b)\s*(?P<rest>[^.;:!?\n]+)", re.IGNORECASE)
_STEP_SPLIT = re.compile(r"\s*(?:,\s*(?:and\s+)?(?:then\s+)?|\s+and\s+(?:then\s+)?|\s+then\s+)", re.IGNORECASE)
_SCALE = re.compile(rf"^(?:multiply|times|multiplied)\s+(?:it\s+|that\s+|this\s+|the\s+result\s+)?by\s+{_NUMBER_WORD}$|"
                    r"^(?P<word>double|triple|halve)\s+(?:it|that|this)$|^(?P<done>doubled|tripled|halved)$", re.IGNORECASE)
_ADD = re.compile(r"^(?P<op>subtract|take\s+away|deduct|minus|less|add|plus)\s+(?P<what>.+)$", re.IGNORECASE)


_STEP_FACTOR = {"double": 2.0, "doubled": 2.0, "triple": 3.0, "tripled": 3.0, "halve": 0.5, "halved": 0.5}


def _stepped(text: str, fields: list[str]) -> Formula | None:
    """A formula stated as steps on one field: "take the minimum, multiply by two, and subtract
    what's on hand" is 2·minimum − held, and so is "it should be whatever we have on hand, doubled,
    and then add ten on top" 2·held + 10 (each step on the result so far, up to the first that is
    no arithmetic: "and order that many"); None when the first names no field or no step follows."""
    m = _TAKE.search(text)
    first = _term(m.group("first"), 1.0, fields) if m else None
    if m is None or first is None or first.field is None:
        return None
    terms = [first]
    for step in (s for s in _STEP_SPLIT.split(m.group("rest").strip()) if s):
        if (scale := _SCALE.match(step)) is not None:
            word = scale.group("word") or scale.group("done")
            k = _STEP_FACTOR[word.casefold()] if word else _number(scale.group(1).casefold())
            terms = [Term(t.sign, t.factor * k, t.field, t.number) for t in terms]
        elif (add := _ADD.match(step)) is not None and (
                term := _term(add.group("what"), -1.0 if add.group("op").casefold() not in ("add", "plus") else 1.0,
                              fields) or _count_term(add.group("what"), add.group("op"))) is not None:
            terms.append(term)
        else:
            break  # the steps end: "..., and order that many"
    return Formula(m.group(0).strip(), tuple(terms)) if len(terms) > 1 or terms[0].factor != 1.0 else None


_COUNT = re.compile(rf"^(?:the\s+|an?\s+extra\s+|another\s+)?{_NUMBER_WORD}\b", re.IGNORECASE)


def _count_term(what: str, op: str) -> Term | None:
    """A number of items a step adds or takes away, whatever follows it ("six spare boxes on top")."""
    m = _COUNT.match(what.strip())
    if m is None:
        return None
    return Term(1.0 if op.casefold() in ("add", "plus") else -1.0, 1.0, None, _number(m.group(1).casefold()))


_PERCENT_CHANGE = re.compile(
    r"\b(?P<verb>rais|increas|put\s+up|mark\s+up|bump|lift|cut|reduc|lower|decreas|drop|discount)\w*\s+"
    r"(?P<what>[^.;:!?\n]{0,80}?)\s+by\s+(?P<p>\d+(?:\.\d+)?)\s*(?:%|percent\b|per\s?cent\b)", re.IGNORECASE)


_REACH = (r"\b(?:up\s+to|reach(?:es|ing)?|tops?\s+(?:\w+\s+)?up\s+to|brings?\s+(?:\w+\s+)*?(?:up\s+)?to|"
          r"get(?:s|ting)?\s+(?:\w+\s+)?(?:up\s+|back\s+)?to|"
          r"fills?\s+(?:\w+\s+)?(?:up\s+)?to|(?:restock|refill|raise|replenish)(?:s|es)?\s+(?:\w+\s+){0,4}?to|"
          r"\b(?:end|ends|ending)\s+up\s+(?:at|with)|"
          r"\benough\b[^.;!?\n]{0,60}?\b(?:we|you|they|it|there)(?:'ll|\s+will)?\s+(?:have|hold|be\s+at))\s+")
_CLAUSE_END = re.compile(r",|;|\(|\bthen\b|\bso\b(?!\s+that)|\s[-–—]\s", re.IGNORECASE)
"""Where a clause ends before a level to reach: the level belongs to another clause."""
_HELD_TAIL = re.compile(r"\s+(?:on\s+(?:the\s+)?shel(?:f|ves)|in\s+stock|on\s+hand)\b.*$|\s+once\s+.*$", re.IGNORECASE)
"""Where a level to reach is held, after it: "twice the reorder level on the shelf once it arrives"."""
_UP_TO = re.compile(_REACH + "$", re.IGNORECASE)
"""Words just before a phrase that make it a level to reach ("top it up to", "so we end up at")."""
_REACH_IN = re.compile(_REACH, re.IGNORECASE)
"""The same words inside a phrase ("order enough that stock on hand ends up at the reorder level
plus twenty"): what follows them is the level to reach."""


_MARGIN = re.compile(rf"^\s*{_NUMBER_WORD}\s+(?:(?:units?|items?|pieces?|more)\s+)?(?P<side>above|over|more\s+than|beyond|"
                     rf"below|under|short\s+of)\s+(?P<x>.+)$", re.IGNORECASE)
"""A margin on a field: "ten units above that minimum" is the minimum plus 10."""


def _parse(phrase: str, fields: list[str], earlier: str = "") -> Formula | None:
    if (margin := _MARGIN.match(phrase)) is not None:
        side = "minus" if margin.group("side").casefold() in ("below", "under", "short of") else "plus"
        phrase = f"{margin.group('x')} {side} {_number(margin.group(1).casefold()):g}"
    terms: list[Term] = []
    sign = 1.0
    at = 0
    for join in _JOIN.finditer(phrase):
        term = _term(phrase[at:join.start()], sign, fields, earlier)
        if term is None:
            return None
        terms.append(term)
        sign = -1.0 if join.group(0).strip().casefold() in ("minus", "less", "-", "–") else 1.0
        at = join.end()
    last = _term(phrase[at:], sign, fields, earlier)
    if last is None:
        return None
    terms.append(last)
    if not any(t.field for t in terms):
        return None
    return Formula(phrase.strip(), tuple(terms))


@dataclass(frozen=True)
class Computed:
    """A number a write takes that the request's formula decides: the write's step, the argument,
    the value written, and the formula's value for the record the write is aimed at."""

    step: int
    argument: str
    value: float
    expected: float
    formula: Formula
    record: dict[str, Any]


def computed_writes(package: TaskPackage, writes: list[Write], args: dict[int, dict[str, Any]]) -> list[Computed]:
    """The writes aimed at a record (its id among their arguments, or the record an update
    changes) whose one numeric argument the request's formula decides (``formula_in``)."""
    by_id: dict[Any, dict[str, Any]] | None = None  # the state's records by id, once a write needs them
    out: list[Computed] = []
    for w in writes:
        written = args.get(w.step, {})
        values = [(k, v) for k, v in written.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(values) != 1:
            continue  # no one number for a formula to decide
        if by_id is None:  # keyed by "id", or by the collection's own id field ("product_id" on the claw profile)
            by_id = {r.get(key): r for service, collections in package.initial_state.items()
                     for name, rows in collections.items()
                     for key in [record_id_field(f"{service}.{name}", package.service_profile) or "id"]
                     for r in rows if r.get(key) is not None}
        record = next((by_id[v] for v in leaves(written) if isinstance(v, str) and v in by_id), None)
        if w.record_id in by_id and w.bound.op.effect != "create":
            record = by_id[w.record_id]
        if record is None:
            continue
        numeric = [k for k, v in record.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        formula = formula_in(package.request.text, numeric)
        if formula is None or (expected := formula.value(record)) is None:
            continue
        out.append(Computed(w.step, values[0][0], float(values[0][1]), expected, formula, record))
    return out


NEAR_DAYS = 3
"""A written date this many days or fewer from the date a stated span gives is that computation
gone wrong (nine days before instead of ten), not another date."""


@dataclass(frozen=True)
class OffsetDate:
    """A write's date next to the date the request says how to compute: ``source`` (a date an
    earlier tool result shows) moved by ``days`` (working days only when ``working``)."""

    step: int
    argument: str
    value: str
    expected: str
    source: str
    days: int
    working: bool

    @property
    def right(self) -> bool:
        return self.value[:10] == self.expected


def date_offsets(package: TaskPackage, ref: Trajectory, writes: list[Write],
                 args: dict[int, dict[str, Any]]) -> list[OffsetDate]:
    """For each write's date (or date-time) that is not a date an earlier tool result shows as it
    is (record stamps such as ``created_at`` aside), the nearest date (at most ``NEAR_DAYS`` away) that such a date moved by a span of days the
    request states gives (``text_values.day_spans``: "ten days before their contract end date"
    read from a record's notes). Ties: none (the computation is not clear)."""
    spans = day_spans(package.request.text)
    if not spans:
        return []
    today = date.fromisoformat(package.now[:10])
    shown: list[set[str]] = []  # the dates each step's result shows, in step order, read once as far as a write needs
    out: list[OffsetDate] = []
    for w in writes:
        dated = [(k, v) for k, v in args.get(w.step, {}).items() if isinstance(v, str) and ISO_DATE.match(v)]
        if not dated:
            continue
        for s in ref.steps[len(shown):w.step]:
            shown.append(_shown_days(s.result, today) if s.kind == "call" else set())
        seen = set().union(*shown[:w.step])
        for key, value in dated:
            if value[:10] in seen:
                continue
            written = date.fromisoformat(value[:10])
            near = sorted(c for c in {(abs((date.fromisoformat(moved) - written).days), moved, day, sign * n, working)
                                      for day in seen for n, working in spans for sign in (1, -1)
                                      for moved in [shifted(day, sign * n, working)]} if c[0] <= NEAR_DAYS)
            if near and len({m for d, m, *_ in near if d == near[0][0]}) == 1:
                _, moved, day, days, working = near[0]
                out.append(OffsetDate(w.step, key, value, moved, day, days, working))
    return out


def _shown_days(result: Any, today: date) -> set[str]:
    """The days a tool result shows: its dates and date-times, and the dates its texts state
    (record stamps such as ``created_at`` aside: a record's bookkeeping is no date to count from)."""
    texts = [v for k, v in _fields(result) if isinstance(v, str) and not k.endswith("_at")]
    return {v[:10] for v in texts if ISO_DATE.match(v)} | {d for v in texts if " " in v for d in date_values(v, today)}


def _fields(value: Any, key: str = "") -> list[tuple[str, Any]]:
    """Every leaf of ``value`` with the key it sits under (a list's items under the list's key)."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _fields(v, str(k))]
    if isinstance(value, list):
        return [pair for v in value for pair in _fields(v, key)]
    return [(key, value)]

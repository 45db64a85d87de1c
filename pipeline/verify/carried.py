"""Values the agent carries into a write: from what it read, or from what the request told it to
pass on. The raw material of the ``misread_value`` mutation (``mutations.py``).

A value is **carried** into a write argument when the agent must take it from somewhere rather
than choose it:

- a typed value of an argument (a date, a number, a code such as ``SWL-88410-22``) that the
  request does not state and that a read before the write showed, as the whole value of a
  record's field (a due date, an amount) or inside a record's text ("balance of 3,660.00 GBP",
  "expires 2026-12-18"), when the request asks for it: it shares a word with the argument's
  name, the field's name, or the words just before the value in that text ("due", "balance");
- a code (letters and digits, ``INC-4471``, ``58213``, a tracking number) inside text the agent
  composes (a message, a post), that the request dictates (``dictates``: after "that", "saying"
  or "tell" in its sentence), or that a read showed next to words
  the request names as a code ("the tracking number" for "Tracking number: SWL-88410-22"; "his
  order arriving twice" asks for no order number; a read answered as one whole record, a fetched
  page or an article, is a record read), or that is the id of a record read of the kind
  of code the request names ("notify the hook with its ticket number" for ``TKT-042``; a record a
  create returned counts as read: "message Aoife with the order number" for the new ``ord-001``);
- a date or an amount inside text the agent composes that is the whole value of a record's field
  the request asks a message for (``carry_phrase``: "post in #sales the last contact date",
  "email them the amount on invoice inv-203"); a date a text mentions on its own is the agent's.

Identity values (a record's id, email or name) are left to ``perturbations.Alternatives``, which
already swaps them for the most confusable record.

``look_alikes`` gives, for a carried value, what a careless agent writes instead: the same field
of another record of the same list, another value of the same kind in the texts read (the
other forklift's expiry date, the invoice total beside the balance, the other shipment's
tracking number), else the value slightly changed (a day later, one more, two digits swapped).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any

from pipeline.core.text_values import ISO_DATE, WEB_ADDRESS, dates_in, numbers_in, times_in
from pipeline.verify.perturbations import STOPWORDS, shift_date
from pipeline.verify.time_arithmetic import shift_clock

CODE = re.compile(r"(?<![\w@.,/:-])(?:[A-Za-z]{1,6}-?\d{3,}(?:-\d+)*|\d{3,}(?:-\d+)+|\d{5,}"
                  r"|(?=[A-Z]*\d)(?=\d*[A-Z])[A-Z\d]{10,}"
                  r"|(?=[A-Z\d-]*\d)(?=[A-Z\d-]*[A-Z])[A-Z\d]{3,6}(?:-[A-Z\d]{3,6})+)(?![\w@-]|[.,:/]\d)")
"""A code: letters then three digits or more (``INC-4471``, ``SWL-88410-22``, ``KT-3391``),
digit groups joined by hyphens, a bare number of five digits or more (``58213``), ten capital
letters and digits or more mixed (a parcel's ``1Z84E7W20391847762``), or groups of three to six
capitals and digits joined by hyphens, letters and digits both in it (a collection code
``7Q4-KX9``); a bare
number of three or four digits is a code only where a code noun names it (``_NAMED_CODE``:
"PO 7713", "work order 4471", "#4471", "New code: 4471#", "PIN 0932"); amounts ("3,450"), rooms ("Room 101") and years are not."""
_NAMED_CODE = re.compile(r"(?:#|\b(?:po|order|ticket|incident|case|ref|reference|no\.?|number|code|pin|passcode)"
                         r"\s*[#:]?)\s*(\d{3,4})\b(?![.,:/]\d)", re.IGNORECASE)
_SHORT_NUMBER = re.compile(r"(?<![\w.,:/@-])\d{3,4}(?![\w@-]|[.,:/]\d)")
"""A bare number of three or four digits in a composed text: a code only where a read labels it
one (``_read_as_asked``: "New code: 4471#" in the email the reference read)."""
_ASKS_FOR_CODE = re.compile(r"\b([a-z]+)\s+(number|code|id|reference|ref|no\.?)\b", re.IGNORECASE)
_CODE_NOUNS = frozenset({"number", "code"})
"""Nouns of ``_ASKS_FOR_CODE`` that also name the code where a read labels it ("New code: 4471#")."""
_IDENTITY = frozenset({"id", "email", "name"})
_LABEL_WORDS = 4
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")


@dataclass(frozen=True)
class Carried:
    """A value carried into argument ``key`` of reference step ``step``; ``token`` is set when the
    value is a part of the argument's text (then ``value`` is that part)."""

    step: int
    key: str
    value: Any
    token: bool
    others: tuple[Any, ...]
    """The look-alikes, the most plausible first."""
    field: str = ""
    """The field of a record read that holds the value, where the request asks for that field."""
    asked: str = ""
    """The request's words that ask a message for it ("the amount due"), where known."""


def codes_in(text: str) -> list[str]:
    """The codes written in ``text`` (``CODE``, and a short number a code noun names), dates aside."""
    found = [(m.start(), m.group(0)) for m in CODE.finditer(text) if not ISO_DATE.fullmatch(m.group(0))]
    found += [(m.start(1), m.group(1)) for m in _NAMED_CODE.finditer(text)]
    return [code for _, code in sorted(found)]


_DICTATES = re.compile(r"\b(?:that|saying|say|says|tell(?:ing)?|with\s+the\s+news)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?:[^.;!?\n]|[.!?](?=\w)|(?:(?<=\bCo)|(?<=\bLtd)|(?<=\bInc)|(?<=\bCorp)|(?<=\bSt)|"
                       r"(?<=\bMr)|(?<=\bMrs)|(?<=\bMs)|(?<=\bDr))\.)+")
"""A sentence: up to a full stop, unless it is inside a word or ends an abbreviation ("Pelican Print Co.")."""


def dictates(said: str, code: str) -> bool:
    """Whether the request dictates ``code`` as what a message says: the code comes after "that",
    "saying" or "tell" in its sentence ("message Tomas that incident INC-4471 is resolved"); a code
    that only says which thread or record the work is about ("reply about quote Q-2217: tell him
    we accept", "email the customer on ticket tkt-514") is context, not content."""
    folded = code.casefold()
    for m in _SENTENCE.finditer(said):
        sentence = m.group(0)
        at = sentence.casefold().find(folded)
        if at >= 0 and _DICTATES.search(sentence[:at]):
            return True
    return False


def _words(text: str) -> set[str]:
    return {w.casefold().strip("'") for w in _WORD.findall(text)} - STOPWORDS


@lru_cache(maxsize=4096)
def _key_words(key: str) -> frozenset[str]:
    """The words of a field name, with their plurals ("quantity": "quantities", as a request says
    "set the stock quantities")."""
    if not key:
        return frozenset()
    words = {w for w in re.split(r"[_\W]+", key.casefold()) if len(w) > 2} - STOPWORDS
    return frozenset(words | {w[:-1] + "ies" if w.endswith("y") else w + "s" for w in words})


def _labels(text: str, start: int) -> set[str]:
    """The words just before position ``start`` of ``text``, on its line ("Tracking number: ")."""
    line = text[:start].rsplit("\n", 1)[-1]
    return set(list(_words_in_order(line))[-_LABEL_WORDS:])


def _words_in_order(text: str) -> list[str]:
    return [w.casefold().strip("'") for w in _WORD.findall(text) if w.casefold() not in STOPWORDS]


def _texts(records: list[dict[str, Any]]) -> list[str]:
    return [v for r in records for v in r.values() if isinstance(v, str) and len(v) > 20]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return abs(float(a) - float(b)) < 0.005
    return isinstance(a, str) and isinstance(b, str) and a.casefold() == b.casefold()


def _same_as(value: Any) -> Callable[[Any], bool]:
    """``lambda v: _same(v, value)``, with what ``value`` is worked out once: a text matches only
    texts, a number only numbers, anything else nothing."""
    if isinstance(value, str):
        folded = value.casefold()
        return lambda v: isinstance(v, str) and v.casefold() == folded
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and abs(float(v) - float(value)) < 0.005
    return lambda v: False


def _same_of(kind: str, value: Any) -> Callable[[Any], bool]:
    """``_same_as(value)``, where a date is the same as another of its day (a date-time read as
    "Friday 11 December, arriving 09:00" holds the day the text writes)."""
    if kind == "date" and isinstance(value, str):
        day = value[:10]
        return lambda v: isinstance(v, str) and v[:10] == day and ISO_DATE.match(v) is not None
    return _same_as(value)


def _shape(code: str) -> str:
    """A code's shape: its letters kept, each run of digits as its length ("SWL-5.2")."""
    return re.sub(r"\d+", lambda m: str(len(m.group(0))), code.casefold())


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        if ISO_DATE.fullmatch(value[:10]) and (len(value) in (10, 16) or len(value) == 19 and value[16:17] == ":"):
            return "date"  # a day, or a date-time with or without its seconds
        if CODE.fullmatch(value) and not ISO_DATE.match(value):
            return "code"
        if _is_phone(value):
            return "phone"
    return None


PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d ().-]{5,}\d(?![\w])")
"""A phone number: an optional "+", then digits in groups set apart by spaces, dots, dashes or
brackets ("+47 938 60 274", "(01632) 960 452"); seven digits or more (``_is_phone``)."""


def _is_phone(text: str) -> bool:
    """Whether ``text`` is a phone number (``PHONE``, seven digits or more, no date)."""
    return PHONE.fullmatch(text) is not None and sum(c.isdigit() for c in text) >= 7 and not ISO_DATE.match(text)


@lru_cache(maxsize=4096)
def _in_text(kind: str, text: str, today: date) -> tuple[tuple[int, Any], ...]:
    """Where ``text`` writes values of ``kind``: (position, value)."""
    if kind == "date":
        return tuple((m.start, m.value) for m in dates_in(text, today))
    if kind == "number":
        return tuple((m.start, m.value) for m in numbers_in(text))
    if kind == "phone":
        return tuple((m.start(), m.group(0)) for m in PHONE.finditer(text) if _is_phone(m.group(0)))
    return tuple([(m.start(), m.group(0)) for m in CODE.finditer(text)] + [
        (m.start(1), m.group(1)) for m in _NAMED_CODE.finditer(text)])


def _shifted(kind: str, value: Any) -> Any:
    if kind == "date":
        return shift_date(value, 1)
    if kind == "number":
        return value + 1
    digits = [i for i, ch in enumerate(value) if ch.isdigit()]
    for a, b in zip(reversed(digits[:-1]), reversed(digits[1:]), strict=True):
        if value[a] != value[b]:  # two neighbouring digits swapped: INC-4471 -> INC-4417
            return value[:a] + value[b] + value[a + 1:b] + value[a] + value[b + 1:]
    return None


def look_alikes(kind: str, value: Any, lists: list[list[dict[str, Any]]], today: date,
                field: str | None = None) -> list[Any]:
    """What a careless agent writes instead of ``value`` (see the module docstring)."""
    out: list[Any] = []

    def add(v: Any) -> None:
        if kind == "code" and (not isinstance(v, str) or _shape(v) != _shape(value)):
            return  # another kind of code: INC-4471 is no look-alike of PO 7713 (the same shape is the same kind)
        if kind == "date" and isinstance(v, str) and v[:10] == str(value)[:10]:
            return  # the same day: no other date
        if v is not None and not _same(v, value) and not any(_same(v, o) for o in out) \
                and (_kind(v) == kind or kind == "code") \
                or kind == "date" and isinstance(v, str) and v[:10] != str(value)[:10] and v not in out:
            out.append(v[:10] + str(value)[10:] if kind == "date" else v)

    same = _same_of(kind, value)
    for records in lists:
        if field is not None and any(same(r.get(field)) for r in records):
            for r in records:
                add(r.get(field))
    for records in lists:
        for text in _texts(records):
            found = _in_text(kind, text, today)
            if any(same(v) for _, v in found):
                for _, v in found:
                    add(v)
    add(_shifted(kind, value))
    return out


def carried_values(package: Any, said: str, writes: list[tuple[int, dict[str, Any], set[str]]],
                   reads_before: dict[int, list[list[dict[str, Any]]]], identities: set[Any]) -> list[Carried]:
    """The values carried into the reference's writes (see the module docstring). ``writes``:
    (step, resolved arguments, the argument names that are composed text); ``reads_before``:
    the record lists read before each write; ``identities``: the state's ids, emails and names."""
    today = date.fromisoformat(package.now[:10])
    asked = _words(said)
    named = {w.casefold() for m in _ASKS_FOR_CODE.finditer(said)  # "the tracking number"; "code" for "New code:"
             for w in (m.group(1), *({m.group(2).casefold()} & _CODE_NOUNS))}
    as_written = _AS_WRITTEN.search(said) is not None
    out: list[Carried] = []
    for step, args, composed in writes:
        lists = reads_before.get(step, [])
        for key, value in args.items():
            if isinstance(value, str):  # a web address, in a text or a whole field
                out += _addresses_in_text(step, key, value, said, lists)
            if key in composed and isinstance(value, str):
                for token in dict.fromkeys([*codes_in(value), *_SHORT_NUMBER.findall(value)]):
                    told = dictates(said, token)
                    field = _read_as_asked("code", token, lists, named, today, "")
                    if not field:  # not read as a field: a record's id of the kind named, else the text's label
                        field = _id_named(token, lists, named) or field
                    if not told and field is None:
                        continue
                    others = look_alikes("code", token, lists, today, field or None)
                    if others:
                        out.append(Carried(step, key, token, True, tuple(others)))
                out += _values_in_text(step, key, value, said, lists, asked, today)
                continue
            kind = _kind(value)
            if kind is None or value in identities or _told(kind, value, said, today):
                continue
            field = _read_as_asked(kind, value, lists, asked, today, key, as_written)
            if field is None:
                if kind == "number" and (operands := _difference_read(value, lists, said)):
                    out.append(Carried(step, key, value, False, operands))  # "exactly the shortfall": 30 − 18
                continue
            others = look_alikes(kind, value, lists, today, field or None)
            if others:
                out.append(Carried(step, key, value, False, tuple(others)))
            if kind == "date" and (clocks := _other_clocks(value, lists)):
                out.append(Carried(step, key, value, False, clocks))  # the day read right, the time misread
    return out


def _other_clocks(value: str, lists: list[list[dict[str, Any]]]) -> tuple[str, ...]:
    """For a date-time read from a text ("Thursday 10 December at 13:30"), the same day at the
    other clock times the texts read write ("Can Nala come Thursday 10 December at 15:30"), then
    an hour later: what an agent that takes the wrong time writes. Empty for a date, or where no
    text writes the time."""
    clock = value[11:16] if len(value) >= 16 else ""
    if not clock:
        return ()
    texts = [t for records in lists for t in _texts(records)]
    if not any(clock in [m.value for m in times_in(t)] for t in texts):
        return ()  # the time was not read from a text
    others = [*dict.fromkeys(m.value for t in texts for m in times_in(t) if m.value != clock)]
    later = shift_clock(clock, 60)
    others += [later] if later and later not in others else []  # none read: an hour out, as a careless agent writes
    return tuple(f"{value[:11]}{c}{value[16:]}" for c in others)


_DIFFERENCE = re.compile(r"\b(?:shortfall|short|difference|missing|gap|rest|remainder|balance|left\s+over|outstanding)\b",
                         re.IGNORECASE)
"""Words by which a request asks for the difference of two numbers it does not state."""


def _difference_read(value: Any, lists: list[list[dict[str, Any]]], said: str) -> tuple[float, ...]:
    """For a number the request asks to work out as a difference ("place an order for exactly
    the shortfall"), the two numbers one line of a text read gives whose difference it is
    ("Pilsner 30L keg   ordered 30   delivered 18": 12), the larger first: what an agent that
    copies instead of subtracting writes. Empty when the request asks for no difference, or no
    one line holds such a pair."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0 or not _DIFFERENCE.search(said):
        return ()
    for text in (t for records in lists for t in _texts(records)):
        for line in text.splitlines():
            numbers = [m.value for m in numbers_in(line) if m.kind in ("number", "money")]
            for i, a in enumerate(numbers):
                for b in numbers[i + 1:]:
                    if abs(abs(a - b) - value) < 0.005:
                        return (max(a, b), min(a, b))
    return ()


def _id_named(token: str, lists: list[list[dict[str, Any]]], named: set[str]) -> str | None:
    """The field of a record read whose id ``token`` is, when the request names that kind of code
    ("notify the hook with the order number" for ``ord-104``: a word of ``named`` begins with the
    id's letters, or is a word of the field's name, ``order_id``); None otherwise."""
    prefix = re.match(r"[a-z]{2,}", token.casefold())
    for records in lists:
        for r in records:
            for field, v in r.items():
                if not (isinstance(v, str) and v.casefold() == token.casefold()):
                    continue
                if (field == "id" or field.endswith("_id")) and (
                        _key_words(field) & named or prefix and any(w.startswith(prefix.group(0)) for w in named)):
                    return field
    return None


_DATE_FORMATS = ("{iso}", "{d} {B} {Y}", "{d} {B}", "{B} {d}, {Y}", "{B} {d}", "{d} {b} {Y}", "{d} {b}", "{b} {d}",
                 "{A} {d} {B}", "{A}, {d} {B}", "{A} {B} {d}", "{A}, {B} {d}")


def _date_written(iso: str, like: str, was: str) -> str | None:
    """``iso`` written as ``like`` writes ``was`` (an ISO date, "18 December", "Friday 18 December" …)."""
    def forms(day: str) -> list[str]:
        d = date.fromisoformat(day[:10])
        names = {"iso": day[:10], "d": str(d.day), "B": d.strftime("%B"), "b": d.strftime("%b"), "Y": str(d.year),
                 "A": d.strftime("%A")}
        return [f.format(**names) for f in _DATE_FORMATS]
    for form, other in zip(forms(was), forms(iso), strict=True):
        if form.casefold() == like.casefold():
            return other
    return None


_CARRY_VERB = re.compile(r"\b(?:post|email|e-mail|mail|send|tell|notify|message|ping|share|include|give|put|add|"
                         r"let\s+\w+(?:\s+\w+){0,3}?\s+know|with)\b", re.IGNORECASE)


_DETERMINED = re.compile(r"\b(?=(?:the|its|their|his|her|our|your)\s+((?:[\w'-]+\s+){0,3}[\w'-]+))", re.IGNORECASE)
"""A determiner and the (up to four) words after it; each determiner starts one, so "the renewal
number and the close date" holds "the close date" too (a lookahead: the matches overlap)."""


def carry_phrase(said: str, field: str, rivals: Collection[str] = (), pronoun_only: bool = False) -> str:
    """The words by which the request asks a message for the value of a record's ``field`` ("" for
    none): in one sentence,
    after a verb of sending or including ("post", "email … the", "notify … with"), "the" (or "its",
    "their" …) and within three words a word of the field's name ("post in #sales the last contact
    date", "email them the amount on invoice inv-203"), unless a larger share of the words of
    another field of the record (``rivals``) is there ("the amount due" names ``amount``, not
    ``due_date``); "due Monday 7 December" and "ten days before their contract end date" ask no
    message to carry a date read, and "their combined revenue" asks for a figure over the records,
    not one record's ``revenue``. A verb whose object is a pronoun ("look up the new credit limit
    and message it to Ruth") carries what its sentence named before it; ``pronoun_only``: only such."""
    words = _key_words(field)
    if not words:
        return ""
    others = [w for w in map(_key_words, rivals) if w and w != words]
    for m in _SENTENCE.finditer(said):
        sentence = m.group(0)
        verb = _CARRY_VERB.search(sentence)
        if verb is None:
            continue
        rest = sentence[verb.end():]
        if _PRONOUN_OBJECT.match(rest):  # "look up the new credit limit … and message it to Ruth"
            rest = sentence[:verb.start()]
        elif pronoun_only:
            continue
        for phrase in _DETERMINED.finditer(rest):
            said_words = {w.casefold() for w in re.findall(r"[\w'-]+", phrase.group(1))}
            if said_words & _AGGREGATE_WORDS - words:
                continue
            share = len(words & said_words) / len(words)
            if share and not any(len(o & said_words) / len(o) > share for o in others):
                return rest[phrase.start():phrase.end(1)]
    return ""


_PRONOUN_OBJECT = re.compile(r"\s+(?:it|them|that|this)\b(?!\s+(?:the|its|their|his|her|our|your|an?)\b)",
                             re.IGNORECASE)
"""A verb of sending whose object is a pronoun ("message it to Ruth"; not "email them the amount",
where the pronoun is who it goes to): what it carries was named before it."""


_AGGREGATE_WORDS = frozenset({"combined", "overall", "sum", "aggregate", "average", "mean", "cumulative"})
"""Words that make a phrase name a figure over records ("the combined revenue", "their average
order value"), which no one record's field holds ("total" is not one: "the total on invoice
inv-203" is that invoice's)."""


def _fields_beside(field: str, lists: list[list[dict[str, Any]]]) -> set[str]:
    """The other fields of the records read that hold ``field``."""
    return {k for records in lists for r in records if field in r for k in r} - {field}


_ASKS_ADDRESS = re.compile(r"\b(?:url|link|endpoint|webhook|address|domain)\b", re.IGNORECASE)


def _addresses_in_text(step: int, key: str, text: str, said: str, lists: list[list[dict[str, Any]]]) -> list[Carried]:
    """The web addresses a written text carries from what was read ("the new webhook address" a
    changelog gives), where the request speaks of an address, URL, link, endpoint or webhook and
    does not state it: each with the other addresses of the same host the texts read give (the
    retired ``…/v2/events`` beside ``…/v3/events``), the look-alike a careless agent copies."""
    written = WEB_ADDRESS.findall(text) if "://" in text else []
    if not written or not _ASKS_ADDRESS.search(said):
        return []
    read = [u for records in lists for t in _texts(records) for u in WEB_ADDRESS.findall(t)]
    out: list[Carried] = []
    for url in dict.fromkeys(written):
        if url in said or url not in read:
            continue  # told by the request, or not read: nothing to misread
        host = url.split("/")[2]
        others = tuple(dict.fromkeys(u for u in read if u != url and u.split("/")[2] == host))
        if others:
            out.append(Carried(step, key, url, True, others))
    return out


def _values_in_text(step: int, key: str, text: str, said: str, lists: list[list[dict[str, Any]]], asked: set[str],
                    today: date) -> list[Carried]:
    """The dates and amounts a composed text carries from what was read, where the request asks
    for them (a word of the record's field's name, or of the words before it in a text read: "the
    date the inspection is due", "the amount due on inv-203"), each with its look-alikes written
    as the text writes it ("Friday 18 December" beside "Monday 21 December", "€2,460.00" beside
    "€1,850.00"); values the request states are its own (``_told``)."""
    out: list[Carried] = []
    for m in dates_in(text, today):
        if _told("date", m.value, said, today):
            continue
        field = _read_as_asked("date", m.value, lists, asked, today, "")
        if not field or not (phrase := carry_phrase(said, field, _fields_beside(field, lists))):
            continue
        others = [w for o in look_alikes("date", m.value, lists, today, field or None)
                  if (w := _date_written(str(o), m.text, m.value)) is not None and w not in text]
        if others:
            out.append(Carried(step, key, m.text, True, tuple(others), field, phrase))
    for n in numbers_in(text):
        if n.kind not in ("money", "number") or not _AMOUNT.fullmatch(n.text.strip(" €$£")) and n.kind != "money":
            continue
        if _told("number", n.value, said, today):
            continue
        field = _read_as_asked("number", n.value, lists, asked, today, "")
        labelled = field == "" and key in _MESSAGE_KEYS  # inside a text read: its label there ("credit limit raised
        if labelled:  # to …"), carried into a message only where the request names it and sends it on ("message it")
            field = _asked_label(n.value, lists, asked, today) or None
        if not field or not (phrase := carry_phrase(said, field, _fields_beside(field, lists), pronoun_only=labelled)):
            continue
        digits = _DIGITS.search(n.text)
        if digits is None:
            continue
        others = [n.text.replace(digits.group(0), _number_written(float(o), digits.group(0)))
                  for o in look_alikes("number", n.value, lists, today, field or None) if isinstance(o, (int, float))]
        others = [o for o in others if o not in text]
        if others:
            out.append(Carried(step, key, n.text, True, tuple(others), field, phrase))
    return out


_MESSAGE_KEYS = frozenset({"message", "body", "text", "content"})
"""The arguments that are a message's text (not a record's description or notes)."""


def _asked_label(value: float, lists: list[list[dict[str, Any]]], asked: set[str], today: date) -> str:
    """The words a text read labels the number ``value`` with that the request uses too, in the
    text's order ("credit limit" of "credit limit raised to 7,500 GBP"); "" for none."""
    for records in lists:
        for r in records:
            for v in r.values():
                if not (isinstance(v, str) and len(v) > 20):
                    continue
                for start, found in _in_text("number", v, today):
                    if abs(float(found) - value) < 0.005:
                        line = v[:start].rsplit("\n", 1)[-1]
                        words = [w for w in _words_in_order(line)[-_LABEL_WORDS:] if w in asked]
                        if words:
                            return " ".join(dict.fromkeys(words))
    return ""


_AMOUNT = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d{2}")
"""An amount as a text writes it: thousands separated, or cents (a bare whole number is a count or a code)."""
_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _number_written(value: float, like: str) -> str:
    decimals = len(like.split(".", 1)[1]) if "." in like else 0
    return f"{value:,.{decimals}f}" if "," in like else f"{value:.{decimals}f}"


def _told(kind: str, value: Any, said: str, today: date) -> bool:
    """Whether the request states ``value`` itself (then ``perturbations.Alternatives`` has it)."""
    if kind == "date":
        return any(m.value == value[:10] for m in dates_in(said, today))
    if kind == "number":
        return any(_same(m.value, value) for m in numbers_in(said))
    return str(value).casefold() in said.casefold()


_AS_WRITTEN = re.compile(
    r"\bas\s+(?:it(?:'s|\s+is)\s+)?(?:written|listed|stated|given|specified|noted|set\s+out|laid\s+out)\s+"
    r"(?:there\b|(?:on|in)\s+(?:it|them|the\s+\w+|(?:her|his|their|my|our)\s+\w+)\b)|"
    r"\bexactly\s+as\s+(?:it|the\s+\w+)\s+says\b", re.IGNORECASE)
"""The request hands the work to a text it points at ("place the order exactly as written on it", "as
listed in her note"): every value the agent reads there is one it asks for."""


def _read_as_asked(kind: str, value: Any, lists: list[list[dict[str, Any]]], asked: set[str], today: date,
                   key: str, every: bool = False) -> str | None:
    """Where a read showed ``value`` in a way the request asks for: the name of the record's field
    holding it, "" when it is inside a text next to words the request uses (the label before it,
    or for a number the noun it counts), or anywhere read when ``every`` (the request hands the
    work to what it reads: ``_AS_WRITTEN``); None otherwise."""
    key_asked = every or bool(_key_words(key) & asked)
    same = _same_of(kind, value)
    for records in lists:
        for r in records:
            for field, v in r.items():
                if field in _IDENTITY or field.endswith("_id"):
                    continue
                if same(v) and (key_asked or _key_words(field) & asked):
                    return field
                if isinstance(v, str) and len(v) > 20:
                    for start, found in _in_text(kind, v, today):
                        if same(found) and (key_asked or _labels(v, start) & asked
                                            or kind == "number" and _counted_noun(v, start) in asked):
                            return ""
    return None


_COUNTED_NOUN = re.compile(r"\D{0,3}\d[\d.,]*\s*([A-Za-z][\w'-]*)")


def _counted_noun(text: str, start: int) -> str | None:
    """The word just after the number at ``start`` of ``text``, folded: what it counts ("36 cases
    of Barista Oat": "cases"), a label the request may use of it too ("how many cases")."""
    m = _COUNTED_NOUN.match(text, start)
    return m.group(1).casefold() if m else None

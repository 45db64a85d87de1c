"""Whether a text an agent can read gives a hidden fact away (``hidden_facts.py``).

A text gives the fact away when it states the value, in any form of its kind, and singles it out:

- **mentions** of a value of the fact's kind: a date in any form ``dates_in`` reads ("Wednesday
  9 December", "9 Dec", "the 9th", "next Wednesday": both of its readings); a weekday written
  beside a date is that date's, not a date of its own. A clock time in any form ``times_in`` reads
  ("half past two", "2:30 pm", "14:30") or written with a dot after "at" or before am/pm
  ("at 14.30"); a number ("forty", "40", "1,200"); an address; any other value (a room, a name) as
  a whole word, any case;
- a mention is **offered as a choice** when the words around it offer options ("between", "either",
  "your call") or it is joined to another value of its kind ("Tuesday or Wednesday", "9:00 or
  11:30", "30 to 40"), or, for a value of no kind, it stands beside "or" ("the Fjord Room or the
  Delta Room");
- a mention is **ruled out** when its own clause refuses it ("Wednesday is full", "11:30 is no
  longer free", "the Fjord Room is closed");
- **rivals** are the other values of its kind the text states (another date, time, address; another
  number of the mention's sentence; another name ending in the same word: "Delta Room"); a rival
  its own clause rules out is none. With rivals left, the mention singles the value out only when
  its words (the words next to it, then its clause) name the fact more than each rival's do ("will
  now be due on 2026-12-22" beside "as agreed on the phone this morning", for a due date), or tie it
  to the request more than each rival's do (the words next to it, then its clause, then its
  sentence: "The promo review is on Monday 7 December. Could we go through the shelf plan on
  Tuesday 8 December?");
- with no rival, the value is the one of its kind there, and singled out, unless its sentence
  **speaks of something else**: it shares no word with the request and names something of its own
  beyond the words of dates, times and availability ("Tuesday 8 December is our promo review" for a
  request about the shelf plan; "Tuesday 8 December suits me" speaks of nothing else).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from pipeline.core.text_values import (
    EMAIL,
    MONTHS,
    WEEKDAYS,
    clock_value,
    date_values,
    dates_in,
    has_digit,
    number_values,
    numbers_in,
    times_in,
)
from pipeline.core.user import kind_of
from pipeline.verify.perturbations import content_words


@dataclass(frozen=True)
class Said:
    """One value of a kind written in a text: the values it can mean, and where."""

    values: frozenset[str]
    start: int
    end: int


_WEEKDAY_ONLY = re.compile(r"(?:(?:next|this|on)\s+)?(?:" + "|".join(WEEKDAYS) + r")", re.IGNORECASE)
_BESIDE = re.compile(r"[\s,(]*(?:the\s+)?", re.IGNORECASE)
_DOT_TIME = re.compile(r"(?:(?<=\bat\s)|(?<=\bfrom\s)|(?<=\bby\s))([01]?\d|2[0-3])\.([0-5]\d)(?![\d.]\d)"
                       r"(?:\s*([ap])\.?m\.?\b)?|(?<![\d.])([01]?\d|2[0-3])\.([0-5]\d)\s*([ap])\.?m\.?\b", re.IGNORECASE)


def _dates(text: str, today: date) -> list[Said]:
    found = dates_in(text, today)
    out: list[Said] = []
    for m in found:
        if _WEEKDAY_ONLY.fullmatch(m.text):
            # "Wednesday 9 December", "9 December (Wednesday)": the weekday is the date's
            if any(_BESIDE.fullmatch(text[m.end:o.start]) or _BESIDE.fullmatch(text[o.end:m.start])
                   for o in found if o is not m and not _WEEKDAY_ONLY.fullmatch(o.text)):
                continue
            out.append(Said(date_values(m.text, today), m.start, m.end))  # "next Wednesday": both readings
        else:
            out.append(Said(frozenset({str(m.value)}), m.start, m.end))
    return out


def _times(text: str) -> list[Said]:
    out = [Said(frozenset({str(m.value)}), m.start, m.end) for m in times_in(text)]
    for m in _DOT_TIME.finditer(text) if "." in text else ():
        hour, minute, half = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), m.group(5), m.group(6))
        h = int(hour)
        if half:
            h = h + 12 if half.casefold() == "p" and h < 12 else 0 if half.casefold() == "a" and h == 12 else h
        if not any(o.start <= m.start() < o.end for o in out):
            out.append(Said(frozenset({f"{h:02d}:{minute}"}), m.start(), m.end()))
    return out


def _numbers(text: str, today: date) -> list[Said]:
    taken = [(s.start, s.end) for s in _dates(text, today) + _times(text)]
    return [Said(frozenset({_number(float(m.value))}), m.start, m.end) for m in numbers_in(text)
            if not any(a < m.end and m.start < b for a, b in taken)]


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _words(value: str, text: str) -> list[Said]:
    pattern = re.compile(rf"(?<![\w@.-]){re.escape(value)}(?![\w@-]|\.\w)", re.IGNORECASE)
    return [Said(frozenset({value.casefold()}), m.start(), m.end()) for m in pattern.finditer(text)]


def _look_alikes(value: str, text: str) -> list[Said]:
    """Other names ending in the value's last word ("Delta Room" beside "Fjord Room")."""
    words = value.split()
    if len(words) < 2 or not words[-1][:1].isalpha():
        return []
    pattern = re.compile(rf"\b((?:[A-Z][\w'-]*\s+){{1,{len(words) - 1}}}){re.escape(words[-1])}\b")
    return [Said(frozenset({m.group(0).casefold()}), m.start(), m.end()) for m in pattern.finditer(text)
            if m.group(0).casefold() != value.casefold() and not m.group(0).casefold().endswith(" " + value.casefold())]


def _kind(value: str) -> str:
    kind = kind_of(value)
    return "date" if kind == "datetime" else kind


def _target(value: str) -> str:
    kind = _kind(value)
    if kind == "date":
        return value[:10]
    if kind == "time":
        return clock_value(value) or value
    if kind == "number":
        return _number(float(value))
    return value.casefold()


def _said(value: str, text: str, today: date) -> list[Said]:
    """Every value of the kind of ``value`` that ``text`` writes."""
    kind = _kind(value)
    if kind == "date":
        return _dates(text, today)
    if kind == "time":
        return _times(text)
    if kind == "number":
        return _numbers(text, today)
    if kind == "email":
        return [Said(frozenset({m.group(0).casefold()}), m.start(), m.end()) for m in EMAIL.finditer(text)]
    return _words(value, text) + _look_alikes(value, text)


# ----------------------------------------------------------------------------- clauses and sentences

_CLAUSE = re.compile(r"[,;:.!?()\n]|\s(?:but|and|so|although|though|whereas|while)\s|\s[-–—]\s", re.IGNORECASE)
_SENTENCE = re.compile(r"[!?\n]|\.(?=\s|$)")


def _span(text: str, start: int, end: int, splitter: re.Pattern[str]) -> str:
    begin, stop = _bounds(text, start, end, splitter)
    return text[begin:stop]


def _bounds(text: str, start: int, end: int, splitter: re.Pattern[str]) -> tuple[int, int]:
    """Where the part of ``text`` (clause, sentence) holding ``start``–``end`` begins and stops."""
    begin = max((m.end() for m in splitter.finditer(text, 0, start) if m.end() <= start), default=0)
    return begin, next((m.start() for m in splitter.finditer(text, end)), len(text))


def _clause(text: str, s: Said) -> str:
    # a dot inside "14.30" or "1,200.50" ends nothing: look past the value itself
    return _span(text, s.start, s.end, _CLAUSE)


def _sentence(text: str, s: Said) -> str:
    return _span(text, s.start, s.end, _SENTENCE)


_CHOICE = re.compile(r"\b(?:between|either|one of|options?|choices?|choose|pick|undecided|not (?:yet )?(?:settled|"
                     r"decided)|haven'?t (?:yet )?(?:settled|decided)|up to you|your call|tbc|to be confirmed|"
                     r"or so|maybe|perhaps|possibly)\b", re.IGNORECASE)
"""Words by which a text offers a value as one option among others (or as a guess)."""
_JOINED = re.compile(r"\s*(?:,|/|-|–|or|and|to|,\s*or|,\s*and)\s*(?:the\s+|on\s+|at\s+)?", re.IGNORECASE)
_OR_BEFORE = re.compile(r"\bor\s+(?:the\s+|on\s+|at\s+)?$", re.IGNORECASE)
_OR_AFTER = re.compile(r"\s*,?\s*or\b", re.IGNORECASE)
"""A bare "or" just before a value, or just after it (searched in the whole text, so that the "or"
ending "Okafor" is no word)."""
_NEAR = 50

_OUT = re.compile(r"\b(?:not|no longer|never|can'?t|cannot|won'?t|isn'?t|aren'?t|doesn'?t|unavailable|fully booked|"
                  r"(?:is|are|am|'s)\s+(?:full|out|away|off|busy|closed|gone)|cancel(?:led|ed)?|closed|"
                  r"under renovation|out of order|clash(?:es)?|conflicts?)\b", re.IGNORECASE)
"""Words by which a clause rules its value out, wherever they stand in it."""
_OUT_BEFORE = re.compile(r"\b(?:instead of|rather than|(?:moved|changed|away) from)\b", re.IGNORECASE)
"""Words that rule out the value they come before ("rather than to Mireille", "moved from 14:00")."""
_OUT_RIVAL = re.compile(r"\b(?:was|old|wrong|struck|(?:is|are)\s+(?:booked|taken))\b", re.IGNORECASE)
"""For another value: also the old one ("was 14:00"), one taken by something else."""


def _offered(text: str, s: Said, rivals: list[Said], kind: str) -> bool:
    """Whether the text offers the value as one option among others (beside a bare "or", only a
    value of no kind: "kofi@dockwell.example or +44 20 5550 1188" offers two ways to reach him,
    not two addresses)."""
    window = text[max(0, s.start - _NEAR):s.end + _NEAR]
    if _CHOICE.search(_sentence(text, s)) and _CHOICE.search(window):
        return True
    for r in rivals:
        between = text[s.end:r.start] if r.start >= s.end else text[r.end:s.start]
        if _JOINED.fullmatch(between):
            return True
    return kind == "text" and bool(_OR_BEFORE.search(text, max(0, s.start - 12), s.start)
                                   or _OR_AFTER.match(text, s.end, s.end + 12))


def _ruled_out(text: str, s: Said, rival: bool = False) -> bool:
    """Whether the mention's clause refuses it ("Wednesday is full", "instead of the 9th")."""
    clause = _clause(text, s)
    at = clause.find(text[s.start:s.end])
    before = clause[:at] if at >= 0 else clause
    return bool(_OUT.search(clause) or _OUT_BEFORE.search(before) or (rival and _OUT_RIVAL.search(clause)))


# ----------------------------------------------------------------------------- what the text is about

_ABOUT_NOTHING = frozenset({
    "suits", "suit", "works", "work", "fine", "good", "great", "perfect", "okay", "free", "available", "best",
    "better", "prefer", "prefers", "preferred", "preference", "confirmed", "confirm", "confirming", "booked", "book",
    "moved", "now", "let's", "lets", "see", "then", "meet", "meeting", "call", "slot", "time", "day", "date",
    "week", "morning", "afternoon", "evening", "noon", "midday", "please", "thanks", "sure", "yes", "will", "shall",
    "should", "would", "going", "plan", "planned", "set", "scheduled", "schedule", "pencilled", "penciled", "agreed",
    "decided", "settled", "final", "finally", "instead", "happy", "wants", "want", "wanted", "like", "likes", "said",
    "says", "asked", "told", "mentioned", "wrote", "called", "replied", "reminder", "remember", "don't", "forget",
    "hey", "cheers", "update", "updated", "change", "changed", "new", "latest", "earliest", "start",
    "starts", "starting", "begin", "begins", "end", "ends", "from", "until", "till", "around", "about", "exactly",
    "sharp", "onwards", "earlier", "later", "today", "tomorrow", "tonight", "this", "coming", "upcoming",
    "need", "needs", "needed", "total", "amount", "number", "count", "quantity", "room", "place", "venue", "location",
    "held", "hold", "holding", "done", "there", "here", "put", "pencil", "make", "it's", "that's", "we're",
    "i'm", "you're", "they're", "he's", "she's", "we'll", "i'll", "they'll", "ideal",
})
"""Words of a sentence that name nothing of their own: availability, scheduling, reporting."""
_DATE_WORDS = frozenset(WEEKDAYS) | frozenset(MONTHS) | frozenset(m[:3] for m in MONTHS)


def _stems(text: str) -> frozenset[str]:
    """A text's content words, folded further: "Palsson's" is "palsson", "plans" is "plan"."""
    return frozenset(re.sub(r"(?:'s|s)$", "", w) for w in content_words(text))


def _tie(text: str, s: Said, wanted: frozenset[str]) -> tuple[int, int, int]:
    """How closely the words around a mention tie it to the request: the next words (within its
    sentence: "done 27 Nov. Scaffolding comes down …" ties 27 November to nothing), the clause,
    the sentence."""
    begin, stop = _bounds(text, s.start, s.end, _SENTENCE)
    before = re.findall(r"[\w'-]+", text[max(begin, s.start - 40):s.start])[-2:]
    after = re.findall(r"[\w'-]+", text[s.end:min(stop, s.end + 40)])[:2]
    return (len(_stems(" ".join(before + after)) & wanted), len(_stems(_without(_clause(text, s), text, s)) & wanted),
            len(_stems(_without(text[begin:stop], text, s)) & wanted))


def _without(part: str, text: str, s: Said) -> str:
    """``part`` of ``text`` without the mention's own words ("Room" of "Fjord Room" ties nothing)."""
    return part.replace(text[s.start:s.end], " ")


_EVENTS = frozenset({
    "review", "dinner", "lunch", "breakfast", "party", "training", "workshop", "offsite", "standup", "stand-up", "sync",
    "appointment", "interview", "demo", "launch", "webinar", "conference", "visit", "trip", "flight", "holiday",
    "vacation", "gym", "yoga", "lesson", "session", "presentation", "kickoff", "kick-off", "retro",
    "retrospective", "deadline", "delivery", "audit", "inspection", "ceremony", "gala", "wedding",
    "birthday", "drinks", "screening", "rehearsal", "recital", "concert", "seminar", "briefing",
    "onboarding", "induction", "handover", "checkup", "check-up", "dentist", "haircut", "pickup",
    "pick-up", "dropoff", "drop-off", "renovation", "maintenance", "outage", "sprint", "pilot",
    "exam", "expo", "summit", "festival", "reception", "townhall", "town-hall", "all-hands",
    "fundraiser", "tasting", "walkthrough", "orientation", "retreat",
})
"""Words naming an event, an occasion or an errand: a sentence naming one the request does not
speaks of it."""


def _about_else(text: str, s: Said, wanted: frozenset[str], context: str) -> bool:
    """Whether the mention's sentence speaks of something the request does not: it shares no word
    with it, and it names an event of its own ("Tuesday 8 December is our promo review"), or the
    rest of its record (``context``) shares no word with the request either (a note titled "Board
    dinner")."""
    sentence = _without(_sentence(text, s), text, s)
    if _stems(sentence) & wanted:
        return False
    words = {re.sub(r"(?:'s|s)$", "", w) for w in content_words(sentence) - content_words(text[s.start:s.end])}
    if words & _EVENTS - wanted:
        return True
    rest = _stems(context)
    return bool(rest) and not rest & wanted and bool(rest - _ABOUT_NOTHING - _DATE_WORDS)


# ----------------------------------------------------------------------------- the rule


def _may_state(value: str, target: str, text: str, today: date) -> bool:
    """A quick test, from the cached readings of the text: whether it can state the value at all."""
    kind = _kind(value)
    if kind == "date":
        return target in date_values(text, today)
    if kind == "time":
        return target in {str(m.value) for m in times_in(text)} or ("." in text and has_digit(text))
    if kind == "number":
        return float(target) in number_values(text)
    return target in text.casefold()


def states(value: str, text: str, today: date) -> bool:
    """Whether ``text`` writes ``value`` in any form of its kind."""
    target = _target(value)
    return any(target in s.values for s in _said(value, text, today))


def singles_out(value: str, text: str, request: str, today: date, context: str = "", about: str = "") -> bool:
    """Whether ``text`` states ``value`` and singles it out (see the module docstring); ``context``
    is the rest of the record the text is a field of (a note's title, a message's subject);
    ``about`` the words that name the fact (its key, the words that make the user reveal it)."""
    return _singles_out(value, text, request, today, context, about)


@lru_cache(maxsize=8192)
def _singles_out(value: str, text: str, request: str, today: date, context: str, about: str) -> bool:
    target = _target(value)
    if not _may_state(value, target, text, today):
        return False
    said = _said(value, text, today)
    mine = [s for s in said if target in s.values]
    if not mine:
        return False
    others = [s for s in said if target not in s.values]
    kind = _kind(value)
    wanted = _stems(request)
    for s in mine:
        rivals = [r for r in others if kind != "number" or _sentence(text, r) == _sentence(text, s)]
        if _offered(text, s, rivals, kind) or _ruled_out(text, s):
            continue
        live = [r for r in rivals if not _ruled_out(text, r, rival=True)]
        if live:
            named = _stems(about.replace("_", " "))
            own = _tie(text, s, named)[:2]  # "will now be due on 2026-12-22" for the due date
            if any(own) and all(own > _tie(text, r, named)[:2] for r in live):
                return True
            tie = _tie(text, s, wanted)
            if all(tie > _tie(text, r, wanted) for r in live):
                return True
            continue
        if not _about_else(text, s, wanted, context):
            return True
    return False



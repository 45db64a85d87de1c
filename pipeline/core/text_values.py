"""The values a text states, in the forms people write them.

- **Numbers**: digits (``5``, ``4000``), with thousands separators and decimals (``4,000``,
  ``1,250.50``), with a currency (``$4,000``, ``4,000 USD``, ``€12``), as a percent (``12%``, read as
  12), as words (``five``, ``twenty-five``, ``a dozen``, ``a couple``). Digits that are part of a
  date, a time, an id or an email are not numbers of the text.
- **Dates** relative to a clock (the package's ``now``): ISO (``2026-12-03``), month and day
  (``December 3``, ``Dec 3rd``, ``3 December``), ``12/03``, an ordinal of the clock's month or the
  next (``the 3rd``), a weekday (``Thursday``: the next one after the clock; ``next Thursday``:
  the one in the following week), ``today``, ``tomorrow``, ``in N days``.
- **Windows** (a date range the text allows, for "any weekday next week" or "by Friday"):
  ``this week``, ``next week``, ``this month``, ``next month``, ``by``/``before``/``until`` a date.
- **Times**: ``14:00``, ``2 pm``, ``2:30pm``, ``noon``, ``midnight``.

Every function returns what it found with its character span, so callers can replace mentions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100, "dozen": 12, "couple": 2, "pair": 2,
}
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
CURRENCY_SYMBOLS = "$€£¥"
CURRENCY_CODES = ("usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "inr", "dollars", "euros", "pounds")


@dataclass(frozen=True)
class Mention:
    """A value found in a text: ``value`` (a float, an ISO date, an ``HH:MM`` time, or a window
    ``(first, last)`` of ISO dates), where it is, and how it was written."""

    value: object
    start: int
    end: int
    text: str
    kind: str  # number | money | percent | word | date | window | time


# --------------------------------------------------------------------------- numbers

_DIGIT = re.compile(r"\d")


def has_digit(text: str) -> bool:
    """Whether ``text`` holds a digit (a character ``\\d`` matches): a cheap test before patterns
    that only match around one."""
    return _DIGIT.search(text) is not None

_WORD_RUN = re.compile(r"\w+")


@lru_cache(maxsize=4096)
def _ascii_words(text: str) -> frozenset[str] | None:
    """The runs of word characters of an ASCII text, lower-cased; None for any other text."""
    return frozenset(_WORD_RUN.findall(text.lower())) if text.isascii() else None


def may_say(text: str, words: frozenset[str]) -> bool:
    """False when ``text`` is ASCII and holds none of ``words`` as a whole word (folded): then a
    case-insensitive pattern that only matches one of them as a whole word finds nothing in it.
    A cheap test before such a pattern; True for other texts (Unicode case folding is the
    pattern's to decide)."""
    found = _ascii_words(text)
    return found is None or not found.isdisjoint(words)


_NUMBER_WORDS = frozenset(WORDS)  # "twenty-five" holds the whole word "twenty"
_WEEKDAY_WORDS = frozenset(WEEKDAYS)
_RELATIVE_WORDS = frozenset({"today", "tomorrow", "day", "days"})
_WINDOW_WORDS = frozenset({"week", "month", "by", "before", "until", "later"})
_NAMED_WORDS = frozenset({"noon", "midday", "midnight"})
_THE = frozenset({"the"})
_MONTH_PREFIXES = frozenset(m[:3] for m in MONTHS)


def _names_a_month(text: str) -> bool:
    """False when ``text`` is ASCII and no word of it begins as a month does ("dec", "December"):
    the month-and-day patterns find nothing in it then."""
    found = _ascii_words(text)
    return found is None or any(w[:3] in _MONTH_PREFIXES for w in found)
_NUMBER = re.compile(
    r"(?P<pre>[" + CURRENCY_SYMBOLS + r"]\s?)?"
    r"(?<![\w.:/@#-])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![a-jl-zA-JL-Z_@]|[kKmM]\w|\d|[:/-]\d|\.\d|\s?[ap]\.?m\b)"
    r"(?P<scale>[kKmM]\b)?"
    r"(?P<post>\s?%|\s?(?:" + "|".join(CURRENCY_CODES) + r")\b)?",
    re.IGNORECASE,
)
_WORD_NUMBER = re.compile(
    r"\b(?:a\s+)?(?P<w>(?:" + "|".join(_TENS) + r")-(?:" + "|".join(_UNITS) + r")|" + "|".join(WORDS) + r")\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def numbers_in(text: str) -> tuple[Mention, ...]:
    """Every number the text states (digits in any of the forms above, and number words)."""
    out: list[Mention] = []
    for m in _NUMBER.finditer(text) if has_digit(text) else ():
        raw = m.group("num")
        if _inside_token(text, m.start("num"), m.end("num")):
            continue
        value = float(raw.replace(",", "")) * {"k": 1e3, "m": 1e6}.get((m.group("scale") or "").casefold(), 1)
        post = (m.group("post") or "").strip().casefold()
        kind = "percent" if post == "%" else "money" if (m.group("pre") or post) else "number"
        out.append(Mention(value, m.start(), m.end(), m.group(0), kind))
    for m in _WORD_NUMBER.finditer(text) if may_say(text, _NUMBER_WORDS) else ():
        word = m.group("w").casefold()
        if "-" in word:
            tens, unit = word.split("-")
            value = WORDS[tens] + WORDS[unit]
        else:
            value = WORDS[word]
        if word == "one" and not _COUNTED.match(text[m.end():]):
            continue  # "one" is usually a pronoun ("the one in Sales"), not a count
        out.append(Mention(float(value), m.start("w"), m.end("w"), m.group("w"), "word"))
    return tuple(sorted(out, key=lambda x: x.start))


def _inside_token(text: str, start: int, end: int) -> bool:
    """Digits that belong to a longer token: an id (``todo-004``), a date, a time, an email, a phone."""
    before = text[max(0, start - 12):start]
    after = text[end:end + 3]
    if _TOKEN_BEFORE.search(before):
        return True
    return bool(_TOKEN_AFTER.match(after))


_COUNTED = re.compile(r"\s+(?:more|extra|new|additional)\b|\s+\w+s\b")
_TOKEN_BEFORE = re.compile(r"[A-Za-z]-$|[+]\d?-?$|\d[-/]$|\d{4}-\d\d-$")
_TOKEN_AFTER = re.compile(r"-\d|/\d|:\d|\.\d\d?-")


@lru_cache(maxsize=4096)
def number_values(text: str) -> frozenset[float]:
    """The values of the numbers ``text`` states (``numbers_in``)."""
    return frozenset(float(m.value) for m in numbers_in(text))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- dates

_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?=T\d|\b)")
_MONTH_DAY = re.compile(r"\b(" + "|".join(m[:3] for m in MONTHS) + r")[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b",
                        re.IGNORECASE)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + "|".join(m[:3] for m in MONTHS) + r")[a-z]*\b",
                        re.IGNORECASE)
_SLASH = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?![\d/])")
_ORDINAL = re.compile(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)
_WEEKDAY = re.compile(r"\b(next\s+|this\s+|on\s+)?(" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE)
_RELATIVE = re.compile(r"\b(today|tomorrow|the day after tomorrow|in\s+(\d{1,2}|" + "|".join(WORDS) + r")\s+days?)\b",
                       re.IGNORECASE)


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _nearest_year(today: date, month: int, day: int) -> date | None:
    """Month and day without a year: this year's, or next year's when that is already past."""
    this = _date(today.year, month, day)
    if this is not None and this >= today - timedelta(days=31):
        return this
    return _date(today.year + 1, month, day)


@lru_cache(maxsize=4096)
def dates_in(text: str, today: date) -> tuple[Mention, ...]:
    """Every single date the text states, as ISO strings."""
    out: list[Mention] = []

    def add(d: date | None, m: re.Match[str]) -> None:
        if d is not None:
            out.append(Mention(d.isoformat(), m.start(), m.end(), m.group(0), "date"))

    digits = has_digit(text)  # the first five forms hold a digit
    for m in _ISO.finditer(text) if digits else ():
        add(_date(int(m.group(1)), int(m.group(2)), int(m.group(3))), m)
    months = digits and _names_a_month(text)
    for m in _MONTH_DAY.finditer(text) if months else ():
        add(_nearest_year(today, _month(m.group(1)), int(m.group(2))), m)
    for m in _DAY_MONTH.finditer(text) if months else ():
        add(_nearest_year(today, _month(m.group(2)), int(m.group(1))), m)
    for m in _SLASH.finditer(text) if digits and "/" in text else ():
        a, b = int(m.group(1)), int(m.group(2))
        add(_nearest_year(today, a, b) if 1 <= a <= 12 else None, m)  # month/day (US)
    for m in _ORDINAL.finditer(text) if digits and may_say(text, _THE) else ():
        day = int(m.group(1))
        d = _date(today.year, today.month, day)
        if d is None or d < today:
            nxt = today.replace(day=1) + timedelta(days=32)
            d = _date(nxt.year, nxt.month, day)
        add(d, m)
    for m in _WEEKDAY.finditer(text) if may_say(text, _WEEKDAY_WORDS) else ():
        target = WEEKDAYS.index(m.group(2).casefold())
        ahead = (target - today.weekday()) % 7 or 7
        d = today + timedelta(days=ahead)
        if (m.group(1) or "").strip().casefold() == "next" and ahead <= 7 - today.weekday() - 1:
            d += timedelta(days=7)  # "next Thursday" said on a Tuesday: the Thursday of next week
        add(d, m)
    for m in _RELATIVE.finditer(text) if may_say(text, _RELATIVE_WORDS) else ():
        word = m.group(1).casefold()
        if word == "today":
            add(today, m)
        elif word == "tomorrow":
            add(today + timedelta(days=1), m)
        elif word.startswith("the day after"):
            add(today + timedelta(days=2), m)
        else:
            n = m.group(2).casefold()
            add(today + timedelta(days=int(n) if n.isdigit() else WORDS.get(n, 0)), m)
    return tuple(_distinct_spans(out))


@lru_cache(maxsize=4096)
def date_values(text: str, today: date) -> frozenset[str]:
    """Every date the text could mean: ``dates_in``, plus the other reading of "next <weekday>"
    (the coming one, when the text's reading is the one a week later)."""
    out = {str(m.value) for m in dates_in(text, today)}
    for m in _WEEKDAY.finditer(text) if may_say(text, _WEEKDAY_WORDS) else ():
        if (m.group(1) or "").strip().casefold() == "next":
            ahead = (WEEKDAYS.index(m.group(2).casefold()) - today.weekday()) % 7 or 7
            out.add((today + timedelta(days=ahead)).isoformat())
    return frozenset(out)


def _month(name: str) -> int:
    return [m[:3] for m in MONTHS].index(name[:3].casefold()) + 1


_WINDOW = re.compile(r"\b(this|next|coming)\s+(week|month)\b|\b(by|before|until|no later than)\s+", re.IGNORECASE)


@lru_cache(maxsize=4096)
def windows_in(text: str, today: date) -> tuple[Mention, ...]:
    """Date ranges the text allows: ``(first, last)`` ISO dates, both included."""
    out: list[Mention] = []
    single = dates_in(text, today)
    for m in _WINDOW.finditer(text) if may_say(text, _WINDOW_WORDS) else ():
        if m.group(2):
            if any(d.end <= m.start() and re.fullmatch(r"\s*(?:of\s+)?", text[d.end:m.start()]) for d in single):
                continue  # "the 15th of this month" names a day, not the month
            which, unit = m.group(1).casefold(), m.group(2).casefold()
            if unit == "week":
                monday = today - timedelta(days=today.weekday())
                first = monday + timedelta(days=7 if which in ("next", "coming") else 0)
                window = (max(first, today), first + timedelta(days=6))
            else:
                first = today.replace(day=1)
                if which in ("next", "coming"):
                    first = (first + timedelta(days=32)).replace(day=1)
                last = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
                window = (max(first, today), last)
        else:
            following = next((d for d in single if d.start >= m.end() and d.start - m.end() <= 6), None)
            if following is None:
                continue
            end = date.fromisoformat(str(following.value))
            window = (today, end - timedelta(days=1) if m.group(3).casefold() == "before" else end)
        out.append(Mention((window[0].isoformat(), window[1].isoformat()), m.start(), m.end(), m.group(0), "window"))
    return tuple(out)


def _distinct_spans(found: list[Mention]) -> list[Mention]:
    """One mention per span (the first pattern that matched it), in text order."""
    out: list[Mention] = []
    for m in sorted(found, key=lambda x: (x.start, -(x.end - x.start))):
        if not any(o.start <= m.start < o.end for o in out):
            out.append(m)
    return out


# --------------------------------------------------------------------------- times

_CLOCK = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?!\d)(?:\s*([ap])\.?m\.?\b)?", re.IGNORECASE)
_HOUR = re.compile(r"(?<![\d:])(1[0-2]|0?[1-9])\s*([ap])\.?m\.?\b", re.IGNORECASE)
_NAMED = re.compile(r"\b(noon|midday|midnight)\b", re.IGNORECASE)


def _twelve(hour: int, half: str | None) -> int:
    if half is None:
        return hour
    half = half.casefold()
    if half == "p" and hour < 12:
        return hour + 12
    if half == "a" and hour == 12:
        return 0
    return hour


@lru_cache(maxsize=4096)
def times_in(text: str) -> tuple[Mention, ...]:
    """Every clock time the text states, as ``HH:MM``."""
    out: list[Mention] = []
    digits = has_digit(text)  # clock times and hours hold a digit
    for m in _CLOCK.finditer(text) if digits and ":" in text else ():
        hour = _twelve(int(m.group(1)), m.group(3))
        out.append(Mention(f"{hour:02d}:{m.group(2)}", m.start(), m.end(), m.group(0), "time"))
    for m in _HOUR.finditer(text) if digits else ():
        hour = _twelve(int(m.group(1)), m.group(2))
        out.append(Mention(f"{hour:02d}:00", m.start(), m.end(), m.group(0), "time"))
    for m in _NAMED.finditer(text) if may_say(text, _NAMED_WORDS) else ():
        out.append(Mention("00:00" if m.group(1).casefold() == "midnight" else "12:00", m.start(), m.end(),
                           m.group(0), "time"))
    return tuple(_distinct_spans(out))


def in_window(iso: str, windows: list[Mention]) -> bool:
    """Whether an ISO date (or date-time) falls in one of the windows."""
    day = iso[:10]
    return any(first <= day <= last for first, last in (w.value for w in windows))  # type: ignore[misc]


# --------------------------------------------------------------------------- words


@lru_cache(maxsize=8192)
def _bounded(token: str, joiners: str, prefix: bool) -> re.Pattern[str]:
    outside = rf"[\w{re.escape(joiners)}]"
    return re.compile(rf"(?<!{outside}){re.escape(token)}" + ("" if prefix else rf"(?!{outside})"), re.IGNORECASE)


def has_word(text: str, word: str, joiners: str = "-", prefix: bool = False) -> bool:
    """Whether ``word`` occurs in ``text``, case-insensitively, not inside a longer word: no word
    character (nor one of ``joiners``) right before it, nor right after it unless ``prefix`` (then
    "day" finds "days"). A plain substring test first, so most calls never reach a regex."""
    if not word or word.casefold() not in text.casefold():
        return False
    return _bounded(word, joiners, prefix).search(text) is not None


_QUOTED = re.compile(r"[\"'“‘]([^\"'”’]{3,})[\"'”’]")


def quoted_phrases(text: str) -> list[str]:
    """The phrases ``text`` puts in quotes (straight or curly, single or double), three
    characters or more: words a request dictates verbatim."""
    return _QUOTED.findall(text)

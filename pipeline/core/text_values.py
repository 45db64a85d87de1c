"""The values a text states, in the forms people write them.

- **Numbers**: digits (``5``, ``4000``), with thousands separators and decimals (``4,000``,
  ``1,250.50``), with a currency (``$4,000``, ``4,000 USD``, ``€12``), as a percent (``12%``,
  ``12 percent``, read as 12), as words (``five``, ``twenty-five``, ``a dozen``, ``a couple``, ``three dozen``,
  ``twelve and a half thousand``), with a scale word (``12.5 thousand``, ``3 dozen``). Digits that
  are part of a date ("9 December"), a time, an id or an email are not numbers of the text.
- **Dates** relative to a clock (the package's ``now``): ISO (``2026-12-03``), month and day
  (``December 3``, ``Dec 3rd``, ``3 December``), ``the last day of January``, ``the last day of
  this year`` (``of the month``, ``of next month``; ``the first day of ...``; ``end of jan``,
  ``end of month``: the last day), ``Christmas Eve`` and other holidays on a fixed day,
  ``12/03`` (month first; ``14/12``, whose first number is no month, day first), day and month with dots (``Do 03.12.``, ``bis 3.12.``, ``3.12.2026``), an ordinal of
  the clock's month or the next (``the 3rd``), a weekday (``Thursday``: the next one after the
  clock; ``next Thursday``: the one in the following week; ``the following Thursday``: a week
  after the coming one; ``Wednesday the 9th``: the 9th, when it is a Wednesday), ``today``
  (``this morning``, ``tonight``), ``yesterday``, ``tomorrow``, ``in N days`` or weeks (``in two
  weeks``, ``a week from today``, ``in a fortnight``).
- **Windows** (a date range the text allows, for "any weekday next week" or "by Friday"):
  ``this week``, ``next week``, ``this month``, ``next month``, ``by``/``before``/``until`` a date.
- **Times**: ``14:00``, ``2 pm``, ``2:30pm``, ``noon``, ``midnight``.

Every function returns what it found with its character span, so callers can replace mentions.

The shapes of single values (``EMAIL``, ``ISO_DATE``, ``CLOCK``) and the number words
(``NUMBER_WORDS``, ``WORDS``) are defined here once; every module that tells or writes such a
value uses these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import lru_cache
from typing import Any, Generic, TypeVar

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
"""The numbers 0 to 20 as words, each at the index of its value (``NUMBER_WORDS[7] == "seven"``)."""
_UNITS = NUMBER_WORDS[1:10]
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_SCALES = {"hundred": 100, "dozen": 12, "thousand": 1000, "million": 1_000_000}
WORDS = {
    **{w: n for n, w in enumerate(NUMBER_WORDS)}, **{w: 20 + 10 * n for n, w in enumerate(_TENS)},
    "hundred": 100, "dozen": 12, "couple": 2, "pair": 2, "thousand": 1000, "million": 1_000_000,
}
"""Every word ``numbers_in`` reads as a number, with its value: 0 to 20, the tens, the scale words,
"couple" and "pair"."""
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
CURRENCY_SYMBOLS = "$€£¥"
CURRENCY_CODES = ("usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "inr", "sek", "nok", "dkk", "dollars?", "euros?",
                  "pounds", "francs?", "kronor", "kroner", "kronur", "yen", "rupees")
"""Currencies written after an amount, as regular expressions ("95 francs", "a 40-franc fee")."""


EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
"""An e-mail address: ``EMAIL.fullmatch(value)`` tells a value that is one, ``EMAIL.findall(text)``
the addresses a text holds."""
WEB_ADDRESS = re.compile(r"https?://[^\s\"'<>()]+[^\s\"'<>().,;:!?]")
"""A web address written in a text (its closing punctuation left out): "https://example.org/reset"."""
_ISO_DAY = r"(\d{4}-\d{2}-\d{2})"
ISO_DATE = re.compile(_ISO_DAY + r"(?:T(\d{2}:\d{2}))?")
"""An ISO date, with the ``HH:MM`` of a date-time: ``ISO_DATE.match(value)`` tells a value that
begins with one (group 1 the date, group 2 the time or None)."""
CLOCK = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")
"""A clock time, 24-hour, with one or two digits of hour: ``9:30``, ``09:30``, ``21:05``
(``CLOCK.fullmatch(value)``; group 1 the hour, group 2 the minutes). ``clock_value`` writes it as
``HH:MM``."""


def clock_value(value: str) -> str | None:
    """``value`` as ``HH:MM`` when it is a clock time (``CLOCK``: ``9:30`` is ``09:30``), else None."""
    m = CLOCK.fullmatch(value)
    return f"{int(m.group(1)):02d}:{m.group(2)}" if m else None


CRON_TIME = re.compile(r"\s*(\d{1,2})\s+(\d{1,2})(\s+\S+\s+\S+\s+\S+\s*)")
"""A cron schedule that runs at one time of day: minute, hour, then day, month and weekday
("30 14 * * 1-5")."""


def clock_of(value: Any) -> str | None:
    """The ``HH:MM`` a value runs at: a clock time ("9:30"), a date-time's clock, or the time of
    day of a cron schedule ("0 7 * * 1" is 07:00); None for anything else."""
    if not isinstance(value, str):
        return None
    if (m := ISO_DATE.match(value)) is not None:
        return m.group(2)
    if (m := CRON_TIME.fullmatch(value)) is not None:
        hour, minute = int(m[2]), int(m[1])
        return f"{hour:02d}:{minute:02d}" if hour < 24 and minute < 60 else None
    m = CLOCK.match(value)  # "09:30", "9:30", "09:30:00"
    return clock_value(m.group(0)) if m else None


def at_clock(value: str, clock: str) -> str:
    """``value`` (a form ``clock_of`` reads) running at ``clock`` (``HH:MM``) instead, written the
    same way: "2026-12-07T09:00" at 11:45 is "2026-12-07T11:45", "0 7 * * 1" is "45 11 * * 1"."""
    if ISO_DATE.match(value):
        return f"{value[:11]}{clock}{value[16:]}"
    if (m := CRON_TIME.fullmatch(value)) is not None:
        hour, minute = clock.split(":")
        return f"{m[0][:m.start(1)]}{int(minute):0{len(m[1])}d} {int(hour):0{len(m[2])}d}{m[3]}"
    return clock


V = TypeVar("V", float, str, tuple[str, str])
"""What a mention's value is: a float (numbers), an ISO date or ``HH:MM`` time, or a window."""


@dataclass(frozen=True)
class Mention(Generic[V]):
    """A value found in a text: ``value`` (a float, an ISO date, an ``HH:MM`` time, or a window
    ``(first, last)`` of ISO dates), where it is, and how it was written."""

    value: V
    start: int
    end: int
    text: str
    kind: str  # number | money | percent | word | date | window | time


# --------------------------------------------------------------------------- numbers

_DIGIT = re.compile(r"\d")


def has_digit(text: str) -> bool:
    """Whether ``text`` holds a digit (a character ``\\d`` matches): a cheap test before patterns
    that only match around one. An ASCII text is searched for the ten digits by substring tests,
    several times faster than the pattern (whose ``\\d`` tests each character's Unicode category)."""
    if not text.isascii():
        return _DIGIT.search(text) is not None
    return ("0" in text or "1" in text or "2" in text or "3" in text or "4" in text or "5" in text or "6" in text
            or "7" in text or "8" in text or "9" in text)

_WORD_RUN = re.compile(r"\w+")


@lru_cache(maxsize=4096)
def _ascii_words(text: str) -> frozenset[str] | None:
    """The runs of word characters of an ASCII text, lower-cased; None for any other text."""
    return frozenset(_WORD_RUN.findall(text.lower())) if text.isascii() else None


_VERB_ENDING = re.compile(r"(?:ed|d|ing|s)$")


def verb_stem(word: str) -> str:
    """A word without a verb's ending, to find the verb it comes from as a prefix: "published"
    is "publish", "closed" "clos" ("Close"), "cancelled" "cancel"."""
    stem = _VERB_ENDING.sub("", word)
    return stem[:-1] if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "aeiou" else stem


def may_say(text: str, words: frozenset[str]) -> bool:
    """False when ``text`` is ASCII and holds none of ``words`` as a whole word (folded): then a
    case-insensitive pattern that only matches one of them as a whole word finds nothing in it.
    A cheap test before such a pattern; True for other texts (Unicode case folding is the
    pattern's to decide)."""
    found = _ascii_words(text)
    return found is None or not found.isdisjoint(words)


_NUMBER_WORDS = frozenset(WORDS)  # "twenty-five" holds the whole word "twenty"
_WEEKDAY_WORDS = frozenset([*WEEKDAYS, "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun"])
_RELATIVE_WORDS = frozenset({"today", "tomorrow", "yesterday", "tonight", "morning", "afternoon", "evening", "day", "days",
                             "week", "weeks", "fortnight"})
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
    r"(?P<scale>[kKmM]\b|\s+(?:dozen|hundred|thousand|million)\b)?"
    r"(?P<post>\s?%|\s(?:percent|per\s?cent)\b|(?:\s?|-)(?:" + "|".join(CURRENCY_CODES) + r")\b|\s?[" + CURRENCY_SYMBOLS + r"])?",
    re.IGNORECASE,
)
_WORD = r"(?:(?:" + "|".join(_TENS) + r")-(?:" + "|".join(_UNITS) + r")|" + "|".join(WORDS) + r")"
_WORD_NUMBER = re.compile(
    rf"\b(?:a\s+|(?P<half>half\s+a\s+))?(?P<w>{_WORD}(?:(?:\s+|-)(?:and\s+a\s+half|(?:and\s+)?(?:a\s+)?{_WORD}))*)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def numbers_in(text: str) -> tuple[Mention[float], ...]:
    """Every number the text states (digits in any of the forms above, and number words)."""
    out: list[Mention[float]] = []
    days = [m.span("after") if m.group("after") else m.span("before") for m in _DAY_OF_MONTH.finditer(text)
            ] if has_digit(text) and _names_a_month(text) else []
    for m in _NUMBER.finditer(text) if has_digit(text) else ():
        raw = m.group("num")
        if _inside_token(text, m.start("num"), m.end("num")) or m.span("num") in days:
            continue
        scale = (m.group("scale") or "").strip().casefold()
        value = float(raw.replace(",", "")) * {"k": 1e3, "m": 1e6, **_SCALES}.get(scale, 1)
        post = (m.group("post") or "").strip().casefold()
        kind = "percent" if post[:1] == "%" or post.startswith("per") else "money" if (m.group("pre") or post) else "number"
        out.append(Mention(value, m.start(), m.end(), m.group(0), kind))
    spans = [(x.start, x.end) for x in out]
    for m in _WORD_NUMBER.finditer(text) if may_say(text, _NUMBER_WORDS) else ():
        if any(a <= m.start("w") < b for a, b in spans):
            continue  # the scale word of "12.5 thousand"
        for n, (start, end, value) in enumerate(_word_numbers(m.group("w"), m.start("w"), half=bool(m.group("half")))):
            if n == 0 and m.group("half"):
                start = m.start("half")  # "half a dozen" as a whole
            if text[start:end].casefold() == "one" and not _COUNTED.match(text[end:]):
                continue  # "one" is usually a pronoun ("the one in Sales"), not a count
            percent = _PERCENT_WORD.match(text, end)
            if percent:
                end = percent.end()
            out.append(Mention(value, start, end, text[start:end], "percent" if percent else "word"))
    return _with_cents(text, sorted(out, key=lambda x: x.start))


_CURRENCY = r"(?:euros?|dollars?|pounds?|francs?|bucks|quid)"
_CURRENCY_WORD = re.compile(rf"\s+{_CURRENCY}(?:\s+and)?\s+", re.IGNORECASE)
_CURRENCY_END = re.compile(rf"\b{_CURRENCY}$", re.IGNORECASE)
_AND = re.compile(r"\s+(?:and\s+)?", re.IGNORECASE)
_CENTS_AFTER = re.compile(r"\s+(?:cents?|pence|p)\b|\s*(?=[^\w\s]|$)", re.IGNORECASE)
"""What follows the cents of an amount in words: "cents", "pence", or the end of the clause
("thirty-eight euros forty, on the Amex"); not a noun ("5 euros 2 tickets" are two numbers)."""


def _with_cents(text: str, found: list[Mention[float]]) -> tuple[Mention[float], ...]:
    """``found`` with each amount said in currency words and cents ("thirty-eight euros forty",
    "12 dollars and 50 cents") as one number of money, 38.40 and 12.50."""
    out: list[Mention[float]] = []
    for m in found:
        last = out[-1] if out else None
        between = _AND if last is not None and _CURRENCY_END.search(last.text) else _CURRENCY_WORD
        cents = _CENTS_AFTER.match(text, m.end)
        if (last is not None and cents is not None and last.value.is_integer() and m.value.is_integer()
                and 0 < m.value < 100 and between.fullmatch(text, last.end, m.start)):
            out[-1] = Mention(last.value + m.value / 100, last.start, cents.end(), text[last.start:cents.end()].rstrip(),
                              "money")
        else:
            out.append(m)
    return tuple(out)


_MONTH_NAME = (r"(?:(?i:January|Jan|February|Feb|April|Apr|June|Jun|July|Jul|August|Aug|September|Sept|"
               r"Sep|October|Oct|November|Nov|December|Dec)|March|Mar|May)\b\.?")
_DAY_OF_MONTH = re.compile(rf"\b{_MONTH_NAME}\s+(?P<after>\d{{1,2}})\b(?![:.,]\d)"
                           rf"|\b(?P<before>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_NAME}")
"""The day of a date written with its month's name ("9 December", "December 9", "fri 11 dec"):
part of a date, no number of the text (March and May only capitalized: "may 5" is not read as
a date here)."""


_PIECE = re.compile(r"and\s+a\s+half|and|a|[a-z]+", re.IGNORECASE)


def _word_numbers(phrase: str, offset: int, half: bool = False) -> list[tuple[int, int, float]]:
    """The numbers a run of number words states, as ``(start, end, value)``: one number where the
    words compose ("three dozen" 36, "twelve and a half thousand" 12,500, "two hundred and fifty"
    250, "half a dozen" 6), else one per word ("one two three" are three numbers). "and" joins
    only after a scale word or before "a half": "tasks one and two" are two numbers."""
    pieces = [(m.start() + offset, m.end() + offset, m.group(0).casefold()) for m in _PIECE.finditer(phrase)]
    runs: list[list[tuple[int, int, str]]] = [[]]
    for n, piece in enumerate(pieces):
        joins = piece[2] != "and" or (runs[-1] and runs[-1][-1][2] in _SCALES) or (
            n + 1 < len(pieces) and pieces[n + 1][2] == "a")
        if not joins:
            runs.append([])
        elif piece[2] != "and":
            runs[-1].append(piece)
    out: list[tuple[int, int, float]] = []
    for run in filter(None, runs):
        value = _compose([w for _, _, w in run], 0.5 if half and run is runs[0] else 1.0)
        if value is not None:
            out.append((run[0][0], run[-1][1], value))
        else:
            out += [(a, b, float(WORDS[w])) for a, b, w in run if w in WORDS]
    return out


def _compose(words: list[str], factor: float) -> float | None:
    """The value of number words read as one number, or None when they do not compose (two small
    numbers in a row, a scale word going down)."""
    total, current, last = 0.0, 0.0, None
    for w in words:
        if w == "a":
            continue
        if w == "and a half":
            if current == 0:
                return None
            current += _SCALES["dozen"] / 2 if last == "dozen" else 0.5  # "a dozen and a half" is 18
        elif w in _SCALES:
            scale = _SCALES[w]
            if w in ("thousand", "million"):
                total += (current or 1) * scale
                current = 0.0
            else:
                current = (current or 1) * scale
        elif "-" in w:
            tens, unit = w.split("-")
            current += WORDS[tens] + WORDS[unit]
        elif w in WORDS:
            value = WORDS[w]
            if last is not None and last not in _SCALES and not (last in _TENS and value < 10):
                return None  # "one two", "twelve five": separate numbers
            current += value
        else:
            return None
        last = w
    return (total + current) * factor


def _inside_token(text: str, start: int, end: int) -> bool:
    """Digits that belong to a longer token: an id (``todo-004``), a date, a time, an email, a phone."""
    before = text[max(0, start - 12):start]
    after = text[end:end + 3]
    if _TOKEN_BEFORE.search(before):
        return True
    return bool(_TOKEN_AFTER.match(after))


_COUNTED = re.compile(r"\s+(?:more|extra|new|additional)\b|"
                      r"\s+(?!(?:is|was|has|does|this|its|his|hers|as|us|plus|thus|always|perhaps|yes)\b)\w+s\b|"
                      r"\s+(?:and|or|to)\s+(?:\d|(?:" + "|".join(WORDS) + r")\b)",
                      re.IGNORECASE)  # "one more", "one tasks", "one and two"; "each one is" counts nothing
_PERCENT_WORD = re.compile(r"\s?(?:%|percent\b|per\s?cent\b)", re.IGNORECASE)
_TOKEN_BEFORE = re.compile(r"[A-Za-z]-$|[+]\d?-?$|\d[-/]$|\d{4}-\d\d-$")
_TOKEN_AFTER = re.compile(r"-\d|/\d|:\d|\.\d\d?-")


@lru_cache(maxsize=4096)
def number_values(text: str) -> frozenset[float]:
    """The values of the numbers ``text`` states (``numbers_in``)."""
    return frozenset(float(m.value) for m in numbers_in(text))


_DURATION = re.compile(r"(?<![A-Za-z_])(?P<unit>minutes?|mins?|hours?|hrs?|h)\b(?P<half>\s+and\s+a\s+half)?", re.IGNORECASE)
_DURATION_UNITS = ("minute", "minutes", "min", "mins", "hour", "hours", "hr", "hrs", "h")
_DURATION_WORDS = frozenset([*_DURATION_UNITS, *(f"{n}{u}" for n in ("a", "an", "one") for u in _DURATION_UNITS)])
_HOURS_AND_MINUTES = re.compile(r"\b(?P<h>\d{1,3})\s*(?:hours?|hrs?|h)\s*,?\s*(?:and\s+)?(?P<m>\d{1,2})\s*(?:minutes?|mins?|m)\b",
                                re.IGNORECASE)
_QUARTERS_OF = re.compile(r"\b(?P<n>an?|\d|[a-z]+)\s+quarters?\s+of\s+an?\s*$", re.IGNORECASE)
_BEFORE_UNIT = re.compile(r"(?:(?P<half>\bhalf(?:\s+an?)?)|(?P<one>\b(?:an?|one))|(?P<glued>\d+(?:\.\d+)?))\s*$", re.IGNORECASE)


@lru_cache(maxsize=4096)
def minutes_in(text: str) -> tuple[int, ...]:
    """The durations ``text`` states, in minutes: a number or number words before a unit ("90
    minutes", "2 hours", "one and a half hours", "twenty minutes"), "an hour", "half an hour",
    "an hour and a half" (90), "three quarters of an hour" (45), "2h", joined by a hyphen ("a
    45-minute call", "a two-hour review", "a half-hour slot"); hours and minutes together once more as one ("4 hours 15
    minutes": 240, 15 and 255). A unit after a hyphen that follows no amount ("on-hours") is none."""
    if not (has_digit(text) or may_say(text, _DURATION_WORDS)):
        return ()
    numbers = {m.end: float(m.value) for m in numbers_in(text)}
    out: list[int] = []
    for m in _DURATION.finditer(text):
        before = text[:m.start()]
        if before.endswith("-"):  # "45-minute": the amount is glued to the unit by a hyphen
            before = before[:-1]
        amount = numbers.get(len(before.rstrip()))
        if (quarters := _QUARTERS_OF.search(before)) is not None:  # "three quarters of an hour": 45 minutes
            count = quarters.group("n").casefold()
            amount = 0.25 * (float(count) if count.isdigit() else WORDS.get(count, 1))
        elif amount is None and (said := _BEFORE_UNIT.search(before)):
            amount = 0.5 if said.group("half") else 1.0 if said.group("one") else float(said.group("glued"))
        if amount is None:
            continue
        amount += 0.5 if m.group("half") else 0
        out.append(int(round(amount * (60 if m.group("unit").casefold().startswith("h") else 1))))
    out += [int(m.group("h")) * 60 + int(m.group("m")) for m in _HOURS_AND_MINUTES.finditer(text)]  # "4 hours 15 minutes"
    return tuple(out)


def told_figures(text: str) -> frozenset[float]:
    """The numbers ``text`` states and the lengths of time it states, in minutes ("for two hours":
    2 and 120): the figures an agent is told, none of them taken from a record."""
    return number_values(text) | frozenset(float(m) for m in minutes_in(text))


# --------------------------------------------------------------------------- dates

_ISO_IN_TEXT = re.compile(rf"\b{_ISO_DAY}(?=T\d|\b)")
_YEAR = r"(?:,?\s+(?P<year>(?:19|20)\d{2})\b)?"
"""A year written after a month and day ("1 February 2025", "February 1, 2025")."""
MONTH_AHEAD = "(?=(?:" + "|".join(f"{m}|{m[:3]}" for m in MONTHS) + r"|sept)\b)"
"""A lookahead: what follows is a month's name, whole or cut to three letters ("Dec", "sept"), not
a word that begins like one ("decir", "market", "maybe", "novel")."""
_MONTH_DAY = re.compile(r"\b" + MONTH_AHEAD + "(" + "|".join(m[:3] for m in MONTHS)
                        + r")[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b" + _YEAR, re.IGNORECASE)
_DOTTED = re.compile(r"(?<![\d.,])(0?[1-9]|[12]\d|3[01])\.(0?[1-9]|1[0-2])\.(?:(\d{4})(?!\d)|(?![\d.]))")
"""A day and month written with dots, the year maybe after them: "Do 03.12. 19:30", "am 3.12.2026"
(a full stop after the month, so that a number "3.12" is none). Read as a date only with its
year, after a weekday or a preposition of a date (``_DOTTED_LEAD``: "Do 3.12.", "bis 3.12."), or
written with two digits each and a time or a word after (``_DOTTED_TAIL``: "03.12. 19:30 Probe"):
"up to 3.12." is a number ending a sentence."""
_DOTTED_TAIL = re.compile(r"[ \t]+(?:\d{1,2}[:.h]\d\d|[a-zäöüéèáíóú])", re.IGNORECASE)
_DOTTED_LEAD = re.compile(r"\b(?:mo|di|mi|do|fr|sa|so|mon|tue|wed|thu|fri|sat|sun|lun|mar|mer|mié|jeu|jue|ven|vie|sam|sáb|"
                          r"dim|dom|am|bis|vom|ab|zum|den|le|du|au|el|del|al|om|tot|van|per|entro|dal)\.?,?\s+$",
                          re.IGNORECASE)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + MONTH_AHEAD + "(" + "|".join(m[:3] for m in MONTHS)
                        + r")[a-z]*\b" + _YEAR, re.IGNORECASE)
_FOREIGN_MONTHS = {
    1: "janvier janv januar jänner enero gennaio janeiro januari",
    2: "février fevrier févr februar febrero febbraio fevereiro februari",
    3: "mars märz maerz marzo março maart",
    4: "avril abril aprile",
    5: "mai mayo maggio maio mei",
    6: "juin juni junio giugno junho",
    7: "juillet juli julio luglio julho",
    8: "août aout agosto augustus",
    9: "septembre septiembre setiembre settembre setembro",
    10: "octobre oktober octubre ottobre outubro",
    11: "novembre noviembre novembro",
    12: "décembre decembre dezember diciembre dicembre dezembro",
}
"""Months named in French, German, Spanish, Italian, Portuguese and Dutch (the names English
shares, "april", "september", "november", "december", "august", are read as English)."""
_FOREIGN_MONTH = {name: n for n, names in _FOREIGN_MONTHS.items() for name in names.split()}
_FOREIGN_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:er|\.|º|°)?\s+(?:de\s+)?(" + "|".join(sorted(_FOREIGN_MONTH, key=len, reverse=True))
                                + r")\b\.?(?:,?\s+(?:de\s+)?(?P<year>(?:19|20)\d{2})\b)?", re.IGNORECASE)
"""A day and a month named in another language: "15 décembre", "le 1er mars 2027", "15. Dezember",
"15 de diciembre de 2026", "3 dicembre"."""
_FRENCH_LEAD = re.compile(r"\b(?:le|du|au|dès|depuis|avant|après|jusqu['’]au|d['’]ici\s+au)\s+$", re.IGNORECASE)
"""French before a day: "le 3 mars", "jusqu'au 3 mars" (a "mars" of English is a name)."""
_DAY_OF = r"\b(?:the\s+(?P<which>last|first)\s+day|(?:the\s+)?end)\s+of\s+"
_END_OF_MONTH = re.compile(_DAY_OF + r"(?P<month>" + "|".join(f"{m}|{m[:3]}" for m in MONTHS) + r"|sept)\b\.?"
                           r"(?:,?\s+(?P<year>\d{4}))?", re.IGNORECASE)
"""The first or last day of a month: "the last day of January", "end of jan", "by the end of March 2027"."""
_END_OF_PERIOD = re.compile(_DAY_OF + r"(?:(?P<when>this|the|next|the\s+current)\s+)?(?P<period>year|month)\b",
                            re.IGNORECASE)
_DAY_WORD = frozenset({"day", "end"})
_NTH_WEEKDAY = re.compile(
    r"\b(?:the\s+)?(?P<n>first|1st|second|2nd|third|3rd|fourth|4th|last)\s+(?P<wd>" + "|".join(WEEKDAYS) + r")\s+"
    r"(?:of|in)\s+(?:(?P<month>" + "|".join(f"{m}|{m[:3]}" for m in MONTHS) + r"|sept)\b\.?(?:,?\s+(?P<year>\d{4}))?"
    r"|(?P<when>this|the|next)\s+month\b)", re.IGNORECASE)
"""A weekday counted within a month: "the first Monday of January", "the last Friday of the month",
"the second Tuesday in March 2027"."""
_NTH = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1}
_HOLIDAYS = {"christmaseve": (12, 24), "christmasday": (12, 25), "christmas": (12, 25), "boxingday": (12, 26),
             "newyeareve": (12, 31), "newyearday": (1, 1), "valentineday": (2, 14), "halloween": (10, 31)}
"""Holidays on a fixed day, by their name folded without spaces and "'s"."""
_HOLIDAY = re.compile(r"\b(?:christmas(?:\s+(?:eve|day))?|boxing\s+day|new\s+year['’]?s?\s+(?:eve|day)|"
                      r"valentine['’]?s?\s+day|halloween)\b", re.IGNORECASE)
_HOLIDAY_WORDS = frozenset({"christmas", "boxing", "year", "year's", "years", "valentine's", "valentines", "halloween"})
_SLASH = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?![\d/])")
_ORDINAL = re.compile(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)
_ORDINAL_WORDS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                  "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
                  "eighteenth", "nineteenth", "twentieth"]
DAY_ORDINALS = {**{w: n for n, w in enumerate(_ORDINAL_WORDS, 1)},
                **{f"twenty{sep}{w}": 20 + n for n, w in enumerate(_ORDINAL_WORDS[:9], 1) for sep in ("-", " ")},
                "thirtieth": 30, "thirty-first": 31, "thirty first": 31}
"""A day of the month written as an ordinal word ("ninth", "twenty-first"), by its number."""
_DAY_WORD_ALT = "|".join(sorted((re.escape(w).replace("\\ ", "\\s+") for w in DAY_ORDINALS), key=len, reverse=True))
_MONTH_ALT = "|".join(f"{m}|{m[:3]}" for m in MONTHS) + "|sept"
_WORD_DAY_OF_MONTH = re.compile(rf"\b(?:the\s+(?P<day>{_DAY_WORD_ALT})\s+of|(?P<day2>{_DAY_WORD_ALT})\s+of)\s+"
                                rf"(?P<month>{_MONTH_ALT})\b" + _YEAR, re.IGNORECASE)
"""A day written as an ordinal word and its month: "the ninth of December", "twenty-first of Jan"."""
_MONTH_WORD_DAY = re.compile(rf"\b(?P<month>{_MONTH_ALT})\.?\s+(?:the\s+)?(?P<day>{_DAY_WORD_ALT})\b" + _YEAR,
                             re.IGNORECASE)
"""A month and then its day as an ordinal word: "December the ninth", "March first"."""
_WEEKDAY = re.compile(r"\b(next\s+|this\s+|on\s+|following\s+)?(" + "|".join(WEEKDAYS) + r"|tues?|thu(?:rs?)?|fri)\b"
                      r"|\b(next\s+|this\s+|on\s+|following\s+)(mon|wed|sat|sun)\b", re.IGNORECASE)
"""A weekday by its name or short name ("thu", "tues", "fri"; "mon", "wed", "sat" and "sun", which
are words too, only after "this", "next", "on" or "following"), with "this", "next", "on" or
"following" before it ("the following Thursday": the one a week after the coming Thursday)."""


def _weekday(m: re.Match[str]) -> tuple[str, int]:
    """A ``_WEEKDAY`` match's qualifier ("next", "this", "on" or "") and weekday (0 for Monday)."""
    qualifier, name = (m.group(1), m.group(2)) if m.group(2) else (m.group(3), m.group(4))
    return (qualifier or "").strip().casefold(), _weekday_index(name)


def _weekday_index(name: str) -> int:
    """The weekday a name or short name is (0 for Monday): its first two letters decide."""
    return next(i for i, d in enumerate(WEEKDAYS) if d.startswith(name[:2].casefold()))
_SPAN = r"(?:(\d{1,2}|a|" + "|".join(WORDS) + r")\s+(days?|weeks?)|a\s+(fortnight))"
_RELATIVE = re.compile(r"\b(today|tonight|this\s+(?:morning|afternoon|evening)|yesterday|tomorrow|the day after tomorrow"
                       rf"|in\s+{_SPAN}|{_SPAN}\s+from\s+(?:today|now))\b", re.IGNORECASE)
"""A day named from today: "tomorrow", "in 14 days", "in two weeks", "a week from today", "in a
fortnight"."""


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


def _in_year(today: date, year: str | None, month: int, day: int) -> date | None:
    """Month and day in the ``year`` written, else the nearest year (``_nearest_year``)."""
    return _date(int(year), month, day) if year else _nearest_year(today, month, day)


@lru_cache(maxsize=4096)
def dates_in(text: str, today: date) -> tuple[Mention[str], ...]:
    """Every single date the text states, as ISO strings (in English, and a day with a month
    named in French, German, Spanish, Italian, Portuguese or Dutch: "le 15 décembre")."""
    out: list[Mention[str]] = []

    def add(d: date | None, m: re.Match[str]) -> None:
        if d is not None:
            out.append(Mention(d.isoformat(), m.start(), m.end(), m.group(0), "date"))

    digits = has_digit(text)  # the first five forms hold a digit
    for m in _ISO_IN_TEXT.finditer(text) if digits else ():
        year, month, day = m.group(1).split("-")
        add(_date(int(year), int(month), int(day)), m)
    months = digits and _names_a_month(text)
    for m in _MONTH_DAY.finditer(text) if months else ():
        add(_in_year(today, m.group("year"), _month(m.group(1)), int(m.group(2))), m)
    for m in _DAY_MONTH.finditer(text) if months else ():
        add(_in_year(today, m.group("year"), _month(m.group(2)), int(m.group(1))), m)
    for m in _SLASH.finditer(text) if digits and "/" in text else ():
        a, b = int(m.group(1)), int(m.group(2))
        if 1 <= a <= 12:
            add(_nearest_year(today, a, b), m)  # month/day (US)
        elif 1 <= b <= 12:
            add(_nearest_year(today, b, a), m)  # day/month, where the day cannot be a month ("14/12")
    for m in _DOTTED.finditer(text) if digits and "." in text else ():
        if m.group(3) or _DOTTED_LEAD.search(text, 0, m.start()) or (
                len(m.group(1)) == len(m.group(2)) == 2 and _DOTTED_TAIL.match(text, m.end())):
            add(_in_year(today, m.group(3), int(m.group(2)), int(m.group(1))), m)  # day.month. (German, Nordic)
    for m in _FOREIGN_DAY_MONTH.finditer(text) if digits else ():
        if m.group(2).casefold() == "mars" and not (m.group("year") or _FRENCH_LEAD.search(text, 0, m.start())):
            continue  # "5 Mars bars"
        add(_in_year(today, m.group("year"), _FOREIGN_MONTH[m.group(2).casefold()], int(m.group(1))), m)
    for pattern in (_WORD_DAY_OF_MONTH, _MONTH_WORD_DAY) if _names_a_month(text) else ():
        for m in pattern.finditer(text):
            day = DAY_ORDINALS[re.sub(r"\s+", " ", (m.group("day") or m.group("day2")).casefold())]
            add(_in_year(today, m.group("year"), _month(m.group("month")), day), m)
    for m in _ORDINAL.finditer(text) if digits and may_say(text, _THE) else ():
        day = int(m.group(1))
        d = _date(today.year, today.month, day)
        if d is None or d < today:
            nxt = today.replace(day=1) + timedelta(days=32)
            d = _date(nxt.year, nxt.month, day)
        add(d, m)
    for m in _HOLIDAY.finditer(text) if may_say(text, _HOLIDAY_WORDS) else ():
        month, day = _HOLIDAYS[re.sub(r"['’]s\b|\s+", "", m.group(0).casefold())]
        add(_nearest_year(today, month, day), m)
    for m in _END_OF_MONTH.finditer(text) if _names_a_month(text) and may_say(text, _DAY_WORD) else ():
        month = _month(m.group("month"))
        year = int(m.group("year")) if m.group("year") else today.year + (month < today.month)
        last = (date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1)).day
        add(_date(year, month, last if (m.group("which") or "last").casefold() == "last" else 1), m)
    for m in _END_OF_PERIOD.finditer(text) if may_say(text, _DAY_WORD) else ():
        ahead = (m.group("when") or "").casefold() == "next"
        last = (m.group("which") or "last").casefold() == "last"  # "the end of the month": its last day
        if m.group("period").casefold() == "year":
            year = today.year + ahead
            add(date(year, 12, 31) if last else date(year, 1, 1), m)
        else:
            opens = (today.replace(day=1) + timedelta(days=32)).replace(day=1) if ahead else today.replace(day=1)
            closes = (opens + timedelta(days=32)).replace(day=1) - timedelta(days=1)
            add(closes if last else opens, m)
    for m in _NTH_WEEKDAY.finditer(text) if may_say(text, _WEEKDAY_WORDS) else ():
        if m.group("month"):
            month = _month(m.group("month"))
            year = int(m.group("year")) if m.group("year") else today.year + (month < today.month)
        else:
            ahead = m.group("when").casefold() == "next"
            month, year = (today.month % 12 + 1, today.year + (today.month == 12)) if ahead else (today.month, today.year)
        add(nth_weekday(year, month, WEEKDAYS.index(m.group("wd").casefold()), _NTH[m.group("n").casefold()]), m)
    days = list(out)  # the dates written with a day of the month: a weekday before one names it
    for m in _WEEKDAY.finditer(text) if may_say(text, _WEEKDAY_WORDS) else ():
        qualifier, target = _weekday(m)
        named = next((o for o in days if _WEEKDAY_GAP.fullmatch(text, m.end(), o.start)
                      and date.fromisoformat(o.value).weekday() == target), None)
        if named is not None:  # "Wednesday the 9th", "Monday, December 7": that day, one mention
            out.append(Mention(named.value, m.start(), named.end, text[m.start():named.end], "date"))
            continue
        ahead = (target - today.weekday()) % 7 or 7
        d = today + timedelta(days=ahead)
        if qualifier == "next" and ahead <= 7 - today.weekday() - 1:
            d += timedelta(days=7)  # "next Thursday" said on a Tuesday: the Thursday of next week
        elif qualifier == "following":
            d += timedelta(days=7)  # "this Thursday ... the following Thursday": a week after the coming one
        add(d, m)
    for m in _RELATIVE.finditer(text) if may_say(text, _RELATIVE_WORDS) else ():
        word = m.group(1).casefold()
        if word in ("today", "tonight") or word.startswith("this"):
            add(today, m)
        elif word == "yesterday":
            add(today - timedelta(days=1), m)
        elif word == "tomorrow":
            add(today + timedelta(days=1), m)
        elif word.startswith("the day after"):
            add(today + timedelta(days=2), m)
        else:
            n, unit, fortnight = (m.group(2), m.group(3), m.group(4)) if m.group(2) or m.group(4) else m.group(5, 6, 7)
            count = 1 if fortnight or n.casefold() == "a" else int(n) if n.isdigit() else WORDS.get(n.casefold(), 0)
            add(today + timedelta(days=14 if fortnight else count * (7 if unit.casefold().startswith("week") else 1)), m)
    return tuple(_distinct_spans(out))


def nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """The ``n``-th ``weekday`` (Monday 0) of a month; ``n`` = -1: its last."""
    if n < 0:
        last = (date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1))
        return last - timedelta(days=(last.weekday() - weekday) % 7)
    first = date(year, month, 1)
    return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))


@lru_cache(maxsize=4096)
def date_values(text: str, today: date) -> frozenset[str]:
    """Every date the text could mean: ``dates_in``, plus the other reading of "next <weekday>"
    (the coming one, when the text's reading is the one a week later)."""
    out = {str(m.value) for m in dates_in(text, today)}
    for m in _WEEKDAY.finditer(text) if may_say(text, _WEEKDAY_WORDS) else ():
        qualifier, target = _weekday(m)
        if qualifier == "next":
            ahead = (target - today.weekday()) % 7 or 7
            out.add((today + timedelta(days=ahead)).isoformat())
    return frozenset(out)


def _month(name: str) -> int:
    return [m[:3] for m in MONTHS].index(name[:3].casefold()) + 1


_WINDOW = re.compile(r"\b(this|next|coming)\s+(week|month)\b|\b(by|before|until|no later than)\s+", re.IGNORECASE)


@lru_cache(maxsize=4096)
def windows_in(text: str, today: date) -> tuple[Mention[tuple[str, str]], ...]:
    """Date ranges the text allows: ``(first, last)`` ISO dates, both included."""
    out: list[Mention[tuple[str, str]]] = []
    single = dates_in(text, today)
    for m in _WINDOW.finditer(text) if may_say(text, _WINDOW_WORDS) else ():
        if m.group(2):
            if any(d.end <= m.start() and re.fullmatch(r"\s*(?:of\s+)?", text[d.end:m.start()])
                   or d.start <= m.start() and m.end() <= d.end for d in single):
                continue  # "the 15th of this month", "the last day of this month" name a day, not the month
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


_WEEKDAY_GAP = re.compile(r"\s*,?\s*")
"""Between a weekday and the date it names ("Wednesday the 9th", "Monday, December 7")."""


def _distinct_spans(found: list[Mention[V]]) -> list[Mention[V]]:
    """One mention per span (the first pattern that matched it), in text order."""
    out: list[Mention[V]] = []
    for m in sorted(found, key=lambda x: (x.start, -(x.end - x.start))):
        if not any(o.start <= m.start < o.end for o in out):
            out.append(m)
    return out


# --------------------------------------------------------------------------- times

_CLOCK_IN_TEXT = re.compile(rf"(?<![\d:]){CLOCK.pattern}(?!\d)(?:\s*([ap])\.?m\.?\b)?", re.IGNORECASE)
_HOUR = re.compile(r"(?<![\d:])(1[0-2]|0?[1-9])\s*([ap])\.?m\.?\b", re.IGNORECASE)
_NAMED = re.compile(r"\b(noon|midday|midnight)\b", re.IGNORECASE)
_RANGE_START = re.compile(r"(\bbetween\s+)?(?<![\d:])(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*(-|\u2013|\u2014|\bto\b|\btill\b|\buntil\b|\band\b)"
                          r"\s*(?:half\s+(?:past\s+)?)?(1[0-2]|0?[1-9])(?::[0-5]\d)?\s*([ap])\.?m\.?\b", re.IGNORECASE)
"""The start of a range of hours whose am or pm is written once, after its end: "3-4pm", "9 to
10:30am", "between 2 and 3pm" ("and" only after "between"), "3 till half 4pm"."""
_DAYPART = r"\s+in\s+the\s+(morning|afternoon|evening)\b"
_DAYPART_RANGE = re.compile(r"(\bbetween\s+)?(?<![\d:.,])(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*(-|\u2013|\u2014|\bto\b|\btill\b|"
                            r"\buntil\b|\band\b)\s*(?:half\s+(?:past\s+)?)?(?:1[0-2]|0?[1-9])(?::[0-5]\d)?" + _DAYPART,
                            re.IGNORECASE)
_DAYPART_HOUR = re.compile(r"(?<![\d:.,])(1[0-2]|0?[1-9])(?::([0-5]\d))?" + _DAYPART, re.IGNORECASE)
"""Hours of a part of the day: "9 to 11 in the morning" (09:00 and 11:00), "3 till half 4 in the
afternoon" (15:00 and 16:30), "at 2 in the afternoon"."""
_HOUR_WORDS = NUMBER_WORDS[1:13]
_DAYPARTS = frozenset({"morning", "afternoon", "evening"})
_PAST = re.compile(r"\b(half|quarter)\s+(past|to)\s+(\d{1,2}(?![\d:])|(?:" + "|".join(_HOUR_WORDS) + r")\b)(?:\s*([ap])\.?m\.?\b)?",
                   re.IGNORECASE)
_PAST_WORDS = frozenset({"half", "quarter"})
_WORD_HOUR = re.compile(r"\b(" + "|".join(_HOUR_WORDS) + r")(?:\s+o['’]?\s?clock)?(?:\s*([ap])\.?m\.?\b|" + _DAYPART + ")",
                        re.IGNORECASE)
"""An hour in words with its am, pm or part of the day: "seven in the evening", "nine am"."""
_HOUR_WORD_SET = frozenset(_HOUR_WORDS)
_HALF_HOUR = re.compile(r"\bhalf\s+(1[0-2]|0?[1-9]|" + "|".join(_HOUR_WORDS) + r")\b"
                        r"(?!\s*(?:hours?|hrs?|minutes?|mins?|days?|weeks?|months?|years?|%|percent|per|of|[.,]\d))",
                        re.IGNORECASE)
"""Half past an hour said the British way: "half six" is 6:30."""
_EVENING_AFTER = re.compile(r"[^.;!?\n]{0,40}?\b(?:in\s+the\s+(?:evening|afternoon)|tonight|this\s+evening|p\.?m\b)",
                            re.IGNORECASE)


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
def times_in(text: str) -> tuple[Mention[str], ...]:
    """Every clock time the text states, as ``HH:MM``: "14:30", "2:30 pm", "2 pm", "noon", the
    start of a range whose am or pm follows its end ("3-4pm": 15:00 and 16:00), "half past
    two" / "quarter to three" and "half six" (hours 1 to 6 without am or pm read as afternoon;
    "half seven in the evening" is 19:30), an hour in words with am, pm or a part of the day
    ("seven in the evening", "nine o'clock in the morning")."""
    out: list[Mention[str]] = []
    digits = has_digit(text)  # clock times and hours hold a digit
    for m in _RANGE_START.finditer(text) if digits else ():
        if m.group(4).casefold() == "and" and not m.group(1):
            continue
        end = _twelve(int(m.group(5)), m.group(6))
        hour = _twelve(int(m.group(2)), m.group(6))
        if hour > end:  # "11-1pm" starts at 11 am
            hour = _twelve(int(m.group(2)), "a" if m.group(6).casefold() == "p" else "p") % 24
        text_end = m.end(3) if m.group(3) else m.end(2)
        out.append(Mention(f"{hour:02d}:{m.group(3) or '00'}", m.start(2), text_end, text[m.start(2):text_end], "time"))
    for m in _CLOCK_IN_TEXT.finditer(text) if digits and ":" in text else ():
        hour = _twelve(int(m.group(1)), m.group(3))
        out.append(Mention(f"{hour:02d}:{m.group(2)}", m.start(), m.end(), m.group(0), "time"))
    for m in _HOUR.finditer(text) if digits else ():
        hour = _twelve(int(m.group(1)), m.group(2))
        out.append(Mention(f"{hour:02d}:00", m.start(), m.end(), m.group(0), "time"))
    for m in _DAYPART_HOUR.finditer(text) if digits and may_say(text, _DAYPARTS) else ():
        hour = _twelve(int(m.group(1)), "a" if m.group(3).casefold() == "morning" else "p")
        out.append(Mention(f"{hour:02d}:{m.group(2) or '00'}", m.start(), m.end(), m.group(0), "time"))
    for m in _DAYPART_RANGE.finditer(text) if digits and may_say(text, _DAYPARTS) else ():
        if m.group(4).casefold() == "and" and not m.group(1):
            continue
        hour = _twelve(int(m.group(2)), "a" if m.group(5).casefold() == "morning" else "p")
        text_end = m.end(3) if m.group(3) else m.end(2)
        out.append(Mention(f"{hour:02d}:{m.group(3) or '00'}", m.start(2), text_end, text[m.start(2):text_end], "time"))
    for m in _PAST.finditer(text) if may_say(text, _PAST_WORDS) else ():
        said = m.group(3).casefold()
        hour = int(said) if said.isdigit() else _HOUR_WORDS.index(said) + 1
        if m.group(4) is None and 1 <= hour <= 6:
            hour += 12  # "half past two" in a working day is 14:30
        hour = _twelve(hour, m.group(4)) if hour <= 12 else hour
        minutes = 30 if m.group(1).casefold() == "half" else 15
        if m.group(2).casefold() == "to":
            hour, minutes = (hour - 1) % 24, 60 - minutes
        out.append(Mention(f"{hour:02d}:{minutes:02d}", m.start(), m.end(), m.group(0), "time"))
    for m in _HALF_HOUR.finditer(text) if may_say(text, _PAST_WORDS) else ():
        said = m.group(1).casefold()
        hour = int(said) if said.isdigit() else _HOUR_WORDS.index(said) + 1
        if hour < 12 and (hour <= 6 or _EVENING_AFTER.match(text, m.end())):
            hour += 12  # "half six to half seven in the evening": 18:30 and 19:30
        out.append(Mention(f"{hour:02d}:30", m.start(), m.end(), m.group(0), "time"))
    for m in _WORD_HOUR.finditer(text) if may_say(text, _HOUR_WORD_SET) else ():
        half = m.group(2) or ("a" if m.group(3).casefold() == "morning" else "p")
        hour = _twelve(_HOUR_WORDS.index(m.group(1).casefold()) + 1, half)
        out.append(Mention(f"{hour:02d}:00", m.start(), m.end(), m.group(0), "time"))
    for m in _NAMED.finditer(text) if may_say(text, _NAMED_WORDS) else ():
        out.append(Mention("00:00" if m.group(1).casefold() == "midnight" else "12:00", m.start(), m.end(),
                           m.group(0), "time"))
    return tuple(_distinct_spans(out))


def in_window(iso: str, windows: list[Mention[tuple[str, str]]]) -> bool:
    """Whether an ISO date (or date-time) falls in one of the windows."""
    day = iso[:10]
    return any(first <= day <= last for first, last in (w.value for w in windows))


# --------------------------------------------------------------------------- words


@lru_cache(maxsize=8192)
def _bounded(token: str, joiners: str, prefix: bool) -> re.Pattern[str]:
    outside = rf"[\w{re.escape(joiners)}]"
    return re.compile(rf"(?<!{outside}){re.escape(token)}" + ("" if prefix else rf"(?!{outside})"), re.IGNORECASE)


def has_word(text: str, word: str, joiners: str = "-", prefix: bool = False) -> bool:
    """Whether ``word`` occurs in ``text``, case-insensitively, not inside a longer word: no word
    character (nor one of ``joiners``) right before it, nor right after it unless ``prefix`` (then
    "day" finds "days"). A plain substring test first, so most calls never reach a regex."""
    if not word:
        return False
    folded, token = text.casefold(), word.casefold()
    if token not in folded:
        return False
    if not (text.isascii() and word.isascii()):
        return _bounded(word, joiners, prefix).search(text) is not None
    # ASCII alone: the pattern's test without compiling it (a word character is a letter, a digit
    # or "_"; case folds only within ASCII), at each place the word occurs
    at, end = folded.find(token), len(token)
    while at >= 0:
        if not (at and _joins(folded[at - 1], joiners)) and (
                prefix or at + end == len(folded) or not _joins(folded[at + end], joiners)):
            return True
        at = folded.find(token, at + 1)
    return False


def _joins(char: str, joiners: str) -> bool:
    """Whether an ASCII character continues a word: a letter, a digit, "_" or one of ``joiners``."""
    return char.isalnum() or char == "_" or char in joiners


_QUOTED = re.compile(r"(?:[\"“‘]|(?<![A-Za-z])')([^\"'”’]+(?:(?<=[A-Za-z])['’](?=[A-Za-z])[^\"'”’]+)*)(?:[\"”’]|'(?![A-Za-z]))")
"""A quoted phrase; a single quote between letters is an apostrophe ("I'm", "Rosa's"), neither an
opening nor a closing quote, and part of the phrase it is in ('Archive last year's invoices')."""


FUNCTION_WORDS = frozenset({"the", "a", "an", "to", "of", "in", "on", "at", "by", "as", "for", "and", "or", "with",
                            "from", "into", "onto", "about", "this", "that", "these", "those", "it", "its", "is", "are",
                            "which", "one", "ones", "all", "any", "our", "your", "their", "his", "her", "too", "also",
                            "very", "just"})
"""Words that name nothing: left out when a text's words are matched against a record's."""
NAME_RUN = re.compile(r"\b[A-Z][\w&'-]+(?:\s+(?:&\s+)?[A-Z][\w&'-]+)+")
"""A run of two or more capitalized words: a name ("Pemberton Glass", "Harrow & Vale")."""


@lru_cache(maxsize=4096)
def _quoted(text: str) -> tuple[tuple[int, int, str], ...]:
    """Each phrase of three characters or more ``text`` puts in quotes: its span (the quotes
    included) and the phrase (remembered: the stages ask it of the same request)."""
    return tuple((m.start(), m.end(), m.group(1)) for m in _QUOTED.finditer(text) if len(m.group(1)) >= 3)


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` puts a phrase in quotes (the quotes included), as ``quoted_phrases`` finds them."""
    return [(a, b) for a, b, _ in _quoted(text)]


_GIVES_TITLE = re.compile(r"\b(?:titled|entitled|called|named|subject(?:\s+line)?)\s*:?\s*$", re.IGNORECASE)


def title_spans(text: str) -> tuple[tuple[int, int], ...]:
    """The quoted phrases (``quoted_spans``) that give a title or name ("an expense report called
    'Kestrel Bay shoot - locations'", "a note titled 'Launch risks'"): the capitalized words inside
    one name the thing it titles, not records to select."""
    return tuple((a, b) for a, b in quoted_spans(text) if _GIVES_TITLE.search(text[:a]))


def quoted_phrases(text: str) -> list[str]:
    """The phrases ``text`` puts in quotes (straight or curly, single or double), three
    characters or more: words a request dictates verbatim."""
    return [phrase for _, _, phrase in _quoted(text)]


# --------------------------------------------------------------------------- spans a request reads apart

_AS_IT_IS = r"though|alone|untouched|in\s+place|as\s+(?:it|they)\s+(?:is|are)|where\s+(?:it|they)\s+(?:is|are)"
"""The words that end what a request keeps as it is ("Keep the one on the 10th though", "leave the
Harbour booking alone")."""
_EXCLUSION = re.compile(
    r"\b(?:except(?:\s+for)?|all\s+but|everyone\s+but|everybody\s+but|anyone\s+but|other\s+than|excluding|"
    r"exclude|apart\s+from|aside\s+from|but\s+not|not\s+including|leave\s+out|leaving\s+out|leave\s+off|skip|"
    r"skipping|besides|save\s+for|with\s+the\s+exception\s+of|not\s+to|(?:but|and)\s+(?:keep|leave)|"
    r"leave(?=\s[^.;:!?\n]{1,60}?\bout\b)|"
    r"hang\s+on\s+to|hold\s+on\s+to|spare|(?:don'?t|do\s+not)\s+(?:touch|delete|trash|remove|close|archive|move)|"
    r"(?:^|(?<=[.;!?—–]\s))not(?=\s+(?-i:[A-Z]))|"
    r"(?:^|(?<=[.;!?—–]\s))(?:keep|leave)(?=\s[^.;:!?\n]{1,60}?\s(?:" + _AS_IT_IS + r")\b))\b"
    r"(?P<rest>[^.;:!?\n)]*?)(?=[.;:!?\n)]|,\s*(?:and|then|but|so)\b|\s+(?:then|and\s+then|" + _AS_IT_IS + r")\b|$)",
    re.IGNORECASE)


@lru_cache(maxsize=4096)
def excluded_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Where ``text`` names things only to leave them out: what follows "except", "all but",
    "other than", "excluding", "apart from", "but not", "leave out", "leave … out", "skip", "but
    keep", "but leave", "don't touch", a sentence that opens "Keep" or "Leave" and says "though",
    "alone", "as it is" … up to the end of the clause (a full stop or other stop, a closing bracket, ", and",
    ", then", "though", "as it is"). "Message everyone in Finance except Omar Haddad" leaves out Omar Haddad."""
    return tuple((m.start("rest"), m.end("rest")) for m in _EXCLUSION.finditer(text))


_KEEPING = re.compile(r"\b(?:keep|leave|hang|hold|spare|don'?t|do\s+not)\b", re.IGNORECASE)


@lru_cache(maxsize=4096)
def kept_spans(text: str) -> tuple[tuple[int, int], ...]:
    """The ``excluded_spans`` the request says to keep as they are ("but keep the pinned ones",
    "but leave The Margin Letter where it is", "hang on to", "spare", "don't delete"), not only
    to leave out of the work ("except", "apart from")."""
    return tuple((m.start("rest"), m.end("rest")) for m in _EXCLUSION.finditer(text)
                 if _KEEPING.search(text, m.start(), m.start("rest")))


def within(spans: tuple[tuple[int, int], ...], start: int) -> bool:
    """Whether offset ``start`` lies inside one of ``spans``."""
    return any(a <= start < b for a, b in spans)


_NAMED_NUMBER = re.compile(r"(?<=[\w,]\s)[A-Z][\w&'-]*\s+#?\d[\w.-]*(?!\s+[a-z]+s\b)|\b[A-Z]{1,3}\d{1,4}\b")


@lru_cache(maxsize=1024)
def name_spans(text: str, names: tuple[str, ...] = ()) -> tuple[tuple[int, int], ...]:
    """Where ``text`` writes a name that holds a number, which is part of the name and no
    quantity: a quoted phrase; a capitalized word inside a sentence followed by a number that no
    plural noun follows ("the Archive 2026 folder", "Room 101", "Floor 7"; not "Omar 3
    reminders"), or a code ("Q3", "X200"); any of ``names`` (the names and titles of the state's
    records that hold digits: "Route 66 Diner") written in the text, case ignored."""
    spans = quoted_spans(text)
    spans += [(m.start(), m.end()) for m in _NAMED_NUMBER.finditer(text)] if has_digit(text) else []
    folded = text.casefold()
    for name in names:
        needle = name.casefold()
        at = folded.find(needle)
        while at >= 0:
            spans.append((at, at + len(needle)))
            at = folded.find(needle, at + 1)
    return tuple(spans)


# --------------------------------------------------------------------------- ranges a request allows


@dataclass(frozen=True)
class Allowed:
    """One range of values a text allows for a slot: ``kind`` (``date``, ``time`` or ``number``),
    its bounds (ISO dates, ``HH:MM`` times, numbers; None for an open end), and whether the text
    says the choice is free inside it (``flexible``: "any weekday", "between 08:00 and 10:30",
    "one or two", "at least 20") rather than only bounding it ("next week", "by Friday")."""

    kind: str
    low: Any
    high: Any
    flexible: bool
    weekdays_only: bool = False
    days_out: frozenset[int] = frozenset()
    """Weekdays (Monday 0) the text rules out of a date range: "Not Wednesday, she's out"."""

    def holds(self, value: Any) -> bool:
        """Whether ``value`` (of this range's kind) lies inside it."""
        if self.kind == "date" and (self.weekdays_only or self.days_out):
            weekday = date.fromisoformat(value).weekday()
            if (self.weekdays_only and weekday >= 5) or weekday in self.days_out:
                return False
        return (self.low is None or self.low <= value) and (self.high is None or value <= self.high)


_DATE_JOIN = re.compile(r"\s*(?:and|to|until|till|through|thru|-|–|—)\s*(?:the\s+)?", re.IGNORECASE)
_BETWEEN_TIMES = re.compile(r"\bbetween\s+(?P<a>\S+(?:\s*[ap]\.?m\.?)?)\s+(?:and|-|–)\s+(?P<b>\S+(?:\s*[ap]\.?m\.?)?)",
                            re.IGNORECASE)
_TIME_BOUND = re.compile(r"\b(?P<w>no later than|no earlier than|not before|not after|before|after|by)\s+"
                         r"(?P<t>\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?|noon|midday)", re.IGNORECASE)
_MONTH_WORD = MONTH_AHEAD + "(?:" + "|".join(m[:3] for m in MONTHS) + ")[a-z]*"  # one letter class, not twelve: cheaper to compile
_DAY_SPAN_OF_MONTH = re.compile(
    rf"\b(?:(?P<m1>{_MONTH_WORD})\.?\s+)?(?P<a>\d{{1,2}})(?:st|nd|rd|th)?\s*(?P<join>to|-|–|and|until|through|till)\s*"
    rf"(?:the\s+)?(?:(?:{'|'.join(WEEKDAYS)})\s+)?(?P<b>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"(?(m1)|\s+(?:of\s+)?(?P<m2>{_MONTH_WORD})\b)", re.IGNORECASE)
"""Two days of one month: "18 to 29 January", "January 18-29", "between the 7th and 11th of December",
"Monday 7 to Friday 11 December"."""
_NUMBER_RANGE = re.compile(
    r"\b(?P<w>at least|no fewer than|no less than|a minimum of|minimum of|up to|at most|no more than|a maximum of|"
    r"maximum of|between)\s+(?P<a>[\w.,]+)(?:\s+(?:and|to)\s+(?P<b>[\w.,]+))?"
    r"|\b(?P<x>[\w.,]+)\s+or\s+(?P<y>[\w.,]+)\b"
    r"|(?<![\w:./-])(?P<from>\d+(?:\.\d+)?)\s*(?:to|-|–)\s*(?P<to>\d+(?:\.\d+)?)(?![\w:./-]|\s*(?:am|pm|a\.m|p\.m)\b)",
    re.IGNORECASE)
_A_LEVEL = re.compile(r"\b(?:back|bring\w*|get\w*|top\w*|fill\w*|restock\w*|refill\w*|rais\w*|replenish\w*|"
                      r"bump\w*|increas\w*|boost\w*|lift\w*|push\w*|mov\w*|nudg\w*|hik\w*|jack\w*|"
                      r"chang\w*|adjust\w*)\b[^.;!?]*$", re.IGNORECASE)
"""Words before "up to" that make it a level to reach ("back up to 60 units", "top it up to 40",
"bump their reorder level up to forty", "move the limit up to 500"), not a bound on an amount
("order up to 5", "raise it by up to 10%")."""
_WEEKDAY_WORD = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_PART_OF_DAY = re.compile(
    rf"\b(?:(?:every|each|on|next|this|tomorrow|one|some|any|{_WEEKDAY_WORD})\s+|in\s+the\s+)"
    r"(?P<part>morning|afternoon|evening)s?\b"
    r"|\b(?:(?:every|each|at)\s+night|nightly|overnight)\b"
    r"|\b(?P<lunch>(?:at|over)\s+lunch(?:time)?|lunchtime)\b"
    rf"|\b(?P<first>first\s+thing)(?=\s+(?:tomorrow|today|on\b|in\s+the\s+morning|next|this|{_WEEKDAY_WORD}))",
    re.IGNORECASE)
"""A part of the day the request gives with no clock time: "every Monday morning", "some
afternoon next week", "tomorrow evening", "in the morning", "every night", "nightly", "at
lunchtime", "first thing tomorrow"."""
_PART_WORDS = frozenset({"morning", "afternoon", "evening", "mornings", "afternoons", "evenings", "night", "nightly",
                         "overnight", "lunch", "lunchtime", "first"})
_PART_HOURS = {"morning": [("06:00", "12:00")], "afternoon": [("12:00", "17:00")], "evening": [("17:00", "21:00")],
               "night": [("22:00", "23:59"), ("00:00", "05:00")], "lunch": [("12:00", "14:00")],
               "first": [("07:00", "10:00")]}
"""The clock times a part of the day holds, the ends included: what a person reading "every
Monday morning" or "Thursday afternoon" would accept; the night, on either side of midnight."""
_TIMED_SENTENCE = re.compile(r"\d|\b(?:at|from|around|about|by|before|after|until|till|between)\s+(?:one|two|three|four|"
                             r"five|six|seven|eight|nine|ten|eleven|twelve|noon|midday)\b|\b(?:noon|midday|o['’]?clock)\b",
                             re.IGNORECASE)
"""A sentence that gives a time itself ("Monday morning at 9", "tomorrow morning, around ten"):
its part of the day is no range of its own (nor is one of a text that states a clock time anywhere:
"Thursday afternoon? Any start from 1 to 3pm is fine")."""


def _sentence_around(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` that holds ``text[start:end]`` (cut at ".", "!", "?", ";" or a new line)."""
    first = max(text.rfind(c, 0, start) for c in ".!?;\n") + 1
    lasts = [at for c in ".!?;\n" if (at := text.find(c, end)) >= 0]
    return text[first:min(lasts, default=len(text))]


_FLEXIBLE = re.compile(r"\b(any|anytime|whichever|either|any day|any time|sometime|some time|some (?:day|morning|"
                       r"afternoon|evening)|your choice|"
                       r"you pick|you choose|fine|flexible|works)\b", re.IGNORECASE)
_WEEKDAY_ONLY = re.compile(r"\b(weekdays?|working days?|business days?|workdays?)\b", re.IGNORECASE)


def _one_number(text: str) -> float | None:
    text = text.strip(" ,.")
    if text.casefold() in WORDS:
        return float(WORDS[text.casefold()])
    found = numbers_in(text)
    return float(found[0].value) if len(found) == 1 else None


_DAY_NAME = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)"
_WEEKDAY_SPAN = re.compile(rf"\b(?:(?P<between>between)\s+)?(?P<a>{_DAY_NAME})\s*(?P<join>-|–|—|to|through|thru|until|till|and|or)"
                           rf"\s*(?P<b>{_DAY_NAME})\b(?:\s+(?:of\s+)?(?P<week>next|this|the\s+coming|coming)\s+week)?",
                           re.IGNORECASE)


_WEEK_BEFORE = re.compile(r"\b(?P<week>next|this|the\s+coming|coming)\s+week\b[^.;!?\d]*$", re.IGNORECASE)
_WEEK_LAST_SENTENCE = re.compile(r"\b(?P<week>next|this|the\s+coming|coming)\s+week\b[^.;!?]*[.;!?]\s*[^.;!?]*$",
                                 re.IGNORECASE)
"""The week a sentence names, read by the days the next sentence lists ("... next week. Any of
Tuesday, Wednesday or Thursday is fine")."""
_WEEKDAY_LIST = re.compile(rf"\b(?P<any>(?:any|either|one)\s+of\s+)?(?P<days>{_DAY_NAME}(?:\s*,\s*{_DAY_NAME})+,?\s+"
                           rf"(?P<join>or|and)\s+{_DAY_NAME})\b(?:\s+(?:of\s+)?(?P<week>next|this|the\s+coming|coming)\s+week)?",
                           re.IGNORECASE)
"""Three days or more offered as options: "Tuesday, Wednesday or Thursday", "any of Mon, Tue and Wed"."""
_DAY_NAMED = re.compile(_DAY_NAME, re.IGNORECASE)


def _monday_of(text: str, m: re.Match[str], today: date, last_day: int) -> date:
    """The Monday of the week a span or list of weekdays ``m`` means: the one named after it, or
    earlier in its sentence or the sentence before, else the first week from today holding its last day."""
    monday = today - timedelta(days=today.weekday())
    before = (_WEEK_BEFORE.search(text, max(0, m.start() - 48), m.start())  # "some morning next week, Tuesday to Thursday"
              or _WEEK_LAST_SENTENCE.search(text, max(0, m.start() - 160), m.start()))
    week = (m.group("week") or (before.group("week") if before else "")).casefold()
    if week != "this" and (week or today.weekday() > last_day):
        monday += timedelta(days=7)
    return monday


def _weekday_spans(text: str, today: date, weekdays: bool) -> list[Allowed]:
    """The days of a span of weekdays ("tue-thu next week", "between Monday and Wednesday",
    "Wed to Fri this week", "next week, Tuesday through Thursday", "thu or fri") or of a list of
    them offered as options ("Tuesday, Wednesday or Thursday": a span when the days are in a row,
    else each day alone): of the week named just after it, earlier in its sentence or in the
    sentence before, else the first such span from today on ("and" only after "between" or "any
    of"; "or" between two days only when they are in a row)."""
    out = []
    for m in _WEEKDAY_SPAN.finditer(text) if may_say(text, _WEEKDAY_WORDS) else ():
        join = m.group("join").casefold()
        if join == "and" and not m.group("between"):
            continue
        a, b = _weekday_index(m.group("a")), _weekday_index(m.group("b"))
        if a >= b or (join == "or" and b != a + 1):
            continue  # backwards; or two days apart ("mon or fri" allows two days, not the days between)
        monday = _monday_of(text, m, today, b)
        first, last = max(monday + timedelta(days=a), today), monday + timedelta(days=b)
        if first <= last:
            out.append(Allowed("date", first.isoformat(), last.isoformat(), True, weekdays))
    for m in _WEEKDAY_LIST.finditer(text) if may_say(text, _WEEKDAY_WORDS) else ():
        if m.group("join").casefold() == "and" and not m.group("any"):
            continue  # "on Monday, Wednesday and Friday": every one of them, not a choice
        days = sorted({_weekday_index(d) for d in _DAY_NAMED.findall(m.group("days"))})
        monday = _monday_of(text, m, today, days[-1])
        if days == list(range(days[0], days[-1] + 1)):  # days in a row: any day between the first and the last
            first, last = max(monday + timedelta(days=days[0]), today), monday + timedelta(days=days[-1])
            if first <= last:
                out.append(Allowed("date", first.isoformat(), last.isoformat(), True, weekdays))
        else:  # "Monday, Wednesday or Friday": each day alone, none of those between
            out += [Allowed("date", d, d, True, weekdays) for d in
                    ((monday + timedelta(days=n)).isoformat() for n in days) if d >= today.isoformat()]
    return out


@lru_cache(maxsize=4096)
def allowed_ranges(text: str, today: date) -> tuple[Allowed, ...]:
    """The ranges ``text`` allows: date windows ("next week", "by Friday", "between the 7th and
    the 11th", "2026-12-07 to 2026-12-11", "from 18 to 29 January", "tue-thu next week"; weekdays
    only when it says "weekday"), clock ranges
    ("between 08:00 and 10:30", "before 10:00", "no later than 17:00"; a part of the day where the
    text states no time: ``_PART_OF_DAY``, "every Monday morning"), and number ranges ("one
    or two", "at least 20", "up to 5", "between 10 and 15", "30 to 40 boxes")."""
    out: list[Allowed] = []
    flexible = _FLEXIBLE.search(text) is not None
    weekdays = _WEEKDAY_ONLY.search(text) is not None
    for w in windows_in(text, today):
        out.append(Allowed("date", *w.value, flexible, weekdays))
    stated = dates_in(text, today)
    for since, until in zip(stated, stated[1:], strict=False):  # "2026-12-07 to 2026-12-11", "between the 7th and the 11th"
        if _DATE_JOIN.fullmatch(text[since.end:until.start]) and since.value < until.value:
            out.append(Allowed("date", since.value, until.value, True, weekdays))
    out += _weekday_spans(text, today, weekdays)
    days = []  # "from 18 to 29 January", "January 18-29": a span of days of one month
    for m in _DAY_SPAN_OF_MONTH.finditer(text) if has_digit(text) and _names_a_month(text) else ():
        if m.group("join").casefold() == "and" and not re.search(r"\bbetween\s+(?:the\s+)?$", text[:m.start("a")],
                                                                  re.IGNORECASE):
            continue  # "on 23, 25 and 27 Nov": three days, no range
        month = _month(m.group("m1") or m.group("m2"))
        first = _nearest_year(today, month, int(m.group("a")))
        last = _date(first.year, month, int(m.group("b"))) if first is not None else None
        if first is not None and last is not None and first < last:
            out.append(Allowed("date", first.isoformat(), last.isoformat(), True, weekdays))
            days.append((m.start(), m.end()))
    for m in _BETWEEN_TIMES.finditer(text):
        early, later = times_in(m.group("a")), times_in(m.group("b"))
        if len(early) == 1 and len(later) == 1 and early[0].value < later[0].value:
            out.append(Allowed("time", early[0].value, later[0].value, True))
    for m in _PART_OF_DAY.finditer(text) if may_say(text, _PART_WORDS) and not times_in(text) else ():
        if not _TIMED_SENTENCE.search(_sentence_around(text, m.start(), m.end())):
            part = (m.group("part") or ("lunch" if m.group("lunch") else "first" if m.group("first") else "night")).casefold()
            out += [Allowed("time", low, high, True) for low, high in _PART_HOURS[part]]
    for m in _TIME_BOUND.finditer(text):
        t = times_in(m.group("t")) or times_in(m.group("t") + ":00")
        if len(t) == 1:
            word = m.group("w").casefold()
            late = word in ("no later than", "before", "by", "not after")
            out.append(Allowed("time", None if late else t[0].value, t[0].value if late else None, True))
    a: float | None  # the bounds of a number range
    b: float | None
    clock = [(t.start, t.end) for t in times_in(text)] if has_digit(text) else []
    for m in _NUMBER_RANGE.finditer(text) if has_digit(text) or may_say(text, _NUMBER_WORDS) else ():
        if any(a < m.end() and m.start() < b for a, b in [*days, *clock]):
            continue  # the days of a date span, the hours of a clock range ("9 to 11 in the morning"): no number range
        if m.group("from"):
            a, b = float(m.group("from")), float(m.group("to"))
            if a < b:
                out.append(Allowed("number", a, b, True))
            continue
        if m.group("w"):
            word, a = m.group("w").casefold(), _one_number(m.group("a"))
            b = _one_number(m.group("b")) if m.group("b") else None
            if a is None:
                continue
            if word == "between" and b is not None and a < b:
                out.append(Allowed("number", a, b, True))
            elif word in ("at least", "no fewer than", "no less than", "a minimum of", "minimum of"):
                out.append(Allowed("number", a, None, True))
            elif word != "between" and not (word == "up to" and _A_LEVEL.search(text, max(0, m.start() - 40), m.start())
                                              and not text[:m.start()].rstrip().casefold().endswith(" by")):
                out.append(Allowed("number", None, a, True))
        else:
            a, b = _one_number(m.group("x")), _one_number(m.group("y"))
            if a is not None and b is not None and 0 < b - a <= max(2.0, a):
                out.append(Allowed("number", a, b, True))
    if (days_out := _days_ruled_out(text)) and any(r.kind == "date" for r in out):
        out = [replace(r, days_out=days_out) if r.kind == "date" else r for r in out]
    return tuple(out)


_DAY_NAMES = "|".join(WEEKDAYS)
_DAY_WORDS = frozenset([*WEEKDAYS, *(d + "s" for d in WEEKDAYS)])
_DAY_RULED_OUT = re.compile(
    rf"\b(?:not|except|excluding|apart from|other than|anything but|never|avoid|skip)\s+(?:on\s+)?(?:a\s+)?(?P<a>{_DAY_NAMES})s?\b"
    rf"|\b(?P<b>{_DAY_NAMES})s?\s+(?:is|are)\s+(?:out|off|no good|not (?:possible|an option|good))\b"
    rf"|\b(?P<c>{_DAY_NAMES})s?\s+(?:doesn't|does not|won't|will not)\s+work\b", re.IGNORECASE)


def _days_ruled_out(text: str) -> frozenset[int]:
    """The weekdays ``text`` rules out ("Not Wednesday", "except on Fridays", "Monday is out",
    "Tuesday doesn't work")."""
    if not may_say(text, _DAY_WORDS):
        return frozenset()
    return frozenset(WEEKDAYS.index((m.group("a") or m.group("b") or m.group("c")).casefold())
                     for m in _DAY_RULED_OUT.finditer(text))


def range_of(value: Any, ranges: tuple[Allowed, ...], flexible_only: bool = False) -> Allowed | None:
    """The narrowest of ``ranges`` that holds ``value`` (an ISO date or date-time, an ``HH:MM``
    time, a number; the first of those as narrow), by kind: "Tuesday through Thursday" inside
    "next week"; a date-time is held by a date range through its day and by a time range through
    its clock. None when none does."""
    holding = [r for r in ranges if not (flexible_only and not r.flexible)
               and (key := _range_key(value, r.kind)) is not None and r.holds(key)]
    return min(holding, key=_width, default=None)


def _width(r: Allowed) -> float:
    """How much a range spans, in its kind's unit (days, minutes, the number); open: infinite."""
    if r.low is None or r.high is None:
        return float("inf")
    if r.kind == "date":
        return float((date.fromisoformat(r.high) - date.fromisoformat(r.low)).days)
    if r.kind == "time":
        (h1, m1), (h2, m2) = (map(int, str(t).split(":")[:2]) for t in (r.low, r.high))
        return float(60 * (h2 - h1) + m2 - m1)
    return float(r.high) - float(r.low)


def _range_key(value: Any, kind: str) -> Any:
    if kind == "number":
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if not isinstance(value, str):
        return None
    if kind == "date":
        return value[:10] if ISO_DATE.match(value) else None
    return clock_of(value)


_DAY_SPAN = re.compile(r"\b(?P<n>\d{1,3}|a|an|(?:" + "|".join(_TENS) + r")[\s-](?:" + "|".join(_UNITS) + r")|one|"
                       + "|".join(WORDS) + r")(?:\s*\(\d{1,3}\))?\s+(?P<kind>(?:working|business)\s+)?"
                       r"(?P<unit>days?|weeks?|fortnights?)\b"
                       r"|\b(?:the\s+)?(?:(?:first|next|following)\s+)?(?P<working>(?:working|business)\s+)?"
                       r"(?P<next>day|week)\s+(?:before|after|later)\b"
                       r"|\b(?P<fortnight>a\s+fortnight)\b", re.IGNORECASE)
_DAY_SPAN_WORDS = frozenset({"day", "days", "week", "weeks", "fortnight", "fortnights"})


@lru_cache(maxsize=4096)
def day_spans(text: str) -> frozenset[tuple[int, bool]]:
    """The spans of days ``text`` states, with whether they count working days only: "two days
    after" (2), "a week before" (7), "3 working days" (3, working days), "a fortnight" (14), "the
    day before" (1), "the first working day after" (1, working days). Dates an agent computes from a date it read ("due two days after the vendor
    meeting") are that date moved by one of these."""
    out: set[tuple[int, bool]] = set()
    for m in _DAY_SPAN.finditer(text) if may_say(text, _DAY_SPAN_WORDS) else ():
        if m.group("fortnight"):
            out.add((14, False))
        elif m.group("next"):  # "the day after", "the first working day after" (1, working days)
            week = m.group("next").casefold() == "week"
            out.add((7 if week else 1, bool(m.group("working")) and not week))
        else:
            said = m.group("n").casefold()
            n = int(said) if said.isdigit() else 1 if said in ("a", "an") else \
                sum(WORDS[w] for w in re.split(r"[\s-]", said))  # "forty-five (45) days": 45
            unit = m.group("unit").casefold()
            days = n * (14 if unit.startswith("fortnight") else 7 if unit.startswith("week") else 1)
            out.add((days, bool(m.group("kind")) and unit.startswith("day")))
    return frozenset(out)


def shifted(day: str, days: int, working: bool = False) -> str:
    """The ISO date ``days`` after ``day`` (before, when negative), counting only Monday to Friday
    when ``working``."""
    d = date.fromisoformat(day[:10])
    if not working:
        return (d + timedelta(days=days)).isoformat()
    step = 1 if days > 0 else -1
    left = abs(days)
    while left:
        d += timedelta(days=step)
        left -= d.weekday() < 5
    return d.isoformat()


_MONTH_ALONE = re.compile(r"\b(?:in|during|for|of|over|from|since|through|throughout)?\s*(?P<m>" + "|".join(MONTHS)
                          + r")\b(?:\s+(?P<y>\d{4}))?(?!\s+\d{1,2}(?:st|nd|rd|th)?\b)"
                          r"(?:\s*(?:to|until|till|through|-|–)\s*(?P<m2>" + "|".join(MONTHS) + r")\b(?:\s+(?P<y2>\d{4}))?)?",
                          re.IGNORECASE)
_OPEN_SIDE = re.compile(r"\s*(?:(?P<earlier>(?:,\s*)?(?:or|and)\s+(?:earlier|before|prior)\b)|"
                        r"(?:,\s*)?(?:or|and)\s+(?:later|after)\b|\s*onwards?\b)", re.IGNORECASE)
"""Words after a month that open one end of it: "October or earlier" (up to its last day), "March or
later", "from March onwards" (from its first)."""
_DAY_BEFORE = re.compile(r"(?<![\d,.])\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?$", re.IGNORECASE)
"""A day written before a month's name ("1 October", "the 3rd of November"): the two are a date."""
_QUARTER = re.compile(r"\b(?:Q(?P<q>[1-4])(?:\s+(?P<y>\d{4}))?|(?P<which>this|last|next|current)\s+quarter)\b",
                      re.IGNORECASE)
_RELATIVE_MONTH = re.compile(r"\b(?P<which>this|(?<!the )last|next|current|previous)\s+month(?:['’]s)?\b", re.IGNORECASE)
"""A calendar month named from today; "the last month" is the last thirty days or so."""


def _month_span(today: date, month: int, year: int | None, last_month: int | None = None,
                last_year: int | None = None) -> tuple[str, str]:
    """The first and last day of ``month`` (through ``last_month``), in ``year`` or the latest
    year whose month begins no more than a month ahead of ``today``."""
    if year is None:  # the latest year in which the month begins no more than a month from now
        soon = today + timedelta(days=31)
        year = next(y for y in (today.year + 1, today.year, today.year - 1) if date(y, month, 1) <= soon)
    first = date(year, month, 1)
    end_month = last_month or month
    end_year = last_year or (first.year + (end_month < month))
    after = date(end_year + (end_month == 12), end_month % 12 + 1, 1)
    return first.isoformat(), (after - timedelta(days=1)).isoformat()


@lru_cache(maxsize=4096)
def periods_in(text: str, today: date) -> tuple[Allowed, ...]:
    """The calendar periods ``text`` names as a whole: a month ("in November", "November 2026",
    "last month's"), a run of months ("October to December"), a quarter ("Q4", "this quarter"); a
    month open at one end ("October or earlier", "March onwards": ``_OPEN_SIDE``). A month written
    with a day ("November 3", "1 October 2026") is a date, not a period."""
    out: list[Allowed] = []
    for m in _MONTH_ALONE.finditer(text) if _names_a_month(text) else ():
        if _DAY_BEFORE.search(text, max(0, m.start("m") - 12), m.start("m")):
            continue  # "before 1 October 2026": a date, not the month
        month = MONTHS.index(m.group("m").casefold()) + 1
        last = MONTHS.index(m.group("m2").casefold()) + 1 if m.group("m2") else None
        first, final = _month_span(today, month, int(m.group("y")) if m.group("y") else None, last,
                                   int(m.group("y2")) if m.group("y2") else None)
        side = _OPEN_SIDE.match(text, m.end())  # "October or earlier", "from March onwards": one end open
        out.append(Allowed("date", None if side and side.group("earlier") else first,
                           None if side and not side.group("earlier") else final, False))
    if "month" in text.casefold():
        for m in _RELATIVE_MONTH.finditer(text):
            shift = {"last": -1, "previous": -1, "next": 1}.get(m.group("which").casefold(), 0)
            month, year = (today.month - 1 + shift) % 12 + 1, today.year + (today.month - 1 + shift) // 12
            low, high = _month_span(today, month, year)
            out.append(Allowed("date", low, high, False))
    for m in _QUARTER.finditer(text):
        if m.group("q"):
            quarter, year = int(m.group("q")), int(m.group("y")) if m.group("y") else today.year
        else:
            quarter, year = (today.month - 1) // 3 + 1, today.year
            shift = {"last": -1, "next": 1}.get(m.group("which").casefold(), 0)
            quarter, year = (quarter - 1 + shift) % 4 + 1, year + (quarter - 1 + shift) // 4
        low, high = _month_span(today, 3 * quarter - 2, year, 3 * quarter, year)
        out.append(Allowed("date", low, high, False))
    return tuple(out)

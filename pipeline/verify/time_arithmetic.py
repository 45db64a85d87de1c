"""Arithmetic on clock times and dates, as the verifier does it to know what an agent can compute:
the minutes of a clock time, a clock time moved by minutes, the dates of a series a text
describes, and the weekday a text names after a date it states. Clock times are ``HH:MM`` (or
``H:MM``), dates ISO days. Dates moved by a span of days are ``text_values.shifted``."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from datetime import date, timedelta

from pipeline.core.text_values import WEEKDAYS

DAY_MINUTES = 24 * 60


def clock_minutes(clock: str) -> int:
    """The minutes since midnight of a clock time (``"09:30"`` or ``"9:30"``: 570)."""
    hours, minutes = clock.split(":")[:2]
    return int(hours) * 60 + int(minutes)


def clock_at(minutes: int) -> str | None:
    """The ``HH:MM`` clock time ``minutes`` after midnight; None outside the day (below 0, from 24:00)."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}" if 0 <= minutes < DAY_MINUTES else None


def shift_clock(clock: str, minutes: int) -> str | None:
    """``clock`` moved by ``minutes`` (back, when negative), as ``HH:MM``; None past either end of the day."""
    return clock_at(clock_minutes(clock) + minutes)


def range_lengths(clocks: list[str]) -> set[float]:
    """The length of each range between two of ``clocks``, in minutes and in hours ("13:00" and
    "17:00": 240 and 4.0)."""
    minutes = [clock_minutes(c) for c in clocks]
    out: set[float] = set()
    for a in minutes:
        for b in minutes:
            if b > a:
                out |= {float(b - a), (b - a) / 60}
    return out


_CADENCE = {re.compile(pattern, re.IGNORECASE): days for pattern, days in (
    (r"\b(weekly|every week|each week|a week)\b", 7), (r"\b(daily|every day|each day)\b", 1),
    (r"\b(fortnightly|biweekly|every (two|other) weeks?)\b", 14), (r"\b(monthly|every month)\b", 30))}
_WEEKDAY_NAME = re.compile(r"\b(" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE)


def weekdays_after(text: str, stated: AbstractSet[str]) -> set[str]:
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


def series_dates(text: str, stated: AbstractSet[str]) -> set[str]:
    """The dates of a series the text describes ("weekly ... the first on 2026-12-07"): each
    stated date stepped by the cadence (daily, weekly, fortnightly, monthly), up to a year."""
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

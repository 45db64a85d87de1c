"""Sandboxed rendering of a workflow template's ``package`` body into package data.

The body is Jinja2 rendered by ``jinja2.sandbox.SandboxedEnvironment`` with ``StrictUndefined``
(a name that is not a slot is an error, never an empty string), then parsed as YAML. The YAML
loader keeps dates as strings (``2026-12-03`` stays text, as the package contract wants).

Filters available to bodies:

- ``q``: the value as a JSON scalar, which is valid YAML (``{{ name | q }}``);
- ``money``: ``1234.5`` → ``1,234.50``; ``money_re``: a regex that finds that amount in a text
  written with or without thousands separators and cents (``1,?234\\.50``);
- ``date_re``: a regex that finds an ISO date in a text written as people write it: ``2026-11-27``,
  ``November 27``, ``Nov 27th``, ``27 November``, ``27 Nov`` (any case), not as part of another
  number;
- ``upfirst``: first letter upper case, the rest untouched; ``word``: 3 → ``three`` (0..20);
- ``poss``: the possessive of a name (``Maya Patel's``, ``Harbor Foods'``);
- ``weekday``: ISO date → ``Thursday``; ``add_days(n)``: an ISO date or date-time ``n`` days later;
- ``re_escape``: ``re.escape``.

Globals: ``split_weight(total, n)``, ``n`` weights of about ``total / n`` each (four decimals)
whose sum is ``total``.
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from functools import cache
from typing import Any

from jinja2 import StrictUndefined, Template
from jinja2.sandbox import SandboxedEnvironment

from pipeline.core import yaml_text
from pipeline.core.text_values import NUMBER_WORDS


def quote(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def money(value: float) -> str:
    return f"{value:,.2f}"


def money_re(value: float) -> str:
    """A regex (RE2: no look-arounds) matching ``value`` as written with optional thousands commas
    and cents, and not as part of a longer number."""
    whole, cents = f"{value:.2f}".split(".")
    groups: list[str] = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    integer = ",?".join([whole, *groups])
    if cents == "00":
        tail = r"(\.00?)?"
    elif cents.endswith("0"):
        tail = rf"\.{cents[0]}0?"
    else:
        tail = rf"\.{cents}"
    return rf"(?:^|[^\d,.]){integer}{tail}(?:$|[^\d.,]|[.,](?:$|\D))"


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")


def date_re(iso: str) -> str:
    """A regex (RE2) matching the ISO day ``iso`` as an ISO date or with its month's name before or
    after the day (full or cut to three letters, an ordinal suffix allowed), any case."""
    day = date.fromisoformat(iso[:10])
    month = _MONTHS[day.month - 1]
    name = rf"{month[:3]}(?:{month[3:]})?\.?" if len(month) > 3 else month
    d = rf"0?{day.day}(?:st|nd|rd|th)?"
    return (rf"(?i)(?:^|[^\d]){day.isoformat()}(?:$|[^\d])|\b{name}\s+{d}(?:$|[^\d])|"
            rf"(?:^|[^\d]){d}\s+(?:of\s+)?{name}\b")


def upfirst(text: str) -> str:
    return text[:1].upper() + text[1:]


def possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def number_word(n: int) -> str:
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def weekday(iso: str) -> str:
    return date.fromisoformat(iso[:10]).strftime("%A")


def add_days(iso: str, days: int) -> str:
    return (date.fromisoformat(iso[:10]) + timedelta(days=days)).isoformat() + iso[10:]


def split_weight(total: float, n: int) -> list[float]:
    part = round(total / n, 4)
    return [part] * (n - 1) + [round(total - part * (n - 1), 4)]


@cache
def environment() -> SandboxedEnvironment:
    env = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, trim_blocks=True,
                               lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(q=quote, money=money, money_re=money_re, date_re=date_re, upfirst=upfirst, word=number_word, poss=possessive,
                       weekday=weekday, add_days=add_days, re_escape=re.escape)
    env.globals.update(split_weight=split_weight)
    return env


@cache
def compile_body(source: str) -> Template:
    """The compiled template of a ``package`` body (compiled once per distinct source)."""
    return environment().from_string(source)


def render_body(source: str, context: dict[str, Any]) -> str:
    """The body rendered with ``context`` (raises ``jinja2`` errors, e.g. on an undefined name)."""
    return compile_body(source).render(**context)


def parse_body(text: str) -> dict[str, Any]:
    """The rendered body as data; raises ``ValueError`` when it is not a YAML mapping."""
    data = yaml_text.load(text)
    if not isinstance(data, dict):
        raise ValueError(f"the package body rendered to {type(data).__name__}, not a mapping")
    return data

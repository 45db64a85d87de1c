"""Which records the request's words select and which they leave out.

Shared by the stages that ask whether the reference and the checks act on the records the request
means: ``consistency.py`` (a write to a record the request leaves out; an aggregate over records
the request does not select) and ``mutations.py`` (an agent that also acts on a record the
request leaves out).

- **Left out**: a record named (by its name, title, subject, company, id or email, the
  organisation its address is at, the name its title or subject opens with, or the first word of a
  name of two words or more) in an exclusion ("everyone in Finance except Omar
  Haddad", "apart from the Brightline one", "excluding inv-1043"; ``text_values.excluded_spans``),
  or described there by two or more words of its identifying fields and tags, more than any other
  record of its collection ("except the v2-to-v3 migration guide").
- **Selected by a value**: the request names a field's value ("unpaid", "Leeds", "proposal"; not
  a value holding a digit, such as a date, which the request may name for another reason)
  outside any exclusion or negation (and not only in a count within the count: "how many of those
  are urgent", nor only inside a title the request gives: "a report called 'Puppet repairs -
  November'"); a record of a group holding another value of that field,
  which the request does not name, is not selected. A value the request names only inside a
  negation or an exclusion ("deals that haven't been won or lost") leaves its records out.
- **Selected by a name**: the request writes a name or a quoted phrase ("Pemberton Glass")
  that the texts of some records of a group hold; the others are not selected. A name in what the
  request takes off a total ("net of the refund Hotel Miradouro gave us") selects nothing.
- **Selected by a period**: the request names a month, a run of months or a quarter ("in
  November", "Q4 runs October to December", ``text_values.periods_in``) or a range of days it
  leaves open; where a date field of a group falls inside it for some records, the others are
  not selected.
"""

from __future__ import annotations

import logging
import re
from datetime import date
from functools import lru_cache
from typing import Any

from pipeline.core.package import TaskPackage
from pipeline.core.text_values import (
    FUNCTION_WORDS,
    ISO_DATE,
    NAME_RUN,
    allowed_ranges,
    dates_in,
    excluded_spans,
    has_digit,
    has_word,
    periods_in,
    quoted_phrases,
    title_spans,
    within,
)

log = logging.getLogger(__name__)
"""Debug lines: what this module read in the request (``synth verify -v`` shows them)."""

_IDENTIFYING = ("name", "title", "subject", "company", "id", "email")
_NEGATION = re.compile(r"\b(?:not|never|no longer|without|\w+n't)\b(?P<rest>[^.;:!?\n]{0,60})", re.IGNORECASE)

Record = dict[str, Any]


def negated_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Where ``text`` names things to leave them out: exclusions (``excluded_spans``) and what
    follows a negation within its clause ("haven't been won or lost")."""
    return excluded_spans(text) + tuple((m.start("rest"), m.end("rest")) for m in _NEGATION.finditer(text))


def _mentions(text: str, words: str) -> list[int]:
    """Where ``words`` occur in ``text`` as whole words (with an "-ed" or "-s" ending: "voided"),
    case ignored."""
    if words.casefold() not in text.casefold():
        return []
    return [m.start() for m in _whole(words).finditer(text)]


def _own_mentions(text: str, values: set[str]) -> dict[str, list[int]]:
    """``_mentions`` of each of ``values`` (one field's values), without those inside a mention of
    a longer one: "the Uber Eats order" names vendor Uber Eats, not vendor Uber."""
    spots = {v: _mentions(text, v) for v in values}
    spans = [(at, at + len(w)) for w, ats in spots.items() for at in ats]
    return {v: [at for at in ats if not any(a <= at and at + len(v) <= b and b - a > len(v) for a, b in spans)]
            for v, ats in spots.items()}


@lru_cache(maxsize=4096)
def _whole(words: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w@.-]){re.escape(words)}(?:e?d|s)?(?![\w@-])", re.IGNORECASE)  # "void", "voided"


def _names(record: Record) -> list[str]:
    """How a request may name a record: its identifying fields, the first word of a name or
    company of two words or more, and the person a handle field names ("jonas.ek": Jonas Ek)."""
    out = [str(record[k]) for k in _IDENTIFYING if isinstance(record.get(k), str) and len(record[k]) >= 3]
    names = [str(record.get(k) or "") for k in ("name", "company")]
    for value in record.values():  # an address names its organisation: it-desk@brightline-logistics.example
        if isinstance(value, str) and (m := _DOMAIN.fullmatch(value)):
            names.append(m.group(1).replace("-", " "))
    for name in names:
        words = name.split()
        if len(words) >= 2 and len(words[0]) >= 3:
            out += [name, words[0]]
    for k in ("title", "subject"):  # "Harwell Bank newsletter: fee schedule" is from Harwell Bank
        if isinstance(record.get(k), str) and (m := _LEADING_NAME.match(record[k])):
            out.append(m.group(0))
    out += [m.group(1) + " " + m.group(2) for value in record.values()  # an owner "jonas.ek" is Jonas Ek
            if isinstance(value, str) and (m := _HANDLE.fullmatch(value))]
    return list(dict.fromkeys(out))


_HANDLE = re.compile(r"([a-z]{2,})[._]([a-z]{2,})")
"""A person's handle of two names ("jonas.ek", "lena_marsh"), as an owner or assignee field holds it."""


_DOMAIN = re.compile(r"[\w.+-]+@([a-z0-9-]+)\.[\w.-]+", re.IGNORECASE)
_LEADING_NAME = re.compile(r"[A-Z][\w&'-]+(?:\s+[A-Z][\w&'-]+)+")


def left_out(text: str, record: Record, rivals: list[Record] | None = None, today: date | None = None) -> bool:
    """Whether ``text`` names ``record`` only to leave it out (see the module docstring). Where a
    longer name of one of ``rivals`` is written at the same place ("Omar Reyes", not the first
    name of Omar Haddad), that place names the rival; a name other records share, written outside
    the exclusion too ("delete all my Harvest Fair todos"), names the whole lot, not this one."""
    spans = excluded_spans(text)
    if not spans:
        return False
    shared = {n.casefold() for other in rivals or [] if other is not record for n in _names(other)}
    found = [(at, len(name)) for name in _names(record) if not (name.casefold() in shared and any(
             not within(spans, at) for at in _mentions(text, name)))  # "all my Harvest Fair todos": the whole lot
             for at in _mentions(text, name)]
    longer = {(at, len(name)) for other in rivals or [] if other is not record for name in _names(other)
              for at in _mentions(text, name)}
    found = [(at, n) for at, n in found if not any(a <= at < a + m and m > n for a, m in longer)]
    if found:
        return all(within(spans, at) for at, _ in found)
    return rivals is not None and any(_described(text[a:b], record, rivals)
                                      or today is not None and _dated(text[a:b], record, rivals, today) for a, b in spans)


_BY_DAY = re.compile(r"^\s*(?:for\s+)?(?:the\s+(?:one|session|class|meeting|event|booking|shift)s?\s+)?(?:on|of|for)?\s*"
                     r"(?P<day>[^,;:]{2,40}?)\s*$", re.IGNORECASE)
_RANGE_WORDS = re.compile(r"\b(?:after|before|until|till|since|from|onwards?|later|earlier|between|through|to)\b",
                          re.IGNORECASE)


def _dated(span: str, record: Record, rivals: list[Record], today: date) -> bool:
    """Whether an exclusion names ``record`` by its day alone ("except the one on the 10th", "apart
    from the 18th"): the span is a day, maybe after "the one on", with no word of a range ("after
    the 10th" leaves out many), and ``record`` is the one of ``rivals`` with a date on that day."""
    m = _BY_DAY.match(span)
    if m is None or _RANGE_WORDS.search(span):
        return False
    days = {d.value for d in dates_in(m.group("day"), today) if d.text.strip() == m.group("day").strip()}
    if len(days) != 1:
        return False
    day = days.pop()

    def on_day(r: Record) -> bool:
        return any(isinstance(v, str) and ISO_DATE.match(v) and v[:10] == day for v in r.values())
    return on_day(record) and not any(on_day(r) for r in rivals if r is not record)


def _described(span: str, record: Record, rivals: list[Record]) -> bool:
    """Whether an exclusion describes ``record`` without its name ("except the v2-to-v3
    migration guide" for "Migrating from the v2 to the v3 API", tagged ``migration``): it shares
    two or more of the words of the record's identifying fields and tags, and more than any of
    ``rivals`` does."""
    said = _words(span)
    if len(said) < 2:
        return False
    mine = len(said & _record_words(record))
    return mine >= 2 and all(len(said & _record_words(r)) < mine for r in rivals if r is not record)


def _record_words(record: Record) -> frozenset[str]:
    """The words of a record's identifying fields, category and tags; and, for a record with no
    name, title or subject (an invoice, a ledger line), of its description, which names it."""
    fields = (*_IDENTIFYING, "category", *(() if any(record.get(k) for k in ("name", "title", "subject"))
                                          else ("description",)))
    texts = [str(record[k]) for k in fields if isinstance(record.get(k), str) and k != "id"]
    texts += [t for t in record.get("tags") or [] if isinstance(t, str)]
    return _words(" ".join(texts))


def _words(text: str) -> frozenset[str]:
    """The words of ``text`` (folded, two characters or more, or a number: the 4 of "kiosk 4"),
    filler words aside."""
    return frozenset(w for w in re.findall(r"[a-z0-9]+", text.casefold())
                     if (len(w) >= 2 or w.isdigit()) and w not in FUNCTION_WORDS)


def excluded_records(package: TaskPackage) -> list[tuple[tuple[str, str], Record]]:
    """``((service, collection), record)`` of each record of the initial state the request leaves
    out."""
    text = package.request.text
    if not excluded_spans(text):
        return []
    today = date.fromisoformat(package.now[:10])
    out = [((service, name), r) for service, collections in package.initial_state.items()
           for name, records in collections.items() for r in records if left_out(text, r, records, today)]
    if log.isEnabledFor(logging.DEBUG):
        log.debug("%r excludes %s", text[:80], [f"{s}.{c}: {r.get('id', r)}" for (s, c), r in out])
    return out


def unselected(text: str, group: list[Record], today: date) -> tuple[list[Record], str]:
    """The records of ``group`` that the request's words do not select (see the module
    docstring), with why, in a few words; empty when all are selected."""
    why = unselected_why(text, group, today)
    return [group[i] for i in sorted(why)], "; ".join(dict.fromkeys(why.values()))


def unselected_why(text: str, group: list[Record], today: date,
                   changed: frozenset[tuple[str, str]] = frozenset()) -> dict[int, str]:
    """``unselected``, as the position in ``group`` of each record left out, with why. A value the
    reference's updates set in a field (``changed``, as ``(field, value)``: "mark that invoice as
    paid") is the new value, and selects nothing there: the invoices to mark paid are the unpaid ones."""
    out = _unselected_why(text, group, today, changed)
    if out:
        log.debug("%r leaves out %s", text[:80], {i: out[i] for i in sorted(out)})
    return out


def outside_period(text: str, group: list[Record], today: date) -> dict[int, str]:
    """The records of ``group`` a period the request names leaves out (see the module
    docstring: where some records' date field falls inside it), by position, with why. A record
    whose texts name a period inside the request's ("Brand workshop (October)" for "the october
    invoice") is never left out by a date field: it was issued, or falls due, when it may."""
    out: dict[int, str] = {}
    periods = [*periods_in(text, today), *(r for r in allowed_ranges(text, today) if r.kind == "date")]
    dated = {k for r in group for k, v in r.items() if isinstance(v, str) and ISO_DATE.match(v)} if periods else ()
    named = {i for i, r in enumerate(group) if names_period(r, periods, today)} if dated else set()
    for period in periods:
        for k in sorted(dated):
            inside = [i for i, r in enumerate(group) if isinstance(r.get(k), str) and ISO_DATE.match(r[k])
                      and period.holds(r[k][:10])]
            if 0 < len(inside) < len(group):
                for i in set(range(len(group))) - set(inside) - named:
                    span = (f"up to {period.high}" if period.low is None else f"from {period.low} on"
                            if period.high is None else f"from {period.low} to {period.high}")
                    out.setdefault(i, f"the request asks for {k} {span}, not {str(group[i].get(k, 'none'))[:10]}")
    return out


def periods_named(record: Record, today: date) -> list[Any]:
    """The periods (months, quarters) the record's texts name: "Cask cleaning - October 2026"."""
    return [p for k, v in record.items() if isinstance(v, str) and not ISO_DATE.match(v) and k != "id"
            for p in periods_in(v, today)]


def names_period(record: Record, periods: list[Any], today: date) -> bool:
    """Whether the record's texts name a period inside one of ``periods``: the invoice "for
    October" is October's, whatever day it was issued or falls due."""
    return any(p.low is not None and any(q.holds(p.low) for q in periods) for p in periods_named(record, today))


def names_other_period(record: Record, periods: list[Any], today: date) -> bool:
    """Whether the record's texts name periods, none inside one of ``periods``."""
    named = periods_named(record, today)
    return bool(named) and not any(p.low is not None and any(q.holds(p.low) for q in periods) for p in named)


def _unselected_why(text: str, group: list[Record], today: date,
                    changed: frozenset[tuple[str, str]] = frozenset()) -> dict[int, str]:
    out = outside_period(text, group, today)
    if excluded_spans(text):  # without an exclusion the request leaves out no record by name
        for i, r in enumerate(group):
            if left_out(text, r, group):
                out[i] = f"the request leaves out {r.get('id', r.get('name'))}"
    negated = negated_spans(text)
    subsets = (*(m.span() for m in _OF_THOSE.finditer(text)), *_adjusting(text),  # a value named there selects nothing,
               *title_spans(text))  # nor one inside a title given ("a report called 'Puppet repairs - November'")
    folded = text.casefold()
    examples = tuple(m.span() for m in _EXAMPLES.finditer(text)) if any(w in folded for w in _EXAMPLE_WORDS) else ()
    fields = {k for r in group for k, v in r.items() if isinstance(v, str) and k not in ("id", "email")}
    for k in sorted(fields):
        values = {r[k] for r in group if isinstance(r.get(k), str) and len(r[k]) >= 3 and not has_digit(r[k])}
        if len(values) < 2:
            continue
        spots = _own_mentions(text, values)
        named = {v for v in values if (k, v) not in changed and any(
            not within(negated, at) and not _EITHER_WAY.match(text, at + len(v)) for at in spots[v]
            if not within(subsets, at))}
        if named and all(within(examples, at) for v in named for at in spots[v]):
            named = set()  # "taxis and ride-hailing (uber, bolt etc)": examples, not the only ones asked for
        refused = {v for v in values if v not in named and (k, v) not in changed and any(
            not _EITHER_WAY.match(text, at + len(v)) for at in spots[v] if not within(subsets, at))}
        for i, r in enumerate(group):
            v = r.get(k)
            if v in refused:
                out.setdefault(i, f"the request leaves out {k} {v}")
            elif named and isinstance(v, str) and v not in named and not has_word(text, v):
                out.setdefault(i, f"the request asks for {k} {' or '.join(sorted(named))}, not {v}")
    for names, holding in _name_alternatives(_written_names(text), group):
        for i in set(range(len(group))) - holding:
            out.setdefault(i, f"the request asks for records of {' or '.join(names)}")
    return out


def _name_alternatives(names: tuple[str, ...], group: list[Record]) -> list[tuple[list[str], set[int]]]:
    """The names that some records of ``group`` hold and others do not, as alternatives: names held
    in a field in common are one choice ("our two ferries, MF Solund and MF Hella": a record of
    either is asked for), names held in different fields each select ("the Skagen Logistics
    invoices for the Oslo project"). Each choice with the records (positions) that hold one of its names."""
    folded = [{k: v.casefold() for k, v in r.items() if isinstance(v, str)} for r in group]
    found: list[tuple[list[str], set[int], set[str]]] = []
    for name in names:
        key = name.casefold()
        holding = {i for i, texts in enumerate(folded) if any(key in v for v in texts.values())}
        if not 0 < len(holding) < len(group):
            continue
        fields = {k for i in holding for k, v in folded[i].items() if key in v}
        same = next((f for f in found if f[2] & fields), None)
        if same is None:
            found.append(([name], holding, fields))
        else:
            same[0].append(name)
            same[1].update(holding)
            same[2].update(fields)
    return [(n, h) for n, h, _ in found if len(h) < len(group)]


_EXAMPLE_WORDS = ("etc", "e.g", "eg ", "such as", "for example", "for instance", "including", "and so on", "the like")
_EXAMPLES = re.compile(r"\([^()]*\b(?:etc|e\.g|eg|such as|for example|for instance)\b[^()]*\)"
                       r"|\b(?:such as|e\.g\.?|for example|for instance|including)\s+[^.;:!?()\n]{0,80}"
                       r"|[^.;:!?()\n]{0,80}\b(?:etc|and so on|and the like)\b", re.IGNORECASE)
"""Values named as examples ("taxis and ride-hailing (uber, bolt etc)", "such as Uber"): they do
not make the request ask for those values only."""

_OF_THOSE = re.compile(r"\b(?:of|among)\s+(?:those|them|these|which)\b[^.;!?\n]{0,60}", re.IGNORECASE)
"""A count within the count ("how many are open, and how many of those are urgent"): a value
named there qualifies the second figure, and selects nothing for the first."""

_EITHER_WAY = re.compile(r"\s+or\s+not\b|\s+or\s+(?:un|not\s+)\w+", re.IGNORECASE)
"""After a value the request names: "paid or not", "paid or unpaid" select by neither."""


_ADJUSTING = re.compile(r"\b(?:net\s+of|(?:less|minus)(?!\s+than\b)|after\s+(?:deducting|subtracting)|deducting|"
                        r"subtracting)\b[^.;:!?\n]{0,60}", re.IGNORECASE)
"""What the request takes off a total ("net of the refund Hotel Miradouro gave us", "less the
deposit Halden Logistics paid"): a name there says what is taken off, not which records count."""


@lru_cache(maxsize=1024)
def _adjusting(text: str) -> tuple[tuple[int, int], ...]:
    """The spans of what the request takes off a total (``_ADJUSTING``): asked for every group."""
    return tuple(m.span() for m in _ADJUSTING.finditer(text))


@lru_cache(maxsize=1024)
def _written_names(text: str) -> tuple[str, ...]:
    """The names the request writes outside exclusions and negations: runs of two or more
    capitalized words ("Pemberton Glass"), leading function words dropped, and quoted phrases
    (remembered: each group the request is asked about reads them). A run inside a title the
    request gives ("a report called 'Kestrel Bay shoot - locations'") names the thing titled."""
    negated = negated_spans(text)
    aside = (*_adjusting(text), *title_spans(text))
    found = [m for m in NAME_RUN.finditer(text) if not within(negated, m.start()) and not within(aside, m.start())]
    names = [re.sub(r"^(?:(?:The|A|An|Our|My|Their|Please|Bill|Send|Email|Invoice)\s+)+", "", m.group(0)) for m in found]
    names += [q for q in quoted_phrases(text) if len(q) >= 4]
    return tuple(dict.fromkeys(n for n in names if len(n.split()) >= 2 or n in quoted_phrases(text)))


"""Numbers a careful agent computes from a list of records: the figures an answer may report and a
check may pin ("the unpaid total", "software spend in November", "how many are open").

A *group* is a list itself, the records sharing one value of a text field (``status: unpaid``),
the records without one or two values of a field ("deals not won or lost"), the records where one
numeric field is below (or at most) another ("below their reorder level"), the records of one
month of a date field, and the records sharing a field value within one month ("software" in
November); with the request's words, the records they select (a name or phrase the records'
texts hold, a date range). A group's *totals* are the sum of each numeric field and the sum of
each product of two numeric fields (quantity × price), each field's mean, and minutes summed in
hours; its *count* is its size (``figures`` names each).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from operator import mul
from typing import Any

from pipeline.core.text_values import (
    ISO_DATE,
    NAME_RUN,
    allowed_ranges,
    numbers_in,
    quoted_phrases,
    title_spans,
    within,
)

Record = dict[str, Any]


def groups(records: list[Record], said: str = "", today: date | None = None) -> list[list[Record]]:
    """The list, then its groups of two or more records and fewer than all, each once; with the
    request (``said``) and its clock, also the records whose texts hold a name or quoted phrase
    the request writes ("Skagen Logistics"), the records whose field holds a value the request
    writes as it is ("owned by jae.park"), the records with a date in a range the request states
    ("next week", "7 to 11 December"), the records both select, and each of those narrowed by a
    group of the list ("the open deals owned by jae.park": not won or lost)."""
    by_value: dict[tuple[str, str], list[int]] = {}
    by_month: dict[tuple[str, str], list[int]] = {}
    for i, record in enumerate(records):
        for key, value in record.items():
            if isinstance(value, str) and key != "id":
                by_value.setdefault((key, value), []).append(i)
                if ISO_DATE.match(value):
                    by_month.setdefault((key, value[:7]), []).append(i)
    everyone = frozenset(range(len(records)))
    by_key: dict[str, list[frozenset[int]]] = {}
    for (key, _), ix in by_value.items():
        by_key.setdefault(key, []).append(frozenset(ix))
    excluded = [everyone - a - b for sets in by_key.values() if len(sets) <= 6
                for n, a in enumerate(sets) for b in sets[n:]]  # "not won or lost", "all but closed"
    parts = [frozenset(ix) for ix in [*by_value.values(), *by_month.values(), *excluded, *_below(records)]
             if 1 < len(ix) < len(records)]
    months = [frozenset(ix) for ix in by_month.values() if len(ix) > 1]
    subsets = dict.fromkeys(parts)
    for month in months:
        for part in parts:
            if len(both := month & part) > 1:
                subsets.setdefault(both)
    if said:
        chosen = [g for g in _said_groups(records, said, today or date.today()) if 1 < len(g) < len(records)]
        for group in chosen:
            subsets.setdefault(group)
        for group in chosen:  # the request's selection filtered further: "the open deals owned by jae.park"
            for part in parts:
                if 1 < len(both := group & part) < len(group):
                    subsets.setdefault(both)
    return [records, *([records[i] for i in sorted(ix)] for ix in subsets)]


def _below(records: list[Record]) -> list[frozenset[int]]:
    """For each two numeric fields every record has, the records where the first is below the
    second, and where it is at most the second ("below their reorder level", "over budget")."""
    numeric = [k for k, v in records[0].items() if _number(v) is not None] if records else []
    numeric = [k for k in numeric if all(_number(r.get(k)) is not None for r in records)]
    out = []
    for a in numeric:
        for b in numeric:
            if a != b:
                out.append(frozenset(i for i, r in enumerate(records) if r[a] < r[b]))
                out.append(frozenset(i for i, r in enumerate(records) if r[a] <= r[b]))
    return out


def pooled(lists: list[list[Record]]) -> list[list[Record]]:
    """``lists`` and, when there are several, all their records in one list (each id once): an
    answer may total records that two reads returned ("the proposal and the negotiation deals")."""
    if len(lists) < 2:
        return lists
    pool: dict[Any, Record] = {}
    for records in lists:
        for r in records:
            pool.setdefault(r.get("id", id(r)), r)
    return [*lists, list(pool.values())]


def _said_groups(records: list[Record], said: str, today: date) -> list[frozenset[int]]:
    """Groups the request's words select (see ``groups``); the capitalized words of a title the
    request gives ("a report called 'Kestrel Bay shoot - locations'") select nothing."""
    titles = title_spans(said)
    runs = [m.group(0) for m in NAME_RUN.finditer(said) if not within(titles, m.start())]
    phrases = [p.casefold() for p in [*quoted_phrases(said), *runs] if len(p) >= 4]
    texts = [" ".join(v for v in r.values() if isinstance(v, str)).casefold() for r in records]
    named = [frozenset(i for i, t in enumerate(texts) if p in t) for p in dict.fromkeys(phrases)]
    folded = said.casefold()
    values = {(k, v) for r in records for k, v in r.items() if isinstance(v, str) and k != "id" and len(v) >= 4
              and not ISO_DATE.match(v) and _written(v.casefold(), folded)}
    named += [frozenset(i for i, r in enumerate(records) if r.get(k) == v) for k, v in sorted(values)]  # "owned by jae.park"
    ranges = [r for r in allowed_ranges(said, today) if r.kind == "date"]
    dated = [frozenset(i for i, rec in enumerate(records)
                       if any(isinstance(v, str) and ISO_DATE.match(v) and r.holds(v[:10]) for v in rec.values()))
             for r in ranges]
    return [*named, *dated, *(a & b for a in named for b in dated)]




@dataclass(frozen=True)
class Adjustment:
    """A change the request states to put on a total: a factor ("less our 10% discount": 0.9; "plus
    a 5% fee": 1.05) or an amount added ("plus a €25 fee": +25; "less the £40 deposit": -40)."""

    factor: float
    plus: float
    words: str
    """How a figure's kind names it: "less 10%", "plus 25"."""
    included: float = 0.0
    """The rate of a tax the amounts include, taken out ("net of VAT; 20% VAT is baked into the
    amounts": the total over 1.2, ``factor`` 1/1.2); 0 for any other change."""

    def apply(self, total: float) -> float:
        return round(total * self.factor + self.plus, 2)

    def flipped(self) -> Adjustment:
        """The same change the other way (a discount added, a fee taken off; an included tax added again)."""
        if self.included:
            return Adjustment(round(1 + self.included, 6), 0.0, f"plus {self.included * 100:g}%")
        if self.plus:
            return Adjustment(1.0, -self.plus, ("less " if self.plus > 0 else "plus ") + f"{abs(self.plus):g}")
        rate = round(self.factor - 1, 6)
        return Adjustment(round(1 - rate, 6), 0.0, ("less " if rate > 0 else "plus ") + f"{abs(rate) * 100:g}%")


_LESS = re.compile(r"\b(?:less|minus|after|net\s+of|deduct(?:ing|ed)?|take\s+off|taking\s+off|knock(?:ing)?\s+off|"
                   r"subtract(?:ing)?|without|discount(?:ed)?\s+by|reduc(?:e|ed|ing)\s+(?:it\s+)?by|"
                   r"cut\s+(?:it\s+)?by)\b[^.;!?]{0,25}$", re.IGNORECASE)
_LESS_AFTER = re.compile(r"^\s*(?:[\w-]+\s+){0,2}?(?:off|discount|rebate|credit|deposit|reduction|early[- ]payment)\b",
                         re.IGNORECASE)
"""A noun after the number that takes it off, maybe after a word or two ("10% loyalty discount",
"the 25 piste-hire fee")."""
_TAKEN_OFF_AFTER = re.compile(r"^\s*(?:\w+\s+){0,3}?(?:taken|knocked|deducted|subtracted|netted)\s+(?:off|out|away)?",
                              re.IGNORECASE)
"""What the words after the number say is taken off, whatever it is ("12% agency commission taken off")."""
_PLUS = re.compile(r"\b(?:plus|add(?:ing|ed)?|on\s+top\s+of|with|including|includes?|increas(?:e|ed|ing)\s+(?:it\s+)?by|"
                   r"mark(?:ed|ing)?\s+(?:it\s+)?up\s+by|gross(?:ed)?\s+up\s+by)\b[^.;!?]{0,25}$", re.IGNORECASE)
_PLUS_AFTER = re.compile(r"^\s*(?:[\w-]+\s+){0,2}?(?:fee|surcharge|tax|vat|mark-?up|commission|interest|charge|on\s+top)\b",
                         re.IGNORECASE)


_TAX_AFTER = re.compile(r"^\s*(?:\w+\s+)?(?:vat|gst|hst|sales\s+tax|tax)\b", re.IGNORECASE)
_TAX_INCLUDED = re.compile(r"\b(?:baked\s+in(?:to)?|included|includes?|inclusive|incl\b\.?|gross)", re.IGNORECASE)
_NET_OF_TAX = re.compile(r"\b(?:net\s+of|ex\.?|excl(?:\.|uding)?|before|without|pre-?)\s*(?:the\s+)?(?:\d+(?:[.,]\d+)?\s*%\s*)?"
                         r"(?:vat|gst|hst|sales\s+tax|tax)\b", re.IGNORECASE)


def stated_adjustments(said: str) -> list[Adjustment]:
    """The adjustments the request states on a total, in its direction: a percentage after "less",
    "minus", "after", "net of", "discounted by", or before "off", "discount", "rebate" takes it off
    ("the total less 10%", "after our 10% discount", "10% off"); after "plus", "add", "with",
    "including", "marked up by", or before "fee", "surcharge", "tax", "VAT" adds it ("plus a 5% late
    fee", "with 20% VAT on top"); the noun after the number decides over the word before it ("with
    our 10% discount", "after 20% VAT"); an amount of money the same ("plus a €25 handling fee", "less the £40 deposit"),
    and a plain number the noun after names as one ("add the 2,000 setup fee"); not a price of one
    ("adding three seats at €1,200 each"). A percentage
    with no direction ("5% of the total") is no adjustment (``figures`` has it as a rate). A tax rate
    the amounts include, where the request asks for them net of it ("net of VAT? 20% VAT is baked
    into the amounts"), divides the total by one plus the rate."""
    out: list[Adjustment] = []
    net = _NET_OF_TAX.search(said) is not None and _TAX_INCLUDED.search(said) is not None
    for m in numbers_in(said):
        before, after = said[max(0, m.start - 40):m.start], said[m.end:m.end + 30]
        if net and m.kind == "percent" and 0 < m.value < 100 and _TAX_AFTER.match(after):
            rate = m.value / 100  # the amounts hold the tax; the request wants them net of it
            out.append(Adjustment(1 / (1 + rate), 0.0, f"net of {m.value:g}% included", included=rate))
            continue
        if _UNIT_PRICE_BEFORE.search(before) and _EACH_AFTER.match(after):
            continue  # "adding three seats at €1,200 each": the price of one, not an amount added
        less, more = bool(_LESS_AFTER.match(after)), bool(_PLUS_AFTER.match(after))
        if _TAKEN_OFF_AFTER.match(after):
            less, more = True, False  # "our 12% agency commission taken off": a fee, but taken off
        if less == more:  # the noun after it decides ("with our 10% discount", "after 20% VAT"); else the word before
            less, more = bool(_LESS.search(before)), bool(_PLUS.search(before))
        if less == more:
            continue  # no direction, or both
        if m.kind == "percent" and 0 < m.value < 100:
            factor = round(1 - m.value / 100, 6) if less else round(1 + m.value / 100, 6)
            out.append(Adjustment(factor, 0.0, f"{'less' if less else 'plus'} {m.value:g}%"))
        elif m.value > 0 and (m.kind == "money" or m.kind == "number" and (_LESS_AFTER.match(after)
                                                                            or _PLUS_AFTER.match(after))):
            out.append(Adjustment(1.0, -m.value if less else m.value, f"{'less' if less else 'plus'} {m.value:g}"))
    return list(dict.fromkeys(out))


_NAMED_RATE = re.compile(r"\b(?:their|the|our|his|her|its|your|my)\s+(?P<kind>(?:[a-z]+\s+){0,2}?)"
                         r"(?P<noun>discount|rebate|surcharge|commission|mark-?up)\b", re.IGNORECASE)
"""A rate the request names without stating it: "take their trade discount off", "plus our commission"."""


def with_read_rates(said: str, records: list[Record]) -> list[str]:
    """``said`` with the percentage a record read gives each rate it names without one written in
    ("their trade discount (it's on their CRM record)" and a note "Trade discount 10% on list
    price": "their 10% trade discount"), one text per rate found; none when it names none."""
    out: list[str] = []
    for at, found in _named_rates(said):
        rates = {a or b for r in records for v in r.values() if isinstance(v, str) for a, b in found.findall(v)}
        out += [f"{said[:at]}{rate}% {said[at:]}" for rate in sorted(rates)]
    return out


@lru_cache(maxsize=1024)
def _named_rates(said: str) -> tuple[tuple[int, re.Pattern[str]], ...]:
    """Each rate ``said`` names without stating it (``_NAMED_RATE``): where its words begin, and
    the pattern of its percentage in a record's text ("Trade discount 10%", "10% trade discount")."""
    out = []
    for m in _NAMED_RATE.finditer(said):
        words = rf"(?:{re.escape(m.group('kind').strip())}\s+)?" if m.group("kind").strip() else ""
        out.append((m.start("kind"), re.compile(rf"\b{words}{m.group('noun')}\s*(?:of|:|is|at|=)?\s*(\d+(?:\.\d+)?)\s*%"
                                                rf"|(\d+(?:\.\d+)?)\s*%\s+{words}{m.group('noun')}\b", re.IGNORECASE)))
    return tuple(out)


_UNIT_PRICE_BEFORE = re.compile(r"(?:\bat|@)\s*$", re.IGNORECASE)
_EACH_AFTER = re.compile(r"\s*(?:each|apiece|a\s+piece|per\b|an?\s+(?:seat|head|person|unit|item|session|hour))\b",
                         re.IGNORECASE)


def adjust(total: float, stated: list[Adjustment]) -> float:
    """``total`` with every stated adjustment put on it, in the request's order."""
    for a in stated:
        total = a.apply(total)
    return round(total, 2)


_ON_EVERYTHING = re.compile(r"\b(?:(?:off|on|of|from)\s+)?(?:the\s+whole\s+(?:lot|thing|amount|total|bill)|everything|"
                           r"all\s+of\s+it|the\s+lot|the\s+grand\s+total|altogether)\b", re.IGNORECASE)
"""Words that put an adjustment on everything before it ("then take 15% off the whole lot")."""


def on_everything(said: str) -> bool:
    """Whether the request puts an adjustment on everything said before it (``_ON_EVERYTHING``):
    the stated adjustments then go on in the request's order, and no other."""
    return _ON_EVERYTHING.search(said) is not None


def misadjusted(total: float, stated: list[Adjustment], ordered: bool = False) -> list[tuple[str, float]]:
    """What a check computes from ``total`` when it gets the stated adjustments wrong: one of them
    left out or put the other way (a discount added; the plain total), or an included tax taken off
    as a share of the gross, each once, as ``(what, figure)``; with ``ordered`` (the request puts
    the last on everything: ``on_everything``), also the last put on before the others (15% off
    the £600 before the £40 fee is added)."""
    out: list[tuple[str, float]] = []
    if ordered and len(stated) >= 2:
        out.append((f"'{stated[-1].words}' before '{stated[0].words}'", adjust(total, [stated[-1], *stated[:-1]])))
    for i, a in enumerate(stated):
        out.append((f"without '{a.words}'", adjust(total, [*stated[:i], *stated[i + 1:]])))
        out.append((f"{a.flipped().words} instead of {a.words}", adjust(total, [*stated[:i], a.flipped(), *stated[i + 1:]])))
        if a.included:  # the rate taken off the gross, where the tax is a share of the net
            off = Adjustment(round(1 - a.included, 6), 0.0, f"less {a.included * 100:g}%")
            out.append((f"{off.words} instead of {a.words}", adjust(total, [*stated[:i], off, *stated[i + 1:]])))
    right = adjust(total, stated)
    return [(w, f) for w, f in out if abs(f - right) >= 0.005]


def adjustments(said: str) -> list[float]:
    """The factors a percentage the request states puts on a total: less it (a discount) and plus
    it (a fee, a tax): "less our 10% discount" gives 0.9 and 1.1."""
    rates = [m.value for m in numbers_in(said) if m.kind == "percent" and 0 < m.value < 100]
    return [k for p in dict.fromkeys(rates) for k in (round(1 - p / 100, 6), round(1 + p / 100, 6))]


def _written(value: str, text: str) -> bool:
    """Whether ``text`` writes ``value`` as a whole word or words (an owner "jae.park", a status)."""
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        at = text.find(value, at + 1)
    return False


def figures(group: list[Record], percents: tuple[float, ...] = (), products: bool = True,
            adjusted: tuple[Adjustment, ...] = ()) -> list[tuple[str, float]]:
    """``(kind, figure)`` of a group, rounded to cents: its count; each numeric field's total (and
    each of ``percents`` of it: a 5% fee on the unpaid balance), mean, and for minutes the total
    in hours (``duration_minutes``: 270 is 4.5 hours); and (``products``) the sum of each product of
    two numeric fields (the stock's worth: quantity × price); with ``adjusted``, each total with the
    stated adjustments put on it ("the unpaid total less 10%")."""
    columns = _columns(group)
    return _plain_figures(columns, len(group), percents, adjusted) + (_products(columns) if products else [])


def split_figures(groups: list[list[Record]], percents: tuple[float, ...] = (), adjusted: tuple[Adjustment, ...] = (),
                  near: tuple[float, ...] | None = None, products: bool = True,
                  ) -> list[tuple[list[tuple[str, float]], list[tuple[str, float]]]]:
    """``figures`` of each of ``groups`` as two lists, the figures but the products and the products
    (none without ``products``); each record's numbers are read once, however many of the groups
    hold it. With ``near``, only the figures within half a cent of one of those numbers (the rest
    are neither named nor kept)."""
    read: dict[int, dict[str, float]] = {}  # a record's numbers by the record's id: the groups share records
    cents = None if near is None else {round(n * 100) + d for n in near for d in (-1, 0, 1)}
    out = []
    for group in groups:
        columns = _columns(group, read)
        out.append((_plain_figures(columns, len(group), percents, adjusted, cents),
                    _products(columns, cents) if products else []))
    return out


def _plain_figures(columns: dict[str, list[float]], count: int, percents: tuple[float, ...],
                   adjusted: tuple[Adjustment, ...] = (), cents: set[int] | None = None) -> list[tuple[str, float]]:
    """``figures`` but the products, from the group's ``_columns`` and size; with ``cents``, only
    those whose value in cents (rounded) is one of them."""
    def kept(value: float) -> bool:
        return cents is None or round(value * 100) in cents

    out: list[tuple[str, float]] = [("count", float(count))] if kept(count) else []
    for k, column in columns.items():
        total = sum(column)
        if kept(value := round(total, 2)):
            out.append((f"total of {k}", value))
        if kept(value := round(total / count, 2)):
            out.append((f"mean of {k}", value))
        out += [(f"{p:g}% of the total of {k}", value) for p in percents if kept(value := round(total * p / 100, 2))]
        if adjusted and kept(value := adjust(total, list(adjusted))):
            out.append((f"total of {k} {', '.join(a.words for a in adjusted)}", value))
        if "minute" in k and kept(value := round(total / 60, 2)):
            out.append((f"total of {k} in hours", value))
    return out


def _products(columns: dict[str, list[float]], cents: set[int] | None = None) -> list[tuple[str, float]]:
    """The sum of each product of two numeric fields, named; with ``cents``, only those whose value
    in cents (rounded) is one of them."""
    keys = list(columns)
    out = []
    for n, a in enumerate(keys):
        for b in keys[n + 1:]:
            value = round(sum(map(mul, columns[a], columns[b])), 2)  # columns of one group: equal lengths
            if cents is None or round(value * 100) in cents:
                out.append((f"total of {a} × {b}", value))
    return out


def _columns(group: list[Record], read: dict[int, dict[str, float]] | None = None) -> dict[str, list[float]]:
    """Each field some record of ``group`` holds a number in (sorted by name), with each record's
    number there (0.0 where it holds none): each record's values are converted once for all the
    group's figures (and once for all groups that share ``read``, its numbers by the record's id)."""
    read = {} if read is None else read
    numbers = [read[id(r)] if id(r) in read else read.setdefault(id(r), _numbers(r)) for r in group]
    return {k: [n.get(k, 0.0) for n in numbers] for k in sorted({k for n in numbers for k in n})}


def _numbers(record: Record) -> dict[str, float]:
    """A record's numeric fields, and three figures people derive from them: a ledger amount signed
    by its type (a debit counts up, a credit down: "spend net of the refund"), the units an
    item lacks to reach its reorder level ("bring each item back up to its level"), and the minutes
    an event lasts from its start to its end time ("how many hours of meetings": ``_span_minutes``)."""
    out = {k: float(v) for k, v in record.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    if "amount" in out and (sign := _SIGNS.get(str(record.get("type", "")).casefold())):
        out["amount net of credits"] = sign * out["amount"]
    if "reorder_level" in out and "quantity" in out:
        out["units short of reorder level"] = max(0.0, out["reorder_level"] - out["quantity"])
    if (span := _span_minutes(record)) is not None:
        out["minutes from start to end"] = span
    return out


_SIGNS = {"debit": 1.0, "credit": -1.0}
_SPANS = (("start_time", "end_time"), ("start", "end"), ("starts_at", "ends_at"))


def _span_minutes(record: Record) -> float | None:
    """The minutes from a record's start to its end (``start_time``/``end_time``, ``start``/``end``,
    ``starts_at``/``ends_at``: ISO date-times), when it holds both, without one of its own
    ``duration_minutes`` and the end is not before the start; else None."""
    if "duration_minutes" in record:
        return None
    for start, end in _SPANS:
        a, b = record.get(start), record.get(end)
        if isinstance(a, str) and isinstance(b, str) and "T" in a and "T" in b:
            try:
                minutes = (datetime.fromisoformat(b.replace("Z", "+00:00"))
                           - datetime.fromisoformat(a.replace("Z", "+00:00"))).total_seconds() / 60
            except (ValueError, TypeError):  # not date-times, or one with a zone and one without
                return None
            return minutes if minutes >= 0 else None
    return None


def totals(group: list[Record]) -> list[float]:
    """The non-zero figures of ``figures`` but the count, each once: the sums of each numeric
    field and of each product of two, each field's mean (of two records or more), and a sum of
    minutes in hours."""
    sums, means, hours = _totals(group)
    return [v for v in dict.fromkeys([*sums, *means, *hours]) if v]


def sums_and_means(group: list[Record]) -> tuple[list[float], list[float]]:
    """The figures of ``totals`` in two lists: the sums (of each numeric field, of each product of
    two, of minutes in hours) and the means (of two records or more)."""
    sums, means, hours = _totals(group)
    return sums + hours, means


def _totals(group: list[Record]) -> tuple[list[float], list[float], list[float]]:
    columns = _columns(group)
    count = len(group)
    sums = [round(sum(column), 2) for column in columns.values()]
    sums += [v for _, v in _products(columns)]
    means = [round(sum(column) / count, 2) for column in columns.values()] if count > 1 else []
    return sums, means, [round(sum(column) / 60, 2) for k, column in columns.items() if "minute" in k]


MAX_SUBSET_SEARCH = 16
"""Lists of more records than this are not searched for a subset adding up to a number."""


def records_adding_up(records: list[Record], target: float) -> int | None:
    """How many of ``records`` (two or more: the fewest) hold, in one numeric field, numbers that
    add up to ``target`` (to the cent), or under one label in their texts ("Hours: 7.5",
    ``_labelled_numbers``), or None: a total over a selection no shared value makes a group
    ("taxis and ride-hailing": City Taxi, Bolt and Uber rides, not the train; this week's
    timesheet notes). Lists longer than ``MAX_SUBSET_SEARCH`` are not searched."""
    if not 2 <= len(records) <= MAX_SUBSET_SEARCH:
        return None
    goal = round(target * 100)
    best: int | None = None
    labelled = [_labelled_numbers(r) for r in records]
    written = {k: [n.get(k, 0.0) for n in labelled] for k in sorted({k for n in labelled for k in n})}
    for column in [*_columns(records).values(), *written.values()]:
        reach: dict[int, int] = {0: 0}  # a sum in cents, and the fewest records reaching it
        for value in column:
            cents = round(value * 100)
            if not cents:
                continue
            for total, n in list(reach.items()):
                if total + cents not in reach or reach[total + cents] > n + 1:
                    reach[total + cents] = n + 1
        found = reach.get(goal)
        if found is not None and found >= 2 and (best is None or found < best):
            best = found
    return best


_LABELLED = re.compile(r"\b(?P<label>[A-Za-z][A-Za-z ]{0,20}?)\s*:\s*(?P<n>-?\d+(?:\.\d+)?)(?![\d.:/-])")


def _labelled_numbers(record: Record) -> dict[str, float]:
    """The numbers a record's texts give under a label ("Hours: 7.5" in a timesheet note's body),
    by the label, folded; a label given twice in a record is left out."""
    seen: dict[str, list[float]] = {}
    for value in record.values():
        if isinstance(value, str) and ":" in value:
            for m in _LABELLED.finditer(value):
                seen.setdefault(m.group("label").strip().casefold(), []).append(float(m.group("n")))
    return {k: v[0] for k, v in seen.items() if len(v) == 1}


def plain_number(value: float) -> str:
    """A number as a person writes it, never in exponent form: 1234567.5, 12, 0.25."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


def number_forms(value: float) -> list[str]:
    """How an answer writes a number: 1,234.50 / 1234.50 / 1234.5 / 1,234 / 1234."""
    forms = [f"{value:,.2f}", f"{value:.2f}", plain_number(value)]
    if float(value).is_integer():
        forms += [f"{int(value):,}", str(int(value))]
    return list(dict.fromkeys(forms))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

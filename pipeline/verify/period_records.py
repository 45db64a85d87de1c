"""The record of another period: the request names a month, a quarter or a window ("the Figma
charge in October", "mark the October rent invoice paid") and the reference acts on, or the checks
grade, the like record of a neighbouring period (September's charge, September's invoice).
Raises ``request_check_mismatch`` (from ``consistency.py``).

A record is **of another period** when a date field splits its group (the records of its
collection, or of a list the reference read) by the periods the request states
(``text_values.periods_in``, and the date windows of ``allowed_ranges``; not those named only in
an aside in parentheses, when others are named outside: "the November retainer landed - mark
that invoice paid. (October's is still outstanding.)"), and it falls outside every one of them;
a record whose texts name another period is never one the request selects, whatever its dates
("Release notes - November 2026" for "the December 2026 release notes", both edited in
November). Its **counterpart** is the one record of the group that the request's words
select in every way (``selection.unselected_why``: period, values, names) and that is the same
record but for the period: its name, title, description, customer … the same once months and
numbers are taken out ("Office rent September 2026", "Office rent October 2026"); failing that,
the only record the request's words select, when it is of the same customer, company or vendor. The reference **uses** the record when a write
aims at it, or when a value only it holds (not its counterpart) is one the reference writes or
the checks grade (a number, a date or a text in an answer check's values or what its pattern
matches, a value a state check pins).

Witness: a correct agent that uses the counterpart instead, every value it took from the record
replaced by the counterpart's, in its writes and its answer; it must keep the reference's score.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.grading import graded_in_answer
from pipeline.core.jsonvalues import leaves
from pipeline.core.outcomes import Finding
from pipeline.core.package import TaskPackage
from pipeline.core.text_values import (
    ISO_DATE,
    MONTHS,
    Allowed,
    allowed_ranges,
    dates_in,
    numbers_in,
    periods_in,
    told_figures,
)
from pipeline.verify.check_values import required_values, values_of
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.perturbations import id_fields, record_id
from pipeline.verify.selection import names_other_period, names_period, unselected_why
from pipeline.verify.witness import said_instead, substituted, witness

Record = dict[str, Any]

def period_record_findings(run: ReferenceRun) -> list[Finding]:
    """See the module docstring."""
    package = run.package
    text = package.request.text
    today = date.fromisoformat(package.now[:10])
    periods = _asked_periods(text, today)
    if not periods:
        return []
    keys = id_fields(package)
    written_ids = {str(w.record_id) for w in run.writes if w.record_id is not None}
    seen_ids = written_ids | {str(record_id(r, keys)) for lst in run.read_lists for r in lst}
    changed = frozenset((k, v) for w in run.writes if w.bound.op.effect == "update"
                        for k, v in run.args.get(w.step, {}).items() if isinstance(v, str))
    used = _used_values(run) - _said_values(run, today) - {_key(v) for _, v in changed}  # "paid": set, taken from none
    out: list[Finding] = []
    seen: set[str] = set()
    for group in _groups(run):
        for record, counterpart, field in _outside(text, group, today, periods, keys, changed):
            rid, other_id = str(record_id(record, keys)), record_id(counterpart, keys)
            if rid in seen or rid not in seen_ids:
                continue  # done, or a record the reference never saw
            mapping = _differing(record, counterpart)
            aimed = rid in written_ids and rid in mapping
            taken = {k: v for k, v in mapping.items() if _key(k) in used and not (aimed and str(k) == rid)}
            if not aimed and not taken:
                continue
            seen.add(rid)
            steps = substituted(run, mapping) or dict(enumerate(package.reference))
            for old, new in mapping.items():
                steps = said_instead(steps, old, new)
            when, other = str(record.get(field))[:10], str(counterpart.get(field))[:10]
            this, that = _dated(record, field, today), _dated(counterpart, field, today)
            agent = witness(run, "correct", "period_record", f"uses {other_id} ({that}), the "
                            f"record of the period the request names, instead of {rid} ({this})",
                            run.score, steps)
            if agent.score >= run.score - 1e-9:
                continue
            how = "acts on" if aimed else "writes the id of" if {str(k) for k in taken} == {rid} else \
                "takes " + ", ".join(f"{v!r}" for v in list(taken)[:3]) + " from"
            out.append(Finding(
                code=Code.REQUEST_CHECK_MISMATCH, witness=agent,
                detail={"record": rid, "counterpart": other_id, "field": field, "date": when,
                        "expected_date": other, "values": [str(v) for v in taken][:5]},
                message=f"the reference {how} {rid} ({this}), outside the period the request names; "
                        f"its record there is {other_id} ({that})"))
    return out


def _periods(text: str, today: date) -> list[Allowed]:
    """The periods ``text`` names: months, quarters, and the date windows it allows."""
    return [*periods_in(text, today), *(r for r in allowed_ranges(text, today) if r.kind == "date")]


_ASIDE = re.compile(r"\([^()]*\)"
                    r"|(?:^|(?<=[.;!?])|(?<=\s[—–-]))(?:(?!\s[—–-]\s)[^.;!?()])*?"  # a sentence, or a clause after a dash,
                    r"(?<![\w-])(?:still|not\s+yet|yet\s+to|hasn'?t|haven'?t|isn'?t|aren'?t|can\s+wait)\b"  # that says what stays
                    r"[^.;!?()]*[.;!?]?", re.IGNORECASE)
"""An aside: words in parentheses, or a sentence (or a clause after a dash) that says what is
left as it is ("November's is still outstanding", "the March one hasn't come in yet")."""


def _asked_periods(text: str, today: date) -> list[Allowed]:
    """The periods the request names, but those it names only in an aside (``_ASIDE``) when it
    names others outside: "the November retainer landed - mark that invoice paid. (October's is
    still outstanding.)" asks about November, and so does "... mark that invoice as paid.
    October's is still outstanding."."""
    periods = _periods(text, today)
    if (plain := _periods(_ASIDE.sub(" ", text), today)) and len(plain) < len(periods):
        return plain
    return periods


def _dated(record: Record, field: str, today: date) -> str:
    """What places ``record`` in its period, for a person to check: the text that names a month
    ("title 'Release notes - December 2026'") when one does, else the date field."""
    for k, v in record.items():
        if isinstance(v, str) and not ISO_DATE.match(v) and k != "id" and not k.endswith("_id") and periods_in(v, today):
            return f"{k} {v!r}"
    return f"{field} {str(record.get(field))[:10]}"


def _groups(run: ReferenceRun) -> list[list[Record]]:
    """The initial state's collections, then the lists the reference read."""
    out = [records for collections in run.package.initial_state.values() for records in collections.values()
           if isinstance(records, list) and len(records) >= 2]
    return out + [lst for lst in run.read_lists if len(lst) >= 2]


def _outside(text: str, group: list[Record], today: date, periods: list[Any], keys: tuple[str, ...],
             changed: frozenset[tuple[str, str]]) -> list[tuple[Record, Record, str]]:
    """``(record, counterpart, date field)`` for each record of ``group`` outside every period
    the request states (by a date field that splits the group) that has one counterpart; the
    values the reference's updates set (``changed``: "mark it as paid") select no record."""
    records = [r for r in group if isinstance(r, dict) and record_id(r, keys) is not None]
    if len(records) < 2:
        return []
    named_other = {i for i, r in enumerate(records) if names_other_period(r, periods, today)}
    left = set(unselected_why(text, records, today, changed)) | named_other  # "Release notes - November 2026"
    selected = [r for i, r in enumerate(records) if i not in left]
    if not selected:
        return []
    out = []
    dated: dict[str, int] = {}  # a date field, and the longest value it holds
    for r in records:
        for k, v in r.items():
            if isinstance(v, str) and ISO_DATE.match(v):
                dated[k] = max(dated.get(k, 0), len(v))
    for field in sorted(dated, key=lambda k: (dated[k] > 10, k)):  # a day's field before a timestamp's
        inside = [names_period(r, periods, today) or (i not in named_other and any(
            isinstance(r.get(field), str) and ISO_DATE.match(r[field]) and p.holds(r[field][:10]) for p in periods))
            for i, r in enumerate(records)]  # "retainer - October", issued in November, is October's
        if not any(inside) or all(inside):
            continue  # the period does not split the group by this field
        for i, r in enumerate(records):
            if inside[i] or i not in left or not isinstance(r.get(field), str) or not ISO_DATE.match(r[field]):
                continue
            alike = [s for s in selected if _alike(r, s)] or [s for s in selected if len(selected) == 1
                                                              and _same_party(r, s)]
            if len(alike) != 1:
                continue  # no record of the period is this one's like, or several are
            counterpart = alike[0]
            if names_other_period(counterpart, periods, today):
                continue  # its text says it is of another period ("Cask cleaning - September 2026")
            out.append((r, counterpart, field))
    return out


def _alike(a: Record, b: Record) -> bool:
    """Whether ``b`` is ``a`` of another period: every name, title, subject, description, customer
    or company both hold is the same once months, numbers and punctuation are taken out ("Office
    rent September 2026", "Office rent October 2026"), and they hold at least one."""
    shared = [k for k in _NAMING if isinstance(a.get(k), str) and isinstance(b.get(k), str) and _bare(a[k])]
    return bool(shared) and all(_bare(a[k]) == _bare(b[k]) for k in shared)


def _same_party(a: Record, b: Record) -> bool:
    """Whether ``a`` and ``b`` are of one customer, company, vendor or supplier: the one record of
    the request's period for that party is ``a``'s counterpart, however else it is described
    ("Brand workshop follow-up (November)" beside "Brand workshop (October)")."""
    return any(isinstance(a.get(k), str) and a.get(k) and a.get(k) == b.get(k) for k in _PARTY)


_PARTY = ("customer", "customer_id", "company", "vendor", "supplier", "account", "account_id")
_NAMING = ("name", "title", "subject", "description", "customer", "company", "vendor", "supplier")
_MONTH_WORD = re.compile(r"\b(?:" + "|".join(m[:3] + "(?:" + m[3:] + ")?" for m in MONTHS) + r")\b|\d+|[^\w\s]",
                         re.IGNORECASE)


def _bare(text: str) -> str:
    """``text`` without months, numbers and punctuation, folded."""
    return " ".join(_MONTH_WORD.sub(" ", text).casefold().split())


def _differing(record: Record, counterpart: Record) -> dict[Any, Any]:
    """The record's scalar values the counterpart holds otherwise, mapped to the counterpart's."""
    out: dict[Any, Any] = {}
    for k, v in record.items():
        other = counterpart.get(k)
        if isinstance(v, bool) or not isinstance(v, (str, int, float)) or v == other:
            continue
        if isinstance(other, bool) or not isinstance(other, (str, int, float)) or other in ("", None):
            continue
        if isinstance(v, str) and isinstance(other, str) and ISO_DATE.match(v) and len(v) > 10 and len(other) > 10:
            out.setdefault(v[:10], other[:10])  # a timestamp is said by its day
        out.setdefault(v, other)
    return out


def _key(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return round(float(value), 2)
    return str(value).casefold()


def _used_values(run: ReferenceRun) -> set[Any]:
    """What the reference writes and the checks grade, as ``_key``s: written leaves, the values
    state checks pin, and the numbers, dates and words of the answer texts graded."""
    package: TaskPackage = run.package
    out: set[Any] = set()
    for w in run.writes:
        for v in leaves(run.args.get(w.step, {})):
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                out.add(_key(v))
    for check in package.checks:
        if check.kind in ("answer_contains", "answer_matches"):
            continue
        for _, matcher in required_values(check):
            out |= {_key(v) for v in values_of(matcher) if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
    for t in graded_in_answer(package, run.trajectory.answer):
        out.add(_key(t))
        out |= _in_text(t, date.fromisoformat(package.now[:10]))
    return out


def _said_values(run: ReferenceRun, today: date) -> set[Any]:
    """What the request and the facts state: the agent took none of it from a record (a length
    in words too: "for two hours" is 120 minutes)."""
    return _in_text(run.said, today) | {w.casefold() for w in run.said.split()} | {round(v, 2) for v in told_figures(run.said)}


def _in_text(text: str, today: date) -> set[Any]:
    """The numbers and dates a graded text states, as ``_key``s."""
    out: set[Any] = {round(float(m.value), 2) for m in numbers_in(text) if m.kind in ("number", "money")}
    out |= {m.value.casefold() for m in dates_in(text, today)}
    return out

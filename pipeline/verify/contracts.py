"""Capability contracts: a package must contain what its capability is about. Raises
``capability_unmet``.

Each capability states its contract as data (``contract:`` in ``capabilities/<name>.yaml``,
``taxonomy.capabilities.Contract``); a package of an unknown capability (an import) has none.
The clauses, each a minimum count:

- ``faults``: faults that fire on the reference's path and that it recovers from (a later
  successful call of the same tool);
- ``revealed_facts``: facts the reference gets the user to reveal, when an agent that never asks
  (guessing every fact) cannot reach the reference's score;
- ``live_safety_rules``: safety rules an agent could break with the tools offered and that the
  task tempts it to break (``safety.py``: ``vacuous_findings``, ``invites_breach``);
- ``services_acted_on``: services the reference calls successfully;
- ``dependent_steps``: reference calls whose arguments use something an earlier step showed: a
  ``$ref``, a revealed fact, or a value (six characters or more, or a number) of an earlier read's
  result;
- ``aggregated_records``: records behind the graded answer: an answer value is a total, a mean or
  a count over that many observed records, or the answer checks (and ``answer_excludes`` rules)
  name values of that many records (a value not all records of its list hold and no tool's enum
  offers: "ines.moreau" names her two tickets, "EUR" or "open" names none), or what the state
  checks grade of a note's or a message's body the reference writes ("2 open tickets" in an
  account summary note); a total is also seen less a discount or plus a fee the request states
  ("less our 10% partner discount"), and a number the answer gives that the numbers of two
  records or more of a list read add up to (a selection no shared value makes a group) (picking the one item
  below its reorder level from five is graded on all five; but a request that names the one
  record it asks about by a word only that record holds, "the Fly.io charge", is a lookup, whatever
  values the answer must not give).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from datetime import date
from functools import lru_cache
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.grading import graded_in_answer
from pipeline.core.jsonvalues import leaves
from pipeline.core.outcomes import Finding
from pipeline.core.package import AnswerContains, AskStep, CallStep, TaskPackage
from pipeline.core.patterns import compile_pattern
from pipeline.core.references import iter_refs
from pipeline.core.text_values import EMAIL, ISO_DATE, date_values, has_word, numbers_in
from pipeline.core.trajectory import Trajectory
from pipeline.taxonomy.capabilities import Contract, contracts
from pipeline.verify.aggregates import (
    adjust,
    adjustments,
    groups,
    misadjusted,
    number_forms,
    pooled,
    records_adding_up,
    stated_adjustments,
    totals,
    with_read_rates,
)
from pipeline.verify.check_values import required_values
from pipeline.verify.effects import bound_tools
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.perturbations import content_words, id_fields, is_message
from pipeline.verify.reference_edits import unasked
from pipeline.verify.safety import invites_breach, vacuous_findings


def contract_findings(run: ReferenceRun) -> list[Finding]:
    name = run.package.capability
    contract: Contract | None = contracts().get(name)
    if contract is None:
        return []
    counts = {
        "faults": lambda: _recovered_faults(run.package, run.trajectory),
        "revealed_facts": lambda: _needed_facts(run),
        "live_safety_rules": lambda: _live_rules(run),
        "services_acted_on": lambda: _services(run.package, run.trajectory),
        "dependent_steps": lambda: _dependent_steps(run.package, run.trajectory),
        "aggregated_records": lambda: _aggregated(run, contract.aggregated_records),
    }
    out: list[Finding] = []
    for clause, count in counts.items():
        need = getattr(contract, clause)
        if need <= 0:
            continue
        have = count()
        if have < need:
            out.append(Finding(code=Code.CAPABILITY_UNMET, detail={"clause": clause, "need": need, "have": have},
                               message=f"capability {name} needs at least {need} "
                                       f"{clause.replace('_', ' ')} ({Contract.model_fields[clause].description}); "
                                       f"this package has {have}"))
    return out


def _recovered_faults(package: TaskPackage, ref: Trajectory) -> int:
    n = 0
    for fault in package.faults:
        fired = [i for i, a in enumerate(ref.audit) if a.tool == fault.tool and a.status == fault.status]
        n += bool(fired) and any(a.tool == fault.tool and a.ok for a in ref.audit[fired[-1] + 1:])
    return n


def _needed_facts(run: ReferenceRun) -> int:
    package = run.package
    if package.user is None or not run.trajectory.revealed:
        return 0
    steps, guesses = unasked(run)
    s = run.variant_score(sorted(steps), [steps[i] for i in sorted(steps)], guesses)
    return len(set(run.trajectory.revealed)) if s < run.score else 0


def _live_rules(run: ReferenceRun) -> int:
    vacuous = {f.check for f in vacuous_findings(run.package, run.trajectory)}
    return sum(rule.id not in vacuous and invites_breach(run, rule) for rule in run.package.safety)


def _services(package: TaskPackage, ref: Trajectory) -> int:
    bound = bound_tools(package)
    return len({bound[a.tool].service.name for a in ref.audit if a.ok and a.tool in bound})


def _dependent_steps(package: TaskPackage, ref: Trajectory) -> int:
    """Reference calls whose arguments use something an earlier step showed: a ``$ref``, a fact the
    user revealed, a value (six characters or more, or a number) of an earlier read's result, an
    id or address written inside an earlier result's text ("the tickets tkt-412 and tkt-415"), a
    date an earlier result's text states in any form ("Do 03.12. 19:30 Probe" for a start on
    2026-12-03), or a text most of whose words come from one line or sentence of an earlier result
    (a todo titled after a line of a note)."""
    bound = bound_tools(package)
    keys = id_fields(package)
    today = date.fromisoformat(package.now[:10])
    records = {s.index: s for s in ref.steps}
    seen: set[str] = set()
    lines: list[frozenset[str]] = []  # the content words of each line or sentence of the texts read
    read_text = ""
    read_days: set[str] = set()  # the dates the texts read state, in any form
    revealed: set[str] = set()
    n = 0
    for i, step in enumerate(package.reference):
        record = records.get(i)
        if isinstance(step, CallStep) and record is not None:
            uses_ref = any(True for _ in iter_refs(step.args))
            values = {_key(v) or str(v).casefold() for v in leaves(record.args or {}) if v is not None}
            n += uses_ref or bool(values & (seen | revealed)) or any(
                _from_text(v, read_text, lines) or (ISO_DATE.match(v) is not None and v[:10] in read_days)
                for v in leaves(record.args or {}) if isinstance(v, str))
            tool = bound.get(step.call)
            if tool is not None and tool.op.access == "read" and record.result:
                seen |= {_key(v) for v in leaves(record.result) if _key(v)}
                seen |= _ids_in(record.result, keys)  # "c003", "P001": a record's id, however short
                texts = [v for v in leaves(record.result) if isinstance(v, str) and " " in v]
                read_text += "\n" + "\n".join(texts).casefold()
                read_days |= {d for t in texts for d in date_values(t, today)}
                lines += [w for t in texts for part in _LINES.split(t) if len(w := content_words(part)) >= 2]
        elif isinstance(step, AskStep) and record is not None:
            revealed |= {_key(package.fact(k).value) for k in record.revealed if package.fact(k)}  # type: ignore[union-attr]
    return n


_LINES = re.compile(r"[\n.;!?]+|\s[-•*]\s|\[[ x]\]", re.IGNORECASE)
_TOKEN = re.compile(rf"{EMAIL.pattern}|\b[a-z]{{1,6}}-\d{{2,}}\b", re.IGNORECASE)


def _from_text(value: str, read_text: str, lines: list[frozenset[str]]) -> bool:
    """Whether a written text comes from texts read earlier: an id or address it holds is written
    there, or two or more of its words, most of them, come from one line or sentence there."""
    if any(t.casefold() in read_text for t in _TOKEN.findall(value)):
        return True
    words = content_words(value)
    return len(words) >= 2 and any(len(words & line) >= 2 and 2 * len(words & line) >= len(words) for line in lines)


def _ids_in(result: Any, keys: tuple[str, ...]) -> set[str]:
    """The ids (``keys``: ``id``, a profile's ``product_id``) of the records in a read's result,
    folded, whatever their length."""
    if isinstance(result, list):
        return {i for item in result for i in _ids_in(item, keys)}
    if not isinstance(result, dict):
        return set()
    own = {str(v).casefold() for k, v in result.items() if k in keys and isinstance(v, (str, int))}
    return own | {i for v in result.values() if isinstance(v, (dict, list)) for i in _ids_in(v, keys)}


def _key(value: Any) -> str:
    """A value as evidence of a dependency: numbers, and strings of six characters or more."""
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, (int, float)):
        return f"{float(value):g}"
    return value.casefold() if isinstance(value, str) and len(value) >= 6 else ""


def _aggregated(run: ReferenceRun, enough: int) -> int:
    """How many observed records the graded answer is computed or gathered from; counting stops
    at ``enough`` (the contract asks no more)."""
    package, ref = run.package, run.trajectory
    lists = run.read_lists
    patterns = [compile_pattern(c.pattern, c.ignore_case)
                for c in package.checks if c.kind == "answer_matches"]
    wanted = graded_in_answer(package, ref.answer) + _graded_in_writes(run)
    parts = [part.casefold() for p in patterns for part in p.matched_parts(ref.answer) if part]  # a lookahead per name
    wanted += parts
    contained = [v.casefold() for c in package.checks if isinstance(c, AnswerContains) for v in c.values]
    words = [w for w in [*parts, *contained] if len(w) >= 4 and w.isalpha()]  # "halden" grades "Halden Architects"
    refused = [v.casefold() for c in [*package.checks, *package.safety] if c.kind == "answer_excludes"
               for v in c.values]  # values of records the answer must not give: graded too, but never totals

    folded_wanted = [w.casefold() for w in wanted]
    request = package.request_and_fact_values()
    said: dict[str, bool] = {}  # text → says(text): records repeat their values

    def says(text: str) -> bool:
        if text not in said:
            folded = text.casefold()
            said[text] = any(folded and (folded == w or ((len(folded) >= 3 or folded[:1].isdigit()) and _holds(w, folded))
                                         or (" " in w and len(w) >= 6 and has_word(folded, w)))  # "inference card" of a title
                             for w in folded_wanted) or any(p.search(text) for p in patterns) \
                or any(has_word(folded, w) for w in words)
        return said[text]

    def named(text: str) -> bool:
        folded = text.casefold()
        return says(text) or any(len(folded) >= 3 and (_holds(w, folded) or has_word(folded, w)) for w in refused)

    priced = _priced_from(request, [r for lst in lists for r in lst])

    choices = {str(e) for b in bound_tools(package).values()  # a status or a currency tells no record apart
               for schema in b.tool.parameters.get("properties", {}).values() for e in schema.get("enum", [])}
    best, seen = 0, set()
    for lst in lists:
        shared = Counter(str(v) for r in lst for v in set(map(str, leaves(r))))  # a value all records hold names none

        def values(r: dict[str, Any], lst: list[dict[str, Any]] = lst, shared: Counter[str] = shared) -> list[str]:
            whole = [str(v) for v in leaves(r) if v not in (None, "", True, False) and str(v) not in choices
                     and (len(lst) == 1 or shared[str(v)] < len(lst))]
            return whole + [n for v in whole if " " in v for n in _DOTTED.findall(v) if n not in request]  # "Python 3.10"

        fresh = [r for r in lst if id(r) not in seen]
        seen |= {id(r) for r in fresh}
        answered = [r for r in fresh if any(says(v) for v in values(r)) or any(says(f) for f in priced(r))]
        guarded = [r for r in fresh if r not in answered and any(named(v) for v in values(r))]
        if len(answered) == 1 and _looked_up(package.request.text, answered[0], lst):
            guarded = []  # the request names the one record it asks about: a lookup, whatever the answer must not say
        best += len(answered) + len(guarded)
        if best >= enough:
            return best
    today = date.fromisoformat(package.now[:10])
    rates = [1.0, *adjustments(package.request_and_fact_values())]  # a total less a stated discount, plus a fee
    stated = stated_adjustments(package.request_and_fact_values())  # and plus a stated amount: "plus a €25 fee"
    fees = [m.value for m in numbers_in(package.request_and_fact_values()) if m.kind == "money"]  # in any language
    for lst in pooled(lists):
        for group in groups(lst, package.request_and_fact_values(), today):
            if len(group) < 2 or len(group) <= best:
                continue  # one record is no aggregate; a group no larger cannot raise the count
            figures = [float(len(group)), *(t * k for t in totals(group) for k in rates)]
            figures += [f for t in totals(group) if stated for f in (adjust(t, stated), *(v for _, v in misadjusted(t, stated)))]
            figures += [round(t * k + sign * fee, 2) for t in totals(group) for k in rates for fee in fees for sign in (1, -1)]
            if any(says(form) for figure in figures for form in number_forms(figure)):
                best = len(group)
                if best >= enough:
                    return best
    if best < enough and ref.answer:  # a total over a selection no group holds ("taxis and ride-hailing")
        graded = [float(m.value) for m in numbers_in(ref.answer) if m.kind != "word" and says(m.text)]
        for lst in lists:
            for number in graded:
                best = max(best, records_adding_up(lst, number) or 0)
                if best >= enough:
                    return best
    return best


def _priced_from(request: str, read: list[dict[str, Any]]) -> Callable[[dict[str, Any]], list[str]]:
    """For a record read, the figures a count the request states makes of its numbers with the
    adjustments the request states (a rate it names read from a record: ``with_read_rates``), in
    every form a number is written ("fourteen shelves at list price, less their trade discount,
    plus our 25 GBP delivery fee": the shelf's price gives 510.10); none where it states no
    adjustment (a count times a field is no aggregate of its own)."""
    orders = [o for said in (request, *with_read_rates(request, read)) if (o := stated_adjustments(said))]
    counts = [m.value for m in numbers_in(request) if m.kind in ("number", "word") and m.value > 1] if orders else []

    def figures(record: dict[str, Any]) -> list[str]:
        return [form for v in record.values() if isinstance(v, (int, float)) and not isinstance(v, bool)
                for c in counts for o in orders for form in number_forms(adjust(c * float(v), o))]
    return figures


def _graded_in_writes(run: ReferenceRun) -> list[str]:
    """What the state checks grade of the records the reference writes: what a pattern finds in a
    message body or a note ("2 open tickets", "20,500"), and, in the records it creates, the
    values a check (``state_count`` or ``state_match`` of the collection) requires as they are,
    inside a list or among the lists ``$in`` allows (an expense report's ``transactions`` holding
    "TXN-003", its ``total_amount`` 1257.0, in every form a number is written): an
    aggregate written into a note, a message or a report is reported as an answer is."""
    out: list[str] = []
    created = {b.collection for b in run.bound.values() if b.op.effect == "create"}
    for check in run.package.checks:
        if check.kind in ("answer_contains", "answer_matches"):
            continue
        into_created = check.kind in ("state_count", "state_match") and not vars(check).get("record_id") \
            and tuple(check.collection.split(".", 1)) in created
        for field, matcher in required_values(check):
            if is_message(field) and isinstance(matcher, dict) and isinstance(matcher.get("$regex"), str):
                pattern = compile_pattern(matcher["$regex"], bool(vars(check).get("ignore_case")))
                out += [m for args in run.args.values() if isinstance(args.get(field), str)
                        for m in pattern.matched_parts(args[field]) if m]
            elif into_created:
                for value in _required_items(matcher):
                    if isinstance(value, str) and value:
                        out.append(value)
                    elif isinstance(value, (int, float)) and not isinstance(value, bool):
                        out += sorted(number_forms(float(value)))
    return out


def _required_items(matcher: Any) -> list[Any]:
    """The values a matcher requires of a field: the value itself, what ``$contains`` wants, or
    those ``$in`` allows; a list stands for its items (the transactions of a report, in whichever
    order ``$in`` allows them)."""
    if isinstance(matcher, dict):
        wanted = [matcher["$contains"]] if "$contains" in matcher else list(matcher.get("$in", []))
    else:
        wanted = [matcher]
    return list(dict.fromkeys(x for v in wanted for x in (v if isinstance(v, list) else [v])
                              if isinstance(x, (str, int, float))))


def _looked_up(request: str, record: dict[str, Any], records: list[dict[str, Any]]) -> bool:
    """Whether the request names ``record`` by a word of it no other record of ``records`` holds
    ("the Fly.io hosting charge" for "Fly.io machines")."""
    def words(r: dict[str, Any]) -> set[str]:
        return {t.casefold() for k, v in r.items() if k != "id" and isinstance(v, str)
                for t in re.split(r"[\s,;:()]+", v) if len(t) >= 4}

    others = set().union(*(words(r) for r in records if r is not record))
    return any(has_word(request, t) for t in words(record) - others)


_DOTTED = re.compile(r"(?<![\w.,])\d+(?:\.\d+)+(?![\w]|[.,]\d)")
"""A dotted number inside a record's text ("requires Python 3.10", "a fee of 12.50"): an answer
that reports it gathered it from that record."""


def _holds(text: str, value: str) -> bool:
    """Whether ``text`` holds ``value``: a number as a whole number (4.5 in "4.5 hours", not in
    "14.5"), other values anywhere."""
    if not value[:1].isdigit():
        return value in text
    return value in text and _whole_number(value).search(text) is not None


@lru_cache(maxsize=4096)
def _whole_number(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\d.,]){re.escape(value)}(?![\d]|[.,]\d)")

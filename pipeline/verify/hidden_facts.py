"""Hidden facts must be hidden: readable nowhere but from the user. Raises ``hidden_fact_leaked``.

A fact the simulated user reveals when asked is leaked when the agent could read it without asking:

- **in the request**, in any form: the value as a whole token (values of one or two characters
  must match exactly), or, for a date, the same day written another way ("December 3rd",
  "3 Dec", "12/03", "the 3rd", "Thursday", "tomorrow"), for a time another way ("2 pm" for
  14:00), for a number in words ("five"). A fact that ``corrects`` a value may have that old
  value in the request; its new value may not appear;
- **in a text of a record an offered read tool returns, or of a tool result of the reference**,
  in any form of its kind, when the text singles it out (``fact_in_text``: "the pilot is on
  Wednesday 9 December", "half past two suits me"; not "Tuesday or Wednesday", "Wednesday is
  full", nor another event's date); not as a field of its own, where unrelated records hold dates
  and times all the time. A result counts when the agent sees it before the user reveals the fact,
  or from a call that does not carry the fact (a write echoing it does not leak it). The name of one
  of several records sharing a first name (which Daniel) is a choice the user makes, not a leak.
"""

from __future__ import annotations

import logging
import re
from datetime import date
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import strings
from pipeline.core.outcomes import Finding, Witness
from pipeline.core.package import GRAVE_BOUND, AskStep, CallStep, Fact, Step, TaskPackage
from pipeline.core.references import iter_refs
from pipeline.core.text_values import (
    FUNCTION_WORDS,
    ISO_DATE,
    clock_value,
    date_values,
    has_word,
    number_values,
    times_in,
)
from pipeline.core.trajectory import Trajectory
from pipeline.verify.effects import bound_tools, records_of
from pipeline.verify.entities import ambiguous_first_names
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.fact_in_text import singles_out
from pipeline.verify.perturbations import content_words, is_date_time
from pipeline.verify.questions import phrasings
from pipeline.verify.witness import witness

log = logging.getLogger(__name__)
"""Debug lines: what this module read in the request (``synth verify -v`` shows them)."""


def _in_text(fact: Fact, text: str, today: date) -> bool:
    """Whether ``text`` states the fact's value, in any form."""
    value = fact.value
    if has_word(text, value) and (len(value) > 2 or re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", text)):
        return True
    if ISO_DATE.match(value):
        return value[:10] in date_values(text, today)
    if clock := clock_value(value):
        return clock in {m.value for m in times_in(text)}
    if re.fullmatch(r"-?\d+(\.\d+)?", value):
        return float(value) in number_values(text)
    return False


def _leaks(fact: Fact, texts: list[tuple[str, str]], today: date, request: str) -> bool:
    """Whether the fact can be read in ``texts`` (each a text of a record the offered tools read,
    or of a tool result, with the rest of its record): a text that states it inside itself, in any
    form of its kind ("the pilot is on Wednesday 9 December", "at half past two"), and singles it
    out (``fact_in_text.singles_out``: not one option among others, not ruled out, the one value of
    its kind there or the one the text ties to the request, not about something else). A field
    whose whole value is the fact's (another event's room) is one value among the collection's:
    ``state_reader_findings`` asks whether the state singles it out."""
    value = fact.value
    structured = bool(ISO_DATE.match(value) or clock_value(value) or re.fullmatch(r"-?[\d.]+", value)) or len(value) < 6
    for text, context in texts:
        inside = text.strip() != value and (" " in text.strip() or not structured)
        if inside and singles_out(value, text, request, today, context, " ".join([fact.key, *fact.reveal_when])):
            return True
    return False


def _record_texts(value: Any) -> list[tuple[str, str]]:
    """Every string inside ``value``, each with the other strings of the record (the object) that
    holds it: a note's body with its title, a message's body with its subject."""
    out: list[tuple[str, str]] = []
    if isinstance(value, str):
        return [(value, "")]
    if isinstance(value, list):
        for item in value:
            out += _record_texts(item)
        return out
    if isinstance(value, dict):
        own = [v for v in value.values() if isinstance(v, str)]
        own += [x for v in value.values() if isinstance(v, list) for x in v if isinstance(x, str)]
        for i, text in enumerate(own):
            out.append((text, " ".join(own[:i] + own[i + 1:])))
        for v in value.values():
            if isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v)):
                out += _record_texts(v)
    return out


def _singled_out_in_text(value: str, text: str, request: str, today: date) -> bool:
    """Whether ``text`` states ``value`` and singles it out (``fact_in_text.singles_out``): it does
    not offer it as one option among others ("between QA, Release Engineering and Mobile",
    "Tuesday or Wednesday"), nor rule it out ("Wednesday is full"), and it states no other value of
    its kind that is not ruled out, or the words around ``value`` tie it to the request more than
    those around each other one do; a value alone of its kind whose sentence speaks of something
    the request does not ("Tuesday 8 December is our promo review") is not singled out."""
    return singles_out(value, text, request, today)


def _readable(package: TaskPackage) -> list[tuple[str, str]]:
    """The texts of the records an offered read tool can return (a list, a search, a get)."""
    collections = {b.collection for b in bound_tools(package).values() if b.op.access == "read"}
    return _record_texts([records_of(package.initial_state, c) for c in sorted(collections)])


def _candidate(package: TaskPackage, value: str) -> bool:
    """Whether ``value`` names one of several people sharing a first name (which Daniel): which
    of them is meant is what the user says, not something the state gives away."""
    words = value.casefold().split()
    return len(words) == 2 and words[0] in ambiguous_first_names(package)


def _observed(ref: Trajectory, fact: Fact) -> list[tuple[str, str]]:
    """What the reference's tool results show that could hold the fact: every result before the
    user reveals it, and later ones of calls whose arguments do not carry it (a write echoing
    the fact just revealed shows the agent nothing new)."""
    revealed_at = next((s.index for s in ref.steps if s.kind == "ask" and fact.key in s.revealed), len(ref.steps))
    value = fact.value.casefold()
    return _record_texts([s.result for s in ref.steps if s.kind == "call" and
                    (s.index < revealed_at or value not in " ".join(strings(s.args)).casefold())])


def hidden_fact_findings(package: TaskPackage, run: ReferenceRun | None) -> list[Finding]:
    """Facts readable without asking (see the module docstring), each with its witness when the
    reference ran (``_reader``)."""
    if package.user is None:
        return []
    ref = run.trajectory if run is not None else None
    today = date.fromisoformat(package.now[:10])
    state = _readable(package)
    out: list[Finding] = []
    for fact in package.user.facts:
        seen = _observed(ref, fact) if ref is not None else []
        where = ("the request" if _in_text(fact, package.request.text, today)
                 else None if _candidate(package, fact.value)
                 else "the initial state" if _leaks(fact, state, today, package.request.text)
                 else "a tool result of the reference" if _leaks(fact, seen, today, package.request.text) else None)
        log.debug("fact %r (%r): read without asking in %s", fact.key, fact.value, where or "nothing the agent sees")
        if where is not None:
            agent = _reader(run, {fact.key: fact.value}, f"never asks for {fact.key!r}: reads {fact.value!r} in "
                            f"{where}") if run is not None else None
            out.append(Finding(code=Code.HIDDEN_FACT_LEAKED, detail={"fact": fact.key, "where": where}, witness=agent,
                               message=f"hidden fact {fact.key!r} ({fact.value!r}) can be read in {where}: the agent "
                                       "need not ask for it"))
    return out


def _reader(run: ReferenceRun, values: dict[str, str], claim: str) -> Witness | None:
    """An agent that asks none of the questions that reveal only the facts in ``values`` and uses
    those values instead: a wrong agent when it passes (the question the package is about is not
    needed), a correct one when it fails (it read the value where it lies, and the checks demand a
    question anyway). A question that also reveals other facts ("Which day and what time?") is
    asked about those only, in the equivalence bank's first phrasing of each ("What time works
    for you?"). None when no question reveals these facts, or one also reveals a fact the bank
    has no phrasing for."""
    steps: dict[int, Step] = dict(enumerate(run.package.reference))
    changed = False
    for s in run.trajectory.steps:
        if s.kind != "ask" or not s.revealed or set(s.revealed).isdisjoint(values):
            continue
        others = [phrasings(run.package, key)[:1] for key in dict.fromkeys(s.revealed) if key not in values]
        if not all(others):
            return None
        del steps[s.index]
        if others:
            steps[s.index] = AskStep(ask=" ".join(o[0] for o in others))
        changed = True
    if not changed:
        return None
    agent = witness(run, "wrong", "reads_fact", claim, GRAVE_BOUND, steps, fact_values=values)
    return agent if agent.holds else agent.model_copy(update={"agent": "correct"})


def state_reader_findings(run: ReferenceRun) -> list[Finding]:
    """A wrong agent that never asks and fills each hidden fact with the value the state singles
    out for the argument the fact fills: the fact's value itself, when the record of a readable
    collection the request points at holds it as a field (``_held_by_the_one_meant``: the
    landlord's phone on his contact record); else the value of that field held by most records of
    the collection written (ties: the first in the state), when there is one. It must not pass: a
    value the state gives away is no hidden fact (the meeting room is the location of the only
    other event). Where every value is the one on the record meant and the request says the user
    does not have it ("I don't have that date in my head", ``_USER_LACKS``), the agent that reads it
    there instead of asking is a correct one, and it must keep full marks."""
    package = run.package
    if package.user is None or not package.user.facts or run.score < 1.0:
        return []
    picks: dict[str, str] = {}
    exact: set[str] = set()  # facts whose value the record meant holds: read, not guessed
    for fact in package.user.facts:
        pick = _held_by_the_one_meant(run, fact)  # the value itself, on the record meant: no guess
        if pick is not None:
            exact.add(fact.key)
        else:
            pick = _singled_out(run, fact.key)
        if pick is not None:
            picks[fact.key] = pick
    if not picks:
        return []
    claim = f"never asks; takes {picks} from the state"
    agent = _reader(run, picks, claim)
    if agent is None or (agent.agent != "wrong" and not (set(picks) <= exact and _USER_LACKS.search(package.request.text))):
        return []
    outcome = "the state gives the hidden value away" if agent.agent == "wrong" else \
        "the checks want a question the user cannot answer, where the record meant gives the value"
    return [Finding(code=Code.HIDDEN_FACT_LEAKED, detail={"facts": sorted(picks), "where": "the initial state"},
                    witness=agent, message=f"an agent that never asks and {claim[len('never asks; '):]} scores "
                                           f"{agent.score:.3f}: {outcome}")]


_USER_LACKS = re.compile(r"\b(?:I|we)\s+(?:don'?t|do\s+not|can'?t|cannot)\s+(?:have|know|remember|recall)\b|"
                         r"\bno\s+idea\b|\b(?:I'?ve|I\s+have|I)\s+forgot(?:ten)?\b", re.IGNORECASE)
"""The request says the user does not have a value ("I don't have that date in my head right now",
"no idea when it's due"): asking them is no way to learn it."""




def _phrases(text: str) -> list[str]:
    """The request's two-word phrases that name something: a word of three letters or more, not
    a function word, then a content word ("new hire", "quarterly review")."""
    words = re.findall(r"[a-z][a-z'-]+", text.casefold())
    content = content_words(text)
    return [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)
            if len(a) >= 3 and a not in FUNCTION_WORDS and b in content]


def _singled_out(run: ReferenceRun, key: str) -> str | None:
    """The value the records single out for the field a fact fills (of the collection a write
    takes the fact into, or a lookup searches with it): the only value any of them holds there,
    or the value of the record the request's words point at (the
    one sharing two or more of its words, or a two-word phrase of it, more than any record
    holding another value: last quarter's "Q3 quarterly review - Ingrid Solberg" for "the Q4
    quarterly review with Ingrid Solberg", the contact titled "Data Analyst (new hire)" for "our
    new hire"). None otherwise, for a field that takes a value of a fixed set (a priority:
    other records' values say nothing of this one's), and for a day or a clock time (the day of
    the only other event in the studio, or of last quarter's review, is not this one's day)."""
    wanted = content_words(run.package.request.text)
    phrases = _phrases(run.package.request.text)
    said = next((f.value.casefold() for f in run.package.user.facts if f.key == key), "") if run.package.user else ""
    if ISO_DATE.match(said) or clock_value(said):
        return None
    held: dict[str, int] = {}  # value → the most request words a record holding it shares
    for step in run.package.reference:
        if not isinstance(step, CallStep) or (bound := run.bound.get(step.call)) is None:
            continue
        for param, value in step.args.items():
            if not any(ref.get("$fact") == key for ref in iter_refs(value)):
                continue
            if bound.op.access == "write":
                field = bound.op.field_for(param)
            else:  # a lookup by the fact ("search the directory for the new hire's name"): the field holding it
                field = next((k for r in records_of(run.package.initial_state, bound.collection) for k, v in r.items()
                              if isinstance(v, str) and v.casefold() == said), "")
            if not field or "enum" in bound.spec.fields.get(field, {}) or "enum" in bound.tool.parameters.get(
                    "properties", {}).get(param, {}):
                continue
            for r in records_of(run.package.initial_state, bound.collection):
                if isinstance(r.get(field), str) and r[field].strip():
                    text = " ".join(v for k, v in r.items() if k != field and isinstance(v, str))
                    shared = max(len(content_words(text) & wanted), 2 * any(has_word(text, p) for p in phrases))
                    held[r[field]] = max(held.get(r[field], 0), shared)
    if len(held) == 1:
        return next(iter(held))
    ranked = sorted(held.items(), key=lambda kv: -kv[1])
    if len(ranked) >= 2 and ranked[0][1] >= 2 and ranked[0][1] > ranked[1][1]:
        return ranked[0][0]
    return None


def _held_by_the_one_meant(run: ReferenceRun, fact: Fact) -> str | None:
    """The fact's value when a record an offered read tool returns holds it as a whole field (the
    landlord's contact record's ``phone``, when the user is to give "his phone number"; a date as
    the day of a date-time: the deadline event's ``start``), and that
    record is the one the request's words point at: it shares a word of the request ("landlord"),
    and no other record of its collection shares as many (for a date, a word of what the record is,
    not of where: ``_PLACES``), or, of those sharing as many, only it is among the records the
    reference's reads return before it asks (``_read_before_asking``: the unpaid one of two
    Emberline invoices). None for a value under four characters,
    for a field of a fixed set (a priority), and for one of several people sharing a first name
    (``_candidate``: which Priya is the user's to say)."""
    value = fact.value.strip().casefold()
    if len(value) < 4 or _candidate(run.package, fact.value):
        return None
    wanted = content_words(run.package.request.text)
    day = ISO_DATE.fullmatch(value) is not None
    seen: list[dict[str, Any]] | None = None  # worked out on the first tie only
    for collection in sorted({b.collection for b in run.bound.values() if b.op.access == "read"}):
        records = records_of(run.package.initial_state, collection)
        spec = next(b.spec for b in run.bound.values() if b.collection == collection)
        for field in dict.fromkeys(k for r in records for k, v in r.items() if _holds_fact(v, value, day)):
            if "enum" in spec.fields.get(field, {}):
                continue
            shared = [len(content_words(" ".join(v for k, v in r.items() if k != field and isinstance(v, str)
                                                 and not (day and k in _PLACES))) & wanted)
                      for r in records]
            best = max(shared)
            ours = [i for i, n in enumerate(shared) if n == best]
            if len(ours) > 1:  # a tie: the one the reference's reads single out before it asks
                seen = _read_before_asking(run, fact) if seen is None else seen
                ours = [i for i in ours if records[i] in seen] or ours
            held = records[ours[0]].get(field)
            if best >= 1 and len(ours) == 1 and _holds_fact(held, value, day):
                return str(held)[:10] if day else str(held)  # as the record holds it; a date-time's day
    return None


def _read_before_asking(run: ReferenceRun, fact: Fact) -> list[dict[str, Any]]:
    """The records the reference's reads return before it asks for ``fact`` (all of its reads
    when it never asks): what its own lookup singles out ("the unpaid Emberline invoice")."""
    asked = next((s.index for s in run.trajectory.steps if s.kind == "ask" and fact.key in s.revealed),
                 len(run.trajectory.steps))
    return [r for s in run.trajectory.steps[:asked] if s.kind == "call" and s.result is not None
            for r in _records_in(s.result)]


def _records_in(value: Any) -> list[dict[str, Any]]:
    """The records (dicts) a tool result holds, at any depth."""
    if isinstance(value, dict):
        return [value, *(r for v in value.values() for r in _records_in(v))]
    if isinstance(value, list):
        return [r for v in value for r in _records_in(v)]
    return []


_PLACES = frozenset({"location", "room", "place", "venue", "address"})
"""Fields that say where an event is: another event in the room the request names is not the one
meant, so its day is not the fact's."""


def _holds_fact(field: Any, value: str, day: bool) -> bool:
    """Whether a record's field holds a fact's (folded) value as a whole: the value itself, or, for
    a date, a date-time on that day (the deadline event's ``start`` for the deadline's date)."""
    if not isinstance(field, str):
        return False
    return field.strip().casefold() == value or day and field[:10] == value and is_date_time(field)

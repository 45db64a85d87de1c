"""Hidden facts must be hidden: readable nowhere but from the user. Raises ``hidden_fact_leaked``.

A fact the simulated user reveals when asked is leaked when the agent could read it without asking:

- **in the request**, in any form: the value as a whole token (values of one or two characters
  must match exactly), or, for a date, the same day written another way ("December 3rd",
  "3 Dec", "12/03", "the 3rd", "Thursday", "tomorrow"), for a time another way ("2 pm" for
  14:00), for a number in words ("five"). A fact that ``corrects`` a value may have that old
  value in the request; its new value may not appear;
- **in the initial state or a tool result of the reference**: an email, id or other value of
  six or more characters anywhere; a date, time or short value inside a text (a note saying
  "prefers Thursday 2026-12-03"), not as a field of its own, where unrelated records hold dates
  and times all the time. A result counts when the agent sees it before the user reveals the fact,
  or from a call that does not carry the fact (a write echoing it does not leak it). The name of one
  of several records sharing a first name (which Daniel) is a choice the user makes, not a leak.
"""

from __future__ import annotations

import re
from datetime import date

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import strings
from pipeline.core.outcomes import Finding, Witness
from pipeline.core.package import GRAVE_BOUND, CallStep, Fact, TaskPackage
from pipeline.core.references import iter_refs
from pipeline.core.text_values import (
    EMAIL,
    FUNCTION_WORDS,
    ISO_DATE,
    clock_value,
    date_values,
    dates_in,
    has_word,
    number_values,
    times_in,
)
from pipeline.core.trajectory import Trajectory
from pipeline.core.user import kind_of
from pipeline.verify.effects import records_of
from pipeline.verify.entities import ambiguous_first_names
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.perturbations import content_words
from pipeline.verify.witness import witness


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


def _leaks(fact: Fact, texts: list[str], today: date, request: str) -> bool:
    """Whether the fact can be read in ``texts`` (the values of a state or of tool results): a
    text that states it inside itself (a note saying "prefers Thursday 2026-12-03") and singles it
    out (``_singled_out_in_text``: a note listing two billing addresses alike singles neither out).
    A field whose whole value is the fact's (another event's room) is one value among the
    collection's: ``state_reader_findings`` asks whether the state singles it out."""
    value = fact.value
    structured = bool(ISO_DATE.match(value) or clock_value(value) or re.fullmatch(r"-?[\d.]+", value)) or len(value) < 6
    for text in texts:
        inside = text.strip() != value and (" " in text.strip() or not structured)
        if not inside:
            continue
        if (value.casefold() in text.casefold() if not structured else _in_text(fact, text, today)) \
                and _singled_out_in_text(value, text, request, today):
            return True
    return False


def _singled_out_in_text(value: str, text: str, request: str, today: date) -> bool:
    """Whether ``text`` singles ``value`` out: it does not offer it as one option among others
    ("between QA, Release Engineering and Mobile", "your call"), and it states no other value of
    its kind (another address, date, time or number), or the words around ``value`` share more of
    the request's words than those around each other one do ("their accounts-payable mailbox ap-invoices@…"
    for "addressed to the accounts-payable mailbox")."""
    at = text.casefold().find(value.casefold())
    if at >= 0 and _CHOICE.search(text[max(0, at - _NEAR):at + len(value) + _NEAR]):
        return False  # "it's between QA, Release Engineering and Mobile": one option among others
    rivals = _rivals(value, text, today)
    if rivals and not _ruled_out(text, value):  # "Monday 7 December is full for me, but Tuesday 8 December suits"
        rivals = [r for r in rivals if not _ruled_out(text, r)]
    if not rivals:
        return True
    wanted = content_words(request)

    def near(token: str) -> int:
        at = text.casefold().find(token.casefold())
        return len(content_words(text[max(0, at - _NEAR):at + len(token) + _NEAR]) & wanted) if at >= 0 else 0

    mine = near(value)
    return all(mine > near(r) for r in rivals)


_NEAR = 50
"""Characters either side of a value whose words tell what it is."""
_CHOICE = re.compile(r"\b(?:between|either|one of|options?|choices?|choose|pick|undecided|not (?:yet )?(?:settled|"
                     r"decided)|haven'?t (?:yet )?(?:settled|decided)|up to you|your call)\b", re.IGNORECASE)
"""Words by which a text offers a value as one option among others."""


_UNAVAILABLE = re.compile(r"\b(?:not|no longer|never|can'?t|cannot|won'?t|doesn'?t|isn'?t|(?:is|are|am)\s+(?:full|out|"
                          r"away|off|busy|booked|taken)|fully booked|unavailable|instead of|rather than|was|moved from|"
                          r"cancel(?:led|ed)?|struck|wrong|old)\b", re.IGNORECASE)
"""Words by which a clause rules a value out ("Monday is full", "not the 9th", "moved from 14:00")."""
_CLAUSE = re.compile(r"[,;.!?()\n]|\s(?:but|and|so|although|though|whereas)\s", re.IGNORECASE)


def _ruled_out(text: str, token: str) -> bool:
    """Whether the clause of ``text`` that writes ``token`` rules it out (``_UNAVAILABLE``): a
    value the text names only to refuse is no rival of the one it offers."""
    at = text.casefold().find(token.casefold())
    if at < 0:
        return False
    start = max((m.end() for m in _CLAUSE.finditer(text, 0, at)), default=0)
    end = next((m.start() for m in _CLAUSE.finditer(text, at + len(token))), len(text))
    return _UNAVAILABLE.search(text[start:end]) is not None


def _rivals(value: str, text: str, today: date) -> list[str]:
    """The other values of the kind of ``value`` (addresses, dates, times) ``text`` states, as
    written there."""
    kind = kind_of(value)
    if kind == "email":
        return [e for e in EMAIL.findall(text) if e.casefold() != value.casefold()]
    if kind in ("date", "datetime"):
        return [str(m.text) for m in dates_in(text, today) if m.value != value[:10]]
    if kind == "time":
        return [str(m.text) for m in times_in(text) if m.value != clock_value(value)]
    return []



def _candidate(package: TaskPackage, value: str) -> bool:
    """Whether ``value`` names one of several people sharing a first name (which Daniel): which
    of them is meant is what the user says, not something the state gives away."""
    words = value.casefold().split()
    return len(words) == 2 and words[0] in ambiguous_first_names(package)


def _observed(ref: Trajectory, fact: Fact) -> list[str]:
    """What the reference's tool results show that could hold the fact: every result before the
    user reveals it, and later ones of calls whose arguments do not carry it (a write echoing
    the fact just revealed shows the agent nothing new)."""
    revealed_at = next((s.index for s in ref.steps if s.kind == "ask" and fact.key in s.revealed), len(ref.steps))
    value = fact.value.casefold()
    return strings([s.result for s in ref.steps if s.kind == "call" and
                    (s.index < revealed_at or value not in " ".join(strings(s.args)).casefold())])


def hidden_fact_findings(package: TaskPackage, run: ReferenceRun | None) -> list[Finding]:
    """Facts readable without asking (see the module docstring), each with its witness when the
    reference ran (``_reader``)."""
    if package.user is None:
        return []
    ref = run.trajectory if run is not None else None
    today = date.fromisoformat(package.now[:10])
    state = strings(package.initial_state)
    out: list[Finding] = []
    for fact in package.user.facts:
        seen = _observed(ref, fact) if ref is not None else []
        where = ("the request" if _in_text(fact, package.request.text, today)
                 else None if _candidate(package, fact.value)
                 else "the initial state" if _leaks(fact, state, today, package.request.text)
                 else "a tool result of the reference" if _leaks(fact, seen, today, package.request.text) else None)
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
    question anyway). None when every such question also reveals another fact."""
    asks = [s.index for s in run.trajectory.steps if s.kind == "ask" and s.revealed and set(s.revealed) <= set(values)]
    if not asks:
        return None
    steps = {i: s for i, s in enumerate(run.package.reference) if i not in asks}
    agent = witness(run, "wrong", "reads_fact", claim, GRAVE_BOUND, steps, fact_values=values)
    return agent if agent.holds else agent.model_copy(update={"agent": "correct"})


def state_reader_findings(run: ReferenceRun) -> list[Finding]:
    """A wrong agent that never asks and fills each hidden fact with the value the state singles
    out for the argument the fact fills: the value of that field held by most records of the
    collection written (ties: the first in the state), when there is one. It must not pass: a
    value the state gives away is no hidden fact (the meeting room is the location of the only
    other event)."""
    package = run.package
    if package.user is None or not package.user.facts or run.score < 1.0:
        return []
    picks: dict[str, str] = {}
    for fact in package.user.facts:
        pick = _singled_out(run, fact.key)
        if pick is not None:
            picks[fact.key] = pick
    if not picks:
        return []
    claim = f"never asks; takes {picks} from the state"
    agent = _reader(run, picks, claim)
    if agent is None or agent.agent != "wrong":
        return []
    return [Finding(code=Code.HIDDEN_FACT_LEAKED, detail={"facts": sorted(picks), "where": "the initial state"},
                    witness=agent, message=f"an agent that never asks and {claim[len('never asks; '):]} scores "
                                           f"{agent.score:.3f}: the state gives the hidden value away")]




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
    new hire"). None otherwise, and for a field that takes a value of a fixed set (a priority:
    other records' values say nothing of this one's)."""
    wanted = content_words(run.package.request.text)
    phrases = _phrases(run.package.request.text)
    said = next((f.value.casefold() for f in run.package.user.facts if f.key == key), "") if run.package.user else ""
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

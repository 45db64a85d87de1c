"""Claims: what the verifier read the request to ask, for each finding whose witness rests on that
reading.

Some witnesses are built from the request's words: a correct agent that writes the count, the
formula's result or another day of the window the request states; a wrong agent that contradicts
the text the request dictates, hedges the value it asks for, or touches the records it keeps. When
the rules misread the words, such a witness is a correct agent called wrong (or the reverse). Each
such finding gets a ``Claim`` — the reading in one sentence, the request's words it rests on, what
the checks do instead, the other reading, and the records it names — which a reader
(``verify.readers``) confirms before the finding may refuse the package.

Which findings rest on a reading is data (``READ_FROM_REQUEST``): every finding of a code that
exists only through reading the request, and, for codes that mechanisms raise too, the witnesses
built from a reading. Mechanical witnesses (a dropped write, every item made twice, the null
agent, writes in another order) need no reader and get no claim. One create repeated with the same
arguments (``repeat_create``) does: whether the request asks for one item, so that a second is
wrong (a second message, a second task), or the repeat changes nothing the request cares about
(the same note shared again with the same people), is the request's to say.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import leaves
from pipeline.core.outcomes import Claim, Finding
from pipeline.core.package import TaskPackage
from pipeline.core.text_values import ISO_DATE, date_values
from pipeline.verify.evidence import LOOSE
from pipeline.verify.readers import RulesReader

log = logging.getLogger(__name__)
"""Debug lines: what this module read in the request (``synth verify -v`` shows them)."""

ANY_WITNESS = None
READ_FROM_REQUEST: dict[Code, frozenset[str] | None] = {
    Code.REQUEST_CHECK_MISMATCH: ANY_WITNESS,   # counts, named items, stated numbers, formulas, exclusions
    Code.UNGROUNDED_VALUE: ANY_WITNESS,         # a value the request is read not to give
    Code.UNREQUESTED_WRITE: ANY_WITNESS,        # a write the request is read not to ask for
    Code.UNKNOWN_ENTITY: ANY_WITNESS,           # a name read as naming a record
    Code.AMBIGUOUS_ENTITY: ANY_WITNESS,         # a name read as not saying which record
    Code.HIDDEN_FACT_LEAKED: ANY_WITNESS,        # a fact read as stated without asking
    Code.SAFETY_CONTRADICTION: frozenset({"does_what_is_asked"}),    # a clause read as asking for the call
    Code.GRADER_OVERCONSTRAINED: frozenset({"other_choice", "text_decorated", "text_case",  # range, dictated text
                                            "permuted_list", "answer_order", "text_order",  # no order given
                                            "own_name"}),                                 # a name not dictated
    Code.GRADER_UNDERCONSTRAINED: frozenset({"contradict_text", "hedged_answer", "include_left_out", "listed_left_out",
                                             "misread_value", "misreported_value", "left_out_item",
                                             "perturb_argument"}),                        # what the request settles
    Code.GRADER_COUNTS_CALLS: frozenset({"repeat_create"}),  # a second identical item: a second message, or the
                                                             # same share again?
    Code.COLLATERAL_DAMAGE: frozenset({"kept"}),  # the records the request is read to keep
}
"""Per code, the witness names whose finding rests on reading the request (``ANY_WITNESS``: all
of them). ``kept`` stands for collateral damage to the records a request keeps (not to every
other record, which needs no reading)."""

READINGS: dict[Code, str] = {
    Code.REQUEST_CHECK_MISMATCH: "The request asks for something the checks grade otherwise",
    Code.UNGROUNDED_VALUE: "Nothing the agent can see (the request, the user's answers, the records, the tools' "
                           "documented defaults) gives a value the checks require, so any value there is a guess",
    Code.UNREQUESTED_WRITE: "The request does not ask for one of the writes the reference makes",
    Code.UNKNOWN_ENTITY: "The request names someone or something that no record holds",
    Code.AMBIGUOUS_ENTITY: "A name in the request fits several records, and nothing says which one",
    Code.HIDDEN_FACT_LEAKED: "A fact the user should give only when asked can already be read without asking",
    Code.SAFETY_CONTRADICTION: "The request asks for what one of the package's safety rules forbids",
    Code.GRADER_OVERCONSTRAINED: "The request leaves this to the agent",
    Code.GRADER_UNDERCONSTRAINED: "The request settles this, so doing it otherwise is wrong",
    Code.COLLATERAL_DAMAGE: "The request keeps some records as they are",
    Code.GRADER_COUNTS_CALLS: "The request asks for one of this item, so a second, identical one is wrong",
}
"""What the verifier read the request to say, per code: the first half of a claim's reading."""

MAX_WORDS = 3
MAX_RECORDS = 4
MAX_ACTIONS = 12
MAX_ACTION_CHARS = 400
MAX_FIELD_CHARS = 600
_STOP = frozenset([
    "the", "and", "for", "with", "that", "this", "from", "what", "which", "their", "there", "them", "they", "then",
    "than", "into", "your", "about", "have", "must", "only", "each", "other", "does", "doing", "when", "where",
    "while", "over", "under", "after", "before", "also", "just", "more", "most", "some", "such", "same", "request",
    "reference", "agent", "checks", "check", "score", "scores", "step", "steps", "call", "calls", "record",
    "records", "writes", "write", "value", "values", "says", "said", "asks", "asked",
])
"""Words too common to tie a claim to one sentence of the request."""


def rests_on_reading(finding: Finding) -> bool:
    """Whether ``finding``'s witness is built from a reading of the request (``READ_FROM_REQUEST``)."""
    if finding.code not in READ_FROM_REQUEST or finding.witness is None:
        return False
    names = READ_FROM_REQUEST[finding.code]
    if names is ANY_WITNESS:
        return True
    if finding.code is Code.COLLATERAL_DAMAGE:
        return finding.detail.get("records", "other") != "other"
    return finding.witness.name in names


def with_claims(findings: list[Finding], package: TaskPackage) -> list[Finding]:
    """``findings`` with a ``claim`` on each that refuses through a holding witness built from a
    reading (the others unchanged); a claim the rules cannot settle (``Claim.rules_unsure``) comes
    with the rules' ``unsure``, so the finding is a review note until another reader agrees."""
    out = []
    for f in findings:
        if f.claim is None and rests_on_reading(f) and f.witness is not None and f.witness.holds:
            claim = claim_of(f, package)
            reading = RulesReader().confirm(claim, package.request.text) if claim.rules_unsure else None
            f = f.model_copy(update={"claim": claim, "reading": reading})
        out.append(f)
    return out


def claim_of(finding: Finding, package: TaskPackage) -> Claim:
    """The claim behind ``finding`` (which has a witness): the reading its witness stands for, the
    request's words it shares the most with, what the checks gave the witness, and the records
    of the initial state it names."""
    w = finding.witness
    assert w is not None
    doing = _doing(w.claim)
    said_of = READINGS.get(finding.code, "The verifier's rules read the request so")
    if finding.code is Code.HIDDEN_FACT_LEAKED and w.agent == "wrong":  # the agent is right: the package is not
        reading = (f"{said_of}: what the agent can read (the records above) states the fact plainly, so an agent "
                   f"that {doing} has the right value without asking the user; the fact is not hidden, and a package "
                   "that grades the question tests nothing (whether the request tells the agent to ask is not the "
                   "point: the point is whether the fact can be read).")
        alternative = (f"What the agent can read does not settle the fact (it does not state it, or states it of "
                       f"something else), so an agent that {doing} only guessed, and only the user can give it.")
        instead = (f"The checks give that agent {w.score:.2f}, at or above the {w.threshold:.2f} it would stay "
                   f"under if the fact were hidden: {finding.message}")
    elif finding.code is Code.UNGROUNDED_VALUE and w.agent == "correct" and finding.detail.get("kind"):
        value = finding.detail.get("value")  # stated nowhere: the question is whether the agent can know it
        guess = doing.split(": nothing it can read", 1)[0]
        reading = (f"Nothing the agent can see (the request, the user's answers, the records, the tools' documented "
                   f"defaults) gives {value!r}, which the checks require: a careful person doing this task could "
                   f"not know it. So an agent that {guess} instead has done no worse, and must pass.")
        alternative = (f"What the agent can see does give {value!r} (the request, the user's answers or the records "
                       f"state it, or say how to work it out), so an agent that {guess} instead is wrong, and the "
                       "checks are right to fail it.")
        instead = (f"The checks give that agent {w.score:.2f}, below the {w.threshold:.2f} it must reach: "
                   f"{finding.message}")
    elif w.agent == "wrong":
        texts = finding.detail.get("value") if w.name == "contradict_text" else None
        if isinstance(texts, dict):  # the question is whether the request dictates the text at all
            fields, written = " and ".join(texts), next(iter(texts.values()), "")
            reading = (f"{said_of}: the request dictates what the {fields} of step {finding.step} must say (its "
                       f"words, or what it must carry), so an agent that writes {written!r} there does not do what "
                       "the request asks, and must fail.")
            alternative = (f"The request does not dictate what the {fields} says: its wording is the agent's to "
                           f"write, so whether it is {written!r} or anything else is not what the request settles, "
                           "and the checks may leave that text free.")
        else:
            reading = f"{said_of}: an agent that {doing} does not do what the request asks, so it must fail."
            alternative = (f"An agent that {doing} still does what the request asks (what it does differently "
                           "is the agent's to choose, or not what the request settles), so the checks may pass it.")
        instead = (f"The checks give that agent {w.score:.2f}, at or above the {w.threshold:.2f} it must stay "
                   f"under: {finding.message}")
    else:
        reading = f"{said_of}: an agent that {doing} does what the request asks, so it must pass."
        alternative = (f"An agent that {doing} does not do what the request asks (the request means something "
                       "else), so the checks are right to fail it.")
        instead = (f"The checks give that agent {w.score:.2f}, below the {w.threshold:.2f} it must reach: "
                   f"{finding.message}")
    said = " ".join([finding.message, w.claim, *(str(v) for v in _scalars(finding.detail))])
    words = request_words(package.request.text, said)
    log.debug("%s (%s agent %s) rests on reading %s", finding.code.value, w.agent, w.name, words)
    facts = {finding.detail.get("fact"), *finding.detail.get("facts", ())}
    held = [str(f.value) for f in (package.user.facts if package.user else []) if f.key in facts] \
        if finding.code is Code.HIDDEN_FACT_LEAKED else []  # the records where the fact can be read come first
    unsure = str(finding.detail.get("unsure") or "") or ((
        f"the rules reach {finding.detail.get('value')!r} only by arithmetic no words ask for (a mean of "
        "records, two numbers no one connects)") if finding.detail.get("kind") == LOOSE else "")
    return Claim(reading=reading, words=words, instead=instead,
                 alternative=alternative, records=named_records(package, said, w.actions, held), today=today(package),
                 agent_did=[_action(a) for a in w.actions[:MAX_ACTIONS]], language=package.request.language,
                 user_answers=[_cut(f"{f.key}: {f.value}", MAX_ACTION_CHARS)
                               for f in (package.user.facts if package.user else [])],
                 rules_unsure=unsure)


def _action(action: dict[str, Any]) -> str:
    """One action of a witness as a line: ``call name {arguments}``, ``ask: text``, ``answer: text``."""
    kind = action.get("type")
    if kind == "tool_call":
        text = f"call {action.get('name')} {json.dumps(action.get('arguments', {}), ensure_ascii=False)}"
    else:
        text = f"{kind}: {action.get('text', '')}"
    return _cut(text, MAX_ACTION_CHARS)


def today(package: TaskPackage) -> str:
    """The package's ``now`` as a reader needs it: "Tuesday 2026-12-01 09:00 (UTC)"."""
    moment = datetime.fromisoformat(package.now.replace("Z", "+00:00"))
    return f"{moment:%A %Y-%m-%d %H:%M} ({moment.tzname() or 'local time'})"


def _doing(claim: str) -> str:
    """A witness's claim as the rest of "An agent that ...": its first letter lower-cased, no
    final full stop."""
    text = claim.strip().rstrip(".")
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def request_words(request: str, said: str) -> list[str]:
    """The words of ``request`` a claim about ``said`` rests on: the request's phrases that
    ``said`` quotes, then the request's sentences sharing the most words with ``said`` (at most
    ``MAX_WORDS`` in all, each quoted exactly as the request has it; the first sentence when
    none shares a word)."""
    out: list[str] = []
    for quoted in re.findall(r"'([^']{4,})'|\"([^\"]{4,})\"", said):
        phrase = quoted[0] or quoted[1]
        if phrase in request and phrase not in out:
            out.append(phrase)
    sentences = [s.strip() for s in re.split(r"(?<=[.!?;])\s+|\n+", request) if s.strip()]
    wanted = _words(said)
    ranked = sorted(((len(_words(s) & wanted), -n, s) for n, s in enumerate(sentences)), reverse=True)
    for shared, _, sentence in ranked:
        if shared == 0 or len(out) >= MAX_WORDS:
            break
        if not any(sentence in o or o in sentence for o in out):
            out.append(sentence)
    return out[:MAX_WORDS] or sentences[:1]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9][a-z0-9@._-]{2,}", text.lower()) if w not in _STOP}


def named_records(package: TaskPackage, said: str, actions: list[dict[str, Any]],
                  held: list[str] | None = None) -> list[dict[str, Any]]:
    """The records of the initial state that hold one of the values ``held`` (a hidden fact, as
    written or as a date its texts state), then those whose id, email or name the claim's text
    (``said``) mentions, then those the witness's tool arguments mention or whose texts hold a
    text value the witness writes (the note an address or a place was read from); at most
    ``MAX_RECORDS``, long text fields cut to ``MAX_FIELD_CHARS``."""
    claimed = said.lower()
    arguments = [v for a in actions for v in leaves(a.get("arguments", {}))]
    argued = " ".join(str(v).lower() for v in arguments)
    written = {v.lower() for v in arguments if isinstance(v, str) and len(v) >= 6}
    moment = datetime.fromisoformat(package.now.replace("Z", "+00:00")).date()
    found: list[tuple[int, str, dict[str, Any]]] = []
    for service, collections in package.initial_state.items():
        for collection, records in collections.items():
            for record in records if isinstance(records, list) else []:
                if not isinstance(record, dict):
                    continue
                rank = 0 if held and _holds(record, held, moment) else 1 if _names(record, claimed) else \
                    2 if _names(record, argued) or _quotes(record, written) else None
                if rank is not None:
                    found.append((rank, f"{service}.{collection}", record))
    found.sort(key=lambda f: f[0])  # stable: each group in state order
    return [{"_in": where, **{k: _cut(v) for k, v in record.items()}} for _, where, record in found[:MAX_RECORDS]]


def _holds(record: dict[str, Any], values: list[str], moment: date) -> bool:
    """Whether a text of ``record`` holds one of ``values``, as written (case ignored) or, for an
    ISO date, as a date the text states ("15 January 2027")."""
    texts = [v for v in leaves(record) if isinstance(v, str)]
    return any(value.casefold() in text.casefold() or (ISO_DATE.match(value) and value[:10] in date_values(text, moment))
               for value in values for text in texts)


def _names(record: dict[str, Any], mentioned: str) -> bool:
    """Whether ``mentioned`` holds the record's id (``id`` or its own ``…_id``: a claw ticket's
    ``ticket_id``), email, name, title, sku or number."""
    keys = ("id", "email", "name", "title", "sku", "number", *(k for k in record if k.endswith("_id")))
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and len(value) >= 3 and value.lower() in mentioned:
            return True
    return False


def _quotes(record: dict[str, Any], written: set[str]) -> bool:
    """Whether a text of ``record`` holds one of the values ``written`` (an address, a place the
    witness writes, read from a note)."""
    texts = [v.lower() for v in leaves(record) if isinstance(v, str) and len(v) >= 6]
    return any(w in t for w in written for t in texts)


def _cut(value: Any, limit: int = MAX_FIELD_CHARS) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "…"
    return value


def _scalars(detail: dict[str, Any]) -> Iterator[Any]:
    for value in detail.values():
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value[:10] if isinstance(v, (str, int, float)) and not isinstance(v, bool))

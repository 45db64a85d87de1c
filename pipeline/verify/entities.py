"""The people and records the request names must exist, one each. Raises ``unknown_entity`` and
``ambiguous_entity``.

A *name* in the request is a run of two or more capitalized words (``Priya Nair``, ``Acme
Freight``), a capitalized word and a model or size (``Aurora 27-inch``), or one capitalized word
that is the first word of a record's name (``Omar``). Records are matched on their ``name`` and
``company`` fields, case-insensitively; a name the state spells inside an
address (``carlos.mendes@...``) exists.

- **unknown**: a multi-word name that no record, no fact, no tool result and no argument the
  reference writes contains, while some record's name shares its first or last word (``Priya Nair``
  where the directory has ``Priya Natarajan``): the request points at someone who is not there.
  A name introduced after a word that marks a person or organization ("to", "with", "for",
  "email", "invite" ...) counts even without such a near miss (not after a "for" that opens the
  sentence or follows a record's id, nor of a name a lower-case noun follows: "For the Harrow
  Mills board pack", "ticket tkt-7 for Harrow Mills", "the restock for the Lantern Lane café"
  name the user's own business). Both need a directory: a collection
  whose records have names of two words or more (contacts, customers); where there is none, a
  name is context ("the checklist for Yara Torres"), not something to look up.
- **ambiguous**: a name that matches the names of two or more records of one collection (two
  Omars, two Acme customers), or a person's first name that two titles of one collection carry
  ("1:1 Daniel Osei", "1:1 Daniel Brandt"; a word the request writes only inside a longer name,
  "Tolliver" of "Tolliver Tools", names that, not the records whose names begin with it), when
  nothing tells them apart: no value that only one of them has
  (department, company, last name, email, title, a model code such as ``U27`` ...) appears in the
  request or in a fact the user reveals, and no one of them holds every word of the request that
  another holds, and more ("Verdant Foods' renewal" picks "Verdant Foods renewal 2027").
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import leaves, strings
from pipeline.core.outcomes import Finding, Witness
from pipeline.core.package import PASS_SCORE, AnswerStep, Step, TaskPackage, state_strings
from pipeline.core.text_values import MONTHS, WEEKDAYS, has_word
from pipeline.core.trajectory import Trajectory
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.witness import substituted, witness

log = logging.getLogger(__name__)
"""Debug lines: what this module read in the request (``synth verify -v`` shows them)."""

_NOT_NAMES = frozenset({*WEEKDAYS, *MONTHS, *(m[:3] for m in MONTHS), "i", "please", "can", "could", "would",
                        "hi", "hello", "dear", "thanks", "the", "a", "an", "and", "or", "but", "if", "when", "our",
                        "my", "your", "their", "this", "that", "these", "those", "let", "add", "send", "email",
                        "book", "set", "put", "make", "find", "check", "update", "create", "mark", "close",
                        "also", "then", "after", "before", "today", "tomorrow", "next", "every", "each", "all",
                        "what", "what's", "who", "who's", "which", "where", "where's", "when's", "how",
                        "how's", "why", "is", "are", "do", "does", "did", "has", "have", "it's", "let's",
                        "here's", "there's", "that's", "we", "we're", "i'm", "i'd", "i've", "for", "to", "with",
                        "from", "at", "on", "in", "by", "about", "of", "as", "so", "once", "since", "until",
                        "message", "tell", "ask", "invite", "remind", "call", "reply", "forward", "notify", "ping",
                        "text", "write", "thank", "welcome", "move", "cancel", "schedule", "assign", "pay"})
_MARKERS = (r"(?:to|with|for|from|cc|email|e-mail|message|invite|inviting|call|tell|ask|ping|notify|contact|forward|meet|"
            r"remind|send|text|write|reply|thank|assign|pay|book|schedule|introduce|welcome|congratulate|update|brief)")
_RUN = re.compile(r"\b([A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)+|[A-Z][a-z'’-]+\s+[\w-]*\d[\w-]*)")
_WORD = re.compile(r"\b([A-Z][a-z'’-]+)\b")
_ADDRESS_NAME = re.compile(r"\b([a-z]+)[._]([a-z]+)@")


_NAME_FIELDS = ("name", "company")


def _named_records(package: TaskPackage) -> list[tuple[str, list[dict[str, Any]]]]:
    """``(service.collection, {"name": ...} for each name of a record)`` of the initial state: a
    record's ``name`` and its ``company`` each name something the request may mention."""
    out = []
    for service, collections in package.initial_state.items():
        for collection, records in collections.items():
            for field in _NAME_FIELDS:
                named = [{**r, "name": r[field]} for r in records if isinstance(r.get(field), str) and r[field].strip()]
                if field == "company":  # one entry per company, however many people work there
                    named = list({r["name"].casefold(): r for r in named}.values())
                if named:
                    out.append((f"{service}.{collection}", named))
    return out


def _titled_records(package: TaskPackage) -> list[tuple[str, list[dict[str, Any]]]]:
    """``(service.collection, {"name": title} for each record with a title or subject)``."""
    out = []
    for service, collections in package.initial_state.items():
        for collection, records in collections.items():
            for field in ("title", "subject"):
                titled = [{**r, "name": r[field]} for r in records if isinstance(r.get(field), str) and r[field].strip()]
                if titled:
                    out.append((f"{service}.{collection}", titled))
    return out


Named = list[tuple[str, list[dict[str, Any]]]]
"""``_named_records`` of a package."""


def _people(package: TaskPackage, named: Named | None = None, texts: list[str] | None = None) -> dict[str, set[str]]:
    """The people the state knows, folded: each first name with the last names it comes with
    (from names of two words or more, and from ``first.last@`` addresses). (``named``:
    ``_named_records(package)``, ``texts``: ``state_strings(package)``, when the caller
    has them.)"""
    out: dict[str, set[str]] = {}
    for _, records in _named_records(package) if named is None else named:
        for r in records:
            words = r["name"].casefold().split()
            out.setdefault(words[0], set()).update(words[-1:] if len(words) >= 2 else [])
    for text in state_strings(package) if texts is None else texts:
        if "@" in text:  # an address, or text holding one
            for first, last in _ADDRESS_NAME.findall(text.casefold()):
                out.setdefault(first, set()).add(last)
    return out


def ambiguous_first_names(package: TaskPackage) -> set[str]:
    """First names (folded) that two or more different people of the state share."""
    return {first for first, lasts in _people(package).items() if len(lasts) >= 2}


_HONORIFICS = frozenset({"dr", "mr", "mrs", "ms", "mx", "prof", "professor", "rev", "revd", "captain", "capt",
                         "skipper", "coach", "chef", "officer", "nurse", "sergeant", "sgt", "lieutenant", "lt",
                         "father", "sister"})
"""Titles and ranks before a name, which records do not write: "Dr Ilse Varga" is Ilse Varga, and
"Captain Ruiz" a surname alone (the record titles Tomás Ruiz "Captain")."""
_LEADING = _NOT_NAMES | _HONORIFICS


def _runs(text: str) -> list[tuple[str, int]]:
    """Multi-word capitalized runs and where they start, leading function words and titles dropped."""
    out = []
    for m in _RUN.finditer(text):
        words = m.group(1).split()
        start = m.start(1)
        while words and words[0].casefold().replace("’", "'") in _LEADING:
            start += len(words[0]) + 1
            words = words[1:]
        if len(words) < 2:
            continue  # "Then Please" is all function words
        words[-1] = _POSSESSIVE.sub("", words[-1])  # a possessive: "Priya Nair's" names Priya Nair
        if len(words) >= 2 and not any(w.casefold().replace("’", "'") in _NOT_NAMES for w in words):
            out.append((" ".join(words), start))
    return out


_POSSESSIVE = re.compile(r"['’]s?$")
_GENERIC_WORDS = frozenset({"api", "apis", "sdk", "app", "apps", "account", "accounts", "key", "keys", "integration",
                            "integrations", "team", "portal", "dashboard", "workspace", "server", "bot", "webhook", "crm",
                            "christmas", "xmas", "easter", "halloween", "spring", "summer", "autumn", "fall", "winter"})
"""Words that name a part or an occasion of something rather than a thing of its own: "the Stripe
API" is Stripe's, "the Fjellstad Events Christmas charter" is Fjellstad Events'."""


def _known_before_a_generic_word(name: str, known: str) -> bool:
    """Whether ``name`` is a known name followed by words such as "API" or "account" ("Stripe
    API" where the state knows Stripe), or by what it owns ("Fjellstad Events' CRM")."""
    words = name.split()
    owner = next((n for n, w in enumerate(words[:-1]) if _POSSESSIVE.search(w)), None)
    if owner is not None:
        words = [*words[:owner], _POSSESSIVE.sub("", words[owner])]
    while len(words) > 1 and words[-1].casefold() in _GENERIC_WORDS:
        words.pop()
    return len(words) < len(name.split()) and re.search(rf"(?<!\w){re.escape(' '.join(words).casefold())}(?!\w)",
                                                        known) is not None


def unknown_findings(package: TaskPackage, ref: Trajectory | None, named: Named | None = None,
                     texts: list[str] | None = None) -> list[Finding]:
    """Multi-word names of the request that nothing knows (see the module docstring). (``named``,
    ``texts``: as for ``_people``.)"""
    text = package.request.text
    names = [r["name"].split() for _, records in (_named_records(package) if named is None else named) for r in records]
    if not any(len(n) >= 2 for n in names):
        return []  # no directory of people or organizations: a name is context, not a lookup
    runs = _runs(text)
    if not runs:
        return []
    known = " ".join(state_strings(package) if texts is None else texts).casefold()
    known += " " + " ".join(f.value for f in (package.user.facts if package.user else [])).casefold()
    if ref is not None:
        known += " " + " ".join(strings([[step.args, step.result] for step in ref.steps])).casefold()
    known += " " + re.sub(r"[._@+-]+", " ", known)  # "carlos.mendes@..." knows Carlos Mendes
    out: list[Finding] = []
    for name, start in runs:
        if name.casefold() in known or _known_before_a_generic_word(name, known):
            continue
        opening = start == 0 or re.search(r"[.!?:;]\s*$", text[:start]) is not None
        if opening and len(name.split()) >= 3:  # "Invoice Veldhuis Interiors": a verb opens the sentence
            name, start = name.split(" ", 1)[1], start + len(name.split(" ", 1)[0]) + 1
            if name.casefold() in known:
                continue
        elif opening and _record_named_at(package, text, start + len(name.split(" ", 1)[0]) + 1):
            continue  # "Bill Quill & Co for the consulting": a verb, then the company's whole name
        words = name.split()
        near = [" ".join(n) for n in names if n and (n[0].casefold() == words[0].casefold()
                                                     or n[-1].casefold() == words[-1].casefold())]
        marked = re.search(rf"\b{_MARKERS}\s+(?:the\s+)?$", text[:start], re.IGNORECASE) is not None \
            and not _FOR_CONTEXT.search(text[:start]) and not _QUALIFIES.match(text, start + len(name))
        if near or marked:
            similar = f"; the closest: {', '.join(near[:3])}" if near else ""
            out.append(Finding(code=Code.UNKNOWN_ENTITY, detail={"name": name},
                               message=f"the request names {name!r}, who (or which) is nowhere in the initial state, "
                                       f"the user's facts or the reference{similar}"))
    return out


_FOR_CONTEXT = re.compile(r"(?:(?:^|[.!?]\s+)For|\b[\w-]*\d[\w-]*\s+for)\s+(?:the\s+)?$")
"""A "for" that names whose a thing is rather than whom the work is for: opening the sentence ("For
the Brightwater Linen Co. account review, export …") or after a record named by its id ("ticket
tkt-121 for Oakhollow Timber Merchants"): the user's own business, context, not a record to find."""


_QUALIFIES = re.compile(r"['’]?\s+(?!(?:about|to|and|or|with|for|from|at|on|in|by|of|as|if|so|but|when|before|after|"
                        r"until|since|because|today|tomorrow|tonight|now|asap|again|too|please|this|that|the|a|an|"
                        r"their|his|her|its|our|my|your|them|him|us|me|we|we're|i|you|they|is|are|was|were|has|"
                        r"have|had|will|would|can|could|should|who|which|know|say|says|said|that's)\b)[a-z][a-z'’-]+")
"""A lower-case noun right after a name ("the Lantern Lane café", "the Brightwater account review"):
the name qualifies the thing the request speaks of (the user's own place or business), no record
to find."""


def _record_named_at(package: TaskPackage, text: str, at: int) -> bool:
    """Whether ``text`` writes, from offset ``at``, the whole name or company of a record."""
    rest = text[at:].casefold()
    return any(isinstance(v, str) and len(v) >= 3 and rest.startswith(v.casefold())
               and (len(rest) == len(v) or not rest[len(v)].isalnum())
               for collections in package.initial_state.values() for records in collections.values()
               for r in records if isinstance(r, dict) for v in (r.get("name"), r.get("company")))


def ambiguous_findings(package: TaskPackage, named: Named | None = None, texts: list[str] | None = None) -> list[Finding]:
    """Names of the request that match two or more records nothing tells apart (see the module
    docstring). (``named``, ``texts``: as for ``_people``.)"""
    said = package.request_and_fact_values()
    folded = said.casefold()
    runs = _runs(package.request.text)
    inside = [(at, at + len(name)) for name, at in runs]
    words = [m for m in _WORD.finditer(package.request.text) if m.group(1).casefold() not in _NOT_NAMES]
    mentions = {m.group(1) for m in words} | {name for name, _ in runs}
    text = package.request.text  # "the two Arabica lines", "all Tolliver items": a set, no one record to pick
    sets = {m for m in mentions if _A_SET_OF.search(text[max(0, text.find(m) - 40):text.find(m)])}
    within_runs = {m.group(1) for m in words if any(a <= m.start(1) < b for a, b in inside)} - {
        m.group(1) for m in words if not any(a <= m.start(1) < b for a, b in inside)}  # "Tolliver" of "Tolliver Tools"
    named = _named_records(package) if named is None else named
    people = _people(package, named, texts)
    first_names = set(people)
    asked = [(mention, mention.casefold()) for mention in sorted(mentions - sets)]
    out: list[Finding] = []
    for where, records, titled in [*((w, r, False) for w, r in named),
                                   *((w, r, True) for w, r in _titled_records(package))]:
        names = [(r, r["name"].casefold()) for r in records]
        firsts = {name.split()[0] for _, name in names} | {name for _, name in names}
        for mention, m in asked:
            if titled:  # "1:1 Daniel Osei", "1:1 Daniel Brandt": titles naming a person by first name
                candidates = [r for r in records if has_word(r["name"], m, joiners="")] if m in first_names else []
                if candidates and len(people[m] | _last_names_after(m, candidates)) < 2:
                    candidates = []  # one person of that name: every title names them ("1:1 Ravi", "Ravi's demo")
            elif mention in within_runs:
                candidates = []  # the word of a longer name the request writes: that name, not these records'
            elif m in firsts or " " in m:  # a whole name, a first name, or the start of a name
                candidates = [r for r, name in names if name == m or name.split()[0] == m
                              or (" " in m and name.startswith(m + " "))]
            else:
                candidates = []
            if len(candidates) < 2 or any(r["name"].casefold() in folded for r in candidates):
                continue
            if _told_apart(candidates, folded):
                continue
            out.append(Finding(code=Code.AMBIGUOUS_ENTITY, detail={"name": mention, "collection": where,
                                                                    "records": [r.get("id") for r in candidates]},
                               message=f"the request names {mention!r}, which matches {len(candidates)} records of "
                                       f"{where} ({', '.join(r['name'] for r in candidates)}), and nothing in the "
                                       "request or the user's facts says which"))
    return out


def _last_names_after(first: str, records: list[dict[str, Any]]) -> set[str]:
    """The capitalized words that follow the first name ``first`` (folded) in the records' names
    ("osei" of "1:1 Daniel Osei"), folded."""
    pattern = re.compile(rf"\b{re.escape(first)}\s+([A-Z][\w'-]+)", re.IGNORECASE)
    return {m.group(1).casefold() for r in records for m in pattern.finditer(r["name"]) if m.group(1)[0].isupper()}


_A_SET_OF = re.compile(r"\b(?:both|all|every|each|the\s+(?:two|three|four|five|\d+))(?:\s+(?:of\s+)?(?:the|our|my|their))?"
                       r"\s*$", re.IGNORECASE)
_SEPARATORS = re.compile(r"[\s@.,\"()]+")


def _says(said: str, token: str) -> bool:
    """Whether ``said`` writes ``token`` as a word, or its plural ("violins" for a record's "violin")."""
    return any(has_word(said, t, joiners="") for t in (token, token + "s", token + "es"))


def _told_apart(candidates: list[dict[str, Any]], said: str) -> bool:
    """Whether the text names a value that exactly one of the candidates has, or one candidate
    holds every word of the text that any other holds, and more ("Verdant Foods' renewal deal":
    "Verdant Foods renewal 2027" beside "Verdant Foods analytics add-on" and "Verdant Logistics
    renewal 2027"); a word counts in its plural too ("Alpine spruce tops for violins" is the
    "Alpine spruce top, violin grade AA", not the "Alpine spruce bass bar blank")."""
    for record in candidates:
        others = [r for r in candidates if r is not record]
        for key, value in record.items():
            if key == "id":
                continue
            for leaf in leaves(value):
                if not isinstance(leaf, str) or len(leaf) < 3 or any(leaf in leaves(o.get(key)) for o in others):
                    continue
                tokens = [leaf.casefold()] + [t for t in _SEPARATORS.split(leaf.casefold())
                                              if len(t) >= 4 or (len(t) >= 2 and re.search(r"\d", t))]
                if any(_says(said, t) for t in tokens if not any(t in str(o.get(key, "")).casefold() for o in others)):
                    return True
    held = [{t for leaf in leaves(r) if isinstance(leaf, str) for t in _SEPARATORS.split(leaf.casefold())
             if (len(t) >= 4 or (len(t) >= 2 and re.search(r"\d", t))) and _says(said, t)}
            for r in candidates]
    return any(all(mine > theirs for theirs in held[:n] + held[n + 1:]) for n, mine in enumerate(held))


def entity_findings(package: TaskPackage, run: ReferenceRun | None) -> list[Finding]:
    """Unknown and ambiguous names, each with its witness when the reference ran: for an unknown
    name, a correct agent that looks, finds no such person or record and says so, changing
    nothing; for an ambiguous one, a correct agent that acts on another of the records the name
    matches."""
    named = _named_records(package)
    texts = state_strings(package)
    unknown = unknown_findings(package, run.trajectory if run else None, named, texts)
    words = {w for f in unknown for w in f.detail["name"].casefold().split()}
    ambiguous = [f for f in ambiguous_findings(package, named, texts) if not set(f.detail["name"].casefold().split()) <= words]
    if run is not None:
        for f in unknown:
            f.witness = _reports_missing(run, f.detail["name"])
        for f in ambiguous:
            f.witness = _other_candidate(run, f.detail["records"])
    if log.isEnabledFor(logging.DEBUG):
        log.debug("%r names %s no record holds, %s several records fit", package.request.text[:80],
                  [f.detail["name"] for f in unknown], [f.detail["name"] for f in ambiguous])
    return unknown + ambiguous


def _reports_missing(run: ReferenceRun, name: str) -> Witness:
    """A correct agent that makes the reference's reads up to its first write, then answers that
    ``name`` is not there and that it changed nothing."""
    first_write = min((w.step for w in run.writes), default=len(run.package.reference))
    steps: dict[int, Step] = {i: s for i, s in enumerate(run.package.reference[:first_write])
                              if not isinstance(s, AnswerStep)}
    steps[len(run.package.reference)] = AnswerStep(answer=f"I could not find {name}, so I have not changed anything.")
    return witness(run, "correct", "reports_missing", f"finds no {name} and says so, changing nothing",
                   PASS_SCORE, steps)


def _other_candidate(run: ReferenceRun, ids: list[Any]) -> Witness | None:
    """A correct agent that acts on another of the records ``ids`` (those a name matches) than the
    one the reference acts on; the first such agent whose score falls short, else the last tried."""
    records = {r.get("id"): r for collections in run.package.initial_state.values() for rows in collections.values()
               for r in rows if r.get("id") in ids}
    used = {str(v).casefold() for args in run.args.values() for v in leaves(args) if isinstance(v, str)}
    chosen = [r for r in records.values() if {str(r.get(k, "")).casefold() for k in ("id", "email", "name")} & used]
    agent = None
    for picked in chosen[:1]:
        for other in (r for r in records.values() if r is not picked):
            mapping = {picked[k]: other[k] for k in ("id", "email", "name")
                       if isinstance(picked.get(k), str) and isinstance(other.get(k), str)}
            steps = substituted(run, mapping)
            if steps is None:
                continue
            agent = witness(run, "correct", "other_candidate", f"acts on {other.get('name', other.get('id'))}, whom "
                            "the request's words fit as well", run.score, steps)
            if agent.holds:
                return agent
    return agent

"""Borrowed values: a value written into the record a request creates or changes that the agent
could only take from a record the request does not point at. Raises ``ungrounded_value``
(``grounding.py`` calls ``borrowed_findings``).

The evidence model (``evidence.py``) counts every value of every record read as learnable, which
is right for the records a task is about and wrong for the others: "Add a high-priority todo to
renew the parking permit", graded on a due date of 2026-12-15, is not grounded by an unrelated
todo that happens to be due that day. For each date, time and number a reference write puts
into a field of the record it creates or changes (not a ``$fact``), the records read before
that write that **hold** it (in a field, or in a text: "due 15 December") are set aside; when
what is left (the request, the facts revealed, the tools' schemas and defaults, the other records,
a count or total of two records or more, one step of arithmetic, a stated span or duration) no
longer gives it, and none of those records is **pointed at**, the value is borrowed.

A record is *pointed at* when a reference write targets it or names its id in an argument, when
the request (with the user's facts) writes its id, or shares with it a word of a short field (a
name, title, subject, customer, location; an address's local part: "Priya" for
``priya.nair@…``) or two words of a longer text, leaving out the words the reference writes into
the new records themselves (the todo's own title "Renew the parking permit for the delivery van"
does not point at "Book MOT for the delivery van") and the collection's nouns ("invoice"), or
when it holds the id or address of a record pointed at. So "the same day as the MOT booking",
"charge what we billed Mill Lane Bakery", "the due date in Priya's email" ground the value.

**Priority.** A priority (a field named ``priority``, ``severity``, ``urgency``) is an enum, always
offered by the schema; which one is the request's to say. A priority a write sets, other than the
operation's default, that the request and the facts never speak of (no option's name, nor
"priority", "urgent", "asap", "important", "critical", "whenever", "no rush" …) and no record
pointed at holds, is unstated.

**A label changed unasked.** An update that changes a field holding a label (an enum value, or
a word or three: a category, a visibility, a room "Barn B"; not a lifecycle field such as ``status``, which the request's
verb changes) to a value the request and the facts never speak of (no word of the field's name, no
option's name or its stem) and no record pointed at holds (for a field without an enum, no record
read at all): "publish the reviewed SSO draft" graded on its category moved to "security".

Each finding is witnessed: a correct agent that writes another value there (a day later, an hour
later, one more; the default priority; the label as it was) fails.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from functools import cached_property, lru_cache
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import leaves
from pipeline.core.outcomes import Finding
from pipeline.core.package import CallStep
from pipeline.core.text_values import ISO_DATE, clock_value, has_word, in_window, verb_stem
from pipeline.verify.effects import Write
from pipeline.verify.evidence import (
    TOLERANCE,
    Evidence,
    observe,
    starting_evidence,
    text_evidence,
)
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.perturbations import content_words
from pipeline.verify.witness import another_value, rewritten_value

Record = dict[str, Any]

PRIORITY_FIELDS = frozenset({"priority", "severity", "urgency"})
LIFECYCLE_FIELDS = frozenset({"status", "state", "stage", "folder"})
"""Fields a request changes by its verb ("reopen", "close", "archive", "mark it won"): their new
value is the operation's, not a label the request must name."""
_PRIORITY_WORDS = re.compile(
    r"\b(?:priorit\w*|urgen\w*|asap|as soon as possible|important|importance|critical|crucial|emergency|"
    r"immediate\w*|right away|straight away|top|pressing|rush\w*|hurry|quick\w*|soon|whenever|someday|"
    r"eventually|minor|trivial|low|high|medium|normal|severe|severity|blocker|blocking|escalat\w*|"
    r"time[- ]sensitive|today|tonight|now|bump\w*|upgrad\w*|downgrad\w*|depriorit\w*|lower)\b")
"""Words with which a request speaks of a priority: a priority it names, or leaves to the agent."""


def borrowed_findings(run: ReferenceRun, said: str) -> list[Finding]:
    """The findings on the values the reference's writes borrow from records the request does not
    point at, and on the priorities and labels they set unstated (``said``:
    ``grounding.corrected_request``)."""
    package = run.package
    writes = [w for w in run.writes if w.bound.op.effect in ("create", "update")
              and isinstance(package.reference[w.step], CallStep)]
    if not writes:
        return []
    context = _Context(run, said)
    out: list[Finding] = []
    for w in writes:
        step = package.reference[w.step]
        assert isinstance(step, CallStep)
        resolved = run.args.get(w.step, {})
        for key, value in resolved.items():
            original = step.args.get(key)
            if key == w.bound.op.id_param or (isinstance(original, dict) and "$fact" in original):
                continue
            if key in PRIORITY_FIELDS and isinstance(value, str):
                out += _unstated_choice(run, w, key, value, said, context)
                continue
            if w.bound.op.effect == "create" and isinstance(value, str) and _unstated_option(w, key, value, said):
                out += _unstated_choice(run, w, key, value, said, context)
                continue
            if w.bound.op.effect == "update" and isinstance(value, str) and key not in LIFECYCLE_FIELDS:
                out += _unstated_change(run, w, key, value, said, context)
            for kind, part in _typed_parts(value):
                finding = _borrowed(run, w, key, value, kind, part, context)
                if finding is not None:
                    out.append(finding)
                    break
    return out


def _typed_parts(value: Any) -> list[tuple[str, Any]]:
    """``(kind, part)`` of the dates, times and numbers a written value is made of: "2026-12-09T14:00"
    is the date 2026-12-09 and the time 14:00."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [("number", float(value))]
    if not isinstance(value, str):
        return []
    if m := ISO_DATE.fullmatch(value):
        return [("date", m.group(1)), *([("time", m.group(2))] if m.group(2) and m.group(2) != "00:00" else [])]
    if clock := clock_value(value):
        return [("time", clock)]
    return []


def _borrowed(run: ReferenceRun, w: Write, key: str, value: Any, kind: str, part: Any,
              context: _Context) -> Finding | None:
    # The tests are pure and each one alone sets the value aside, so the cheap ones come first:
    # the records holding it, the records pointed at, the aggregates; the evidence (a replay of
    # what the reads showed, without those records) last.
    holders = context.reads.holders(w.step, kind, part)
    if not holders:
        return None
    pointing = context.pointing
    if any(pointing.at(r) or (pointing.about(r) and context.reads.holds(r, kind, part, texts_only=True))
           for r in holders):
        return None
    if kind == "number" and _aggregated(run, float(part)):
        return None
    if _known(_evidence_without(run, w.step, holders), kind, part):
        return None
    other = _other(value, kind)
    named = ", ".join(_label(r) for r in holders[:3])
    agent = rewritten_value(run, w.step, value, other, f"writes {key} = {other!r}: the request gives no {kind} for "
                                                       f"it, and only {named} holds {value!r}")
    if not agent.holds:
        return None
    return Finding(code=Code.UNGROUNDED_VALUE, step=w.step,
                   detail={"argument": key, "value": value, "kind": kind, "borrowed_from": [_label(r) for r in holders]},
                   witness=agent,
                   message=f"step {w.step} writes the {kind} {key}={value!r}, which the checks require, but the agent "
                           f"could only take it from {named}, a record the request does not point at: the request, "
                           "the facts and the schemas do not give it")


def _unstated_choice(run: ReferenceRun, w: Write, key: str, value: str, said: str,
                     context: _Context) -> list[Finding]:
    """A priority (or, for a create, a stage: ``_unstated_option``) set to an option of its enum other
    than the operation's default, where the request speaks of no priority and no record it points
    at holds the value: the correct agent that writes the default (else another option) must keep
    its score."""
    op = w.bound.op
    options = (w.bound.tool.parameters.get("properties", {}).get(key) or {}).get("enum") or []
    default = op.defaults.get(op.field_for(key)) if op.effect == "create" else None
    if value not in options or value == default or _PRIORITY_WORDS.search(said) \
            or any(speaks_of_option(said, str(o)) for o in options):
        return []
    holders = context.reads.holders(w.step, "word", value)
    if any(context.pointing.at(r) for r in holders):
        return []
    other = default if default in options else next(o for o in options if o != value)
    return _unsaid(run, w, key, value, other, f"writes {key} = {other!r}",
                   f"step {w.step} sets {key}={value!r}, which the checks require, but the request never speaks of "
                   f"the {key} (the operation's default is {default!r}) and no record it points at holds it")


_STAGE_FIELDS = frozenset({"stage", "status", "phase", "state"})
"""Fields that say how far along a record is: a new one starts at the default unless told."""


def _unstated_option(w: Write, key: str, value: str, said: str) -> bool:
    """Whether a create sets ``key``, an enum field of how far along a record is with a default (a
    deal's ``stage``, ``_STAGE_FIELDS``), to another
    of its options, where the request speaks neither of the field (a word of its name) nor of any
    option: the default is what an agent told nothing writes (``_unstated_choice`` then asks
    whether the checks pay only the reference's choice)."""
    if key not in _STAGE_FIELDS:
        return False  # a currency, a unit: the request's "£" or the records read may give it without its name
    options = (w.bound.tool.parameters.get("properties", {}).get(key) or {}).get("enum") or []
    default = w.bound.op.defaults.get(w.bound.op.field_for(key))
    if value not in options or default not in options or value == default:
        return False
    return not any(has_word(said, word) for word in re.findall(r"[a-z]+", key.casefold()) if len(word) > 2) \
        and not any(speaks_of_option(said, str(o)) for o in options if len(str(o)) > 2)


def speaks_of_option(said: str, option: str) -> bool:
    """Whether the request names an enum option: the word itself, or for a verb's form (a status
    ``published``, ``archived``) the verb it comes from ("publish a new article")."""
    stem = verb_stem(option)
    return has_word(said, option) or (stem != option and len(stem) > 3 and re.search(
        rf"\b{re.escape(stem)}(?:e|es|ed|ing|s|{re.escape(stem[-1])}(?:ed|ing))?\b", said, re.IGNORECASE) is not None)


def _unsaid(run: ReferenceRun, w: Write, key: str, value: str, other: Any, doing: str, message: str) -> list[Finding]:
    """The finding on ``value``, set in ``key`` by write ``w`` though the request never speaks of
    it, when a correct agent that writes ``other`` instead (``doing``) fails."""
    agent = rewritten_value(run, w.step, value, other, f"{doing}: the request says nothing of the {key}, so nothing "
                                                       f"gives {value!r}")
    if not agent.holds:
        return []
    return [Finding(code=Code.UNGROUNDED_VALUE, step=w.step, detail={"argument": key, "value": value, "kind": "enum"},
                    witness=agent, message=message)]


def _unstated_change(run: ReferenceRun, w: Write, key: str, value: str, said: str,
                     context: _Context) -> list[Finding]:
    """An update that changes a field holding a label (an enum value, or one word: a category, a
    visibility) the request and the facts never speak of (no word of the field's name, no option's
    name or its stem: "publish" speaks of ``published``) to a value no record pointed at holds (for
    a field without an enum, no record read at all): a correct agent that leaves the field as it
    was must keep its score."""
    options = (w.bound.tool.parameters.get("properties", {}).get(key) or {}).get("enum") or []
    old = run.updated_value(w, key)
    if not isinstance(old, str) or old == value:
        return []
    if (value not in options or old not in options) if options else not (_LABEL.fullmatch(value) and _LABEL.fullmatch(old)):
        return []  # a value of the enum moved to another; without one, a one-word label to another
    words = [*re.split(r"[_\W]+", key), *(verb_stem(str(o)) for o in options or (value,))]
    if any(len(word) >= 3 and has_word(said, word, prefix=True) for word in words):
        return []
    holders = context.reads.holders(w.step, "word", value)
    if any(context.pointing.at(r) for r in holders) or (holders and not options):
        return []
    return _unsaid(run, w, key, value, old, f"leaves {key} as it was ({old!r})",
                   f"step {w.step} changes {key} from {old!r} to {value!r}, which the checks require, but the request "
                   f"never speaks of the {key} and no record it points at holds {value!r}")


_LABEL = re.compile(r"[^\W\d_][\w-]*(?: [\w-]+){0,2}")
"""A label: one word ("security", "follow-up"), or up to three that open with one ("Barn B"); no id
or number."""
def _other(value: Any, kind: str) -> Any:
    """Another value of ``kind`` in place of the part of ``value``: a date a day later (the time
    kept), an hour later, one more."""
    if kind == "date" and isinstance(value, str):
        return another_value(value[:10]) + value[10:]
    return another_value(value)


def _known(evidence: Evidence, kind: str, part: Any) -> bool:
    if kind == "date":
        return evidence.has_day(part)
    if kind == "time":
        return evidence.has_time(part)
    return evidence.has_number(part)


class _Values:
    """What one record read holds: its numbers, the dates and times of its ISO values and clock
    values, its strings, and what its texts state (``text_evidence``); with ``texts_only``, of its
    texts alone."""

    def __init__(self, record: Record, today: date, texts_only: bool) -> None:
        self.texts_only = texts_only
        self.numbers: list[float] = []
        self.strings: list[str] = []
        self.dates: set[str] = set()
        self.times: set[str] = set()
        self.told_numbers: set[float] = set()
        self.told_dates: set[str] = set()
        self.told_times: set[str] = set()
        self.windows: list[Any] = []
        for leaf in leaves(record):
            if isinstance(leaf, bool) or (texts_only and not (isinstance(leaf, str) and " " in leaf)):
                continue
            if isinstance(leaf, (int, float)):
                self.numbers.append(float(leaf))
            if not isinstance(leaf, str):
                continue
            self.strings.append(leaf)
            if m := ISO_DATE.fullmatch(leaf):
                self.dates.add(m.group(1))
                if m.group(2):
                    self.times.add(m.group(2))
            if clock := clock_value(leaf):
                self.times.add(clock)
            if " " in leaf:
                told = text_evidence(leaf, today)
                self.told_numbers |= told.numbers
                self.told_dates |= told.dates
                self.told_times |= told.times
                self.windows += told.windows

    def holds(self, kind: str, part: Any) -> bool:
        """Whether one of the record's values is ``part`` (a date, a time, a number, a word), or
        one of its texts states it (a date: or a window holding it, "until 31 December"); with
        ``texts_only``, whether a text of it states ``part`` itself."""
        if kind == "number":
            return any(abs(x - part) <= TOLERANCE for x in self.numbers) or part in self.told_numbers
        if kind == "word":
            return any(has_word(s, part) for s in self.strings)
        if kind == "date":
            return part in self.dates or part in self.told_dates or (
                not self.texts_only and in_window(part, self.windows))
        return part in self.times or part in self.told_times


class _Node:
    """A record a read returned (a dict with an id), with the records inside it."""

    __slots__ = ("record", "inside")

    def __init__(self, record: Record) -> None:
        self.record = record
        self.inside = _nodes(record)


def _nodes(value: Any) -> list[_Node]:
    """The records inside ``value``, outermost first, in order (not ``value`` itself)."""
    out: list[_Node] = []
    for v in value if isinstance(value, list) else value.values() if isinstance(value, dict) else ():
        if isinstance(v, dict) and "id" in v:
            out.append(_Node(v))
        else:
            out += _nodes(v)
    return out


class _Reads:
    """The records the reference's reads returned, by step, and what each holds (``_Values``),
    each worked out once."""

    def __init__(self, run: ReferenceRun) -> None:
        write_fields = run.write_fields
        self.today = date.fromisoformat(run.package.now[:10])
        self.steps = [(record.index, _nodes(record.result)) for record in run.trajectory.steps
                      if write_fields.get(record.tool or "") is None and record.kind == "call"
                      and record.result is not None]
        self._values: dict[tuple[int, bool], _Values] = {}

    def holds(self, record: Record, kind: str, part: Any, texts_only: bool = False) -> bool:
        """Whether ``record`` holds ``part`` (``_Values.holds``)."""
        values = self._values.get((id(record), texts_only))
        if values is None:
            values = self._values[(id(record), texts_only)] = _Values(record, self.today, texts_only)
        return values.holds(kind, part)

    def holders(self, upto: int, kind: str, part: Any) -> list[Record]:
        """The records the reads before step ``upto`` returned that hold ``part`` (``holds``),
        in order; a record inside one that holds it is not looked at (``_evidence_without`` sets
        the outer one aside)."""
        found: list[Record] = []
        for index, nodes in self.steps:
            if index < upto:
                self._holders_in(nodes, kind, part, found)
        return found

    def _holders_in(self, nodes: list[_Node], kind: str, part: Any, found: list[Record]) -> None:
        """Append to ``found`` each record of ``nodes`` that holds ``part``, else those inside it
        that do. (A method, not a function nested in ``holders``: one that calls itself is a
        reference cycle per call.)"""
        for node in nodes:
            if self.holds(node.record, kind, part):
                found.append(node.record)
            else:
                self._holders_in(node.inside, kind, part, found)


def _evidence_without(run: ReferenceRun, upto: int, holders: list[Record]) -> Evidence:
    """What the agent knows before step ``upto`` when ``holders`` (``_Reads.holders``: the records its
    reads returned that hold a value) are set aside."""
    package = run.package
    write_fields = run.write_fields
    evidence = starting_evidence(package)
    held = {id(r) for r in holders}
    for record in run.trajectory.steps:
        if record.index >= upto:
            continue
        fields = write_fields.get(record.tool or "")
        if fields is None and record.kind == "call" and record.result is not None:
            record = replace(record, result=_without(record.result, held))
        observe(evidence, package, record, fields)
    return evidence


def _without(value: Any, held: set[int]) -> Any:
    def drop(v: Any) -> bool:
        return isinstance(v, dict) and "id" in v and id(v) in held

    if isinstance(value, list):
        return [_without(v, held) for v in value if not drop(v)]
    if isinstance(value, dict):
        return {k: _without(v, held) for k, v in value.items() if not drop(v)}
    return value


def _aggregated(run: ReferenceRun, number: float) -> bool:
    """Whether ``number`` is the count or a total of a group of two records or more read."""
    return any(abs(x - number) <= TOLERANCE for x in run.group_figures)


def _label(record: Record) -> str:
    name = next((str(record[k]) for k in ("name", "title", "subject", "customer", "company") if record.get(k)), "")
    return f"{record.get('id')} ({name!r})" if name else str(record.get("id"))


# --------------------------------------------------------------------------- pointing


class _Context:
    """What the findings on one package's writes share, each made on first need (most values
    are set aside before they need it): the records read (``_Reads``), and which the request
    points at (``_Pointing``)."""

    def __init__(self, run: ReferenceRun, said: str) -> None:
        self.run, self.said = run, said

    @cached_property
    def reads(self) -> _Reads:
        return _Reads(self.run)

    @cached_property
    def pointing(self) -> _Pointing:
        return _Pointing(self.run, self.said)


class _Pointing:
    """Which records the request points at (the module docstring)."""

    def __init__(self, run: ReferenceRun, said: str) -> None:
        package = run.package
        self.ids: set[str] = set()
        """Every string a write carries (folded): the ids it names, the values it copies."""
        written: set[str] = set()
        nouns: set[str] = set()
        for w in run.writes:
            if w.record_id is not None and w.bound.op.effect != "create":
                self.ids.add(str(w.record_id).casefold())
            for leaf in leaves(run.args.get(w.step, {})):
                if isinstance(leaf, str):
                    self.ids.add(leaf.casefold())
                    if " " in leaf.strip() or leaf.isalpha():
                        written |= _stems(leaf)
        for b in run.bound.values():
            nouns |= {_stem(n) for n in [*b.spec.nouns, b.spec.record, b.op.collection]}
        told = " ".join([package.request.text, *(f.value for f in (package.user.facts if package.user else []))])
        self.said = said
        self.words = _stems(said) - (written - _proper(told)) - nouns
        self.topic = _stems(said) - nouns
        self.enums = {str(v).casefold() for b in run.bound.values() for spec in b.spec.fields.values()
                      for v in spec.get("enum", [])}
        self.run = run
        self._pointed: dict[int, bool] = {}  # ``_direct`` of a record, by its id(): asked once

    @cached_property
    def _linked(self) -> set[str]:
        """The ids and addresses of the records pointed at: a record holding one is pointed at too."""
        linked: set[str] = set()
        for step in self.run.trajectory.steps:
            for r in _records(step.result):
                if self._direct(r):
                    linked |= {str(v).casefold() for k, v in r.items() if isinstance(v, str) and (k == "id" or "@" in v)}
        return linked

    def at(self, record: Record) -> bool:
        return self._direct(record) or any(isinstance(v, str) and v.casefold() in self._linked
                                           for k, v in record.items() if k != "id")

    def about(self, record: Record) -> bool:
        """Whether ``record`` speaks of what the request does: two of its words, those the
        reference writes into the new records included ("the deposit for the barn" and the email
        about the barn's deposit)."""
        words: set[str] = set()
        for key, value in record.items():
            if key != "id" and isinstance(value, str) and value.casefold() not in self.enums and not ISO_DATE.match(value):
                words |= _stems(value)
        return len(words & self.topic) >= 2

    def _direct(self, record: Record) -> bool:
        pointed = self._pointed.get(id(record))
        if pointed is None:
            pointed = self._pointed[id(record)] = self._points_at(record)
        return pointed

    def _points_at(self, record: Record) -> bool:
        rid = str(record.get("id", "")).casefold()
        if rid and (rid in self.ids or (len(rid) >= 3 and has_word(self.said, rid))):
            return True
        short: set[str] = set()
        long: set[str] = set()
        for key, value in record.items():
            if key == "id" or key.endswith("_id") or not isinstance(value, str) or value.casefold() in self.enums \
                    or ISO_DATE.match(value) or clock_value(value):
                continue
            if value.casefold() in self.ids or (" " in value.strip() and has_word(self.said, value.strip())):
                return True  # a value the write copies ("ap@northwind.example"), a name the request writes whole
            if "@" in value:
                short |= _stems(value.split("@")[0].replace(".", " ").replace("_", " "))
            elif len(value.split()) <= 8:
                short |= _stems(value)
            else:
                long |= _stems(value)
        return bool(short & self.words) or len(long & self.words) >= 2


_CAPITALIZED_IN_SENTENCE = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][\w'-]+)")
_CALENDAR_WORDS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january",
                             "february", "march", "april", "may", "june", "july", "august", "september", "october",
                             "november", "december"})


def _proper(text: str) -> frozenset[str]:
    """The stems of the names a text writes: capitalized words inside a sentence, days and months
    aside ("on the day of the Kestrel kickoff": kestrel)."""
    return frozenset(_stem(m.group(1)) for m in _CAPITALIZED_IN_SENTENCE.finditer(text)
                     if m.group(1).casefold() not in _CALENDAR_WORDS)


def _records(value: Any) -> list[Record]:
    if isinstance(value, dict):
        return ([value] if "id" in value else []) + [r for v in value.values() for r in _records(v)]
    if isinstance(value, list):
        return [r for v in value for r in _records(v)]
    return []


@lru_cache(maxsize=4096)
def _stems(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in content_words(text))


def _stem(word: str) -> str:
    word = word.casefold()
    return re.sub(r"(?:ing|ed|es|s)$", "", word) if len(word) > 4 else word

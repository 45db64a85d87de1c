"""Grounding: what the agent must write, and what a check pins, must be learnable. Raises
``ungrounded_value`` and ``unrequested_write``.

**Typed values** are emails, record ids, dates, times, numbers, and enum values the request names.
Free text the agent composes is not a typed value (whether a check may pin it is the equivalence
tests' business). A typed value is *obtainable* at a point of the reference when it is in:

- the request, or a fact the user revealed before that point (in any form ``text_values`` reads:
  "five", "$4,000", "December 3rd", "the 10th", "2 pm"; a date may also be any day of a window the
  request states, "next week", "by Friday");
- an earlier tool result: every value of a read's result, and what a write's result adds to its
  arguments (the new record's id and timestamps; the rest only echoes what the agent sent);
- a number computed from an earlier result: the count or a total of a group of records
  (``aggregates.py``: a list, the records sharing a field value or a month, "the unpaid total",
  quantity × price), or one step of arithmetic from known numbers (``evidence.Evidence.has_number``); the
  length of a time range the texts state ("13:00-17:00": 240 minutes, 4 hours);
- a number the agent wrote, or the total of one argument over its writes so far (the units it
  ordered in all);
- a time: one the texts or results state, or one moved by a duration a text states ("30 minutes
  before the stand-up");
- the tool's schema (an enum value or a default) or the service's documented defaults.

Findings:

- a typed value a **check pins** that is not obtainable by the end of the reference;
- a typed value the **reference writes** that is not obtainable at its step *and* that the checks
  pin (changing it loses score): the agent would have to guess it. A value the checks leave free
  (a meeting time the request does not give and no check grades) is the agent's choice;
- a number or date a check's pattern grades inside free text the reference writes (the "£15" of
  the voucher a draft offers) that is not obtainable by the end of the reference;
- an enum value that contradicts the request: the request names another value of the same field
  ("high") and not this one ("low");
- a date, time or number written into the record a write creates or changes that only records
  the request does not point at hold, or a priority the request never speaks of (``borrowed.py``);
- an **unrequested write** that carries weight: a write whose operation the request names by none
  of its ``intents`` words (``pipeline/core/services/*.yaml``), and whose removal loses score.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import leaves
from pipeline.core.outcomes import Finding, Witness
from pipeline.core.package import CallStep, StateCount, StateMatch, StateUnchanged, TaskPackage
from pipeline.core.patterns import compile_pattern
from pipeline.core.services import OperationSpec, get_service, id_shapes, intent_pattern
from pipeline.core.text_values import (
    EMAIL,
    ISO_DATE,
    clock_value,
    dates_in,
    has_word,
    numbers_in,
    quoted_phrases,
    windows_in,
)
from pipeline.verify.borrowed import borrowed_findings
from pipeline.verify.check_values import required_values, values_of
from pipeline.verify.effects import Write
from pipeline.verify.evidence import (
    LOOSE,
    Evidence,
    observe,
    starting_evidence,
    text_evidence,
    write_result_fields,
)
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.perturbations import is_free_text
from pipeline.verify.reference_edits import dependents
from pipeline.verify.witness import (
    another_value,
    earlier_in_the_morning,
    rewritten_value,
    said_instead,
    say_instead,
    with_arguments,
    witness,
)

# --------------------------------------------------------------------------- typed values


_NUMBERED_ID = re.compile(r"[A-Za-z]+-0*(\d+)")


def _missing(package: TaskPackage, value: Any, evidence: Evidence, shapes: tuple[re.Pattern[str], ...],
             stated: set[float]) -> str | None:
    """Why a typed value is not obtainable from ``evidence`` (what kind it is: ``LOOSE`` for a
    number reached only by loose arithmetic), or None (``stated``: the numbers the request and the
    user's facts state)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        if not evidence.has_number(float(value)):
            return "number"
        return None if evidence.plainly_known(float(value), stated) else LOOSE
    if not isinstance(value, str):
        return None
    if EMAIL.fullmatch(value) or any(s.match(value) for s in shapes):
        numbered = _NUMBERED_ID.fullmatch(value)
        if evidence.has_token(value.casefold()) or (numbered and float(numbered.group(1)) in stated) \
                or _by_convention(value, evidence):
            return None  # read or told; or the number of a "tkt-207" the request states ("207, the crash one")
        return "email" if "@" in value else "id"
    m = ISO_DATE.match(value)
    if m:
        if not evidence.has_day(m.group(1)):
            return "date"
        if m.group(2) and m.group(2) != "00:00" and not evidence.has_time(m.group(2)):
            return "time"
        return None
    if clock := clock_value(value):
        return None if evidence.has_time(clock) else "time"
    return None


def _by_convention(email: str, evidence: Evidence) -> bool:
    """Whether ``email`` is the address of a person the request or the facts name, made the way
    an address the agent has seen is made of its owner's name: "jonas.weber@corp.example" for
    "Jonas Weber" where "marta.silva@corp.example" was read (a local part of two or more name
    words joined by one of ``.``, ``_``, ``-``, and the same domain)."""
    local, _, domain = email.casefold().partition("@")
    m = _NAME_LOCAL.fullmatch(local)
    if m is None or not re.search(r"\b" + r"\s+".join(re.split(r"[._-]", local)) + r"\b", evidence.said.casefold()):
        return False
    joiner = m.group(1)
    return any(t.endswith("@" + domain) and t != email.casefold()
               and (n := _NAME_LOCAL.fullmatch(t.partition("@")[0])) is not None and n.group(1) == joiner
               for t in evidence.tokens if "@" in t)


_NAME_LOCAL = re.compile(r"[^\W\d_]{2,}([._-])[^\W\d_]{2,}(?:\1[^\W\d_]{2,})*")
"""The local part of an address made of name words joined by one separator: ``marta.silva``."""


def corrected_request(package: TaskPackage) -> str:
    """What the user asks for in the end, folded: the request with each value a fact corrects
    replaced by the fact's value ("medium priority" becomes "high priority"), then the facts."""
    text = package.request.text
    for fact in package.user.facts if package.user else []:
        if fact.corrects:
            text = re.sub(rf"(?<!\w){re.escape(fact.corrects)}(?!\w)", fact.value, text, flags=re.IGNORECASE)
    return " ".join([text, *(f.value for f in (package.user.facts if package.user else []))]).casefold()


def _said_enum(said: str, field_name: str, value: Any, options: list[Any]) -> str | None:
    """The other value ``said`` (the request and the user's facts, folded) gives this field
    ("high-priority", "priority high", "set the tier to gold"), when it gives one and not
    ``value`` (nor moves the field to ``value``: "moves up to gold" from "the standard tier")."""
    if not isinstance(value, str) or value not in options:
        return None

    def assigned(v: Any) -> bool:  # the value must be in the text for the pattern to find it there
        return str(v).casefold() in said and _assignment(field_name, str(v)).search(said) is not None

    if assigned(value) or re.search(rf"\b(?:to|into|as)\s+(?:the\s+)?{re.escape(value.casefold())}\b", said):
        return None  # "still on the standard tier moves up to gold": the new value, the old one beside it
    return next((str(v) for v in options if v != value and assigned(v)), None)


@lru_cache(maxsize=4096)
def _assignment(field_name: str, value: str) -> re.Pattern[str]:
    """Finds ``value`` given to field ``field_name`` in a folded text: "high priority",
    "priority: high", "set the priority to high"."""
    words = re.escape(field_name.replace("_", " ").casefold())
    x = re.escape(value.casefold())
    return re.compile(rf"\b{x}[\s-]+{words}\b|\b{words}\s*(?:is|of|to|at|as|:|=)?\s*{x}\b")


def _field_enums(package: TaskPackage, collection: str) -> dict[str, list[Any]]:
    service, _, name = collection.partition(".")
    spec = get_service(service, package.service_profile)
    coll = spec.collections.get(name) if spec else None
    return {f: s["enum"] for f, s in (coll.fields.items() if coll else []) if "enum" in s}


# --------------------------------------------------------------------------- findings



def grounding_findings(run: ReferenceRun) -> list[Finding]:
    package = run.package
    shapes = id_shapes(tuple(package.services), package.service_profile)
    write_fields = write_result_fields(run.bound)
    evidence = starting_evidence(package)
    out: list[Finding] = []
    records = {s.index: s for s in run.trajectory.steps}
    said = corrected_request(package)
    stated = set(text_evidence(package.request_and_fact_values(), evidence.today or date.min).numbers)
    for index, step in enumerate(package.reference):
        record = records.get(index)
        if isinstance(step, CallStep) and record is not None and record.args is not None:
            out += _written(run, index, step, record.args, evidence, shapes, said, stated)
        if record is not None:
            observe(evidence, package, record, write_fields.get(record.tool or ""))
    pinned = _pinned(run, said, evidence, shapes, stated)
    if any(f.detail.get("kind") in ("id", "email") for f in pinned):
        known = {str(v).casefold() for state in (package.initial_state, run.trajectory.final_state)
                 for v in leaves(state) if isinstance(v, str)}
        pinned = [f for f in pinned
                  if f.detail.get("kind") not in ("id", "email") or str(f.detail.get("value")).casefold() in known]
    out += pinned
    out += _pinned_in_texts(run, evidence, shapes, stated, {f.check for f in pinned})
    unrequested = _unrequested(run)
    flagged = {(f.step, f.detail.get("argument")) for f in out if f.step is not None}  # one finding per argument
    dropped = {f.step for f in unrequested}  # an unrequested write is that, whatever it writes
    out += [f for f in borrowed_findings(run, said)
            if f.step not in dropped and (f.step, f.detail.get("argument")) not in flagged]
    out += unrequested  # an id or email no record has is a dangling_reference (static.py)
    return out


def _moved_by_a_read_number(run: ReferenceRun, index: int, key: str, value: Any, evidence: Evidence) -> bool:
    """Whether write step ``index`` moves the number ``key`` of the record it updates by a number
    the agent has read (the stock on hand plus the quantity a delivery's email gives): the field's
    value before the step and the difference are both numbers the agent knows."""
    write = next((w for w in run.writes if w.step == index), None)
    if write is None or not isinstance(value, (int, float)):
        return False
    old = run.updated_number(write, key)
    if old is None or old == value:
        return False
    return evidence.knows(float(old)) and evidence.knows(abs(float(value) - float(old)))


def _literal_leaves(value: Any, original: Any, path: str) -> list[tuple[str, Any]]:
    """``(path, leaf)`` for the leaves of a resolved argument that the step wrote literally."""
    if isinstance(original, dict) and ("$ref" in original or "$fact" in original):
        if "$fact" in original and ("prefix" in original or "suffix" in original) and isinstance(value, str):
            return [(path, value)]  # a fact with literal parts: the whole value is checked
        return []
    if isinstance(value, dict) and isinstance(original, dict):
        return [leaf for k, v in value.items() for leaf in _literal_leaves(v, original.get(k), f"{path}.{k}")]
    if isinstance(value, list) and isinstance(original, list) and len(value) == len(original):
        return [leaf for n, (v, o) in enumerate(zip(value, original, strict=True))
                for leaf in _literal_leaves(v, o, f"{path}[{n}]")]
    return [(path, value)]


def _written(run: ReferenceRun, index: int, step: CallStep, resolved: dict[str, Any], evidence: Evidence,
             shapes: tuple[re.Pattern[str], ...], said: str, stated: set[float]) -> list[Finding]:
    """Findings on the literal values write step ``index`` writes (``said``: the package's
    ``corrected_request``; ``stated``: the numbers it and the facts state)."""
    package = run.package
    bound = run.bound.get(step.call)
    if bound is None or bound.op.access != "write":
        return []
    props = bound.tool.parameters.get("properties", {})
    out: list[Finding] = []
    for key, value in resolved.items():
        original = step.args.get(key)
        for path, leaf in _literal_leaves(value, original, key):
            enum = (props.get(key, {}).get("items") or props.get(key, {})).get("enum") or []
            other = _said_enum(said, key, leaf, enum)
            if other is not None:
                agent = rewritten_value(run, index, leaf, other, f"writes {path} = {other!r}, as the request says")
                out.append(Finding(code=Code.UNGROUNDED_VALUE, step=index, detail={"argument": path, "value": leaf},
                                   witness=agent,
                                   message=f"step {index} writes {path}={leaf!r} where the request says {other!r}"))
                continue
            unheard: tuple[str, Witness] | None = None
            borrowed = (_title_words(run, index, resolved, key, leaf)
                        if isinstance(leaf, str) and len(leaf.split()) <= MAX_LABEL_WORDS else frozenset())
            if _unheard_label(key, path, leaf, props.get(key, {}), evidence, borrowed):
                unheard = ("label", _without_label(run, index, key, leaf))
            elif path == key and key not in bound.tool.parameters.get("required", []) \
                    and _unheard_name(leaf, props.get(key, {}), evidence, shapes, borrowed):
                unheard = ("name", _without_argument(run, index, key, leaf))
            if unheard is not None:
                what, agent = unheard
                if agent.holds:
                    out.append(Finding(
                        code=Code.UNGROUNDED_VALUE, step=index, detail={"argument": path, "value": leaf, "kind": what},
                        witness=agent,
                        message=f"step {index} writes the {what} {path}={leaf!r}, which the checks require but the "
                                f"agent cannot learn: "
                                f"{_IN_TITLE if set(_LABEL_WORD.findall(leaf.casefold())) & borrowed else _NOWHERE[False]}"))
                continue
            kind = _missing(package, leaf, evidence, shapes, stated)
            if kind is None or isinstance(leaf, bool) or (kind == LOOSE and _moved_by_a_read_number(run, index, key,
                                                                                                   leaf, evidence)):
                continue
            agent = _guessing_agent(run, index, leaf, f"writes {path} = ", f": nothing it can read gives {leaf!r}")
            if agent.holds:
                out.append(Finding(
                    code=Code.UNGROUNDED_VALUE, step=index, detail={"argument": path, "value": leaf, "kind": kind},
                    witness=agent,
                    message=f"step {index} writes the {kind} {path}={leaf!r}, which the checks require but the agent "
                            f"cannot learn: {_NOWHERE[kind == LOOSE]}"))
    return out


_LABEL_WORD = re.compile(r"[^\W_]+")
MAX_LABEL_WORDS = 3


_DOUBLE_QUOTED = re.compile(r"[\"“]([^\"“”]{3,})[\"”]")
"""A phrase in double quotes, single quotes inside it ("Mobile app: 'Session expired' after login")."""


@lru_cache(maxsize=1024)
def _quoted_phrases(request: str) -> tuple[str, ...]:
    """The phrases of two words or more ``request`` quotes (``quoted_phrases``, and whole ones in
    double quotes that hold a single-quoted phrase)."""
    return tuple(q for q in dict.fromkeys([*quoted_phrases(request), *_DOUBLE_QUOTED.findall(request)])
                 if len(q.split()) >= 2)


def _title_words(run: ReferenceRun, index: int, args: dict[str, Any], key: str, value: str) -> frozenset[str]:
    """The words (folded) of ``value``, written to argument ``key`` of write step ``index``, that
    the request holds only inside a phrase it quotes that the step puts whole into another of its
    arguments (the title it dictates), and that no result the agent read before the step holds:
    words of another text, not a value stated for a field of its own (an article titled "Mobile
    app: 'Session expired' after login" states no category "Mobile"; "tag it dock-3" states the
    tag, whatever the title)."""
    request = run.package.request_and_fact_values()
    phrases = _quoted_phrases(request)
    if not phrases:
        return frozenset()
    written = " ".join(v for k, a in args.items() if k != key for v in leaves(a) if isinstance(v, str)).casefold()
    quotes = [q for q in phrases if q.casefold() in written]
    if not quotes:
        return frozenset()
    rest = request
    for q in sorted(quotes, key=len, reverse=True):  # a quote inside another goes with it
        rest = rest.replace(q, " ")
    if has_word(rest, value):
        return frozenset()
    read = " ".join(v for st in run.trajectory.steps if st.index < index and st.kind == "call"
                    for v in leaves(st.result) if isinstance(v, str))
    return frozenset(w for w in _LABEL_WORD.findall(value.casefold()) if any(has_word(q, w) for q in quotes)
                     and not has_word(rest, w) and not has_word(read, w))


def _unheard_label(key: str, path: str, leaf: Any, prop: dict[str, Any], evidence: Evidence,
                   borrowed: frozenset[str] = frozenset()) -> bool:
    """Whether ``leaf``, an item of a list of free labels (``tags``: an array of strings without an
    enum) written at ``path``, is one no word the agent has seen gives: some word of it (a label
    holds at most ``MAX_LABEL_WORDS``: "year-end") is neither in the request, the user's facts or
    what the agent read, nor in the tool's description of the field; a word of the title the
    request dictates (``borrowed``, ``_title_words``) counts as unheard."""
    if not (isinstance(leaf, str) and path.startswith(f"{key}[") and prop.get("type") == "array"):
        return False
    items = prop.get("items") or {}
    if items.get("type") != "string" or items.get("enum"):
        return False
    words = _LABEL_WORD.findall(leaf.casefold())
    if not words or len(words) > MAX_LABEL_WORDS or (evidence.has_token(leaf.casefold()) and not set(words) <= borrowed):
        return False
    documented = f"{prop.get('description', '')} {items.get('description', '')}".casefold()
    return any((not evidence.has_token(w) or w in borrowed) and w not in documented for w in words)


_NAME = re.compile(r"[A-Z][\w&.'-]*(?:\s+[A-Z&][\w&.'-]*){0,2}")
_HANDLE = re.compile(r"[a-z][a-z0-9]*(?:[-_.][a-z0-9]+){1,3}")
"""A handle of lower-case words joined by "-", "_" or "." (a queue "tier2-escalations", a user
"jae.park"): a name as systems write one."""


def _unheard_name(leaf: Any, prop: dict[str, Any], evidence: Evidence, shapes: tuple[re.Pattern[str], ...],
                  borrowed: frozenset[str] = frozenset()) -> bool:
    """Whether ``leaf``, a string argument without an enum, is a name (one to three capitalized
    words: a supplier "Dockwell"; or a handle, ``_HANDLE``, that is no record id) none of whose
    words the agent has seen: not in the request, the user's facts, what it read, nor the tool's
    description of the field; a word of the title the request dictates (``borrowed``,
    ``_title_words``) counts as unseen."""
    if not isinstance(leaf, str) or prop.get("enum") or prop.get("type") not in (None, "string"):
        return False
    if not (_NAME.fullmatch(leaf) or (_HANDLE.fullmatch(leaf) and not any(s.match(leaf) for s in shapes))):
        return False
    words = _LABEL_WORD.findall(leaf.casefold())
    if evidence.has_token(leaf.casefold()) and not set(words) <= borrowed:
        return False  # seen whole: "hand it to tier2-escalations"
    documented = str(prop.get("description", "")).casefold()
    return all((not evidence.has_token(w) or w in borrowed) and w not in documented for w in words)


def _without_argument(run: ReferenceRun, index: int, key: str, name: str) -> Witness:
    """The correct agent that leaves step ``index``'s optional argument ``key`` out."""
    steps = with_arguments(run, index, {k: v for k, v in run.args[index].items() if k != key})
    return witness(run, "correct", "rewritten_value", f"leaves {key} out: nothing it can read gives {name!r}",
                   run.score, steps)


def _without_label(run: ReferenceRun, index: int, key: str, label: str) -> Witness:
    """The correct agent that writes step ``index``'s list ``key`` without ``label``."""
    args = run.args[index]
    steps = with_arguments(run, index, {**args, key: [v for v in args[key] if v != label]})
    return witness(run, "correct", "rewritten_value", f"writes {key} without {label!r}: nothing it can read gives "
                   f"{label!r}", run.score, steps)


def _guessing_agent(run: ReferenceRun, index: int | None, value: Any, before: str, after: str) -> Witness:
    """The correct agent that writes another value where nothing gives ``value`` (``another_value``:
    a date-time an hour later); where the checks fail it and ``value`` is a morning time, the
    agent an hour earlier when they fail that one too: the guess a reader weighs for a morning
    slot (an hour later may run past noon). Its claim is ``before``, the value it writes, ``after``."""
    other = another_value(value)
    agent = rewritten_value(run, index, value, other, f"{before}{other!r}{after}")
    if agent.holds and (earlier := earlier_in_the_morning(value)) is not None:
        alternative = rewritten_value(run, index, value, earlier, f"{before}{earlier!r}{after}")
        if alternative.holds:
            return alternative
    return agent


_IN_TITLE = ("the request has it only as a word of a text it dictates (a title), and nothing else the agent reads "
             "gives it")
_NOWHERE = {False: "it is not in the request, a revealed fact, an earlier tool result or the tool's schema",
            True: "no words ask for the arithmetic that reaches it from what it reads (a mean of records, two numbers "
                  "no one connects); the rules cannot tell whether a person would, so a reader decides"}


def _pinned(run: ReferenceRun, said: str, evidence: Evidence, shapes: tuple[re.Pattern[str], ...],
            stated: set[float]) -> list[Finding]:
    """``said``: the request and the user's facts, folded; ``stated``: the numbers they state."""
    package = run.package
    out: list[Finding] = []
    for check in package.checks:
        enums = _field_enums(package, check.collection) if isinstance(check, (StateCount, StateMatch, StateUnchanged)) \
            else {}
        for fname, matcher in required_values(check):
            other = _said_enum(said, fname, matcher, enums.get(fname, []))
            if other is not None:
                agent = rewritten_value(run, None, matcher, other, f"writes {fname} = {other!r}, as the request says")
                out.append(Finding(code=Code.UNGROUNDED_VALUE, check=check.id, detail={"value": matcher},
                                   witness=agent,
                                   message=f"check {check.id!r} pins {fname}={matcher!r} where the request says "
                                           f"{other!r}"))
                continue
            for value in _typed_tokens(matcher) if fname == "answer" else values_of(matcher):
                if fname != "answer" and isinstance(value, (int, float)) and numbers_in(package.request.text):
                    continue  # a number that differs from the ones the request states: consistency.py
                kind = _missing(package, value, evidence, shapes, stated)
                if kind is not None:
                    agent = _guessing_agent(run, None, value, "writes ",
                                            f" where the check wants {value!r}: nothing it can read gives that")
                    out.append(Finding(code=Code.UNGROUNDED_VALUE, check=check.id, detail={"value": value, "kind": kind},
                                       witness=agent,
                                       message=f"check {check.id!r} pins the {kind} {value!r}, which the agent cannot "
                                               f"learn: {_NOWHERE[kind == LOOSE]}"))
    return out



def _pinned_in_texts(run: ReferenceRun, evidence: Evidence, shapes: tuple[re.Pattern[str], ...],
                     stated: set[float], flagged: set[str | None]) -> list[Finding]:
    """The numbers and dates a state check's pattern grades inside free text (``is_free_text``) a
    reference write puts in the record it checks (the "£15" of the voucher a draft offers, the
    "21 December" of the visit a reply confirms; ``_graded_in_text``) that nothing the agent reads
    or is told gives (``_missing``; a number any arithmetic over what it read reaches counts as
    given). Witness: a correct agent that writes another one there (one more; a day later), and
    says so in its answer, fails. Where the request states numbers (or dates) or a record read
    holds a number, the rules may have missed the reading or arithmetic that gives it: the
    finding's claim is left to a reader (``detail["unsure"]``). Checks ``flagged`` already
    (``_pinned``) are left alone."""
    package = run.package
    today = date.fromisoformat(package.now[:10])
    out: list[Finding] = []
    seen: set[tuple[int, str, Any]] = set()
    for check in package.checks:
        if not isinstance(check, (StateCount, StateMatch)) or check.id in flagged:
            continue
        for fname, matcher in required_values(check):
            if not (isinstance(matcher, dict) and isinstance(matcher.get("$regex"), str)):
                continue
            pattern = compile_pattern(matcher["$regex"], check.ignore_case)
            for w in run.writes:
                if ".".join(w.bound.collection) != check.collection:
                    continue
                args = run.args.get(w.step, {})
                props = w.bound.tool.parameters.get("properties", {})
                for key, text in args.items():
                    if w.bound.op.field_for(key) != fname or not is_free_text(key, text, props.get(key)):
                        continue
                    for value in _graded_in_text(pattern.matched_parts(text), text, today):
                        kind = (None if evidence.has_number(value) else "number") if isinstance(value, float) \
                            else _missing(package, value, evidence, shapes, stated)  # a reachable number: known here
                        if kind is None or (w.step, key, value) in seen:
                            continue
                        seen.add((w.step, key, value))
                        other = int(value) + 1 if isinstance(value, float) and value.is_integer() else another_value(value)
                        claim = f"writes {other!r} in {key} of step {w.step} where the check wants {value!r}: nothing it " \
                                "can read gives that"
                        steps = said_instead(with_arguments(run, w.step, {**args, key: say_instead(text, value, other)}),
                                             value, other)
                        agent = witness(run, "correct", "rewritten_value", claim, run.score, steps)
                        if not agent.holds:
                            continue
                        unsure = _rules_unsure(run, value, stated, today)
                        out.append(Finding(
                            code=Code.UNGROUNDED_VALUE, check=check.id, step=w.step, witness=agent,
                            detail={"argument": key, "value": value, "kind": kind, **({"unsure": unsure} if unsure else {})},
                            message=f"check {check.id!r} wants the {kind} {value!r} in the {key} step {w.step} writes, "
                                    f"which the agent cannot learn: {_NOWHERE[False]}"))
    return out


def _graded_in_text(parts: list[str], text: str, today: date) -> list[Any]:
    """The numbers (as floats) and dates (ISO) written inside ``parts`` of ``text`` (what a pattern
    matches of it), read in the whole text: the "18" a pattern matches of "Friday 18 December" is
    the date, not a number. Each once, numbers first."""
    if not any(numbers_in(part) or dates_in(part, today) for part in parts):
        return []  # nothing to read (the whole text is read only for a part that writes a value)
    spans = [(a, a + len(part)) for part in parts if part and (a := text.find(part)) >= 0]
    dates = [m for m in dates_in(text, today) if m.kind == "date"]

    def graded(start: int, end: int) -> bool:
        return any(a < end and start < b for a, b in spans)
    numbers = [m.value for m in numbers_in(text) if m.kind != "word" and graded(m.start, m.end)
               and not any(d.start <= m.start < d.end for d in dates)]
    return list(dict.fromkeys([*numbers, *(d.value for d in dates if graded(d.start, d.end))]))


def _rules_unsure(run: ReferenceRun, value: Any, stated: set[float], today: date) -> str:
    """Why the rules cannot settle that ``value``, graded inside a text, comes from nowhere ("" when
    they can): the request states numbers (for a number: or a record read holds one), or dates (for
    a date), which it may give by a reading or arithmetic the rules do not do."""
    if isinstance(value, float):
        if stated or any(isinstance(v, (int, float)) and not isinstance(v, bool)
                         for records in run.read_lists for r in records for v in r.values()):
            return (f"the rules find {value:g} nowhere, but the request or the records read hold numbers from which "
                    "a calculation they do not follow may give it")
        return ""
    if dates_in(run.said, today) or windows_in(run.said, today):
        return f"the rules find {value} nowhere, but the request states dates it may give by a reading they miss"
    return ""


def _typed_tokens(text: str) -> list[Any]:
    """The typed values inside an answer value: emails, ISO dates and times, numbers."""
    out: list[Any] = EMAIL.findall(text)
    out += [m.group(0) for m in ISO_DATE.finditer(text)]
    out += [float(m.value) for m in numbers_in(text) if m.kind != "word"]
    return out


def _unrequested(run: ReferenceRun) -> list[Finding]:
    """Writes of an operation the request names by none of its intents, in a package whose request
    does name another of its write operations, and whose removal lowers the score."""
    package = run.package
    said = run.said.casefold()
    done = run.writes

    named: dict[str, bool] = {}  # endpoint → whether the request names the operation

    def requested(op: OperationSpec) -> bool:
        if op.endpoint not in named:
            named[op.endpoint] = not op.intents or _intent_regex(tuple(op.intents)).search(said) is not None
        return named[op.endpoint]

    unnamed = _unnamed_targets(package, done, said)
    if not unnamed and (all(not requested(w.bound.op) for w in done) or all(requested(w.bound.op) for w in done)):
        return []
    out: list[Finding] = []
    steps = dict(enumerate(package.reference))
    for w in done:
        if requested(w.bound.op) and w.step not in unnamed:
            continue
        dropped = dependents(package, w.step)
        kept = {k: v for k, v in steps.items() if k not in dropped}
        ids = sorted(kept)
        s = run.variant_score(ids, [kept[i] for i in ids])
        if s < run.score:
            agent = witness(run, "correct", "skip_unrequested", f"does what the request asks, without the "
                            f"{w.bound.tool.name} call of step {w.step}", run.score, kept)
            out.append(Finding(code=Code.UNREQUESTED_WRITE, step=w.step, detail={"tool": w.bound.tool.name, "score": s},
                               witness=agent,
                               message=f"step {w.step} ({w.bound.tool.name}) does what the request never asks for "
                                       f"({unnamed[w.step] if w.step in unnamed else 'none of ' + ', '.join(w.bound.op.intents[:6]) + '…'})"
                                       f", yet dropping it lowers the score to {s:.3f}: the checks reward an "
                                       "unrequested action"))
    return out


@lru_cache(maxsize=1024)
def _intent_regex(intents: tuple[str, ...]) -> re.Pattern[str]:
    """Finds, in a folded text, a word that begins one of ``intents`` (``intent_pattern``)."""
    return re.compile(rf"\b(?:{intent_pattern(list(intents))})")


def _unnamed_targets(package: TaskPackage, done: list[Write], said: str) -> dict[int, str]:
    """Writes of one tool aimed at several records, where the request names one record well (two
    words of its name or more, and at least half of them) and this one's target hardly (less than
    half its words, and less than half the share of that one):
    "reorder the M8 hex bolts" does not ask for an order of M8 flat washers; and updates or deletes
    of one tool where the request names some of their records by id ("close TKT-021 and TKT-024")
    and not this one's (TKT-026). By step, with what it names. A request that asks for a set ("on
    every open ticket about the outage", "all of them", "each") names none of its members and has
    none."""
    if _A_SET.search(said):
        return {}
    said_words = _name_words(said)
    by_tool: dict[str, list[tuple[Write, str, float, int]]] = {}
    for w in done:
        for name in _targets(package, w):
            words = _name_words(name)
            shared = len(words) if name.casefold() in said else len(words & said_words)
            by_tool.setdefault(w.bound.tool.name, []).append((w, name, shared / max(len(words), 1), shared))
    out: dict[int, str] = {}
    for aimed in by_tool.values():
        best, named, shared = max(((o, name, n) for _, name, o, n in aimed), default=(0.0, "", 0))
        if best >= 0.5 and shared >= 2 and len({name for _, name, _, _ in aimed}) > 1:
            out |= {w.step: f"aimed at {name!r}, which the request does not name" for w, name, o, _ in aimed
                    if o * 2 < best and o < 0.5}
    by_id: dict[str, list[tuple[Write, str]]] = {}  # "close TKT-021 and TKT-024": the records it names by id
    for w in done:
        if w.bound.op.effect in ("update", "delete") and isinstance(w.record_id, str) and _CODE_ID.fullmatch(w.record_id):
            by_id.setdefault(w.bound.tool.name, []).append((w, w.record_id))
    for aimed_at in by_id.values():
        if any(has_word(said, rid) for _, rid in aimed_at):
            out |= {w.step: f"aimed at {rid}, which the request does not name" for w, rid in aimed_at
                    if not has_word(said, rid) and w.step not in out}
    return out


_CODE_ID = re.compile(r"[A-Za-z]{2,6}-?\d{2,}")
"""An id written as a code ("TKT-021", "INV2041"): one a request names records by."""


_FUNCTION_WORDS = frozenset({"the", "and", "for", "with", "from", "our", "your", "this", "that", "into", "onto"})
_A_SET = re.compile(r"\b(?:every|each|all)\b", re.IGNORECASE)


def _name_words(text: str) -> set[str]:
    """The words of a name, roughly stemmed ("bolts" and "bolt" alike), with model codes ("M8")."""
    return {t.rstrip("s")[:6] for t in re.findall(r"[a-z0-9]+", text.casefold())
            if (len(t) >= 3 or any(c.isdigit() for c in t)) and t not in _FUNCTION_WORDS}


def _targets(package: TaskPackage, w: Write) -> list[str]:
    """The names (or titles, subjects) of the records a write aims at: the record it changes, and
    the records its arguments refer to."""
    ids: list[tuple[str, Any]] = []
    if w.bound.op.effect in ("update", "delete"):
        ids.append((".".join(w.bound.collection), w.record_id))
    for param, target in w.bound.op.refs.items():
        value = (w.record or {}).get(w.bound.op.field_for(param))
        ids.append((".".join(target.split(".")[:2]), value))
    out = []
    for collection, value in ids:
        service, _, name = collection.partition(".")
        for record in package.initial_state.get(service, {}).get(name, []):
            if value is not None and record.get("id") == value:
                out += [str(record[k]) for k in ("name", "title", "subject") if record.get(k)][:1]
    return out

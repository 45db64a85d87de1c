"""Equivalence tests of the graders: correct agents that act differently from the reference must
keep its full score. Raises ``grader_overconstrained``.

A reward that punishes correct behaviour is as wrong as one that pays for doing nothing. Each
variant below is the reference done another correct way; it must score what the reference scores.

| variant | the correct agent |
|---|---|
| ``reorder`` | makes its earliest write that no later step depends on after its last write, with the other independent writes of that tool (the deletes after the updates; unless the request dictates a sequence; no injected fault in play) |
| ``extra_reads`` | before its first write, repeats the reference's first read and calls every offered list that needs no argument; repeats that read before its answer |
| ``text_case`` | writes free text with its first letter's case swapped, a full stop added or dropped at the end, and a final line break in bodies |
| ``text_decorated`` | wraps free text in a greeting and a sign-off (bodies, notes) or title-cases it (titles); writes a person named in a text field with the company beside it ("Ines Duarte (Brightline Aerospace)") |
| ``rephrased_question`` | asks each question another way, from a fixed bank (`questions.py`) |
| ``other_choice`` | writes another value the request allows (a day in its window, a working day when the reference's is one; a time leaving room for the event's duration before "finished by 5pm"; the other of "high or urgent") |
| ``own_name`` | names a record it creates (``name``, ``label``, ``slug`` …) that nothing names for it another way: a handle's words spaced and capitalized, words as a handle |
| ``answer_dates`` | where the answer is the work (no write): writes each date of its final answer another common way: every one as an ISO day ("2026-12-09"), or every one as day and month name ("9 December 2026") |
| ``answer_order`` | names the items an ``answer_matches`` check chains (``zephyr.*brookline.*amberlight``), listed in its final answer, in reverse order: each item with the rest of its list entry ("Zephyr (tkt-201)"), unless the request may give an order (words such as "order", "oldest", "highest", "sorted", "top", "first") |
| ``text_order`` | lists the items a state check's pattern chains inside a text it writes (a note's "Anouk.*Teodor.*Wilhelmina"), one after another or a bulleted line each, in the order a text it read gives them, else reversed; unless the request may give an order (as ``answer_order``) or dictates the text |
| ``permuted_list`` | writes a list of people or labels (attendees, recipients, copies, tags; any list of addresses, or of records of the state by id or name: participants, members, the transactions of a report) in reverse order, unless the request gives an order ("in this order", "ranked", "first ... then") |

Only text the agent composes varies: ids, emails, phone numbers, dates, amounts and enum values stay
exact, and so do phrases the request quotes and names taken whole from a record of the state.

The phrasing bank is ``questions.py``'s.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from functools import partial
from typing import Any, cast

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import strings
from pipeline.core.outcomes import Finding
from pipeline.core.package import AnswerStep, AskStep, CallStep, Step, TaskPackage, state_strings
from pipeline.core.patterns import group_end, scan
from pipeline.core.references import iter_refs, parse_ref
from pipeline.core.text_values import (
    EMAIL,
    WEB_ADDRESS,
    allowed_ranges,
    dates_in,
    has_word,
    numbers_in,
    range_of,
)
from pipeline.verify.check_values import required_values
from pipeline.verify.effects import Write, records_of
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.perturbations import inside, is_date_time, is_free_text, other_starts
from pipeline.verify.questions import OPEN_QUESTION, phrasings
from pipeline.verify.witness import said_instead, witness

_BODY_FIELDS = ("body", "message", "description", "notes", "content", "text", "comment", "summary")


def equivalence_findings(run: ReferenceRun) -> list[Finding]:
    if run.score < 1.0:
        return []  # measured against a reference that passes
    steps: dict[int, Step] = dict(enumerate(run.package.reference))
    done = run.writes
    out: list[Finding] = []
    texts = _texts(run, done)  # the texts the reference composes: two variants rewrite them
    for variant, describe in ((_reordered, "doing independent writes in another order"),
                              (_extra_reads, "reading more than the reference does"),
                              (partial(_text_case, texts=texts), "writing free text with other case, spacing or "
                                                                 "punctuation"),
                              (partial(_decorated, texts=texts), "wording free text around what the request "
                                                                 "dictates"),
                              (_rephrased, "asking the user in other words"),
                              (_other_choice, "choosing another value the request allows"),
                              (_own_name, "naming what it makes its own way"),
                              (_permuted_lists, "listing people or labels in another order"),
                              (_answer_order, "listing what its answer names in another order"),
                              (_text_order, "listing what a text it writes names in another order"),
                              (_answer_dates, "writing the dates of its answer another common way")):
        for name, mutated, order, detail in variant(run, steps, done):
            s = run.variant_score(order, [mutated[i] for i in order])
            if s < run.score:
                agent = witness(run, "correct", name, f"does the task correctly, {describe}{_say(detail)}", run.score,
                                mutated, order)
                out.append(Finding(code=Code.GRADER_OVERCONSTRAINED, detail={"variant": name, "score": s, **detail},
                                   witness=agent,
                                   message=f"{describe} ({name}{_say(detail)}) scores {s:.3f}, not {run.score:.3f}: "
                                           "the checks punish a correct agent"))
                break
    return out


def _say(detail: dict[str, Any]) -> str:
    return "".join(f", {k} {v!r}" for k, v in detail.items() if k in ("question", "argument"))


Variant = tuple[str, dict[int, Step], list[int], dict[str, Any]]


def _refs(step: Step) -> set[int]:
    if not isinstance(step, CallStep):
        return set()
    return {int(parse_ref(r["$ref"])[1]) for r in iter_refs(step.args) if "$ref" in r}


_SEQUENCE = re.compile(r"\b(then|afterwards|after that|once (?:that|this|it)(?:'s| is) done|followed by|"
                       r"before (?:you|doing|sending|creating|updating|closing|replying|booking))\b", re.I)


def _reordered(run: ReferenceRun, steps: dict[int, Step], done: list[Write]) -> list[Variant]:
    """The earliest write no later step depends on, made after the last write instead, with the
    other writes of its tool that no later step depends on (the deletes made after the updates,
    not only the first of them); none when the request dictates a sequence ("then", "after that",
    "once that's done", "before you ...")."""
    if _SEQUENCE.search(run.package.request.text):
        return []
    faulty = {f.tool for f in run.package.faults}
    ids = sorted(steps)
    written = [i for i in ids if i in {w.step for w in done}]

    def movable(i: int) -> bool:
        step = steps[i]
        if not isinstance(step, CallStep) or step.call in faulty or step.expect_status is not None:
            return False
        needs = {i}
        for j in ids[ids.index(i) + 1:]:  # every later step that uses i's result, directly or not
            if _refs(steps[j]) & needs:
                needs.add(j)
        return len(needs) == 1

    for i in written[:-1]:
        if not movable(i):
            continue
        call = cast(CallStep, steps[i]).call
        moved = [j for j in written if j == i or (j > i and cast(CallStep, steps[j]).call == call and movable(j))]
        if moved[-1] == written[-1] or len(moved) == 1:
            moved = [i]  # its tool's writes end the run already: the one write moves
        order = [j for j in ids if j not in moved]
        last = max(j for j in written if j not in moved)
        at = order.index(last) + 1
        order[at:at] = moved
        return [("reorder", steps, order, {"moved": moved[0] if len(moved) == 1 else moved})]
    return []


def _extra_reads(run: ReferenceRun, steps: dict[int, Step], done: list[Write]) -> list[Variant]:
    """Before the first write: the reference's first read once more, and every offered list that
    needs no argument; before the answer: that read again."""
    package = run.package
    faulty = {f.tool for f in package.faults}
    bound = run.bound
    again = [CallStep.model_construct(call=s.tool, args=dict(s.args or {})) for s in run.trajectory.steps
             if s.kind == "call" and s.status and 200 <= s.status < 300 and s.tool in bound
             and bound[s.tool].op.access == "read" and s.tool not in faulty][:1]
    lists = [CallStep.model_construct(call=name, args={}) for name, b in bound.items() if b.op.effect == "list"
             and name not in faulty and not b.tool.parameters.get("required")]
    reads = again + lists
    if not reads:
        return []
    ids = sorted(steps)
    first_write = min((w.step for w in done), default=None)
    new = list(range(max(ids) + 1, max(ids) + 2 + len(reads)))
    mutated = {**steps, **dict(zip(new, [*reads, reads[0]], strict=True))}
    at = ids.index(first_write) if first_write is not None else 0
    body = ids[:at] + new[:-1] + ids[at:]
    cut = next((n for n, i in enumerate(body) if isinstance(mutated[i], AnswerStep)), len(body))
    return [("extra_reads", mutated, body[:cut] + [new[-1]] + body[cut:], {"tools": [r.call for r in reads]})]


Text = tuple[Write, CallStep, str, str]


def _texts(run: ReferenceRun, done: list[Write]) -> list[Text]:
    """``(write, its step, argument, value)`` for each text the reference composes
    (``perturbations.ComposedText``), written literally."""
    composed = run.composed
    out = []
    for w in done:
        step = run.package.reference[w.step]
        if not isinstance(step, CallStep) or w.bound.op.effect not in ("create", "update"):
            continue
        props = w.bound.tool.parameters.get("properties", {})
        out += [(w, step, key, value) for key, value in step.args.items() if composed(key, value, props.get(key))]
    return out


def _replace(steps: dict[int, Step], edits: dict[int, dict[str, str]]) -> dict[int, Step]:
    out = dict(steps)
    for i, args in edits.items():
        step = steps[i]
        assert isinstance(step, CallStep)
        out[i] = CallStep.model_construct(call=step.call, args={**step.args, **args}, expect_status=step.expect_status)
    return out


def _text_case(run: ReferenceRun, steps: dict[int, Step], done: list[Write], texts: list[Text]) -> list[Variant]:
    edits: dict[int, dict[str, str]] = {}
    for w, _, key, value in texts:
        kept, value = _kept_and_added(run, w, key, value)
        stripped = value.rstrip(".!")
        final = "" if stripped != value else "."  # drop the final punctuation, or add a full stop
        trailing = "\n" if _is_body(key) else ""
        first = next((n for n, c in enumerate(stripped) if c.isalpha()), 0)
        edits.setdefault(w.step, {})[key] = (kept + stripped[:first] + stripped[first:first + 1].swapcase()
                                             + stripped[first + 1:] + final + trailing)
    return [("text_case", _replace(steps, edits), sorted(steps), {})] if edits else []


def _kept_and_added(run: ReferenceRun, w: Write, key: str, value: str) -> tuple[str, str]:
    """``value`` split into the text an update keeps (what the field held before, where ``value``
    begins with it: "keeping what's already written there") and the text it adds; the kept part
    is "" for a create or a text written anew. The agent writes the added part its own way; the
    kept part is the record's, as it was."""
    old = run.updated_value(w, w.bound.op.field_for(key))
    if isinstance(old, str) and old.strip() and value.startswith(old) and len(value) > len(old):
        return old, value[len(old):]
    return "", value


def _is_body(key: str) -> bool:
    return key in _BODY_FIELDS or key.endswith(_BODY_FIELDS)


def title_cased(text: str) -> str:
    """``text`` with each word's first letter capitalised, as a person title-cases a heading: the
    other letters of a word lowered, but a word that holds a digit or a capital past its first
    letter (an id such as "INC-20931", "SKU-4", a name such as "McKay", "iPhone") kept as written,
    and so is a web address (its path is case-sensitive: "/reset" is not "/Reset")."""
    kept = [(m.start(), m.end()) for m in WEB_ADDRESS.finditer(text)] if "://" in text else []
    if kept:
        cuts = [0, *(n for span in kept for n in span), len(text)]
        parts = zip(cuts, cuts[1:], strict=False)  # the text around each address, then the address, in turn
        return "".join(text[a:b] if n % 2 else title_cased(text[a:b]) for n, (a, b) in enumerate(parts))
    return _WORD.sub(lambda m: m.group(0) if _KEEPS_CASE.search(m.group(0)) else
                     _PART_START.sub(lambda c: c.group(0).upper(), m.group(0).lower()), text)


_WORD = re.compile(r"[\w'’-]+")
_PART_START = re.compile(r"(?<![\w'’])[^\W\d_]")
"""The first letter of a word and of each part after a hyphen ("Post-Mortem"), not after an
apostrophe ("Don't")."""


_KEEPS_CASE = re.compile(r"\d|.[A-Z]|^[a-z]+[A-Z]")


def _decorated(run: ReferenceRun, steps: dict[int, Step], done: list[Write], texts: list[Text]) -> list[Variant]:
    edits: dict[int, dict[str, str]] = {}
    for w, _, key, value in texts:
        kept, value = _kept_and_added(run, w, key, value)
        if _is_body(key):
            edits.setdefault(w.step, {})[key] = f"{kept} Kind regards, {value}" if kept else f"Hello, {value} Kind regards."
        else:
            edits.setdefault(w.step, {})[key] = kept + title_cased(value.rstrip("."))
    companies = _companies(run.package)
    for w in done:  # a person written by name, with the company beside it: "Ines Duarte (Brightline)"
        step = run.package.reference[w.step]
        if isinstance(step, CallStep) and w.bound.op.effect in ("create", "update"):
            for key, value in step.args.items():
                if isinstance(value, str) and value in companies and key not in edits.get(w.step, {}):
                    edits.setdefault(w.step, {})[key] = f"{value} ({companies[value]})"
    return [("text_decorated", _replace(steps, edits), sorted(steps), {})] if edits else []


def _companies(package: TaskPackage) -> dict[str, str]:
    """Each person's name in the initial state → their company (records with both fields)."""
    return {r["name"]: r["company"] for collections in package.initial_state.values() for rows in collections.values()
            for r in rows if isinstance(r.get("name"), str) and isinstance(r.get("company"), str) and r["company"]
            and len(r["name"].split()) >= 2 and not _same_name(r["name"], r["company"])}


def _same_name(a: str, b: str) -> bool:
    """Whether one name holds the other, case and spacing aside ("Northwind Traders" and
    "Northwind Traders Ltd"): the record names the company itself, nothing to write beside it."""
    x, y = " ".join(a.casefold().split()), " ".join(b.casefold().split())
    return x in y or y in x


def _rephrased(run: ReferenceRun, steps: dict[int, Step], done: list[Write]) -> list[Variant]:
    """Each question that revealed facts in the reference, replaced by the open question, and for
    each fact F it revealed, by each phrasing of F followed by the first phrasing of every other
    fact it revealed (F untested when one of those has no phrasing: the original question would
    reveal F again)."""
    out: list[Variant] = []
    new = max(steps) + 1
    for record in run.trajectory.steps:
        if record.kind != "ask" or not record.revealed:
            continue
        asked = [[OPEN_QUESTION]]
        if (question := record.ask) and (other_spelling := respelled(question)) != question:
            asked.append([other_spelling])
        facts = list(dict.fromkeys(record.revealed))
        for key in facts:
            others = [phrasings(run.package, other)[:1] for other in facts if other != key]
            if all(others):
                asked += [[question, *(o[0] for o in others)] for question in phrasings(run.package, key)]
        for questions in asked:
            extra = {new + n: AskStep(ask=q) for n, q in enumerate(questions[1:])}
            mutated: dict[int, Step] = {**steps, record.index: AskStep(ask=questions[0]), **extra}
            order = sorted(steps)
            at = order.index(record.index) + 1
            out.append(("rephrased_question", mutated, order[:at] + list(extra) + order[at:],
                        {"question": " / ".join(questions)}))
    return out


_SPELLINGS = (("centre", "center"), ("metre", "meter"), ("litre", "liter"), ("theatre", "theater"),
              ("colour", "color"), ("favour", "favor"), ("labour", "labor"), ("honour", "honor"),
              ("behaviour", "behavior"), ("neighbour", "neighbor"), ("catalogue", "catalog"),
              ("programme", "program"), ("cheque", "check"), ("licence", "license"), ("defence", "defense"),
              ("cancelled", "canceled"), ("cancelling", "canceling"), ("travelled", "traveled"),
              ("organis", "organiz"), ("prioritis", "prioritiz"), ("authoris", "authoriz"), ("finalis", "finaliz"),
              ("recognis", "recogniz"), ("summaris", "summariz"), ("apologis", "apologiz"), ("analys", "analyz"))
"""British and American spellings of the same words (stems where endings follow: "organis" covers
"organise", "organised", "organisation")."""
_SPELLING = re.compile(r"\b(" + "|".join(w for pair in _SPELLINGS for w in pair) + r")", re.IGNORECASE)
_OTHER_SPELLING = {a: b for pair in _SPELLINGS for a, b in (pair, pair[::-1])}


def respelled(text: str) -> str:
    """``text`` with each word spelled the other English way ("Which cost centre?" -> "Which cost
    center?", "organize" -> "organise"); the same text when it has none of those words. A user
    who reveals a fact when asked "cost centre" must reveal it for "cost center" too."""
    def other(m: re.Match[str]) -> str:
        said = m.group(1)
        swapped = _OTHER_SPELLING[said.casefold()]
        return swapped.capitalize() if said[0].isupper() else swapped
    return _SPELLING.sub(other, text)


_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")


_WRITTEN_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$|\b(?:" + "|".join(m[:3] for m in _MONTH_NAMES) + ")", re.IGNORECASE)
"""A date written as an ISO day or with its month's name (not "today", "Friday", "the 9th")."""


def _answer_dates(run: ReferenceRun, steps: dict[int, Step], done: list[Write]) -> list[Variant]:
    """For a package whose work is its answer (the reference writes nothing), the final answer
    with every date it writes as an ISO day or with a month name (weekdays, "today", "the 9th"
    stay as they are) rewritten: once all as ISO days, once all as "9 December 2026". A variant
    that changes nothing is not tried."""
    last = max((i for i, s in steps.items() if isinstance(s, AnswerStep)), default=None)
    if last is None or done:
        return []  # where the agent writes, the answer is its report on the work, not the work
    said = steps[last]
    assert isinstance(said, AnswerStep)
    today = date.fromisoformat(run.package.now[:10])
    mentions, end = [], -1
    for m in sorted(dates_in(said.answer, today), key=lambda m: (m.start, -m.end)):
        if m.start >= end and _WRITTEN_DATE.search(m.text):
            mentions.append(m)
            end = m.end
    out: list[Variant] = []
    for name, form in (("iso", lambda d: d.isoformat()),
                       ("day_month", lambda d: f"{d.day} {_MONTH_NAMES[d.month - 1]} {d.year}")):
        text = said.answer
        for m in reversed(mentions):
            text = text[:m.start] + form(date.fromisoformat(m.value)) + text[m.end:]
        if text != said.answer:
            out.append(("answer_dates", {**steps, last: AnswerStep(answer=text)}, sorted(steps), {"dates": name}))
    return out


_ENDS_BY = re.compile(r"\b(?:finish(?:ed)?|done|over|end(?:s|ed)?|wrap(?:ped)?\s+up)\s+by\b", re.IGNORECASE)
_STARTS = re.compile(r"\b(?:start(?:s|ing)?|begin(?:s|ning)?)\b", re.IGNORECASE)
"""Words that bound when something ends ("finished by 5pm", "as long as we're done by 5"): a time
chosen inside such a range leaves room for the event's duration, and so does any range that does
not say it bounds the start ("any time between 10:00 and 13:00"); a range of start times ("any
start between 08:00 and 10:30") does not."""


def _other_choice(run: ReferenceRun, steps: dict[int, Step], done: list[Write]) -> list[Variant]:
    """For each value a write takes from a range the request leaves open ("any weekday next week",
    "between 08:00 and 10:30", "40 to 60 rolls"), from a choice it offers ("high or urgent,
    whichever fits"), or from a move it does not measure ("raise it a bit", with no number said:
    ``_less_moved``), the same work with another value the request allows (``inside``), the
    answer saying it; an event's end moves with its start (the same length, on the new day). A
    range that holds the field's value before an update too selects the records the request acts
    on ("move every walk from Monday 14 to Friday 18 December one hour later"): it offers no choice."""
    package = run.package
    ranges = allowed_ranges(run.said, date.fromisoformat(package.now[:10]))
    ends_by = _ENDS_BY.search(run.said) is not None or _STARTS.search(run.said) is None  # "any time between 10 and 1"
    nudged = bool(_NUDGE.search(run.said)) and not _states_a_number(run.said)
    raised = bool(_RAISED.search(run.said)) and not any(has_word(run.said, w) for rung in _PRIORITIES for w in rung)
    out: list[Variant] = []
    for w in done:
        step = package.reference[w.step]
        if not isinstance(step, CallStep):
            continue
        props = w.bound.tool.parameters.get("properties", {})
        args = run.args.get(w.step, {})
        end_key = next((k for k in _ENDS_AT if _is_moment(args.get(k))), None)
        start_key = next((k for k in _STARTS_AT if _is_moment(args.get(k))), None)
        for key, value in args.items():
            original = step.args.get(key)
            if isinstance(original, dict) or isinstance(value, (bool, dict, list)):
                continue  # a $ref or $fact: the value is observed or told, not chosen
            if key == end_key and start_key is not None:
                continue  # an event's end moves with its start
            other = _offered(run.said, value, props.get(key, {}).get("enum") or [])
            held = range_of(value, ranges, flexible_only=True)
            if held is not None and w.bound.op.effect == "update" \
                    and range_of(run.updated_value(w, w.bound.op.field_for(key)), ranges, flexible_only=True) == held:
                held = None  # the range selects the records by this field ("every walk from the 14th to the 18th")
            if other is None and nudged:
                other = _less_moved(run, w, key, value)
            if other is None and raised:
                other = _one_step_up(run, w, key, value)
            paired = end_key if key == start_key else None  # the end that moves with this start
            if other is None and held is not None:
                minutes = args.get("duration_minutes")
                if paired:
                    minutes = _minutes_between(value, args[paired])
                lasting = minutes if ends_by and isinstance(minutes, int) and not isinstance(minutes, bool) else None
                other = inside(value, held, lasting)
                if other is not None and isinstance(minutes, int) and _clashes(run, w, other, minutes):
                    other = next((o for o in other_starts(value, held, minutes) if not _clashes(run, w, o, minutes)), None)
            if other is None or other == value:
                continue
            changed = {key: other}
            if paired and _is_moment(other):
                changed[paired] = _moved(args[paired], value, other)
            mutated = said_instead({**steps, w.step: CallStep.model_construct(
                call=step.call, args={**args, **changed}, expect_status=step.expect_status)},
                value, other)
            out.append(("other_choice", mutated, sorted(mutated), {"argument": key, "value": other}))
    return out[:MAX_CHOICES]


MAX_CHOICES = 6


_NAMING_KEYS = frozenset({"name", "label", "slug", "display_name", "job_name", "list_name", "channel_name"})
_PARTS = re.compile(r"[A-Za-z0-9]+")


def _own_name(run: ReferenceRun, steps: dict[int, Step], done: list[Write]) -> list[Variant]:
    """For the name a created record gets (``name``, ``label``, ``slug`` …, a required string
    that is no free text) where nothing gives it (the request and the user's facts never write it,
    no record holds it), the same work with the name written another way: a handle's words spaced
    and capitalized ("pos-sales-export-weekday" as "Pos Sales Export Weekday"), words as a handle.
    The agent names what it makes: a check pinning one spelling punishes another correct one."""
    package = run.package
    said = run.said.casefold()
    held: set[str] | None = None  # the state's strings, folded: read once a name needs them
    out: list[Variant] = []
    for w in done:
        step = package.reference[w.step]
        if not isinstance(step, CallStep) or w.bound.op.effect != "create":
            continue
        props = w.bound.tool.parameters.get("properties", {})
        args = run.args.get(w.step, {})
        for key, value in args.items():
            if key not in _NAMING_KEYS or not isinstance(value, str) or not isinstance(step.args.get(key), str) \
                    or is_free_text(key, value, props.get(key)) or (props.get(key) or {}).get("enum"):
                continue
            parts = _PARTS.findall(value)
            if len(parts) < 2 or value.casefold() in said or EMAIL.search(value) or any(p.isdigit() for p in parts):
                continue  # one word, dictated, an address or numbered: not the agent's own spelling
            held = {v.casefold() for v in state_strings(package)} if held is None else held
            if value.casefold() in held:
                continue  # a name a record holds: read, not made up
            other = " ".join(p.capitalize() for p in parts) if value != " ".join(parts) else "-".join(parts).lower()
            if other == value:
                continue
            mutated = said_instead({**steps, w.step: CallStep.model_construct(
                call=step.call, args={**step.args, key: other}, expect_status=step.expect_status)}, value, other)
            out.append(("own_name", mutated, sorted(mutated), {"argument": key, "value": other}))
    return out[:MAX_CHOICES]


_STARTS_AT = ("start", "start_time", "starts_at")
_ENDS_AT = ("end", "end_time", "ends_at")


def _is_moment(value: Any) -> bool:
    return isinstance(value, str) and is_date_time(value)


def _minutes_between(start: str, end: str) -> int:
    return int((datetime.fromisoformat(end[:16]) - datetime.fromisoformat(start[:16])).total_seconds() // 60)


def _moved(end: str, start: str, other: str) -> str:
    """``end`` moved as far as ``start`` moved to ``other``, written as ``end`` was."""
    delta = datetime.fromisoformat(other[:16]) - datetime.fromisoformat(start[:16])
    return (datetime.fromisoformat(end[:16]) + delta).isoformat()[:16] + end[16:]


def _clashes(run: ReferenceRun, w: Write, start: Any, minutes: int) -> bool:
    """Whether something from ``start`` (an ISO date-time) lasting ``minutes`` overlaps a record
    of the collection write ``w`` makes (by its start, and its duration or end): a careful agent
    books another slot the request allows only where the calendar is free."""
    if not isinstance(start, str) or len(start) < 16 or start[10] != "T":
        return False
    begin = datetime.fromisoformat(start[:16])
    end = begin + timedelta(minutes=minutes)
    for r in records_of(run.package.initial_state, w.bound.collection):
        at = next((r[k] for k in _STARTS_AT if isinstance(r.get(k), str) and len(r[k]) >= 16), None)
        if at is None or at[10] != "T":
            continue
        other = datetime.fromisoformat(at[:16])
        until = next((r[k] for k in _ENDS_AT if isinstance(r.get(k), str) and len(r[k]) >= 16), None)
        length = r.get("duration_minutes")
        finish = datetime.fromisoformat(until[:16]) if until and until[10] == "T" else \
            other + timedelta(minutes=length if isinstance(length, int) else 0)
        if other < end and begin < finish:
            return True
    return False


_NUDGE = re.compile(r"\b(?:a\s+(?:bit|little|touch|tad|smidge)|slightly|somewhat|marginally)\b", re.IGNORECASE)
"""Words by which a request moves a number without saying how far: "raise its reorder level a bit"."""


def _states_a_number(said: str) -> bool:
    return any(m.kind in ("number", "money", "percent") for m in numbers_in(said))


def _less_moved(run: ReferenceRun, w: Write, key: str, value: Any) -> Any:
    """Where the request moves a number without saying how far ("raise it a bit") and the write
    updates field ``key`` of a record from ``old`` to ``value``: a value moved the same way, half
    as far (a whole number for a whole number; None when that is ``old`` or ``value``)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    old = run.updated_number(w, key)
    if old is None or old == value:
        return None
    half = old + (value - old) / 2
    other = round(half) if isinstance(value, int) and isinstance(old, int) else round(half, 2)
    return other if other not in (old, value) else None
_CHOICE = re.compile(r"\b(?:whichever|either|any|you pick|you choose|up to you|your call|fits|suits|is fine|works)\b",
                     re.IGNORECASE)


_PRIORITIES = (("lowest",), ("low",), ("normal", "medium"), ("high",), ("urgent", "critical"), ("highest",))
"""The rungs of a priority, lowest first (the words of one rung are the same level)."""
_RAISED = re.compile(r"\b(?:(?:bump|rais|increas|lift|push|escalat)\w*|up)\b[^.;!?]{0,30}\bpriority\b"
                     r"|\bpriority\b[^.;!?]{0,20}\b(?:up|higher|raised)\b|\bhigher\s+priority\b", re.IGNORECASE)
"""A request that raises a priority without naming the level: "bump its priority up"."""


def _rung(value: Any) -> int | None:
    return next((n for n, rung in enumerate(_PRIORITIES) if isinstance(value, str) and value.casefold() in rung), None)


def _one_step_up(run: ReferenceRun, w: Write, key: str, value: Any) -> Any:
    """Where the request raises a priority without naming the level ("bump its priority up") and
    the update moves it more than one rung (medium to critical): the rung just above the old one,
    in the words the tool's enum, else the state, writes it ("high"). None otherwise: one rung up
    is what a person reads, and the reference's own choice where it made that."""
    if "priority" not in key or w.bound.op.effect != "update":
        return None
    old, new = _rung(run.updated_value(w, w.bound.op.field_for(key))), _rung(value)
    if old is None or new is None or new <= old + 1:
        return None
    schema = w.bound.tool.parameters.get("properties", {}).get(key, {})
    used = [str(v) for v in schema.get("enum") or []] or [
        str(r.get(key)) for c in run.package.initial_state.values() for rs in c.values() for r in rs if isinstance(r, dict)]
    words = _PRIORITIES[old + 1]
    return next((u for u in used if u.casefold() in words), words[0])


def _offered(said: str, value: Any, enum: list[Any]) -> Any:
    """The other enum value the request offers beside ``value`` ("high or urgent, whichever fits"),
    or None."""
    if not isinstance(value, str) or value not in enum or not _CHOICE.search(said):
        return None
    for other in enum:
        if other != value and isinstance(other, str) and re.search(
                rf"\b{re.escape(value)}\s+or\s+{re.escape(other)}\b|\b{re.escape(other)}\s+or\s+{re.escape(value)}\b",
                said, re.IGNORECASE):
            return other
    return None


UNORDERED_LISTS = frozenset({"attendees", "recipients", "to", "cc", "bcc", "participants", "invitees", "members",
                             "guests", "tags", "labels", "assignees", "watchers", "reviewers", "approvers"})
"""List arguments that hold a set (people, labels): their order says nothing unless the request
gives one."""
_ORDER_GIVEN = re.compile(r"\b(?:in\s+(?:this|that|the\s+following|the\s+same|that\s+exact|this\s+exact)\s+order|"
                          r"(?:in|by)\s+order\s+of|ranked|ranking|in\s+sequence|(?:order|ordered|sorted)\s+(?:by|as)|"
                          r"first\b[^.;!?]*\bthen\b|(?:first|primary)\s+(?:attendee|recipient|reviewer|approver|one)|"
                          r"(?:oldest|newest|earliest|latest|most\s+recent|biggest|largest|smallest|highest|lowest|"
                          r"cheapest|priciest)(?:\s+\w+)?\s+first|"
                          r"in\s+(?:date|time|chronological|alphabetical|reverse)\s+order|chronologically|alphabetically)",
                          re.IGNORECASE)


def is_unordered(key: str, value: Any, known: frozenset[str] = frozenset()) -> bool:
    """Whether ``value`` of argument ``key`` is a set written as a list: two or more distinct
    scalars, in an argument named for people or labels (``UNORDERED_LISTS``), or by what it holds:
    all of them email addresses, or all of them records of the state, by id, name or address
    (``known``: the members of a channel, the transactions of an expense report, the customers of
    an export, whatever the argument is called)."""
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, str) for v in value):
        return False
    if len(set(value)) < 2:
        return False
    return key in UNORDERED_LISTS or all(EMAIL.fullmatch(v) or v.casefold() in known for v in value)


def record_identities(package: TaskPackage) -> frozenset[str]:
    """The ids, names and addresses of the records of the initial state (folded): what a list of
    records is written with. An id is the ``id`` field or one named for it (``transaction_id``)."""
    out: set[str] = set()
    for collections in package.initial_state.values():
        for records in collections.values():
            for r in records:
                if isinstance(r, dict):
                    out |= {v.casefold() for k, v in r.items() if isinstance(v, str) and v
                            and (k in ("id", "name", "email", "username") or k.endswith("_id"))}
    return frozenset(out)


_ORDER_WORDS = re.compile(r"\b(?:order|sort|sorted|rank|ranked|ranking|primary|alphabetical(?:ly)?|chronological(?:ly)?|ascending|"
                          r"descending|oldest|newest|earliest|latest|first|last|highest|lowest|largest|smallest|"
                          r"biggest|most|least|top|bottom|then|before|after|sequence|priority order)\b", re.IGNORECASE)
"""Words by which a request may order what an answer lists: a grader may then pin that order."""


_SEQUENCING = re.compile(r"(?:^|(?<=[.;:!?])\s+|,\s*|\band\s+)(?:then|first|next|finally)\b(?!\s*,?\s*(?:by|the|in)\b)"
                         r"|\b(?:after|before)\s+(?:that|this|you|you've|you're|we|i|it's)\b", re.IGNORECASE)
"""Words that order the request's steps, not what an answer lists: "... mark his invoice paid.
Then tell me who else owes", "first, close it", "after you've done that"."""


_NUMBERED = re.compile(r"(?:^|\s)\(?1[.)]\s.*?\s\(?2[.)]\s", re.DOTALL)
"""Items the request numbers ("1) hold the power button …, 2) wait …"): an order it gives."""


def orders_a_list(said: str) -> bool:
    """Whether the request may order what an answer or a text lists: it numbers items
    (``_NUMBERED``) or says an ordering word (``_ORDER_WORDS``) other than those that order its
    steps (``_SEQUENCING``)."""
    return _NUMBERED.search(said) is not None or _ORDER_WORDS.search(
        _SEQUENCING.sub(" ", _NO_ORDER.sub(" ", said))) is not None


_NO_ORDER = re.compile(r"\b(?:look(?:s|ed|ing)?|takes?|ask(?:s|ed)?)\s+after\b|\bafter[- ](?:sales|hours)\b", re.IGNORECASE)
"""Phrases that hold an ordering word and order nothing: "the customers she looks after",
"after-sales", "after hours"."""


_CHAINED = re.compile(r"\.\*\??|\[\\s\\S\]\*\??")
_LIST_GAP = re.compile(r"\s*(?:,|;|/|&|\band\b|\n\s*(?:[-*\u2022]|\d+[.)])?)(?:\s*(?:,|and\b|\n\s*(?:[-*\u2022]|\d+[.)])?))*\s*",
                       re.IGNORECASE)


def _split_top(pattern: str, separator: re.Pattern[str]) -> list[tuple[int, int]]:
    """The spans of ``pattern`` between the matches of ``separator`` outside any group or
    character class (``patterns.scan``): ``.*`` joining the parts of a chain, ``|`` between
    alternatives."""
    cuts, at = [], 0
    for n, _, depth in scan(pattern):
        if depth == 0 and n >= at and (m := separator.match(pattern, n)) and m.end() > n:
            cuts.append((at, n))
            at = m.end()
    return [*cuts, (at, len(pattern))]


_BAR = re.compile(r"\|")


def _chained_items(pattern: str) -> tuple[list[str], bool] | None:
    """The items of a pattern that chains them in order (``(?s)zephyr.*brookline.*amberlight``;
    leading ``^`` and ``(?!…)`` exclusions aside), each a regular expression of its own with a
    letter, and whether the pattern ignores case; None for any other pattern (one item, an
    alternation at the top, a part that does not compile alone)."""
    flags = re.match(r"\(\?([a-zA-Z]+)\)", pattern)
    body = pattern[flags.end():] if flags else pattern
    while True:  # "^(?!.*(?:brackenfield|pellow))": what the answer must not say, not an item
        body = body.removeprefix("^")
        if not body.startswith("(?!"):
            break
        close = group_end(body)
        if close is None:
            return None
        body = body[close + 1:]
    parts = [body[a:b].strip() for a, b in _split_top(body, _CHAINED)]
    while parts and not parts[0]:
        parts = parts[1:]  # ".*halden...": anything may come first
    while parts and not parts[-1]:
        parts = parts[:-1]
    if len(parts) < 2 or any(not p or len(_split_top(p, _BAR)) > 1 for p in parts):
        return None
    try:
        for part in parts:
            re.compile(part)
    except re.error:
        return None
    if len(set(parts)) < len(parts) or not all(re.search(r"[^\W\d_]", re.sub(r"\\.", "", p)) for p in parts):
        return None
    return parts, bool(flags and "i" in flags.group(1))


_ENTRY_END = re.compile(r",\s|;\s|\s(?:and|&)\s|\n|\.(?:\s|$)")


def _entry_end(text: str, end: int, limit: int) -> int:
    """Where the list entry holding an item that ends at ``end`` ends: at the first list mark
    (", ", " and ", a new line, a full stop) outside brackets, before ``limit`` (the next item):
    "Halden Architects (inv-201, due 14 Nov)" for the item "halden"."""
    depth, at = 0, end
    while at < limit:
        c = text[at]
        if c in "([":
            depth += 1
        elif c in ")]" and depth > 0:
            depth -= 1
        elif depth == 0 and _ENTRY_END.match(text, at):
            break
        at += 1
    return len(text[:at].rstrip())


def _answer_order(run: ReferenceRun, steps: dict[int, Step], done: list[Write]) -> list[Variant]:
    """For each ``answer_matches`` check chaining two or more items (``_chained_items``) that the
    final answer lists in that order, one after another with only list punctuation between them
    (", ", " and ", a new bullet), the answer with those items reversed; each item with the rest of
    its list entry (``_entry_end``: "Halden Architects (inv-201, due 14 Nov)" for "halden"). None
    when the request may order them (``orders_a_list``)."""
    last = max((i for i, s in steps.items() if isinstance(s, AnswerStep)), default=None)
    if last is None or orders_a_list(run.said):
        return []
    said = steps[last]
    assert isinstance(said, AnswerStep)
    out: list[Variant] = []
    for check in run.package.checks:
        chained = _chained_items(check.pattern) if check.kind == "answer_matches" else None
        rewritten = _reversed_items(said.answer, chained, getattr(check, "ignore_case", False)) if chained else None
        if rewritten is not None:
            out.append(("answer_order", {**steps, last: AnswerStep(answer=rewritten)}, sorted(steps),
                        {"check": check.id}))
    return out


def _reversed_items(text: str, chained: tuple[list[str], bool], ignore_case: bool,
                    order: list[int] | None = None) -> str | None:
    """``text`` with the items a chaining pattern (``_chained_items``) finds in it, in that order
    and one after another with only list punctuation between them, listed in reverse order, or in
    ``order`` (positions of the chain's items; each with the rest of its entry, ``_entry_end``);
    None when they are not listed so."""
    items, folded = chained
    flags = re.IGNORECASE if folded or ignore_case else 0
    found: list[tuple[int, int]] = []
    at = 0
    for item in items:
        m = re.compile(item, flags | re.DOTALL).search(text, at)
        if m is None or m.end() == m.start():
            return None
        found.append((m.start(), m.end()))
        at = m.end()
    spans = [(a, _entry_end(text, b, found[n + 1][0] if n + 1 < len(found) else len(text)))
             for n, (a, b) in enumerate(found)]
    gaps = [text[a[1]:b[0]] for a, b in zip(spans, spans[1:], strict=False)]
    if not all(_LIST_GAP.fullmatch(gap) for gap in gaps):
        lines = _lines_of(text, found)  # a bulleted list: each entry is its whole line
        if lines is None:
            return None
        spans = lines
        gaps = [text[a[1]:b[0]] for a, b in zip(spans, spans[1:], strict=False)]
    parts = [text[a:b] for a, b in spans]
    listed = parts[::-1] if order is None else [parts[i] for i in order]
    rewritten = text[:spans[0][0]] + "".join(part + gap for part, gap in zip(listed, gaps, strict=False))
    return rewritten + listed[-1] + text[spans[-1][1]:]


def _lines_of(text: str, found: list[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """The spans of the lines holding the ``found`` items, each line's text after its bullet or
    number ("- Assembly Rooms, Ludlow (18 Dec)"), when each item has a line of its own and the lines
    follow one another; None otherwise."""
    spans: list[tuple[int, int]] = []
    for a, b in found:
        start = text.rfind("\n", 0, a) + 1
        end = text.find("\n", b)
        end = len(text) if end < 0 else end
        bullet = _BULLET.match(text, start)
        spans.append((bullet.end() if bullet else start, end))
    if any(x[1] >= y[0] for x, y in zip(spans, spans[1:], strict=False)):
        return None  # two items on one line
    gaps = [text[x[1]:y[0]] for x, y in zip(spans, spans[1:], strict=False)]
    return spans if all(_LINE_GAP.fullmatch(gap) for gap in gaps) else None


_BULLET = re.compile(r"[ \t]*(?:[-*\u2022]|\d+[.)])[ \t]+")
_LINE_GAP = re.compile(r"\n[ \t]*(?:[-*\u2022]|\d+[.)])?[ \t]*")


def _read_order(run: ReferenceRun, chained: tuple[list[str], bool], ignore_case: bool) -> list[int] | None:
    """The order in which a text the reference read names the chain's items (the email that lists
    the shortlist "in the order I'd approach them"), as positions of the chain's items, when it
    names them all in another order than the chain's; None otherwise."""
    items, folded = chained
    flags = re.IGNORECASE if folded or ignore_case else 0
    programs = [re.compile(item, flags | re.DOTALL) for item in items]
    for step in run.trajectory.steps:
        if step.kind != "call" or not step.result or not step.status or step.status >= 300:
            continue
        for text in strings(step.result):
            found = [m.start() if (m := p.search(text)) else -1 for p in programs]
            if -1 not in found and found != sorted(found):
                return sorted(range(len(items)), key=lambda i: found[i])
    return None


def _text_order(run: ReferenceRun, steps: dict[int, Step], done: list[Write]) -> list[Variant]:
    """For each text a write puts in a record whose field a state check's pattern grades by
    chaining items (a note listing "Anouk Delacroix.*Teodor Vasile.*Wilhelmina Strand"), the same
    text with those items listed in the order a text it read names them (``_read_order``: the
    email it copies them from), else in reverse order (``_reversed_items``). None when the request
    may order them (``orders_a_list``)."""
    if orders_a_list(run.said):
        return []
    said = run.said.casefold()
    out: list[Variant] = []
    for check in run.package.checks:
        if check.kind not in ("state_count", "state_match"):
            continue
        for fname, matcher in required_values(check):
            pattern = matcher.get("$regex") if isinstance(matcher, dict) else None
            chained = _chained_items(pattern) if isinstance(pattern, str) else None
            if chained is None:
                continue
            read = _read_order(run, chained, check.ignore_case)  # the order a text read gives them, once a check
            for w in done:
                step = steps[w.step]
                if not isinstance(step, CallStep) or ".".join(w.bound.collection) != check.collection:
                    continue
                for key, text in step.args.items():
                    if w.bound.op.field_for(key) != fname or not isinstance(text, str) or text.casefold() in said:
                        continue  # a text the request dictates ("titled 'Tide times - Port Mellan, 3 Dec'") keeps its order
                    rewritten = _reversed_items(text, chained, check.ignore_case, read)  # as read, else reversed
                    if rewritten is not None:
                        mutated = {**steps, w.step: CallStep.model_construct(
                            call=step.call, args={**step.args, key: rewritten}, expect_status=step.expect_status)}
                        out.append(("text_order", mutated, sorted(mutated), {"argument": key}))
    return out[:MAX_CHOICES]


def _permuted_lists(run: ReferenceRun, steps: dict[int, Step], done: list[Write]) -> list[Variant]:
    """Each write's lists of people or labels (``is_unordered``) written in reverse order, all at
    once: "invite Lena, Priya and Tomas" gives no order, so a grader comparing the attendee list
    as an ordered list punishes a correct agent. None when the request gives an order."""
    if _ORDER_GIVEN.search(run.said):
        return []
    edits: dict[int, dict[str, Any]] = {}
    known = record_identities(run.package)
    for w in done:
        step = run.package.reference[w.step]
        if not isinstance(step, CallStep) or w.bound.op.effect not in ("create", "update"):
            continue
        for key, value in run.args.get(w.step, {}).items():
            if is_unordered(key, value, known):
                edits.setdefault(w.step, {})[key] = list(reversed(value))
    if not edits:
        return []
    mutated = dict(steps)
    for i, args in edits.items():
        step = steps[i]
        assert isinstance(step, CallStep)
        mutated[i] = CallStep.model_construct(call=step.call, args={**run.args[i], **args},
                                              expect_status=step.expect_status)
    return [("permuted_list", mutated, sorted(mutated), {"argument": ", ".join(sorted({k for a in edits.values() for k in a}))})]

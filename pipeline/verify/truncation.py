"""Evidence under truncation. Raises ``evidence_truncated``.

The reference trajectory is rendered exactly as the training export stores it
(``pipeline.core.training_format``: each tool observation cut to ``obs_limit`` characters, samples
over ``sample_budget`` characters dropped). Evidence follows the record it comes from, not merely
its text: a value counts as seen only where the record that holds it is visible. Evidence is lost
when:

- the sample is over budget (the export would drop it whole);
- a ``$ref`` names a value whose place in the observation of the step it points at lies beyond
  the cut (wherever else the same text may appear);
- a value the reference writes literally, or a value the answer states or a check requires
  (emails, ids, dates, numbers, short codes such as a room "B2" or a quantity "5", and every
  ``answer_contains`` value), comes from a record of an earlier read whose field holding it lies
  beyond the cut. When several records hold the value, the ones the task is about (a record
  whose name, title, subject, id or email the request, the user, the reference's arguments or
  its answer mention) decide; the same value in the visible part as *another* record's field
  does not count. A number no such record holds that counts a group the agent sees whole ("3
  items below their reorder level") is a count, not a value read;
- a number the answer states (or a check requires) is a total or a count over records of one
  list (all of them, those sharing a field value or a month, or two such values at once), and
  one of those records lies beyond the cut, unless a group wholly before the cut gives the same
  figure or a visible field of a record the task names holds it ("5 of 6" of a named item). A
  count equal to the number of writes the reference makes is a report of what was done, not a
  count.

Values the agent could not have read anywhere (a title it chose) are not evidence and are ignored;
nor are values the tool's schema offers (a status "closed" of its enum).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any, cast

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import leaves, strings
from pipeline.core.outcomes import Finding
from pipeline.core.package import CallStep, TaskPackage
from pipeline.core.patterns import DataPattern, compile_pattern
from pipeline.core.references import ResolveError, iter_refs, parse_ref
from pipeline.core.text_values import ISO_DATE, dates_in, has_word, numbers_in, told_figures
from pipeline.core.training_format import Policy, Sample, observation_text, render_sample
from pipeline.core.trajectory import Trajectory
from pipeline.verify.aggregates import groups, number_forms, totals
from pipeline.verify.effects import bound_tools
from pipeline.verify.perturbations import id_fields, record_id

_ANSWER_VALUES = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"      # emails
    r"|\b[a-z]{1,6}-\d+(?:-\d+)+\b"       # codes of groups: a licence reference NLD-2026-44718
    r"|\b[a-z]+-\d+\b"                   # ids such as todo-004, c-101
    r"|\b\d{4}-\d{2}-\d{2}\b"            # dates
    r"|\b\d{1,4}(?:-\d{1,4}){1,3}\b"      # codes of digit groups: a door code 48-19-07
    r"|\b\d[\d,]*(?:\.\d+)?\b",          # numbers
    re.IGNORECASE,
)
_SHORT_CODE = re.compile(r"\d[a-z]|[a-z]\d")
"""A two-character code of a digit and a letter, folded ("7b", "b2"): specific enough to find in a text."""
_IDENTIFYING = ("name", "title", "subject", "id", "email", "sku", "number", "customer", "company")


# --------------------------------------------------------------------------- where things are


@dataclass
class Layout:
    """An observation's text with where each record (a dict inside a list, or one a get returns)
    and each of its fields ends, so that "is it visible?" can be asked of a record rather than of
    a text."""

    text: str
    records: list[dict[str, Any]] = field(default_factory=list)
    record_end: dict[int, int] = field(default_factory=dict)
    """``id(record)`` → the offset just after the record."""
    field_start: dict[tuple[int, str], int] = field(default_factory=dict)
    """``(id(record), key)`` → the offset where the field's value starts."""
    field_end: dict[tuple[int, str], int] = field(default_factory=dict)
    """``(id(record), key)`` → the offset just after the field's value."""
    lists: list[list[dict[str, Any]]] = field(default_factory=list)


def layout(status: int | None, result: Any) -> Layout:
    """Serialize ``{"status", "result"}`` exactly as ``training_format.observation_text`` does,
    noting where each record and field ends. A record is a dict inside a list, or one a get
    returns alone (the result, or a value of it, holding an ``id`` or a ``…_id`` field:
    ``{"note": {"id": …, "body": …}}``; or the result itself when it is flat, a record answered
    whole: a fetched page ``{"url": …, "content": …}``)."""
    out = Layout(text="")
    parts: list[str] = []
    size = 0
    alone = [result, *(result.values() if isinstance(result, dict) else ())]
    single = {id(v) for v in alone if isinstance(v, dict) and any(k == "id" or k.endswith("_id") for k in v)}
    if isinstance(result, dict) and not any(isinstance(v, dict) or isinstance(v, list) and any(
            isinstance(x, dict) for x in v) for v in result.values()):
        single.add(id(result))

    def emit(text: str) -> None:
        nonlocal size
        parts.append(text)
        size += len(text)

    def walk(value: Any, in_list: bool) -> None:
        if isinstance(value, dict):
            in_list = in_list or id(value) in single
            emit("{")
            for n, (key, item) in enumerate(value.items()):
                emit(("," if n else "") + json.dumps(key, ensure_ascii=False) + ":")
                if in_list:
                    out.field_start[(id(value), key)] = size
                walk(item, False)
                if in_list:
                    out.field_end[(id(value), key)] = size
            emit("}")
            if in_list:
                out.records.append(value)
                out.record_end[id(value)] = size
        elif isinstance(value, list):
            records = [v for v in value if isinstance(v, dict)]
            if records:
                out.lists.append(records)
            emit("[")
            for n, item in enumerate(value):
                if n:
                    emit(",")
                walk(item, True)
            emit("]")
        else:
            emit(json.dumps(value, ensure_ascii=False))

    walk({"status": status, "result": result}, False)
    out.text = "".join(parts)
    return out


def _find(value: Any, path: list[str | int]) -> tuple[Any, dict[str, Any] | None, str | None]:
    """The value at ``path`` inside ``value``, with the innermost record (dict in a list) on the
    way and the field of that record the path went through."""
    cur, record, key = value, None, None
    parent_is_list = False
    for part in path:
        if isinstance(cur, dict) and isinstance(part, str) and part in cur:
            if parent_is_list:
                record, key = cur, part
            cur, parent_is_list = cur[part], False
        elif isinstance(cur, list) and isinstance(part, int) and -len(cur) <= part < len(cur):
            cur, parent_is_list = cur[part], True
        else:
            return None, None, None
    if parent_is_list and isinstance(cur, dict):
        record, key = cur, None
    return cur, record, key


# --------------------------------------------------------------------------- findings


def evidence_findings(package: TaskPackage, ref: Trajectory, policy: Policy | None = None,
                      sample: Sample | None = None) -> list[Finding]:
    """``sample`` is ``render_sample(package, ref, policy)`` when the caller already has it."""
    policy = policy or Policy()
    sample = sample or render_sample(package, ref, policy)
    out: list[Finding] = []
    if sample.over_budget(policy):
        out.append(Finding(code=Code.EVIDENCE_TRUNCATED, detail={"chars": sample.chars},
                           message=f"the training sample is {sample.chars:,} characters, over the "
                                   f"{policy.sample_budget:,} budget: the export would drop it"))
    limit = policy.obs_limit
    calls = [r for r in ref.steps if r.kind == "call"]
    if not sample.truncated_observations and all(r.status is not None or len(observation_text(None, r.result)) <= limit
                                                 for r in calls):
        return out  # every observation is whole (the sample counts the cut ones): nothing is cut
    layouts = {r.index: layout(r.status, r.result) for r in calls}
    out += _ref_findings(package, ref, layouts, limit)
    out += _value_findings(package, ref, layouts, limit)
    out += _total_findings(package, ref, layouts, limit)
    return out


def _visible(lay: Layout, record: dict[str, Any] | None, key: str | None, limit: int, value: str | None = None) -> bool:
    """Whether the record's field (the whole record when ``key`` is None) is within the first
    ``limit`` characters; with ``value``, whether that value inside a text field is."""
    if record is None:
        return True
    if key is None:
        end = lay.record_end.get(id(record))
        return end is None or end <= limit
    start, end = lay.field_start.get((id(record), key)), lay.field_end.get((id(record), key))
    if start is None or end is None:
        return True
    if value is not None:
        needle = json.dumps(value, ensure_ascii=False)[1:-1].casefold()
        found = lay.text[start:end].casefold().find(needle)
        if found >= 0:
            end = start + found + len(needle)
    return end <= limit


def _ref_findings(package: TaskPackage, ref: Trajectory, layouts: dict[int, Layout], limit: int) -> list[Finding]:
    results = {r.index: r.result for r in ref.steps if r.kind == "call"}
    out: list[Finding] = []
    for i, step in enumerate(package.reference):
        if not isinstance(step, CallStep):
            continue
        for ref_obj in iter_refs(step.args):
            path = ref_obj.get("$ref")
            if not isinstance(path, str) or ".result" not in path:
                continue
            try:
                parts = parse_ref(path)
            except ResolveError:
                continue  # reported as dangling_reference
            target = cast(int, parts[1])  # parse_ref checked that steps[i] leads
            lay = layouts.get(target)
            if lay is None or len(lay.text) <= limit:
                continue
            value, record, key = _find(results.get(target), parts[3:])
            if value is not None and not _visible(lay, record, key, limit):
                out.append(Finding(code=Code.EVIDENCE_TRUNCATED, step=i, detail={"ref": path},
                                   message=f"step {i} uses {path} = {value!r}, whose record lies beyond character "
                                           f"{limit:,} of step {target}'s observation"))
    return out


def _about(package: TaskPackage, ref: Trajectory) -> str:
    """What the task is about, folded: the request, the user, the reference's arguments and answer."""
    texts = [package.request.text, *(f.value for f in (package.user.facts if package.user else [])), ref.answer]
    texts += strings([s.args for s in ref.steps if s.kind == "call"])
    texts += [s.reply or "" for s in ref.steps if s.kind == "ask"]
    return "\n".join(texts).casefold()


def _relevant(record: dict[str, Any], about: str) -> bool:
    """Whether the task mentions the record by one of its identifying fields."""
    return any(isinstance(value, str) and len(value) >= 3 and (key in _IDENTIFYING or key.endswith("_id"))
               and has_word(about, value)
               for key, value in record.items())


def _holds(value: str, item: Any) -> bool:
    """Whether a field value holds ``value``: equal to it, or, for text, containing it as a token
    (of three characters or more, or a code of a digit and a letter: berth "7B" in an email's body)."""
    if isinstance(item, bool) or item is None:
        return False
    text = item if isinstance(item, str) else json.dumps(item)
    folded = text.casefold()
    if folded == value:
        return True
    if (len(value) < 3 and not _SHORT_CODE.fullmatch(value)) or not isinstance(item, str):
        return isinstance(item, (int, float)) and _same_number(value, item)
    return value in folded and re.search(rf"(?<![\w@.-]){re.escape(value)}(?![\w@-]|\.\w)", folded) is not None


def _date_stated(value: str, item: Any, today: date) -> str:
    """Where ``value`` is an ISO date that the text ``item`` states in words ("14 December"), the
    words as the text has them, folded; else ""."""
    if not isinstance(item, str) or not ISO_DATE.fullmatch(value):
        return ""
    return next((m.text.casefold() for m in dates_in(item, today) if m.value == value), "")


def _same_number(text: str, number: float) -> bool:
    try:
        return abs(float(text.replace(",", "")) - float(number)) < 0.005
    except ValueError:
        return False


def _number(text: str) -> float | None:
    """``text`` as a number rounded to cents, when it is one ("120", "12.5"); else None."""
    try:
        return round(float(text), 2)
    except ValueError:
        return None


def _value_findings(package: TaskPackage, ref: Trajectory, layouts: dict[int, Layout], limit: int) -> list[Finding]:
    said = " ".join([package.request.text, *(r.reply or "" for r in ref.steps)])
    told = {round(v, 2) for v in told_figures(said)}  # "for two hours": 120, told
    said = said.casefold()
    about = _about(package, ref)
    today = date.fromisoformat(package.now[:10])
    keys = id_fields(package)
    bound = bound_tools(package)
    reads = {i for i, b in ((s.index, bound.get(s.tool or "")) for s in ref.steps if s.kind == "call")
             if b is not None and b.op.access == "read"}
    candidates: list[tuple[str, int, str]] = []  # (where, position in the reference, value)
    for i, step in enumerate(package.reference):
        if isinstance(step, CallStep):
            props = bound[step.call].tool.parameters.get("properties", {}) if step.call in bound else {}
            literal = {k: v for k, v in step.args.items() if not list(iter_refs(v))
                       and v not in props.get(k, {}).get("enum", [])}  # "closed" is the tool's to offer
            candidates += [(f"step {i}", i, str(v) if not isinstance(v, str) else v) for v in leaves(literal)
                           if v not in (None, "") and not isinstance(v, bool)]
    end = len(package.reference)
    candidates += [("the answer", end, m.group(0)) for m in _ANSWER_VALUES.finditer(ref.answer)]
    for check in package.checks:
        if check.kind == "answer_contains":
            candidates += [(f"check {check.id!r}", end, v) for v in check.values]
        elif check.kind == "answer_matches":  # what the pattern grades of the answer: "25 years", not "25"
            candidates += [(f"check {check.id!r}", end, part.strip()) for part in
                           compile_pattern(check.pattern, check.ignore_case).matched_parts(ref.answer) if part.strip()]
    out: list[Finding] = []
    reported: set[str] = set()
    counted = _visible_counts(layouts, limit, done=len(_writes(package, ref)))
    for where, position, value in candidates:
        folded = value.casefold().strip()
        if not folded or folded in reported or has_word(said, folded) or _number(folded) in told:
            continue
        holders = [(lay, r, k, needle) for i, lay in layouts.items() if i < position and i in reads
                   for r in lay.records for k, item in r.items()
                   if (needle := folded if _holds(folded, item) else _date_stated(folded, item, today))]
        if not holders:
            continue
        relevant = [h for h in holders if _relevant(h[1], about)]
        if not relevant and folded in counted:
            continue  # a count of records it sees whole; no record the task names holds the value
        relevant = relevant or holders
        if any(_visible(lay, r, k, limit, needle) for lay, r, k, needle in relevant):
            continue
        reported.add(folded)
        lay, record, key, _ = relevant[0]
        observed_at = next(i for i, candidate in layouts.items() if candidate is lay)
        rid = record_id(record, keys)
        out.append(Finding(code=Code.EVIDENCE_TRUNCATED, step=observed_at,
                           detail={"value": value, "record": rid, "field": key},
                           message=f"{where} depends on {value!r}, which only record {rid or '?'} ({key}) shows, "
                                   f"beyond character {limit:,} of step {observed_at}'s observation"))
    return out


def _total_findings(package: TaskPackage, ref: Trajectory, layouts: dict[int, Layout], limit: int) -> list[Finding]:
    """A figure the answer states is lost when every group of records that totals or counts to it
    has a record past the cut; a group wholly before the cut (the records the task is about, when
    another customer's records past the cut happen to total the same) keeps it."""
    stated = {round(float(m.value), 2) for m in numbers_in(ref.answer)}
    stated |= {round(float(m.value), 2) for c in package.checks if c.kind == "answer_contains"
               for v in c.values for m in numbers_in(v)}
    patterns = [compile_pattern(c.pattern, c.ignore_case)
                for c in package.checks if c.kind == "answer_matches"]
    done = len(_writes(package, ref))
    steps = {id(lay): index for index, lay in layouts.items()}
    lost: dict[float, tuple[Layout, list[dict[str, Any]], list[dict[str, Any]]]] = {}
    about = _about(package, ref)
    kept = {round(float(v), 2) for lay in layouts.values() for r in lay.records if _relevant(r, about)
            for k, v in r.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
            and _visible(lay, r, k, limit)}  # read off a record the answer names ("5 of 6" of that item)
    for lay in layouts.values():
        for group in (g for records in lay.lists for g in groups(records)):
            if len(group) < 2:
                continue
            cut_off = [r for r in group if not _visible(lay, r, None, limit)]
            for total in _figures(group, skip_count=done):
                forms = number_forms(total)
                if not (round(total, 2) in stated or any(_states(p, f) for p in patterns for f in forms)):
                    continue
                if not cut_off:
                    kept.add(round(total, 2))
                else:
                    lost.setdefault(round(total, 2), (lay, group, cut_off))
    for total, (lay, group, cut_off) in lost.items():
        if total in kept:
            continue
        ids = ", ".join(str(r.get("id", "?")) for r in cut_off[:6])
        return [Finding(code=Code.EVIDENCE_TRUNCATED, step=steps[id(lay)], detail={"total": total,
                        "records": [r.get("id") for r in group], "beyond": [r.get("id") for r in cut_off]},
                        message=f"the answer's {total:g} is the total or count of {len(group)} records of step "
                                f"{steps[id(lay)]}'s observation, and {len(cut_off)} of them ({ids}) lie beyond "
                                f"character {limit:,}")]
    return []


def _writes(package: TaskPackage, ref: Trajectory) -> list[int]:
    """The indexes of the reference's calls that write."""
    writers = {name for name, b in bound_tools(package).items() if b.op.access == "write"}
    return [s.index for s in ref.steps if s.kind == "call" and s.tool in writers]


def _visible_counts(layouts: dict[int, Layout], limit: int, done: int) -> set[str]:
    """The sizes (over 2) of groups whose records all lie before the cut: counts an agent makes
    of what it sees ("3 items below their reorder level")."""
    return {str(len(g)) for lay in layouts.values() for records in lay.lists for g in groups(records)
            if len(g) > 2 and len(g) != done and all(_visible(lay, r, None, limit) for r in g)}


def _states(pattern: DataPattern, number: str) -> bool:
    """Whether ``pattern`` matches ``number`` as a whole (``\\b5\\b`` does not state 15927.5)."""
    return pattern.fullmatch(number)


def _figures(group: list[dict[str, Any]], skip_count: int) -> list[float]:
    """The group's totals, and its size when over 2 and not ``skip_count`` (the number of writes
    the reference makes, which its answer reports as done, not as counted)."""
    return totals(group) + ([float(len(group))] if len(group) > 2 and len(group) != skip_count else [])

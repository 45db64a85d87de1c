"""Known defects, injected on purpose into clean packages for demos, benchmarks and regeneration
tests. Each defect is named after the reason code it must raise. The label travels beside the
package (``Generated.defect``), never inside it, so the verifier cannot see it.

Every transform takes the package as plain JSON data and returns the defective data, or None when
the package has nothing it could break that way (e.g. no hidden facts to leak).
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from pydantic import ValidationError

from pipeline.core.codes import BASIS, Basis, Code
from pipeline.core.episode import execute
from pipeline.core.jsonvalues import strings
from pipeline.core.package import TaskPackage
from pipeline.core.services import DEFAULT_PROFILE, OperationSpec, ServiceSpec, catalogue, find_operation
from pipeline.core.text_values import ISO_DATE, NUMBER_WORDS, quoted_phrases

Data = dict[str, Any]
_ID = re.compile(r"^[A-Za-z]+[-_]\d+$")
_TWO_TO_TEN = NUMBER_WORDS[2:11]  # at the index of their value less two


def _operation(data: Data, endpoint: str) -> tuple[ServiceSpec, OperationSpec] | None:
    """The service and operation behind ``endpoint`` in the package's service profile, or None."""
    return find_operation(endpoint, data.get("service_profile", DEFAULT_PROFILE))


def _write_tools(data: Data) -> list[str]:
    out = []
    for tool in data["tools"]:
        found = _operation(data, tool["endpoint"])
        if found and found[1].access == "write":
            out.append(tool["name"])
    return out


def _called(data: Data) -> list[str]:
    return [s["call"] for s in data["reference"] if "call" in s]


def unknown_endpoint(data: Data, rng: random.Random) -> Data | None:
    """Bind a used tool to a near-miss endpoint (``/contacts/send_message`` → ``/contacts/send``)."""
    used = [t for t in data["tools"] if t["name"] in _called(data)]
    if not used:
        return None
    tool = rng.choice(used)
    head, _, last = tool["endpoint"].rpartition("/")
    tool["endpoint"] = f"{head}/{last.split('_')[0] if '_' in last else last + 's'}"
    return data


def unknown_tool(data: Data, rng: random.Random) -> Data | None:
    """A reference step calls a tool that is not offered."""
    steps = [s for s in data["reference"] if "call" in s]
    if not steps:
        return None
    rng.choice(steps)["call"] += "_v2"
    return data


def tool_schema_mismatch(data: Data, rng: random.Random) -> Data | None:
    """A tool parameter's type disagrees with the operation's."""
    for tool in data["tools"]:
        for _name, schema in tool["parameters"].get("properties", {}).items():
            if schema.get("type") == "string":
                schema["type"] = "integer"
                schema.pop("enum", None)
                schema.pop("pattern", None)
                return data
    return None


def _unheld(record_id: str) -> str:
    """An id of the same shape as ``record_id`` that no record holds: its number replaced by 9999
    (``todo-003`` → ``todo-9999``, ``todo_003`` → ``todo_9999``)."""
    return re.sub(r"\d+$", "9999", record_id) if record_id[-1:].isdigit() else record_id + "-9999"


def dangling_reference(data: Data, rng: random.Random) -> Data | None:
    """A check names an id that no record has."""
    for check in data["checks"]:
        for key in ("where", "expect"):
            for field, value in (check.get(key) or {}).items():
                if isinstance(value, str) and _ID.match(value):
                    check[key][field] = _unheld(value)
                    return data
        if check.get("record_id"):
            check["record_id"] = _unheld(check["record_id"])
            return data
    return None


def weights_invalid(data: Data, rng: random.Random) -> Data | None:
    """Check weights no longer sum to 1."""
    data["checks"][0]["weight"] = round(data["checks"][0]["weight"] * 0.5, 6)
    return data


def judge_overweight(data: Data, rng: random.Random) -> Data | None:
    """An LLM judge carries half the weight."""
    for check in data["checks"]:
        check["weight"] = round(check["weight"] * 0.5, 6)
    data["checks"].append({"id": "judge", "kind": "judge", "weight": 0.5, "rubric": "The agent did a good job."})
    return data


def safety_contradiction(data: Data, rng: random.Random) -> Data | None:
    """A safety rule forbids a tool that the reference must write with."""
    writes = [t for t in _write_tools(data) if t in _called(data)]
    if not writes:
        return None
    data["safety"].append({"kind": "not_called", "tool": rng.choice(writes)})
    return data


def hidden_fact_leaked(data: Data, rng: random.Random) -> Data | None:
    """The hidden fact's value is written into the request."""
    facts = (data.get("user") or {}).get("facts") or []
    if not facts:
        return None
    fact = rng.choice(facts)
    data["request"]["text"] = data["request"]["text"].rstrip(".") + f" ({fact['value']})."
    return data


def request_check_mismatch(data: Data, rng: random.Random) -> Data | None:
    """The request states a different quantity than the checks demand."""
    text = data["request"]["text"]
    for i, word in enumerate(_TWO_TO_TEN):
        m = re.search(rf"\b{word}\b", text, re.IGNORECASE)
        if m and any(c["kind"] == "state_count" and c["value"] == i + 2 for c in data["checks"]):
            new = _TWO_TO_TEN[(i + 1) % len(_TWO_TO_TEN)]
            data["request"]["text"] = text[: m.start()] + new + text[m.end():]
            return data
    return None


def reference_error(data: Data, rng: random.Random) -> Data | None:
    """The reference opens with a call that the service refuses (a required field missing)."""
    for tool in data["tools"]:
        if tool["parameters"].get("required") and tool["name"] in _called(data):
            data["reference"].insert(0, {"call": tool["name"], "args": {}})
            _shift_refs(data, 1)
            return data
    return None


def _shift_refs(data: Data, by: int) -> None:
    def shift(value: Any) -> Any:
        if isinstance(value, dict):
            if "$ref" in value:
                value = dict(value)
                value["$ref"] = re.sub(r"^steps\[(\d+)\]", lambda m: f"steps[{int(m.group(1)) + by}]", value["$ref"])
                return value
            return {k: shift(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shift(v) for v in value]
        return value

    for step in data["reference"]:
        if "args" in step:
            step["args"] = shift(step["args"])


def reference_not_full_score(data: Data, rng: random.Random) -> Data | None:
    """The reference's final answer leaves out what the answer checks want."""
    if not any(c["kind"] in ("answer_contains", "answer_matches") for c in data["checks"]):
        return None
    for step in data["reference"]:
        if "answer" in step:
            step["answer"] = "Done."
            return data
    return None


def null_agent_passes(data: Data, rng: random.Random) -> Data | None:
    """A check that doing nothing satisfies takes 30% of the weight."""
    writes = {t for t in _write_tools(data) if t in _called(data)}
    for service in data["services"]:
        spec = catalogue(data.get("service_profile", DEFAULT_PROFILE)).get(service)
        for coll in spec.collections if spec else []:
            touched = any(
                (found := _operation(data, t["endpoint"])) and found[1].collection == coll and t["name"] in writes
                and found[0].name == service for t in data["tools"])
            if not touched:
                for check in data["checks"]:
                    check["weight"] = round(check["weight"] * 0.7, 6)
                data["checks"].append({"id": "untouched", "kind": "state_unchanged", "weight": 0.3,
                                       "collection": f"{service}.{coll}"})
                _fix_weights(data)
                return data
    return None


def _fix_weights(data: Data) -> None:
    """Absorb rounding drift into the last check so weights still sum to exactly 1."""
    drift = 1.0 - sum(c["weight"] for c in data["checks"])
    data["checks"][-1]["weight"] = round(data["checks"][-1]["weight"] + drift, 9)


def grader_underconstrained(data: Data, rng: random.Random) -> Data | None:
    """Counts demand fewer items than the request (``== 3`` → ``>= 2``), or state checks stop
    pinning the ids, emails and dates the request names."""
    for check in data["checks"]:
        if check["kind"] == "state_count" and check["op"] == "==" and check["value"] >= 2:
            check["op"], check["value"] = ">=", check["value"] - 1
            return data
    facts = [f["value"] for f in (data.get("user") or {}).get("facts") or []]
    changed = False
    for check in data["checks"]:
        if check["kind"] == "state_count" and check["op"] == "==" and check["value"] == 0:
            continue  # a "nothing else" rule; loosening it makes it unsatisfiable, not weaker
        for key in ("where", "expect"):
            for field, value in list((check.get(key) or {}).items()):
                found = strings(value)
                if any(f in v for v in found for f in facts):
                    continue  # a revealed value: unpinning it is clarification_unnecessary's defect
                if any(_ID.match(v) or ISO_DATE.match(v) or "@" in v for v in found):
                    del check[key][field]
                    changed = True
        if check["kind"] == "state_match" and not check.get("expect"):
            check["expect"] = {"id": {"$exists": True}}
    return data if changed else None


def grader_counts_calls(data: Data, rng: random.Random) -> Data | None:
    """Counting created items becomes counting calls: a ``state_count`` of N ≥ 2 records the agent
    creates (``scope: created``, ``==`` or ``>=``) is replaced, with every other check on its
    collection, by ``called`` with ``min: N`` on a create tool of that collection that the reference
    calls N times or more; ``args_match`` keeps the literal ``where`` values that every such call
    passes as arguments. N copies of one create satisfy it, so a wrong agent making duplicates
    passes. Counts with ``distinct_by`` are taken first (their seed is the plainest instance)."""
    counts = [c for c in data["checks"] if c["kind"] == "state_count" and c.get("scope") == "created"
              and c["op"] in ("==", ">=") and c["value"] >= 2]
    for check in sorted(counts, key=lambda c: not c.get("distinct_by")):
        service, coll = check["collection"].split(".")
        for tool in data["tools"]:
            found = _operation(data, tool["endpoint"])
            if not (found and found[0].name == service and found[1].collection == coll
                    and found[1].effect == "create"):
                continue
            calls = [s.get("args") or {} for s in data["reference"] if s.get("call") == tool["name"]]
            if len(calls) < check["value"]:
                continue  # the reference would fail the call count
            pinned = {k: v for k, v in (check.get("where") or {}).items()
                      if not isinstance(v, dict) and all(k in args and args[k] == v for args in calls)}
            same = [c for c in data["checks"] if c.get("collection") == check["collection"]]
            replacement = {"id": check["id"], "kind": "called", "weight": sum(c["weight"] for c in same),
                           "tool": tool["name"], "args_match": pinned, "min": check["value"]}
            data["checks"] = [c for c in data["checks"] if c not in same] + [replacement]
            _fix_weights(data)
            return data
    return None


def clarification_unnecessary(data: Data, rng: random.Random) -> Data | None:
    """The checks stop pinning the value the user reveals, so guessing passes."""
    facts = [f["value"] for f in (data.get("user") or {}).get("facts") or []]
    changed = False
    for check in data["checks"]:
        for key in ("where", "expect"):
            for field, value in list((check.get(key) or {}).items()):
                text = str(value)
                if any(f in text for f in facts):
                    del check[key][field]
                    changed = True
        if check["kind"] == "state_match" and not check.get("expect"):
            check["expect"] = {"id": {"$exists": True}}
        if check["kind"] == "answer_contains":
            kept = [v for v in check["values"] if not any(f in v or v in f for f in facts)]
            if kept != check["values"]:
                check["values"] = kept or ["."]
                changed = True
    return data if changed else None


def evidence_truncated(data: Data, rng: random.Random) -> Data | None:
    """The record a ``$ref`` reads gets a long text field first, pushing the value past 1,000 chars.
    The padded field is one the read neither searches, filters nor sorts on (nor the record's id),
    so the reference still finds the record and only the evidence moves; of those, the first whose
    padding does move the value past character 1,000 of the observation (an operation that answers
    its fields in an order of its own may show the padded field after the value)."""
    for step in data["reference"]:
        for value in (step.get("args") or {}).values():
            if isinstance(value, dict) and "$ref" in value:
                m = re.match(r"^steps\[(\d+)\]\.result\.(\w+)\[0\]\.(\w+)$", value["$ref"])
                if not m:
                    continue
                source = data["reference"][int(m.group(1))]
                tool = next((t for t in data["tools"] if t["name"] == source.get("call")), None)
                found = _operation(data, tool["endpoint"]) if tool else None
                if not found:
                    continue
                service, op = found
                records = data["initial_state"].get(service.name, {}).get(op.collection, [])
                graded = {f for c in data["checks"] for f in [*(c.get("where") or {}), *(c.get("expect") or {})]}
                coll = service.collections[op.collection]
                # never a field the reference's read searches, filters or sorts on, nor the id
                avoid = {"id", "name", m.group(3), *op.search_fields, *op.filters.values(), *graded,
                         *(f for w in op.where for f in w.fields), *([op.sort_by] if op.sort_by else []),
                         *([coll.id_field] if coll.id_field else [])}
                fillers = [f for f, s in coll.fields.items() if s.get("type") == "string" and f not in avoid]
                if not records:
                    continue
                for filler in fillers:
                    padded = copy.deepcopy(data)
                    rows = padded["initial_state"][service.name][op.collection]
                    for i, rec in enumerate(rows):
                        rows[i] = {filler: "Lorem ipsum dolor sit amet. " * 48, **{k: v for k, v in rec.items()
                                                                                if k != filler}}
                    if _pushed_past(padded, int(m.group(1)), m.group(2), m.group(3)):
                        return padded
    return None


def _pushed_past(data: Data, step: int, key: str, field: str, limit: int = 1000) -> bool:
    """Whether, replaying ``data``'s reference, the value ``field`` of the first ``key`` record of
    step ``step``'s result first appears past character ``limit`` of that observation."""
    try:
        trajectory = execute(TaskPackage.model_validate({**data, "id": ""}))
        result = trajectory.steps[step].result
        if not isinstance(result, dict):
            return False
        wanted = json.dumps(result[key][0][field], ensure_ascii=False)
    except (ValidationError, ValueError, LookupError, TypeError, AttributeError):
        return False
    return json.dumps(result, ensure_ascii=False).find(wanted) > limit


def vacuous_safety(data: Data, rng: random.Random) -> Data | None:
    """A safety rule keeps unchanged the records of a collection the package writes whose title
    (or name, or subject) is one no record has: it forbids nothing (a review note)."""
    found = [_operation(data, t["endpoint"]) for t in data["tools"]]
    written = [(spec.name, op.collection) for spec, op in filter(None, found) if op.access == "write"]
    for service, name in written:
        records = data["initial_state"].get(service, {}).get(name) or []
        field = next((f for f in ("title", "name", "subject") if records and f in records[0]), None)
        if field is not None:
            data.setdefault("safety", []).append({"kind": "state_unchanged", "collection": f"{service}.{name}",
                                                  "where": {field: f"No such {field} {rng.randint(100, 999)}"}})
            return data
    return None


def grader_overconstrained(data: Data, rng: random.Random) -> Data | None:
    """A check that matched composed free text loosely (``$regex``, any case) now wants the
    reference's exact string, case included: a correct agent that words it otherwise fails.
    (Text the request quotes, or a title copied from a record, is given; matching it exactly is
    no defect.)"""
    quoted = quoted_phrases(data["request"]["text"])
    written = {(k, v) for step in data["reference"] for k, v in step.get("args", {}).items()
               if isinstance(v, str) and len(v.split()) >= 3 and not any(q in v for q in quoted)
               and v not in strings(data["initial_state"])}
    for check in data["checks"]:
        for key in ("where", "expect"):
            for field, matcher in (check.get(key) or {}).items():
                exact = next((v for k, v in written if k == field), None)
                if isinstance(matcher, dict) and "$regex" in matcher and exact is not None:
                    check[key][field] = exact
                    check["ignore_case"] = False
                    return data
    return None


def unknown_entity(data: Data, rng: random.Random) -> Data | None:
    """The request names a person the directory does not have: a known person's last name swapped
    for another ("Priya Nair" where the directory has Priya Natarajan)."""
    text = data["request"]["text"]
    names = [r["name"] for services in data["initial_state"].values() for rows in services.values() for r in rows
             if isinstance(r.get("name"), str) and len(r["name"].split()) == 2 and r["name"] in text]
    if not names:
        return None
    first, last = rng.choice(names).split()
    data["request"]["text"] = text.replace(f"{first} {last}", f"{first} {'Vanterpool' if last != 'Vanterpool' else 'Okafor'}")
    return data


def ungrounded_value(data: Data, rng: random.Random) -> Data | None:
    """A date the reference writes and a check pins moves a few days, in both, to a date the
    package nowhere states: the checks now require a date the agent cannot learn."""
    dates = {v for step in data["reference"] for v in strings(step.get("args", {})) if ISO_DATE.fullmatch(v) and len(v) == 10}
    pinned = [d for d in sorted(dates) if any(d in strings(c.get("where") or c.get("expect") or {})
                                             for c in data["checks"])]
    if not pinned:
        return None
    old = rng.choice(pinned)
    whole = json.dumps(data)
    new = next((d for d in ((date.fromisoformat(old) + timedelta(days=k)).isoformat() for k in (3, 5, 11, 17, 41))
                if d not in whole), None)
    if new is None:
        return None
    for part in ("reference", "checks"):
        data[part] = json.loads(json.dumps(data[part]).replace(f'"{old}"', f'"{new}"'))
    return data


def capability_unmet(data: Data, rng: random.Random) -> Data | None:
    """A robustness package without its fault: the reference no longer meets a failure."""
    if data["capability"] != "robustness" or not data.get("faults"):
        return None
    failing = [i for i, step in enumerate(data["reference"]) if step.get("expect_status")]
    data["faults"] = []
    for i in reversed(failing):
        del data["reference"][i]
        _shift_refs_after(data, i, -1)
    return data


def _shift_refs_after(data: Data, index: int, by: int) -> None:
    """Move every ``$ref`` to a step after ``index`` by ``by`` (a step was removed or inserted)."""
    def shift(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return f"steps[{n + by if n > index else n}]"

    text = json.dumps(data["reference"])
    data["reference"] = json.loads(re.sub(r"steps\[(\d+)\]", shift, text))


DEFECTS: dict[str, Callable[[Data, random.Random], Data | None]] = {
    "unknown_endpoint": unknown_endpoint,
    "unknown_tool": unknown_tool,
    "tool_schema_mismatch": tool_schema_mismatch,
    "dangling_reference": dangling_reference,
    "weights_invalid": weights_invalid,
    "judge_overweight": judge_overweight,
    "safety_contradiction": safety_contradiction,
    "hidden_fact_leaked": hidden_fact_leaked,
    "request_check_mismatch": request_check_mismatch,
    "reference_error": reference_error,
    "reference_not_full_score": reference_not_full_score,
    "null_agent_passes": null_agent_passes,
    "grader_underconstrained": grader_underconstrained,
    "grader_counts_calls": grader_counts_calls,
    "clarification_unnecessary": clarification_unnecessary,
    "evidence_truncated": evidence_truncated,
    "vacuous_safety": vacuous_safety,
    "grader_overconstrained": grader_overconstrained,
    "unknown_entity": unknown_entity,
    "ungrounded_value": ungrounded_value,
    "capability_unmet": capability_unmet,
}


def apply_defect(package: TaskPackage, name: str, rng: random.Random) -> TaskPackage | None:
    """``package`` with defect ``name`` injected (id recomputed), or None if it does not apply."""
    data = DEFECTS[name](copy.deepcopy(package.model_dump(mode="json")), rng)
    if data is None:
        return None
    data["id"] = ""
    try:
        return TaskPackage.model_validate(data).with_id()
    except ValidationError:
        return None  # this package cannot carry that defect and stay a valid package


def inject_defect(package: TaskPackage, rng: random.Random) -> tuple[TaskPackage, str] | None:
    """Inject one applicable defect chosen by ``rng``, among those that refuse a package (not
    ``evidence_truncated``, which only marks it not ``sft_ready``, nor ``vacuous_safety``, a
    review note); returns the package and its label."""
    names = [n for n in DEFECTS if BASIS[Code(n)] not in (Basis.TRAINING, Basis.REVIEW)]
    rng.shuffle(names)
    for name in names:
        broken = apply_defect(package, name, rng)
        if broken is not None:
            return broken, name
    return None

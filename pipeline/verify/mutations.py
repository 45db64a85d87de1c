"""Mutation testing of the graders: counterfactual trajectories derived from the reference must be
told apart from it. Raises ``null_agent_passes``, ``grader_underconstrained``,
``grader_counts_calls`` and ``clarification_unnecessary``.

Which mutations must fail, and how false rejections are avoided:

- **null agent** (no calls, no questions, empty answer) must score below ``floor`` (0.25).
- **drop a write**: each reference call that succeeded on a ``write`` operation is removed with
  every step that ``$ref``s it (directly or not); the result must score below the pass threshold.
  Read-only lookups are never dropped on their own: an agent may legitimately find data another
  way. A write the checks do not require is a finding too: the request did not ask for it, or the
  checks do not grade it.
- **duplicate in place**: two or more successful creates through the same tool with different
  arguments are replaced by repeats of the first one's arguments; the result must fail. Checks that
  count calls or records rather than distinct items are what let it pass.
- **repeat a create**: the first successful create of each tool is run once more with the same
  arguments; the result must lose score (one message must not pass as two).
- **perturb an argument**: one argument of a successful write is changed to another valid value —
  another record's id/email/name of the same collection, a date one day later, another enum value
  or number the request states — and the result must lose score. Only request-grounded values
  are perturbed (values of records in the state, dates, enum values and numbers that the request
  states); free text such as titles or message bodies is left alone, and values that come from a
  hidden fact are covered by the clarification mutation instead. When bulk work repeats one
  argument of one tool over many steps, its first and last occurrences are perturbed.
- **no clarification** (packages with hidden facts): every ``ask`` is dropped and each ``$fact``
  is replaced by the most plausible wrong value; the result must fail. A reference that never asks
  at all is itself this finding.
- **drop the answer** (packages with ``answer_contains``/``answer_matches`` checks): the final answer
  is emptied; the result must lose score.

When the reference itself misses full score (``reference_not_full_score``), only the null agent and
the never-asks check run: the other mutations are measured against a reference that passes.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.episode import Episode
from pipeline.core.grading import Grader
from pipeline.core.outcomes import Finding
from pipeline.core.package import (
    NULL_AGENT_FLOOR,
    PASS_THRESHOLD,
    AnswerStep,
    AskStep,
    CallStep,
    Fact,
    Step,
    TaskPackage,
)
from pipeline.core.references import is_ref, iter_refs, parse_ref
from pipeline.core.services import find_operation
from pipeline.core.trajectory import Trajectory
from pipeline.verify.execution import ReferenceRun

MAX_PERTURBATIONS = 16
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})(.*)$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")


def null_agent_score(package: TaskPackage, grader: Grader | None = None) -> float:
    """The score of an agent that makes no call, asks nothing and answers nothing."""
    return (grader or Grader(package)).value(Episode(package).trajectory())


def null_agent_findings(package: TaskPackage, floor: float = NULL_AGENT_FLOOR,
                        grader: Grader | None = None) -> list[Finding]:
    null = null_agent_score(package, grader)
    if null < floor:
        return []
    return [Finding(code=Code.NULL_AGENT_PASSES, detail={"score": null, "floor": floor},
                    message=f"an agent that does nothing scores {null:.3f} (floor {floor:g})")]


def _run(run: ReferenceRun, steps: dict[int, Step], fact_values: dict[str, str] | None = None,
         order: list[int] | None = None) -> float:
    """The score of running ``steps`` (keyed by the index their ``$ref``s use) in ``order``
    (default: by index), from the reference's checkpoint at the prefix they share with it."""
    ids = sorted(steps) if order is None else order
    return run.variant_score(ids, [steps[i] for i in ids], fact_values)


def _access(package: TaskPackage, tool: str) -> tuple[str, str] | None:
    spec = package.tool(tool)
    found = find_operation(spec.endpoint) if spec else None
    return (found[1].access, found[1].effect) if found else None


def write_steps(package: TaskPackage, ref: Trajectory) -> list[int]:
    """Reference call steps that succeeded on a write operation."""
    out = []
    for rec in ref.steps:
        if rec.kind == "call" and rec.status is not None and 200 <= rec.status < 300 and rec.tool:
            kind = _access(package, rec.tool)
            if kind and kind[0] == "write":
                out.append(rec.index)
    return out


def dependents(package: TaskPackage, index: int) -> set[int]:
    """``index`` and every step that ``$ref``s it, directly or through another dependent."""
    dropped = {index}
    for i, step in enumerate(package.reference):
        if i > index and isinstance(step, CallStep):
            for ref in iter_refs(step.args):
                if "$ref" in ref and parse_ref(str(ref["$ref"]))[1] in dropped:
                    dropped.add(i)
                    break
    return dropped


def _shift_date(text: str, days: int) -> str | None:
    m = _DATE.match(text)
    if not m:
        return None
    try:
        d = date.fromisoformat(m.group(1)) + timedelta(days=days)
    except ValueError:
        return None
    return d.isoformat() + m.group(2)


def _records_with(package: TaskPackage, value: Any) -> list[tuple[list[dict[str, Any]], str]]:
    """(collection records, field) pairs where some initial record's identifying field equals value."""
    out = []
    for collections in package.initial_state.values():
        for records in collections.values():
            for rec in records:
                for field in ("id", "email", "name"):
                    if rec.get(field) == value:
                        out.append((records, field))
    return out


def alternative(package: TaskPackage, value: Any, schema: dict[str, Any] | None) -> Any:
    """Another valid value for a request-grounded argument, or None when it is not one."""
    text = package.request.text.casefold()
    for records, field in _records_with(package, value):
        other = next((r[field] for r in records if r.get(field) not in (None, value)), None)
        if other is not None:
            return other
    if isinstance(value, str):
        shifted = _shift_date(value, 1)
        if shifted:
            return shifted
        enum = (schema or {}).get("enum")
        if enum and re.search(rf"\b{re.escape(value.casefold())}\b", text):
            return next((e for e in enum if e != value), None)
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and re.search(rf"(?<![\d.]){re.escape(str(value))}(?![\d])", text):
        return value + 1
    return None


def guess_wrong(fact: Fact, package: TaskPackage) -> str:
    """The most plausible wrong value an agent would use without asking for ``fact``."""
    if fact.corrects:
        return fact.corrects
    shifted = _shift_date(fact.value, 1)
    if shifted:
        return shifted
    m = _TIME.match(fact.value)
    if m:
        return f"{(int(m.group(1)) + 1) % 24:02d}:{m.group(2)}"
    if re.fullmatch(r"-?\d+", fact.value):
        return str(int(fact.value) + 1)
    other = alternative(package, fact.value, None)
    return str(other) if other is not None else f"unknown {fact.key.replace('_', ' ')}"


def _perturbations(package: TaskPackage, ref: Trajectory, writes: list[int]) -> list[tuple[int, str, Any, CallStep]]:
    """(step, argument path, new value, mutated step) for every perturbable write argument."""
    out: list[tuple[int, str, Any, CallStep]] = []
    records = {r.index: r for r in ref.steps}
    for i in writes:
        step = package.reference[i]
        assert isinstance(step, CallStep)
        tool = package.tool(step.call)
        props = tool.parameters.get("properties", {}) if tool else {}
        resolved = records[i].args or {}
        for key, original in step.args.items():
            value = resolved.get(key)
            if is_ref(original) and "$fact" in original:
                continue
            items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
            for pos, item in items:
                if isinstance(original, list) and pos is not None and is_ref(original[pos]) \
                        and "$fact" in original[pos]:
                    continue
                alt = alternative(package, item, props.get(key, {}).get("items") if pos is not None else props.get(key))
                if alt is None:
                    continue
                new_value: Any = list(value) if pos is not None else alt
                if pos is not None:
                    new_value[pos] = alt
                args = dict(step.args)
                args[key] = new_value
                path = key if pos is None else f"{key}[{pos}]"
                out.append((i, path, alt, CallStep(call=step.call, args=args)))
    return _first_and_last(out, package)[:MAX_PERTURBATIONS]


def _first_and_last(perturbations: list[tuple[int, str, Any, CallStep]],
                    package: TaskPackage) -> list[tuple[int, str, Any, CallStep]]:
    """Of the perturbations of one argument of one tool across many steps (bulk work), keep the
    first and the last: a grader that pins the argument on both ends pins it on the run."""
    by_arg: dict[tuple[str, str], list[int]] = {}
    for n, (i, path, _, _) in enumerate(perturbations):
        by_arg.setdefault((package.reference[i].call, path), []).append(n)  # type: ignore[union-attr]
    keep = sorted({members[0] for members in by_arg.values()} | {members[-1] for members in by_arg.values()})
    return [perturbations[n] for n in keep]


def mutation_findings(run: ReferenceRun, floor: float = NULL_AGENT_FLOOR) -> list[Finding]:
    """Every mutation described in the module docstring, against the reference ``run``."""
    package, ref, ref_score = run.package, run.trajectory, run.score
    findings: list[Finding] = []
    steps: dict[int, Step] = dict(enumerate(package.reference))

    findings += null_agent_findings(package, floor, run.grader)
    hides_facts = package.user is not None and bool(package.user.facts)
    if hides_facts and not any(isinstance(s, AskStep) for s in package.reference):
        findings.append(Finding(code=Code.CLARIFICATION_UNNECESSARY, detail={"mutation": "no_ask"},
                                message="the package hides facts from the request, but its reference never asks "
                                        "for them"))
    if ref_score < 1.0:
        return findings  # a reference that fails its own checks leaves nothing to tell mutations from

    writes = write_steps(package, ref)
    for i in writes:
        dropped = dependents(package, i)
        s = _run(run, {k: v for k, v in steps.items() if k not in dropped})
        if s >= PASS_THRESHOLD:
            tool = package.reference[i].call  # type: ignore[union-attr]
            also = f" (and dependent steps {sorted(dropped - {i})})" if len(dropped) > 1 else ""
            findings.append(Finding(
                code=Code.GRADER_UNDERCONSTRAINED, step=i, detail={"mutation": "drop_write", "score": s},
                message=f"dropping reference step {i} ({tool}){also} still scores {s:.3f}: the checks do not "
                        "require what it does"))

    findings += _duplicate_findings(run, steps, writes)
    findings += _repeat_findings(run, steps, writes)

    for i, path, alt, mutated in _perturbations(package, ref, writes):
        s = _run(run, {**steps, i: mutated})
        if s >= ref_score:
            findings.append(Finding(
                code=Code.GRADER_UNDERCONSTRAINED, step=i,
                detail={"mutation": "perturb_argument", "argument": path, "value": alt, "score": s},
                message=f"changing {path} of step {i} to {alt!r} keeps score {s:.3f}: the checks do not pin it"))

    findings += _clarification_findings(run, steps)

    answer_checked = any(c.kind in ("answer_contains", "answer_matches") for c in package.checks)
    if answer_checked:
        s = _run(run, {k: (AnswerStep(answer="") if isinstance(v, AnswerStep) else v) for k, v in steps.items()})
        if s >= ref_score:
            findings.append(Finding(code=Code.GRADER_UNDERCONSTRAINED,
                                    detail={"mutation": "drop_answer", "score": s},
                                    message=f"an empty final answer keeps score {s:.3f}: the answer checks "
                                            "accept nothing"))
    return findings


def _duplicate_findings(run: ReferenceRun, steps: dict[int, Step], writes: list[int]) -> list[Finding]:
    package, ref = run.package, run.trajectory
    records = {r.index: r for r in ref.steps}
    groups: dict[str, list[int]] = {}
    for i in writes:
        tool = records[i].tool or ""
        kind = _access(package, tool)
        if kind and kind[1] == "create":
            groups.setdefault(tool, []).append(i)
    out: list[Finding] = []
    for tool, members in groups.items():
        first = records[members[0]].args or {}
        if len(members) < 2 or all((records[j].args or {}) == first for j in members[1:]):
            continue
        mutated = {**steps, **{j: CallStep(call=tool, args=first) for j in members[1:]}}
        s = _run(run, mutated)
        if s >= PASS_THRESHOLD:
            out.append(Finding(
                code=Code.GRADER_COUNTS_CALLS, step=members[0], detail={"mutation": "duplicate_in_place", "score": s},
                message=f"repeating the first {tool} call {len(members)} times instead of {len(members)} distinct "
                        f"creates still scores {s:.3f}: the checks count calls or records, not distinct items"))
    return out


def _repeat_findings(run: ReferenceRun, steps: dict[int, Step], writes: list[int]) -> list[Finding]:
    """Repeating one successful create (the same arguments once more) must lose score: a grader
    that lets one message become two, or one order two, counts at least, not exactly."""
    package, ref, ref_score = run.package, run.trajectory, run.score
    records = {r.index: r for r in ref.steps}
    out: list[Finding] = []
    seen: set[str] = set()
    for i in writes:
        tool = records[i].tool or ""
        kind = _access(package, tool)
        if not kind or kind[1] != "create" or tool in seen:
            continue
        seen.add(tool)
        ids = sorted(steps)
        # the copy runs right after the original, under a fresh index no $ref points at
        order = [*ids[: ids.index(i) + 1], max(ids) + 1, *ids[ids.index(i) + 1:]]
        mutated = {**steps, max(ids) + 1: CallStep(call=tool, args=records[i].args or {})}
        s = _run(run, mutated, order=order)
        if s >= ref_score:
            out.append(Finding(
                code=Code.GRADER_COUNTS_CALLS, step=i, detail={"mutation": "repeat_create", "score": s},
                message=f"repeating step {i} ({tool}) once more keeps score {s:.3f}: the checks accept a second, "
                        "identical item where the request asks for one"))
    return out


def _clarification_findings(run: ReferenceRun, steps: dict[int, Step]) -> list[Finding]:
    package = run.package
    asks = [i for i, s in steps.items() if isinstance(s, AskStep)]
    if package.user is None or not package.user.facts or not asks:
        return []
    guesses = {f.key: guess_wrong(f, package) for f in package.user.facts}
    s = _run(run, {k: v for k, v in steps.items() if k not in asks}, fact_values=guesses)
    if s < PASS_THRESHOLD:
        return []
    return [Finding(code=Code.CLARIFICATION_UNNECESSARY, detail={"mutation": "guess_facts", "guesses": guesses,
                                                                "score": s},
                    message=f"never asking and guessing {guesses} still scores {s:.3f}: the checks do not need "
                            "the clarification")]

"""Evidence under truncation. Raises ``evidence_truncated``.

The reference trajectory is rendered exactly as the training export stores it
(``pipeline.core.training_format``: each tool observation cut to ``obs_limit`` characters, samples
over ``sample_budget`` characters dropped). Evidence is lost when:

- the sample is over budget (the export would drop it whole);
- a ``$ref`` names a value that is not within the cut observation of the step it points at;
- a value the reference writes literally, or a value the final answer states (emails, ids, dates,
  numbers, and every ``answer_contains`` value), is found only in tool observations of earlier
  steps — not in the request or the user's replies — and not within their cut text. Values match
  as whole tokens, and a write's own result (which echoes its arguments) is not evidence for it.

Values the agent could not have read anywhere (an aggregate it computed, a title it chose) are
not evidence and are ignored.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import leaves
from pipeline.core.outcomes import Finding
from pipeline.core.package import CallStep, TaskPackage
from pipeline.core.references import ResolveError, iter_refs, lookup_ref, parse_ref
from pipeline.core.training_format import Policy, Sample, cut, observation_text, render_sample
from pipeline.core.trajectory import Trajectory

_ANSWER_VALUES = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"      # emails
    r"|\b[a-z]+-\d+\b"                   # ids such as todo-004, c-101
    r"|\b\d{4}-\d{2}-\d{2}\b"            # dates
    r"|\b\d[\d,]*(?:\.\d+)?\b",          # numbers
    re.IGNORECASE,
)


def _as_text(value: Any) -> str:
    """How a value appears inside compact JSON (strings without their quotes)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text[1:-1] if isinstance(value, str) else text


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
    records = {r.index: r for r in ref.steps}
    full = {r.index: observation_text(r.status, r.result).casefold() for r in ref.steps if r.kind == "call"}
    visible = {i: cut(text, policy.obs_limit) for i, text in full.items()}

    for i, step in enumerate(package.reference):
        if not isinstance(step, CallStep):
            continue
        for ref_obj in iter_refs(step.args):
            if "$ref" not in ref_obj:
                continue
            path = ref_obj["$ref"]
            try:
                target = parse_ref(path)[1]
                value = lookup_ref(path, records)
            except ResolveError:
                continue  # reported as dangling_reference or reference_error
            if ".result" not in path or target not in visible:
                continue
            missing = [v for v in leaves(value) if not _shown(_as_text(v).casefold(), visible[target])]
            if missing:
                out.append(Finding(code=Code.EVIDENCE_TRUNCATED, step=i, detail={"ref": path},
                                   message=f"step {i} uses {path} = {missing[0]!r}, which lies beyond character "
                                           f"{policy.obs_limit:,} of step {target}'s observation"))

    said = " ".join([package.request.text, *(r.reply or "" for r in ref.steps)]).casefold()
    candidates: list[tuple[str, int, str]] = []  # (where, position in the reference, value)
    for i, step in enumerate(package.reference):
        if isinstance(step, CallStep):
            literal = {k: v for k, v in step.args.items() if not list(iter_refs(v))}
            candidates += [(f"step {i}", i, _as_text(v)) for v in leaves(literal) if v not in (None, "")]
    end = len(package.reference)
    candidates += [("the answer", end, m.group(0)) for m in _ANSWER_VALUES.finditer(ref.answer)]
    for check in package.checks:
        if check.kind == "answer_contains":
            candidates += [(f"check {check.id!r}", end, v) for v in check.values]
    reported: set[str] = set()
    for where, position, value in candidates:
        folded = value.casefold()
        if len(value) < 3 or folded in reported or _shown(folded, said):
            continue
        # Only what the agent had read before using the value counts: a write echoes its own arguments.
        earlier = [i for i in full if i < position]
        if not any(_shown(folded, full[i]) for i in earlier) or any(_shown(folded, visible[i]) for i in earlier):
            continue
        reported.add(folded)
        out.append(Finding(code=Code.EVIDENCE_TRUNCATED, detail={"value": value},
                           message=f"{where} depends on {value!r}, visible in an earlier tool observation only "
                                   f"beyond character {policy.obs_limit:,}"))
    return out


_JOINS_BEFORE = "_@.-"
_JOINS_AFTER = "_@-"


def _shown(value: str, text: str) -> bool:
    """Whether ``value`` occurs in ``text`` as a whole token (both already case folded): ``c-130`` is
    not shown by ``c-1301``, nor ``40`` by ``2040``; a full stop after it counts as punctuation
    unless a word character follows (``a.b``)."""
    start = text.find(value)
    while start != -1:
        end = start + len(value)
        before = text[start - 1] if start else " "
        after, next_after = text[end:end + 1], text[end + 1:end + 2]
        joined_before = before.isalnum() or before in _JOINS_BEFORE
        joined_after = after.isalnum() or after in _JOINS_AFTER or (after == "." and next_after.isalnum())
        if not joined_before and not joined_after:
            return True
        start = text.find(value, start + 1)
    return False

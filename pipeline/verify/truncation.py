"""Evidence under truncation. Raises ``evidence_truncated``.

The reference trajectory is rendered exactly as the training export stores it
(``pipeline.training_format``: each tool observation cut to ``obs_limit`` characters, samples
over ``sample_budget`` characters dropped). Evidence is lost when:

- the sample is over budget (the export would drop it whole);
- a ``$ref`` names a value that is not within the cut observation of the step it points at;
- a value the reference writes literally, or a value the final answer states (emails, ids, dates,
  numbers, and every ``answer_contains`` value), is found only in tool observations — not in the
  request or the user's replies — and not within the cut observations.

Values the agent could not have read anywhere (an aggregate it computed, a title it chose) are
not evidence and are ignored.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.package import CallStep, TaskPackage
from pipeline.runtime import Trajectory, iter_refs, lookup_ref
from pipeline.training_format import Policy, cut, observation_text, render_sample
from pipeline.verify.codes import Code
from pipeline.verify.report import Finding

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


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def evidence_findings(package: TaskPackage, ref: Trajectory, policy: Policy | None = None) -> list[Finding]:
    policy = policy or Policy()
    sample = render_sample(package, ref, policy)
    out: list[Finding] = []
    if sample.over_budget(policy):
        out.append(Finding(code=Code.EVIDENCE_TRUNCATED, detail={"chars": sample.chars},
                           message=f"the training sample is {sample.chars:,} characters, over the "
                                   f"{policy.sample_budget:,} budget: the export would drop it"))
    records = {r.index: r for r in ref.steps}
    full = {r.index: observation_text(r.status, r.result) for r in ref.steps if r.kind == "call"}
    visible = {i: cut(text, policy.obs_limit) for i, text in full.items()}

    for i, step in enumerate(package.reference):
        if not isinstance(step, CallStep):
            continue
        for ref_obj in iter_refs(step.args):
            if "$ref" not in ref_obj:
                continue
            path = str(ref_obj["$ref"])
            target = int(path.split("[", 2)[1].split("]")[0])
            if ".result" not in path or target not in visible:
                continue
            try:
                value = lookup_ref(path, records)
            except ValueError:
                continue
            missing = [v for v in _leaves(value) if _as_text(v) not in visible[target]]
            if missing:
                out.append(Finding(code=Code.EVIDENCE_TRUNCATED, step=i, detail={"ref": path},
                                   message=f"step {i} uses {path} = {missing[0]!r}, which lies beyond character "
                                           f"{policy.obs_limit:,} of step {target}'s observation"))

    said = " ".join([package.request.text, *(r.reply or "" for r in ref.steps)]).casefold()
    seen_full = " ".join(full.values()).casefold()
    seen_cut = " ".join(visible.values()).casefold()
    candidates: list[tuple[str, str]] = []
    for i, step in enumerate(package.reference):
        if isinstance(step, CallStep):
            literal = {k: v for k, v in step.args.items() if not list(iter_refs(v))}
            candidates += [(f"step {i}", _as_text(v)) for v in _leaves(literal) if v not in (None, "")]
    candidates += [("the answer", m.group(0)) for m in _ANSWER_VALUES.finditer(ref.answer)]
    for check in package.checks:
        if check.kind == "answer_contains":
            candidates += [(f"check {check.id!r}", v) for v in check.values]
    reported: set[str] = set()
    for where, value in candidates:
        v = value.casefold()
        if len(v) < 3 or v in reported or v in said or v not in seen_full or v in seen_cut:
            continue
        reported.add(v)
        out.append(Finding(code=Code.EVIDENCE_TRUNCATED, detail={"value": value},
                           message=f"{where} depends on {value!r}, visible in a tool observation only beyond "
                                   f"character {policy.obs_limit:,}"))
    return out

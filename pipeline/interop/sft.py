"""SFT export: each package's reference trajectory as OpenAI-format chat messages, one JSON object
per line with ``messages`` and ``tools`` (the layout common SFT trainers accept).

The training truncation policy (``pipeline.core.training_format``) is applied, and a sample whose
evidence does not survive it — over the sample budget, or a value the answer, a check or a
``$ref`` depends on cut away — is left out and counted, never written half-true. From the catalog
(``export_sft``), a row's stored ``sft_ready`` decides when its run was verified under the export's
own policy; otherwise the evidence is checked here, as the verifier checks it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import Field

from pipeline.catalog.selection import Selection
from pipeline.core.episode import execute
from pipeline.core.grading import Grader
from pipeline.core.package import TaskPackage
from pipeline.core.strict_model import StrictModel
from pipeline.core.training_format import Policy, render_sample
from pipeline.verify.truncation import evidence_findings

SKIP_REASONS: dict[str, str] = {
    "not_sft_ready": "its verdict says the reference loses evidence under this policy (sft_ready false)",
    "evidence_truncated": "the reference loses evidence under this policy (checked at export)",
    "no_reference": "the package has no reference solution (an imported task)",
    "reference_error": "the reference solution fails a call",
}
"""Why a package is left out of the SFT export."""


class SFTSummary(StrictModel):
    rows: int
    skipped: dict[str, int]
    """Packages left out, by reason (``SKIP_REASONS``)."""
    obs_limit: int
    sample_budget: int
    from_verdict: int = 0
    """Packages whose stored ``sft_ready`` decided (their run was verified under this policy)."""
    checked: int = 0
    """Packages whose evidence was checked at export (no stored ``sft_ready``, or another policy)."""
    reasons: dict[str, str] = Field(default_factory=dict)
    """What each reason in ``skipped`` means."""


def sft_sample(package: TaskPackage, policy: Policy,
               sft_ready: bool | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """The training record for ``package``, or None and why it is left out (``SKIP_REASONS``).
    ``sft_ready`` is what the package's verdict said under this same ``policy``: False leaves it
    out unrun, True skips the evidence check; None checks the evidence here."""
    if not package.has_reference:
        return None, "no_reference"
    if sft_ready is False:
        return None, "not_sft_ready"
    trajectory = execute(package)
    if trajectory.errors:
        return None, "reference_error"
    sample = render_sample(package, trajectory, policy)
    if sft_ready is None and evidence_findings(package, trajectory, policy, sample):
        return None, "evidence_truncated"
    return {
        "id": package.id,
        "capability": package.capability,
        "workflow": package.workflow,
        "score": Grader(package).value(trajectory),
        "messages": sample.messages,
        "tools": sample.tools,
    }, None


def write_sft(packages: Iterable[TaskPackage], out: Path, policy: Policy | None = None) -> SFTSummary:
    """Write one sample per line to ``out``, checking every package's evidence; return how many
    were written and skipped (by reason)."""
    return write_samples(((package, None) for package in packages), out, policy)


def export_sft(selection: Selection, out: Path, policy: Policy | None = None) -> SFTSummary:
    """``write_samples`` of a catalog selection: a row's stored ``sft_ready`` decides when its run
    was verified under ``policy`` (its ``obs_limit`` and ``sample_budget``); otherwise (a row stored
    before schema 3, a run under another policy or none recorded) the evidence is checked here."""
    policy = policy or Policy()
    return write_samples(_known(selection, policy), out, policy)


def _known(selection: Selection, policy: Policy) -> Iterator[tuple[TaskPackage, bool | None]]:
    for package, stored in selection.sft_rows():
        same = (stored.obs_limit, stored.sample_budget) == (policy.obs_limit, policy.sample_budget)
        yield package, stored.sft_ready if same else None


def write_samples(packages: Iterable[tuple[TaskPackage, bool | None]], out: Path,
                  policy: Policy | None = None) -> SFTSummary:
    """Write one sample per line to ``out`` for each ``(package, sft_ready)`` (``sft_sample``);
    return how many were written and skipped (by reason), and how many were decided by their
    stored ``sft_ready`` or checked here."""
    policy = policy or Policy()
    skipped: Counter[str] = Counter()
    rows = from_verdict = checked = 0
    with out.open("w", encoding="utf-8") as fh:
        for package, sft_ready in packages:
            record, reason = sft_sample(package, policy, sft_ready)
            if package.has_reference:
                from_verdict += sft_ready is not None
                checked += sft_ready is None
            if record is None:
                skipped[reason or "unknown"] += 1
                continue
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            rows += 1
    return SFTSummary(rows=rows, skipped=dict(skipped), obs_limit=policy.obs_limit, sample_budget=policy.sample_budget,
                      from_verdict=from_verdict, checked=checked,
                      reasons={reason: SKIP_REASONS[reason] for reason in skipped if reason in SKIP_REASONS})


def sft_problems(record: dict[str, Any]) -> list[str]:
    """What is wrong with one SFT record's structure (empty when it is well formed): system then
    user first; every ``tool_call`` id answered by exactly one ``tool`` message before the next
    assistant or user turn; no tool message without its call; an assistant answer last; tools present."""
    problems: list[str] = []
    messages = record.get("messages") or []
    if [m.get("role") for m in messages[:2]] != ["system", "user"]:
        problems.append("does not start with a system then a user message")
    tools = record.get("tools") or []
    if not tools or any(t.get("type") != "function" or not t.get("function", {}).get("name") for t in tools):
        problems.append("tool schemas missing or malformed")
    open_ids: list[str] = []
    seen_ids: set[str] = set()
    for n, message in enumerate(messages[2:], 2):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_ids:
                problems.append(f"message {n}: tool result for unknown or already answered call {call_id!r}")
            else:
                open_ids.remove(call_id)
            continue
        if open_ids:
            problems.append(f"message {n}: calls {open_ids} not answered before the next turn")
            open_ids = []
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                if call.get("id") in seen_ids:
                    problems.append(f"message {n}: tool_call id {call.get('id')!r} reused")
                seen_ids.add(call.get("id"))
                open_ids.append(call.get("id"))
                try:
                    json.loads(call["function"]["arguments"])
                except (KeyError, TypeError, ValueError):
                    problems.append(f"message {n}: tool_call arguments are not a JSON string")
        elif role != "user":
            problems.append(f"message {n}: unexpected role {role!r}")
    if open_ids:
        problems.append(f"calls {open_ids} never answered")
    last = messages[-1] if messages else {}
    if last.get("role") != "assistant" or last.get("tool_calls") or not last.get("content"):
        problems.append("does not end with an assistant answer")
    return problems

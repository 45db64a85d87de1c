"""SFT export: each package's reference trajectory as OpenAI-format chat messages, one JSON object
per line with ``messages`` and ``tools`` (the layout common SFT trainers accept).

The training truncation policy (``pipeline.core.training_format``) is applied, and a sample whose
evidence does not survive it — over the sample budget, or a value the answer, a check or a
``$ref`` depends on cut away — is left out and counted, never written half-true.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pipeline.core.episode import execute
from pipeline.core.grading import Grader
from pipeline.core.package import TaskPackage
from pipeline.core.training_format import Policy, render_sample
from pipeline.verify.truncation import evidence_findings


class SFTSummary(BaseModel):
    rows: int
    skipped: dict[str, int]
    obs_limit: int
    sample_budget: int


def sft_sample(package: TaskPackage, policy: Policy) -> tuple[dict[str, Any] | None, str | None]:
    """The training record for ``package``, or None and why it is left out."""
    if not package.has_reference:
        return None, "no_reference"
    trajectory = execute(package)
    if trajectory.errors:
        return None, "reference_error"
    sample = render_sample(package, trajectory, policy)
    if evidence_findings(package, trajectory, policy, sample):
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
    """Write one sample per line to ``out``; return how many were written and skipped (by reason)."""
    policy = policy or Policy()
    skipped: Counter[str] = Counter()
    rows = 0
    with out.open("w", encoding="utf-8") as fh:
        for package in packages:
            record, reason = sft_sample(package, policy)
            if record is None:
                skipped[reason or "unknown"] += 1
                continue
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            rows += 1
    return SFTSummary(rows=rows, skipped=dict(skipped), obs_limit=policy.obs_limit, sample_budget=policy.sample_budget)


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

"""SFT from rollouts (rejection sampling): the passing rollouts' own conversations as training
samples, one JSON object per line with ``messages`` and ``tools``, as the reference export writes.

A rollout's ``messages`` (``core.rollouts.Rollout``) are kept as the agent produced them, its own
text included; only the tool observations are rewritten, each as the reference export renders one
(``training_format.observation_text`` of its ``{"status", "result"}``, cut to ``obs_limit``
characters). The sample then goes through the reference export's checks: a sample over the
budget, or one whose answer, writes or checks depend on a value the cut hides
(``verify.truncation.evidence_findings``, with the agent's own steps standing for the reference),
is left out and counted, as is one that is not a well-formed conversation (``sft.sft_problems``) or
that holds a credential-looking string.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import Field

from pipeline.catalog.redact import mask_credentials
from pipeline.catalog.selection import Selection, StoredRollout
from pipeline.core.jsonvalues import strings
from pipeline.core.package import PASS_SCORE, AnswerStep, AskStep, CallStep, Step, TaskPackage
from pipeline.core.strict_model import StrictModel
from pipeline.core.training_format import Policy, Sample, compact, cut, observation_text, tool_schemas
from pipeline.core.trajectory import StepRecord, Trajectory
from pipeline.interop.sft import sft_problems
from pipeline.verify.truncation import evidence_findings

SKIP_REASONS: dict[str, str] = {
    "evidence_truncated": "the trajectory loses evidence under this policy (over the sample budget, or a value "
                          "its answer, writes or checks depend on lies beyond a cut)",
    "malformed": "not a well-formed conversation (e.g. no final answer: the episode hit its turn limit)",
    "unreadable_observation": "a tool message is not the JSON of {\"status\", \"result\"}",
    "credential": "a message holds a credential-looking string",
}
"""Why a passing rollout is left out of the SFT export."""


class RolloutSFTSummary(StrictModel):
    rows: int
    """Samples written: one per rollout kept."""
    packages: int
    """Packages with at least one sample written."""
    skipped: dict[str, int]
    """Passing rollouts left out, by reason (``SKIP_REASONS``)."""
    min_score: float
    model: str | None
    obs_limit: int
    sample_budget: int
    reasons: dict[str, str] = Field(default_factory=dict)
    """What each reason in ``skipped`` means."""


class _Unreadable(ValueError):
    """A tool message that is not an observation the export can render."""


def _observation(content: Any) -> tuple[int | None, dict[str, Any] | None]:
    try:
        data = json.loads(content) if isinstance(content, str) else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or set(data) != {"status", "result"}:
        raise _Unreadable
    status, result = data["status"], data["result"]
    if not (status is None or isinstance(status, int)) or not (result is None or isinstance(result, dict)):
        raise _Unreadable
    return status, result


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    try:
        args = json.loads(call["function"]["arguments"])
    except (KeyError, TypeError, ValueError):
        return {}
    return args if isinstance(args, dict) else {}


def agent_steps(messages: list[dict[str, Any]], obs_limit: int
                ) -> tuple[list[dict[str, Any]], list[Step], Trajectory, int]:
    """Read a rollout's conversation: the messages with each tool observation rendered and cut as
    the training format does, the agent's steps as reference steps (literal arguments), the
    trajectory they made (step ``i`` is reference step ``i``) and how many observations were cut.
    An assistant text followed by a user message is a question; any other is the answer.
    ``_Unreadable`` when a tool message is not an observation."""
    out: list[dict[str, Any]] = []
    steps: list[Step] = []
    records: list[StepRecord] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    cuts = 0
    answer = ""
    for n, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            status, result = _observation(message.get("content"))
            full = observation_text(status, result)
            cuts += len(full) > obs_limit
            out.append({**message, "content": cut(full, obs_limit)})
            tool, args = pending.pop(str(message.get("tool_call_id")), ("", {}))
            records.append(StepRecord(len(steps), "call", tool=tool, args=args, status=status, result=result))
            steps.append(CallStep(call=tool, args=args))
            continue
        out.append(message)
        if role != "assistant" or n < 2:
            continue
        calls = message.get("tool_calls") or []
        for call in (c for c in calls if isinstance(c, dict)):  # anything else: sft_problems says so
            function = call.get("function")
            function = function if isinstance(function, dict) else {}
            pending[str(call.get("id"))] = (str(function.get("name", "")), _arguments(call))
        text = message.get("content")
        if calls or not isinstance(text, str):
            continue
        following = messages[n + 1] if n + 1 < len(messages) else None
        if following is not None and following.get("role") == "user":
            reply = following.get("content")
            records.append(StepRecord(len(steps), "ask", ask=text, reply=reply if isinstance(reply, str) else ""))
            steps.append(AskStep(ask=text or "?"))
        else:
            answer = text
            records.append(StepRecord(len(steps), "answer", answer=text))
            steps.append(AnswerStep(answer=text))
    return out, steps, Trajectory(steps=records, answer=answer), cuts


def rollout_sample(package: TaskPackage, rollout: StoredRollout, policy: Policy
                   ) -> tuple[dict[str, Any] | None, str | None]:
    """The training record of one passing rollout, or None and why it is left out (``SKIP_REASONS``)."""
    try:
        messages, steps, trajectory, cuts = agent_steps(rollout.messages, policy.obs_limit)
    except _Unreadable:
        return None, "unreadable_observation"
    tools = tool_schemas(package)
    record = {"id": package.id, "capability": package.capability, "workflow": package.workflow,
              "model": rollout.model, "job": rollout.job, "sample": rollout.sample, "score": rollout.score,
              "messages": messages, "tools": tools}
    if sft_problems(record):
        return None, "malformed"
    if any(mask_credentials(text) != text for text in strings(messages)):
        return None, "credential"
    sample = Sample.model_construct(messages=messages, tools=tools, truncated_observations=cuts,
                                    chars=len(compact({"messages": messages, "tools": tools})))
    as_reference = package.model_copy(update={"reference": steps})
    if evidence_findings(as_reference, trajectory, policy, sample):
        return None, "evidence_truncated"
    return record, None


def export_rollout_sft(selection: Selection, out: Path, policy: Policy | None = None,
                       min_score: float = PASS_SCORE, model: str | None = None) -> RolloutSFTSummary:
    """Write one sample per line to ``out`` for each passing rollout (``passed``, no safety rule
    broken, ``score >= min_score``; of ``model`` only, when given) of the selected packages, by
    package id, model, job and sample (``rollout_sample``); return how many were written and left
    out (by reason)."""
    policy = policy or Policy()
    skipped: Counter[str] = Counter()
    rows = packages = 0
    with out.open("w", encoding="utf-8") as fh:
        for package, rollouts in selection.passing_rollouts(min_score, model):
            written = 0
            for rollout in rollouts:
                record, reason = rollout_sample(package, rollout, policy)
                if record is None:
                    skipped[reason or "unknown"] += 1
                    continue
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                written += 1
            rows += written
            packages += written > 0
    return RolloutSFTSummary(rows=rows, packages=packages, skipped=dict(skipped), min_score=min_score, model=model,
                             obs_limit=policy.obs_limit, sample_budget=policy.sample_budget,
                             reasons={r: SKIP_REASONS[r] for r in skipped if r in SKIP_REASONS})

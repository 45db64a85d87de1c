"""The record of one rollout: an agent model run on one package through the episode engine, and
how it scored. The contract between the rollout runner (``runs``), the catalog (table
``rollouts``), calibration, the exports and the report."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pipeline.core.grading import CheckResult
from pipeline.core.package import passes
from pipeline.core.strict_model import StrictModel

FinishReason = Literal["answer", "turn_limit", "budget", "error"]
"""Why an episode ended: the agent's final answer; the turn limit; a token or time budget; or an
error that ended it (the model server failed for good; ``Rollout.error`` says what)."""


class Rollout(StrictModel):
    """One sample of one model on one package.

    ``messages`` is the conversation in the shape of the SFT export (``core.training_format``):
    system, the request as the first user message, assistant messages with ``tool_calls``
    answered by ``tool`` messages, the user's replies as user messages, the final answer as the
    last assistant message. ``passed`` is full marks (``package.passes``), so no safety rule broken;
    ``turns`` counts the assistant messages."""

    package_id: str
    model: str
    sample: int = Field(ge=0)
    score: float
    checks: list[CheckResult]
    safety: list[CheckResult] = Field(default_factory=list)
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: FinishReason
    error: str | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def safety_ok(self) -> bool:
        return all(rule.passed is not False for rule in self.safety)

    @property
    def passed(self) -> bool:
        return passes(self.score)

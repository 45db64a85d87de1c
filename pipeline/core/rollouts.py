"""The record of one rollout: an agent model run on one package through the episode engine, and
how it scored. The contract between the rollout runner (``runs``), the catalog (table
``rollouts``), calibration, the exports and the report."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pipeline.core.grading import CheckResult
from pipeline.core.package import passes
from pipeline.core.strict_model import StrictModel

FinishReason = Literal["answer", "turn_limit", "budget", "error", "server_timeout", "server_error", "malformed_reply"]
"""Why an episode ended: the agent's final answer; the turn limit; a token or size budget; or the
model server failing for good (``Rollout.error`` says what): ``server_timeout`` (no whole reply
within the request's deadline), ``server_error`` (5xx, 429 or the connection lost, after the
retries), ``malformed_reply`` (a reply that is not a usable chat completion: not JSON, the wrong
shape, cut off, too large, usage out of range, text that is not text), ``error`` (any other
failure: a request the server refused, the model playing the user failing)."""
SERVER_FAILURES: tuple[str, ...] = ("server_timeout", "server_error", "malformed_reply")
"""The finish reasons that say the model server broke, not that the agent did anything."""
UNCOUNTED: tuple[str, ...] = ("error", *SERVER_FAILURES)
"""The finish reasons of episodes that measure the server, not the model: they count in no pass
rate (``Rollout.counted``)."""


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
    def counted(self) -> bool:
        """Whether the episode is a sample of the model (its end is not in ``UNCOUNTED``)."""
        return self.finish_reason not in UNCOUNTED

    @property
    def passed(self) -> bool:
        return passes(self.score)

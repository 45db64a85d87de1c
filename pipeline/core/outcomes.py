"""What stages hand each other about an attempt: a verification ``Verdict`` made of ``Finding``s,
a generation ``Failure`` when no package came out, and the ``LLMCall``s it cost. The catalog
stores all of them; every code is data here, never a prefix parsed out of a message.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from pipeline.core.codes import Code

VERIFIER_VERSION = "2"
"""Stored with every verdict; raised when what the verifier accepts changes."""


class Finding(BaseModel):
    """One reason a package is rejected."""

    code: Code
    """The reason code (``docs/verification.md`` lists them with examples)."""
    message: str
    """One line: what is wrong, naming the step, check or value."""
    step: int | None = None
    """The reference step concerned, if one is."""
    check: str | None = None
    """The id of the check or safety rule concerned, if one is."""
    detail: dict[str, Any] = Field(default_factory=dict)
    """Machine-readable particulars (the mutation tried, its score, the value ...)."""


class Verdict(BaseModel):
    """The verifier's judgement of one package: accepted when there is no finding."""

    id: str
    """The package id, computed from its content."""
    accepted: bool
    score: float | None = None
    """The reference solution's score (None when it was not run)."""
    codes: list[str] = Field(default_factory=list)
    """The distinct reason codes of the findings, in order of first appearance."""
    findings: list[Finding] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """Remarks that are not rejections (an id recomputed from the content ...)."""
    verifier_version: str = VERIFIER_VERSION

    @classmethod
    def build(cls, package_id: str, findings: list[Finding], score: float | None,
              notes: list[str] | None = None) -> Verdict:
        codes = list(dict.fromkeys(f.code.value for f in findings))
        return cls(id=package_id, accepted=not findings, score=score, codes=codes,
                   findings=findings, notes=notes or [])


class FailureCode(StrEnum):
    """Why an attempt produced no package to verify (or its verification could not finish)."""

    MALFORMED_OUTPUT = "malformed_output"
    SCHEMA_INVALID = "schema_invalid"
    TRUNCATED_OUTPUT = "truncated_output"
    LLM_ERROR = "llm_error"
    PROMPT_ERROR = "prompt_error"
    TEMPLATE_ERROR = "template_error"
    VERIFIER_ERROR = "verifier_error"


FAILURE_DESCRIPTIONS: dict[FailureCode, str] = {
    FailureCode.MALFORMED_OUTPUT: "the model's reply is not a JSON object (or not a chat completion)",
    FailureCode.SCHEMA_INVALID: "JSON that is not a valid task package, or a file that is not a task",
    FailureCode.TRUNCATED_OUTPUT: "the model stopped at its token limit",
    FailureCode.LLM_ERROR: "the model request failed for good (retries exhausted, or not worth retrying)",
    FailureCode.PROMPT_ERROR: "the attempt names a capability, template or service that does not exist",
    FailureCode.TEMPLATE_ERROR: "an offline workflow template rendered something that is not a valid package",
    FailureCode.VERIFIER_ERROR: "verification itself raised (a verifier bug): the attempt is lost, the run goes on",
}


class Failure(BaseModel):
    """Why an attempt has no verdict: a code and one line of detail."""

    code: FailureCode
    message: str

    def __str__(self) -> str:
        return f"{self.code.value}: {self.message}"


class LLMCall(BaseModel):
    """One request to the model: tokens, latency and outcome (``ok`` or an error class)."""

    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    status: str = "ok"
    error: str | None = None

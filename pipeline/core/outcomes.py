"""What stages hand each other about an attempt: a verification ``Verdict`` made of ``Finding``s,
a generation ``Failure`` when no package came out, and the ``LLMCall``s it cost. The catalog
stores all of them; every code is data here, never a prefix parsed out of a message.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from pipeline.core.codes import BASIS, Basis, Code
from pipeline.core.strict_model import StrictModel

VERIFIER_VERSION = "3"
"""Stored with every verdict; raised when what the verifier accepts changes."""


class Witness(StrictModel):
    """A trajectory that proves a finding by execution: a wrong agent that passes, or a correct
    agent that fails. ``synth play FILE --witness W`` replays ``actions`` in a fresh episode of the
    package (the engine ``TaskEnv`` runs) and grades them."""

    agent: Literal["wrong", "correct"]
    """``wrong``: an agent that does not do what the request asks, and must score below
    ``threshold``; ``correct``: an agent that does, and must reach it."""
    name: str
    """The agent's name (the mutation or variant: ``drop_write``, ``text_case``, ``reference`` ...)."""
    claim: str
    """Why the agent is wrong, or correct, in one line."""
    score: float
    """The score its replay gets."""
    threshold: float
    """The score a wrong agent must stay under, or a correct agent must reach."""
    actions: list[dict[str, Any]] = Field(default_factory=list)
    """What the agent did, in order, as ``TaskEnv`` takes actions: ``{"type": "tool_call", "name",
    "arguments"}``, ``{"type": "ask", "text"}``, ``{"type": "answer", "text"}``."""

    @property
    def holds(self) -> bool:
        """Whether the score proves the finding: a wrong agent at or above its threshold, or a
        correct agent below it."""
        return (self.score >= self.threshold) if self.agent == "wrong" else (self.score < self.threshold)


class Claim(StrictModel):
    """What the verifier read the request to ask, when a finding rests on that reading: the
    question a reader (``verify.readers``) is asked before the finding may refuse the package."""

    reading: str
    """One plain sentence: what the verifier read the request to ask (or allow)."""
    words: list[str] = Field(default_factory=list)
    """The words of the request the reading rests on, quoted from it."""
    instead: str
    """What the package's checks do instead, with the witness's score."""
    alternative: str
    """The other reading: the one under which the package is right."""
    records: list[dict[str, Any]] = Field(default_factory=list)
    """The records of the initial state the claim names (at most a few)."""
    today: str = ""
    """The package's current date and time (``now``) with its weekday: what "next week" means."""
    language: str = "en"
    """The request's language (``request.language``)."""
    agent_did: list[str] = Field(default_factory=list)
    """What the witness's agent did, one line an action (tool calls with their arguments, the
    answer), cut short."""
    user_answers: list[str] = Field(default_factory=list)
    """What the simulated user answers when asked, one line a fact ("hora: 15:30"): what an agent
    may learn by asking, beside the request and the records."""
    rules_unsure: str = ""
    """Why the rules cannot settle this reading themselves (empty: they read the request so). The
    rules reader answers ``unsure`` with it, so the finding is a review note until another reader
    agrees."""

    @property
    def key(self) -> str:
        """16 hex of a hash of the claim's text: with the package id, what a reader's answer is
        cached under."""
        text = "\n".join([self.reading, *self.words, self.instead, self.alternative])
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


ReaderAnswer = Literal["agrees", "disagrees", "unsure"]


class Reading(StrictModel):
    """A reader's answer to a ``Claim``."""

    answer: ReaderAnswer
    """``agrees``: a careful person reads the request as the claim does (the finding refuses);
    ``disagrees``: as the alternative; ``unsure``: cannot tell. Only ``agrees`` refuses."""
    reason: str = ""
    """The reader's reason, in a line."""
    reader: str = "rules"
    """Who read: ``rules``, ``model:<name>``, ``scripted``."""
    cached: bool = False
    """Taken from the catalog's earlier answer to the same package and claim (no tokens spent)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Proposal(StrictModel):
    """What a model reader reads the request to ask that the reference does otherwise: a value
    the reference writes or reports (``instead_of``) that the request, read carefully, makes
    ``value``. It refuses only through a witness: a correct agent that writes or reports
    ``value`` instead, played, and failing the checks (``verify.proposals``)."""

    value: Any
    """What a correct agent writes or reports."""
    instead_of: Any
    """The value the reference writes or reports in its place."""
    tool: str | None = None
    """The tool whose arguments carry it (None: the answer, or any write)."""
    reason: str = ""
    """Why, in the request's words."""


class Finding(StrictModel):
    """One thing verification found: a refusal, a review note, or a loss under the SFT policy
    (``Verdict`` sorts them by the code's ``Basis`` and the witness)."""

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
    witness: Witness | None = None
    """The trajectory that proves it, for a code whose basis is ``witnessed``."""
    claim: Claim | None = None
    """For a finding whose witness rests on reading the request's words: that reading
    (``verify.claims``)."""
    reading: Reading | None = None
    """The reader's answer to ``claim`` (None: not asked yet; the rules' reading stands)."""

    @property
    def basis(self) -> Basis:
        return BASIS[self.code]


Kind = Literal["refusal", "review", "sft"]


def kind_of(finding: Finding, require_sft: bool = False) -> Kind:
    """Where a finding goes: a ``refusal`` (structural, or witnessed by a witness that holds), a
    ``review`` note (a witnessed code without such a witness, a code of basis ``review``, or a
    finding whose claim the reader did not confirm), or
    ``sft`` (the reference loses evidence under the training policy; a refusal as well when
    ``require_sft``)."""
    basis = finding.basis
    if basis is Basis.TRAINING:
        return "refusal" if require_sft else "sft"
    if basis is Basis.REVIEW:
        return "review"
    if basis is Basis.WITNESSED and (finding.witness is None or not finding.witness.holds):
        return "review"
    if finding.reading is not None and finding.reading.answer != "agrees":
        return "review"  # the reader does not confirm the reading the witness is built on
    return "refusal"


class Verdict(StrictModel):
    """The verifier's judgement of one package: accepted when nothing refuses it."""

    id: str
    """The package id, computed from its content."""
    accepted: bool
    score: float | None = None
    """The reference solution's score (None when it was not run)."""
    codes: list[str] = Field(default_factory=list)
    """The distinct reason codes of the refusals, in order of first appearance."""
    findings: list[Finding] = Field(default_factory=list)
    """The refusals: structural proofs, and findings whose witness holds."""
    review: list[Finding] = Field(default_factory=list)
    """Review notes: readings of the package that no witness proves. Never a refusal."""
    sft_ready: bool = True
    """Whether the reference trajectory keeps its evidence under the SFT export's truncation
    policy (``sft`` says what is lost when not)."""
    sft: list[Finding] = Field(default_factory=list)
    """What the reference trajectory loses under the SFT policy (``evidence_truncated``)."""
    notes: list[str] = Field(default_factory=list)
    """Remarks that are not findings (an id recomputed from the content ...)."""
    reader_calls: list[LLMCall] = Field(default_factory=list)
    """Model requests a reader made for this verdict that no finding's reading carries (its
    proposals, ``verify.proposals``)."""
    verifier_version: str = VERIFIER_VERSION

    @property
    def review_codes(self) -> list[str]:
        """The distinct codes of the review notes."""
        return list(dict.fromkeys(f.code.value for f in self.review))

    @classmethod
    def build(cls, package_id: str, findings: list[Finding], score: float | None,
              notes: list[str] | None = None, require_sft: bool = False) -> Verdict:
        """Sort ``findings`` into refusals, review notes and SFT losses (``kind_of``)."""
        sorted_: dict[Kind, list[Finding]] = {"refusal": [], "review": [], "sft": []}
        for f in findings:
            sorted_[kind_of(f, require_sft)].append(f)
        refusals = sorted_["refusal"]
        losses = [f for f in findings if f.basis is Basis.TRAINING]  # refusals too, when required
        codes = list(dict.fromkeys(f.code.value for f in refusals))
        return cls(id=package_id, accepted=not refusals, score=score, codes=codes, findings=refusals,
                   review=sorted_["review"], sft_ready=not losses, sft=losses, notes=notes or [])

    def resorted(self, findings: list[Finding]) -> Verdict:
        """This verdict rebuilt from ``findings`` (its refusals and review notes, some now with
        readings, in that order) and its SFT losses: ``kind_of`` sorts them again."""
        require_sft = any(f.basis is Basis.TRAINING for f in self.findings)  # losses refused it
        kept = [f for f in self.sft if f not in self.findings]
        out = Verdict.build(self.id, findings + kept, self.score, self.notes, require_sft)
        return out.model_copy(update={"verifier_version": self.verifier_version, "reader_calls": self.reader_calls})


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


class Failure(StrictModel):
    """Why an attempt has no verdict: a code and one line of detail."""

    code: FailureCode
    message: str

    def __str__(self) -> str:
        return f"{self.code.value}: {self.message}"


class LLMCall(StrictModel):
    """One request to the model: tokens, latency and outcome (``ok`` or an error class)."""

    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    status: str = "ok"
    error: str | None = None

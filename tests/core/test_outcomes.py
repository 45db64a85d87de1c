"""How a verdict sorts findings (pipeline/core/outcomes.py): a witness holds when a wrong agent
reaches its threshold or a correct agent misses it; a structural finding refuses, a witnessed one
only with a witness that holds (otherwise it is a review note), and evidence lost under the SFT
policy marks the package not sft_ready (a refusal only when the policy is required)."""

from __future__ import annotations

import pytest

from pipeline.core.codes import BASIS, Basis, Code
from pipeline.core.outcomes import Finding, Verdict, Witness, kind_of
from tests.conftest import holding_witness, refusal


@pytest.mark.parametrize(("agent", "score", "threshold", "holds"), [
    ("wrong", 0.75, 0.75, True),      # a wrong agent at its threshold passes: the finding holds
    ("wrong", 0.9, 0.75, True),
    ("wrong", 0.7499, 0.75, False),
    ("correct", 0.5, 1.0, True),      # a correct agent below the reference's score: the finding holds
    ("correct", 1.0, 1.0, False),
    ("correct", 0.999999, 1.0, True),
])
def test_witness_holds(agent: str, score: float, threshold: float, holds: bool) -> None:
    assert holding_witness(agent, score, threshold).holds is holds


def _finding(code: Code, witness: Witness | None = None) -> Finding:
    return Finding(code=code, message=f"{code.value} found", witness=witness)


def test_the_bases_of_the_codes() -> None:
    assert BASIS[Code.WEIGHTS_INVALID] is Basis.STRUCTURAL
    assert BASIS[Code.REFERENCE_ERROR] is Basis.STRUCTURAL
    assert BASIS[Code.GRADER_UNDERCONSTRAINED] is Basis.WITNESSED
    assert BASIS[Code.REQUEST_CHECK_MISMATCH] is Basis.WITNESSED
    assert BASIS[Code.EVIDENCE_TRUNCATED] is Basis.TRAINING
    assert _finding(Code.EVIDENCE_TRUNCATED).basis is Basis.TRAINING


@pytest.mark.parametrize(("finding", "kind", "required"), [
    (_finding(Code.WEIGHTS_INVALID), "refusal", "refusal"),                                     # structural
    (_finding(Code.REFERENCE_ERROR, holding_witness("wrong", 0.0)), "refusal", "refusal"),    # a witness is moot
    (_finding(Code.GRADER_UNDERCONSTRAINED), "review", "review"),                              # no witness
    (_finding(Code.GRADER_UNDERCONSTRAINED, holding_witness("wrong", 0.5)), "review", "review"),  # does not hold
    (_finding(Code.GRADER_UNDERCONSTRAINED, holding_witness("wrong", 0.8)), "refusal", "refusal"),
    (_finding(Code.GRADER_OVERCONSTRAINED, holding_witness("correct", 1.0, 1.0)), "review", "review"),
    (_finding(Code.GRADER_OVERCONSTRAINED, holding_witness("correct", 0.6, 1.0)), "refusal", "refusal"),
    (_finding(Code.EVIDENCE_TRUNCATED), "sft", "refusal"),
])
def test_kind_of(finding: Finding, kind: str, required: str) -> None:
    assert kind_of(finding) == kind
    assert kind_of(finding, require_sft=True) == required


def test_verdict_build_sorts_refusals_review_notes_and_sft_losses() -> None:
    under = refusal(Code.GRADER_UNDERCONSTRAINED, "drop")
    weights = refusal(Code.WEIGHTS_INVALID, "weights")
    again = refusal(Code.GRADER_UNDERCONSTRAINED, "undo")
    note = _finding(Code.REQUEST_CHECK_MISMATCH)
    weak = _finding(Code.UNGROUNDED_VALUE, holding_witness("correct", 1.0, 1.0))
    second_note = _finding(Code.REQUEST_CHECK_MISMATCH)
    loss = _finding(Code.EVIDENCE_TRUNCATED)
    verdict = Verdict.build("pkg-1", [note, under, loss, weights, weak, again, second_note], 0.9, notes=["n"])
    assert not verdict.accepted
    assert verdict.findings == [under, weights, again]
    assert verdict.codes == ["grader_underconstrained", "weights_invalid"]
    assert verdict.review == [note, weak, second_note]
    assert verdict.review_codes == ["request_check_mismatch", "ungrounded_value"]
    assert verdict.sft == [loss] and not verdict.sft_ready
    assert (verdict.id, verdict.score, verdict.notes) == ("pkg-1", 0.9, ["n"])


def test_a_verdict_with_only_review_notes_and_losses_is_accepted() -> None:
    verdict = Verdict.build("pkg-2", [_finding(Code.GRADER_COUNTS_CALLS), _finding(Code.EVIDENCE_TRUNCATED)], 1.0)
    assert verdict.accepted and verdict.codes == [] and verdict.findings == []
    assert verdict.review_codes == ["grader_counts_calls"]
    assert not verdict.sft_ready and [f.code for f in verdict.sft] == [Code.EVIDENCE_TRUNCATED]


def test_require_sft_makes_a_loss_a_refusal_and_keeps_it_among_the_losses() -> None:
    loss = _finding(Code.EVIDENCE_TRUNCATED)
    verdict = Verdict.build("pkg-3", [loss], 1.0, require_sft=True)
    assert not verdict.accepted
    assert verdict.codes == ["evidence_truncated"] and verdict.findings == [loss]
    assert verdict.sft == [loss] and not verdict.sft_ready and verdict.review == []


def test_an_empty_verdict_is_accepted_and_sft_ready() -> None:
    verdict = Verdict.build("pkg-4", [], None)
    assert verdict.accepted and verdict.sft_ready and verdict.score is None
    assert (verdict.codes, verdict.findings, verdict.review, verdict.sft, verdict.review_codes, verdict.notes) == (
        [], [], [], [], [], [])

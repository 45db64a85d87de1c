"""The verification reason codes: stable strings stored in the catalog.

Each code is raised from one verification module (named beside it), so one search finds where.
(``interop/clawenvkit_import.py`` also reports ``schema_invalid`` for a task file it cannot read
at all.) ``docs/verification.md`` explains each with an example.
"""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    SCHEMA_INVALID = "schema_invalid"                      # verify/verifier.py
    UNKNOWN_ENDPOINT = "unknown_endpoint"                  # verify/static.py
    UNKNOWN_TOOL = "unknown_tool"                          # verify/static.py
    TOOL_SCHEMA_MISMATCH = "tool_schema_mismatch"          # verify/static.py
    DANGLING_REFERENCE = "dangling_reference"              # verify/static.py
    WEIGHTS_INVALID = "weights_invalid"                    # verify/static.py
    JUDGE_OVERWEIGHT = "judge_overweight"                  # verify/static.py
    SAFETY_CONTRADICTION = "safety_contradiction"          # verify/safety.py
    VACUOUS_SAFETY = "vacuous_safety"                      # verify/safety.py
    HIDDEN_FACT_LEAKED = "hidden_fact_leaked"              # verify/hidden_facts.py
    REQUEST_CHECK_MISMATCH = "request_check_mismatch"      # verify/consistency.py
    UNKNOWN_ENTITY = "unknown_entity"                      # verify/entities.py
    AMBIGUOUS_ENTITY = "ambiguous_entity"                  # verify/entities.py
    UNGROUNDED_VALUE = "ungrounded_value"                  # verify/grounding.py
    UNREQUESTED_WRITE = "unrequested_write"                # verify/grounding.py
    CAPABILITY_UNMET = "capability_unmet"                  # verify/contracts.py
    REFERENCE_ERROR = "reference_error"                    # verify/execution.py
    REFERENCE_NOT_FULL_SCORE = "reference_not_full_score"  # verify/execution.py
    NONDETERMINISTIC = "nondeterministic"                  # verify/execution.py
    NULL_AGENT_PASSES = "null_agent_passes"                # verify/mutations.py
    GRADER_UNDERCONSTRAINED = "grader_underconstrained"    # verify/mutations.py
    GRADER_COUNTS_CALLS = "grader_counts_calls"            # verify/mutations.py
    CLARIFICATION_UNNECESSARY = "clarification_unnecessary"  # verify/mutations.py
    COLLATERAL_DAMAGE = "collateral_damage"                # verify/collateral.py
    GRADER_OVERCONSTRAINED = "grader_overconstrained"      # verify/equivalence.py
    EVIDENCE_TRUNCATED = "evidence_truncated"              # verify/truncation.py
    NOT_EXPORTABLE = "not_exportable"                      # verify/exportable.py
    VERIFICATION_TIMEOUT = "verification_timeout"          # verify/verifier.py
    DUPLICATE_PACKAGE = "duplicate_package"                # verify/dedup.py


DESCRIPTIONS: dict[Code, str] = {
    Code.SCHEMA_INVALID: "not a valid package",
    Code.UNKNOWN_ENDPOINT: "a tool is bound to an endpoint its service does not offer",
    Code.UNKNOWN_TOOL: "a reference step or check names a tool that is not offered",
    Code.TOOL_SCHEMA_MISMATCH: "tool parameters disagree with the operation's parameters",
    Code.DANGLING_REFERENCE: "an id, email, $ref or $fact points at nothing",
    Code.WEIGHTS_INVALID: "check weights do not sum to 1",
    Code.JUDGE_OVERWEIGHT: "an LLM judge carries too much weight, or is the only way to pass",
    Code.SAFETY_CONTRADICTION: "a safety rule forbids what the checks require or the request asks for",
    Code.VACUOUS_SAFETY: "a safety rule forbids nothing an agent could do",
    Code.HIDDEN_FACT_LEAKED: "a hidden multi-turn fact can be read without asking (request, state, tool results)",
    Code.REQUEST_CHECK_MISMATCH: "quantities or named entities in the request disagree with the checks",
    Code.UNKNOWN_ENTITY: "the request names a person or record that does not exist",
    Code.AMBIGUOUS_ENTITY: "a name in the request matches several records and nothing says which",
    Code.UNGROUNDED_VALUE: "a value the reference writes or a check pins is nowhere the agent could learn it",
    Code.UNREQUESTED_WRITE: "a write the request does not ask for carries weight in the grade",
    Code.CAPABILITY_UNMET: "the package lacks what its capability requires",
    Code.REFERENCE_ERROR: "the reference solution fails a call, or there is none (an imported task)",
    Code.REFERENCE_NOT_FULL_SCORE: "the reference solution does not reach score 1.0",
    Code.NONDETERMINISTIC: "two runs of the reference differ",
    Code.NULL_AGENT_PASSES: "doing nothing scores at or above the floor",
    Code.GRADER_UNDERCONSTRAINED: "a plausible wrong agent keeps full marks (a wrong record or value, text saying "
                                  "something else, an extra item, an empty or hedged answer), or 0.75 or more (a step "
                                  "dropped or undone, an answer listing everything)",
    Code.GRADER_COUNTS_CALLS: "repeating one create instead of distinct creates keeps 0.75 or more, or one create made "
                              "twice keeps full marks",
    Code.CLARIFICATION_UNNECESSARY: "a solution that never asks and guesses still scores 0.75 or more",
    Code.COLLATERAL_DAMAGE: "changing or deleting records the request does not concern still scores 0.75 or more",
    Code.GRADER_OVERCONSTRAINED: "a correct agent that acts differently from the reference loses score",
    Code.EVIDENCE_TRUNCATED: "evidence behind the answer or a check is lost under the training export policy",
    Code.NOT_EXPORTABLE: "a claw-profile package ClawEnvKit's format cannot carry at full weight, or whose wrong agents "
                         "their grader does not tell from the reference",
    Code.VERIFICATION_TIMEOUT: "verification ran past its time limit (a package built to be slow)",
    Code.DUPLICATE_PACKAGE: "the same or a near-same package is already in the catalog",
}


class Basis(StrEnum):
    """What a finding of a code rests on, and so whether it refuses the package."""

    STRUCTURAL = "structural"
    """A proof by the package itself (its schema, its references, its weights, a reference run
    that errors or misses full score): always a refusal."""
    WITNESSED = "witnessed"
    """A refusal only with a witness: a trajectory, replayable with ``synth play --witness``, of a
    wrong agent that passes or a correct agent that fails. A reading of the request that yields
    no witness is a review note (stored and counted, never a refusal)."""
    REVIEW = "review"
    """A reading no trajectory can prove wrong, because no score depends on it (a safety rule
    that forbids nothing): always a review note, never a refusal. A package whose capability
    rests on such a rule is refused for that (``capability_unmet``)."""
    TRAINING = "training"
    """About the training export, not the environment: the reference trajectory loses evidence
    under the SFT truncation policy. The package is not ``sft_ready``; a refusal only when
    verification is asked to require it (``--require-sft``)."""


BASIS: dict[Code, Basis] = {
    **{code: Basis.STRUCTURAL for code in Code},
    **{code: Basis.WITNESSED for code in (
        Code.SAFETY_CONTRADICTION, Code.HIDDEN_FACT_LEAKED, Code.REQUEST_CHECK_MISMATCH, Code.UNKNOWN_ENTITY,
        Code.AMBIGUOUS_ENTITY, Code.UNGROUNDED_VALUE, Code.UNREQUESTED_WRITE, Code.NULL_AGENT_PASSES,
        Code.GRADER_UNDERCONSTRAINED, Code.GRADER_COUNTS_CALLS, Code.CLARIFICATION_UNNECESSARY,
        Code.COLLATERAL_DAMAGE, Code.GRADER_OVERCONSTRAINED)},
    Code.VACUOUS_SAFETY: Basis.REVIEW,
    Code.EVIDENCE_TRUNCATED: Basis.TRAINING,
}
"""Each code's basis (``docs/verification.md`` lists them)."""

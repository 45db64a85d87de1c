"""The verification reason codes: stable strings stored in the catalog.

Each code is raised from one verification module (named beside it), so one search finds where.
(``interop/clawenvkit.py`` also reports ``schema_invalid`` for a task file it cannot read at all.)
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
    SAFETY_CONTRADICTION = "safety_contradiction"          # verify/static.py
    HIDDEN_FACT_LEAKED = "hidden_fact_leaked"              # verify/static.py
    REQUEST_CHECK_MISMATCH = "request_check_mismatch"      # verify/consistency.py
    REFERENCE_ERROR = "reference_error"                    # verify/execution.py
    REFERENCE_NOT_FULL_SCORE = "reference_not_full_score"  # verify/execution.py
    NONDETERMINISTIC = "nondeterministic"                  # verify/execution.py
    NULL_AGENT_PASSES = "null_agent_passes"                # verify/mutations.py
    GRADER_UNDERCONSTRAINED = "grader_underconstrained"    # verify/mutations.py
    GRADER_COUNTS_CALLS = "grader_counts_calls"            # verify/mutations.py
    CLARIFICATION_UNNECESSARY = "clarification_unnecessary"  # verify/mutations.py
    EVIDENCE_TRUNCATED = "evidence_truncated"              # verify/truncation.py
    DUPLICATE_PACKAGE = "duplicate_package"                # verify/dedup.py


DESCRIPTIONS: dict[Code, str] = {
    Code.SCHEMA_INVALID: "not a valid package",
    Code.UNKNOWN_ENDPOINT: "a tool is bound to an endpoint its service does not offer",
    Code.UNKNOWN_TOOL: "a reference step or check names a tool that is not offered",
    Code.TOOL_SCHEMA_MISMATCH: "tool parameters disagree with the operation's parameters",
    Code.DANGLING_REFERENCE: "an id, email, $ref or $fact points at nothing",
    Code.WEIGHTS_INVALID: "check weights do not sum to 1",
    Code.JUDGE_OVERWEIGHT: "an LLM judge carries too much weight, or is the only way to pass",
    Code.SAFETY_CONTRADICTION: "a safety rule forbids what the checks require",
    Code.HIDDEN_FACT_LEAKED: "a hidden multi-turn fact is already in the request",
    Code.REQUEST_CHECK_MISMATCH: "quantities or named entities in the request disagree with the checks",
    Code.REFERENCE_ERROR: "the reference solution fails a call",
    Code.REFERENCE_NOT_FULL_SCORE: "the reference solution does not reach score 1.0",
    Code.NONDETERMINISTIC: "two runs of the reference differ",
    Code.NULL_AGENT_PASSES: "doing nothing scores at or above the floor",
    Code.GRADER_UNDERCONSTRAINED: "dropping or perturbing a step the request asks for still passes",
    Code.GRADER_COUNTS_CALLS: "repeating one create instead of distinct creates still passes",
    Code.CLARIFICATION_UNNECESSARY: "a solution that never asks and guesses still passes",
    Code.EVIDENCE_TRUNCATED: "evidence behind the answer or a check is lost under the training export policy",
    Code.DUPLICATE_PACKAGE: "the same or a near-same package is already in the catalog",
}

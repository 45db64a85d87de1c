"""The ClawEnvKit task format as synth reads and writes it: check types, required fields, and the
record of a check with no equivalent on the other side. The mapping is in ``docs/clawenvkit.md``;
``clawenvkit_export`` writes task YAML, ``clawenvkit_import`` reads it.
"""

from __future__ import annotations

from pipeline.core.strict_model import StrictModel

SCORING_TYPES = (
    "audit_action_exists", "audit_field_equals", "audit_field_contains", "audit_count_gte",
    "audit_count_equals", "audit_sequence", "keywords_present", "keywords_absent", "pattern_match",
    "min_length", "file_exists", "file_hash_equals", "exit_code", "pytest_pass", "llm_judge",
)
SAFETY_TYPES = ("tool_not_called", "keywords_not_in_output")
REQUIRED_FIELDS = ("task_id", "task_name", "prompt", "tools", "scoring_components")
IMPORTED_CAPABILITY = "imported"
WORKSPACE = "/workspace"
"""Where ClawEnvKit's harness copies a task's ``files`` (targets), and their documents service's
base folder: a document's path is its target relative to this."""


class UnmappedCheck(StrictModel):
    """A check (or safety rule, ``safety=True``) that has no equivalent on the other side, and why."""

    id: str
    kind: str
    weight: float = 0.0
    safety: bool = False
    reason: str
